"""The pygls server: the protocol around the engine.

Every call into the engine runs on one worker thread, in order, so the engine
(its Verifier, FactBook and cache) is never used from two threads; the event
loop stays free to read the editor's messages meanwhile. An edit schedules a
check of the document after a short pause (`debounce`, 0.2 s; the client may
set `initializationOptions.debounce` in milliseconds); a newer edit cancels
it, and a check whose document changed while it ran is not published, so an
editor only ever sees the diagnostics of the version it holds.

DSH is opened (or cloned, on first use) before the first check that needs
it, with `$/progress` reports; requests that need it wait until it is ready,
the editor does not.

Messages are framed here (`Framing`), not by pygls's reader, so that a client
that breaks the protocol costs one message, not the connection: a body that is
not JSON is answered with a parse error; a `Content-Length` that is wrong is
found out, and the next `Content-Length` header read from; a message over
MAX_MESSAGE_BYTES is read past without being held, and answered with an error.
Requests about a document the client never opened are answered with null
(nothing is read from disk in its place). After `exit` the process ends at
once, whatever check is still running.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import sys
import uuid
from collections.abc import Callable, Generator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, BinaryIO, TypeVar
from urllib.parse import unquote

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

from dshaudit import __version__
from dshaudit.documents.findings import MARKDOWN_ENDINGS
from dshaudit.lsp import features
from dshaudit.lsp.engine import SCHEME, EditorCache, Engine, fs_path
from dshaudit.platform import cache

T = TypeVar("T")
logger = logging.getLogger(__name__)

DEBOUNCE_SECONDS = 0.2
MAX_MESSAGE_BYTES = 64 * 1024 * 1024  # one message's body: a findings file (20 MiB) fits, escaped
MAX_HEADER_BYTES = 64 * 1024  # a message's headers; past that, what was read is not a header
STALL_SECONDS = 1.0  # a body still short after this long, with a header after it, was given a wrong length
TRIGGER_CHARACTERS = ["`", "/", "#", ".", ":", "@", " "]


class Protocol(LanguageServerProtocol):
    """pygls's protocol, announcing also the `dshaudit:` documents the server
    serves (`workspace/textDocumentContent`, LSP 3.18), which pygls does not
    derive from the registered features."""

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams) -> Generator[Any, Any, types.InitializeResult]:
        result: types.InitializeResult = yield from super().lsp_initialize(params)
        workspace = result.capabilities.workspace or types.WorkspaceOptions()
        workspace.text_document_content = types.TextDocumentContentOptions(schemes=[SCHEME])
        result.capabilities.workspace = workspace
        return result


class DshauditServer(LanguageServer):
    def __init__(self, engine: Engine):
        super().__init__(
            "dshaudit", __version__, protocol_cls=Protocol, text_document_sync_kind=types.TextDocumentSyncKind.Full
        )
        self.engine = engine
        self.debounce = DEBOUNCE_SECONDS
        self.worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dshaudit")
        self.pending: dict[str, asyncio.Task[None]] = {}
        self.opening = asyncio.Lock()

    def start_io(self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
        """Serve on stdin and stdout until `exit` or the end of stdin, then end the process."""
        from pygls.io_ import StdoutWriter

        code = 0
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        try:
            asyncio.run(self.serve(stdin or sys.stdin.buffer))
        except SystemExit as exc:  # `exit`: 0 after shutdown, 1 without
            code = exc.code if isinstance(exc.code, int) else 1
        except (KeyboardInterrupt, BrokenPipeError):
            code = 1
        try:
            sys.stdout.flush()
        except (OSError, ValueError):  # closed by `exit`, or the client is gone
            pass
        os._exit(code)  # a check still running on the worker thread is not waited for

    async def serve(self, stdin: BinaryIO) -> None:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=1 << 20)
        try:
            await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdin)
        except ValueError:  # a regular file, not a pipe: read by a thread

            def pump() -> None:
                while chunk := os.read(stdin.fileno(), 1 << 16):
                    loop.call_soon_threadsafe(reader.feed_data, chunk)
                loop.call_soon_threadsafe(reader.feed_eof)

            loop.run_in_executor(None, pump)
        framing = Framing(reader)
        while True:
            body = await framing.next()
            if body is None:
                return
            if isinstance(body, str):
                self.reply_error(-32600, body)
                continue
            try:
                message = json.loads(body, object_hook=self.protocol.structure_message)
            except ValueError as exc:
                self.reply_error(-32700, f"the message is not JSON: {exc}")
                continue
            if not isinstance(message, dict) and not hasattr(message, "jsonrpc"):
                self.reply_error(-32600, "the message is not a JSON-RPC object")
                continue
            self.protocol.handle_message(message)

    def reply_error(self, code: int, message: str) -> None:
        """A JSON-RPC error answering a message that could not be read (its id unknown: null)."""
        logger.warning("%s", message)
        self.protocol._send_data({"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}})

    async def run(self, fn: Callable[..., T], *args: Any) -> T:
        """`fn(*args)` on the worker thread, after everything asked of it before."""
        return await asyncio.get_running_loop().run_in_executor(self.worker, fn, *args)

    # -- checking -------------------------------------------------------------------

    def schedule(self, uri: str, delay: float) -> None:
        """Check the document after `delay`, instead of any check still waiting for it."""
        if not is_markdown(uri):
            return
        earlier = self.pending.pop(uri, None)
        if earlier is not None:
            earlier.cancel()
        self.pending[uri] = asyncio.ensure_future(self.check_later(uri, delay))

    def is_open(self, uri: str) -> bool:
        """Whether the client opened the document (pygls would read any other from disk)."""
        return unquote(uri) in self.workspace.text_documents

    async def check_later(self, uri: str, delay: float) -> None:
        await asyncio.sleep(delay)
        if not self.is_open(uri):
            return
        document = self.workspace.get_text_document(uri)
        version, text = document.version, document.source
        await self.ready(uri)
        try:
            diagnostics = (await self.run(self.engine.analyse, uri, text, version)).diagnostics
        except Exception as exc:  # a bug in dshaudit: say so on the document, as the CLI says it on stderr
            logger.exception("checking %s", uri)
            diagnostics = [
                types.Diagnostic(
                    range=types.Range(types.Position(0, 0), types.Position(0, 0)),
                    severity=types.DiagnosticSeverity.Error,
                    message=f"internal error: {type(exc).__name__}: {exc} (a bug in dshaudit: please report it)",
                    code="internal",
                    source="dshaudit",
                )
            ]
        if uri not in self.workspace.text_documents or self.workspace.get_text_document(uri).version != version:
            return  # edited (or closed) meanwhile: a newer check is on its way
        self.pending.pop(uri, None)
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version)
        )

    async def ready(self, uri: str) -> None:
        """Open the document's DSH clone (clone it on first use) before it is
        needed, telling the editor through `$/progress`; concurrent callers wait."""
        async with self.opening:
            if not await self.run(self.engine.needs_opening, uri):
                return
            token = str(uuid.uuid4())
            supported = bool(self.client_capabilities.window and self.client_capabilities.window.work_done_progress)
            if supported:
                await self.work_done_progress.create_async(token)
                self.work_done_progress.begin(
                    token,
                    types.WorkDoneProgressBegin(
                        title="dshaudit", message="opening the DSH clone (cloning it on first use)", cancellable=False
                    ),
                )
            try:
                await self.run(self.engine.open_repository, uri)
                outcome = "DSH is open"
            except Exception as exc:  # the check that follows reports it on the document
                outcome = f"cannot open DSH: {exc}"
            if supported:
                self.work_done_progress.end(token, types.WorkDoneProgressEnd(message=outcome))

    async def answer(self, uri: str, feature: Callable[..., T], *args: Any) -> T | None:
        """`feature(analysis, *args)` on the analysis of the document's current
        version (checked now if it is not yet); None for a document that is not Markdown."""
        if not is_markdown(uri) or not self.is_open(uri):
            return None
        await self.ready(uri)
        document = self.workspace.get_text_document(uri)
        analysis = await self.run(self.engine.analysis, uri, document.source, document.version)
        return await self.run(feature, analysis, *args)


_LENGTH_RE = re.compile(rb"content-length:[ \t]*(\d{1,12})[ \t]*\r?\n", re.IGNORECASE)


class Framing:
    """The bodies of the messages a client sends: each after its headers, as long as its
    `Content-Length` says. What breaks the protocol costs that message only: bytes before
    a header are skipped; a body that is not JSON but holds the next header (its length
    was too long) ends there; a body still short after STALL_SECONDS while the next
    header has come (too long again) ends there too; a body over MAX_MESSAGE_BYTES is
    read past, never held, and given as the error to answer (a str)."""

    def __init__(self, reader: asyncio.StreamReader):
        self.reader = reader
        self.buffer = bytearray()
        self.ended = False

    async def _more(self, timeout: float | None = None) -> bool:
        """Read what the client sent next; False at the end of input or after `timeout` seconds of none."""
        if self.ended:
            return False
        try:
            chunk = await asyncio.wait_for(self.reader.read(1 << 16), timeout)
        except TimeoutError:
            return False
        if not chunk:
            self.ended = True
            return False
        self.buffer += chunk
        return True

    async def next(self) -> bytes | str | None:
        """The next body; a str for a message refused whole; None at the end of input."""
        while True:
            end = self.buffer.find(b"\r\n\r\n")
            while end < 0:
                if len(self.buffer) > MAX_HEADER_BYTES:
                    del self.buffer[: -len(b"content-length: 000000000000\r\n")]  # junk: keep a header's worth
                if not await self._more():
                    return None
                end = self.buffer.find(b"\r\n\r\n")
            lengths = [int(m.group(1)) for m in _LENGTH_RE.finditer(self.buffer, 0, end + 2)]
            del self.buffer[: end + 4]
            if not lengths:
                continue  # headers without a length: nothing to read a body by
            size = lengths[-1]
            if size > MAX_MESSAGE_BYTES:
                await self._skip(size)
                return f"a message of {size} bytes: at most {MAX_MESSAGE_BYTES} are read"
            while len(self.buffer) < size:
                if not await self._more(STALL_SECONDS) and (self.ended or self._next_header() is not None):
                    break
            body = bytes(self.buffer[:size])
            try:
                json.loads(body)
            except ValueError:
                cut = self._next_header(size)
                if cut is not None:
                    body = bytes(self.buffer[:cut])
                    del self.buffer[:cut]
                    return body
            del self.buffer[:size]
            return body

    def _next_header(self, within: int | None = None) -> int | None:
        """Where the next message's headers begin in what is read (within its first `within` bytes)."""
        found = _LENGTH_RE.search(self.buffer, 0, within if within is not None else len(self.buffer))
        return found.start() if found else None

    async def _skip(self, size: int) -> None:
        """Read past `size` bytes of body without holding them."""
        while size > 0:
            if not self.buffer and not await self._more():
                return
            taken = min(size, len(self.buffer))
            del self.buffer[:taken]
            size -= taken


def is_markdown(uri: str) -> bool:
    return not uri.startswith(SCHEME + ":") and (uri.lower().endswith(MARKDOWN_ENDINGS) or fs_path(uri) is None)


def build_server(repo: str | None, config_path: str | None) -> DshauditServer:
    cache.begin(EditorCache)
    server = DshauditServer(Engine(repo, config_path))

    @server.feature(types.INITIALIZE)
    def initialize(ls: DshauditServer, params: types.InitializeParams) -> None:
        ls.engine.encoding = ls.workspace.position_encoding or types.PositionEncodingKind.Utf16
        folders = [f.uri for f in params.workspace_folders or []] or [params.root_uri or ""]
        ls.engine.roots = [Path(os.path.realpath(p)) for u in folders if u and (p := fs_path(u)) is not None]
        options = params.initialization_options
        if isinstance(options, dict) and isinstance(options.get("debounce"), (int, float)):
            ls.debounce = max(0.0, options["debounce"] / 1000)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: DshauditServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, 0.0)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: DshauditServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.schedule(params.text_document.uri, ls.debounce)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: DshauditServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        pending = ls.pending.pop(uri, None)
        if pending is not None:
            pending.cancel()
        ls.worker.submit(ls.engine.forget, uri)
        if is_markdown(uri):
            ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(ls: DshauditServer, params: types.HoverParams) -> types.Hover | None:
        return await ls.answer(params.text_document.uri, features.hover, params.position)

    @server.feature(types.TEXT_DOCUMENT_COMPLETION, types.CompletionOptions(trigger_characters=TRIGGER_CHARACTERS))
    async def completion(ls: DshauditServer, params: types.CompletionParams) -> types.CompletionList | None:
        items = await ls.answer(params.text_document.uri, features.completion, ls.engine, params.position)
        return None if items is None else types.CompletionList(is_incomplete=False, items=items)

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(
            code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.RefactorRewrite]
        ),
    )
    async def code_action(ls: DshauditServer, params: types.CodeActionParams) -> list[types.CodeAction] | None:
        return await ls.answer(params.text_document.uri, features.code_actions, params.range)

    @server.feature(types.TEXT_DOCUMENT_DEFINITION)
    async def definition(ls: DshauditServer, params: types.DefinitionParams) -> types.Location | None:
        return await ls.answer(params.text_document.uri, features.definition, params.position)

    @server.feature(types.WORKSPACE_TEXT_DOCUMENT_CONTENT)
    async def content(ls: DshauditServer, params: types.TextDocumentContentParams) -> types.TextDocumentContentResult:
        text = await ls.run(ls.engine.blob, params.uri)
        if text is None:
            raise JsonRpcInvalidParams(f"{params.uri}: no such file at that commit in the DSH clone")
        return types.TextDocumentContentResult(text=text)

    @server.feature(types.SHUTDOWN)
    async def shutdown(ls: DshauditServer, params: None) -> None:
        for task in ls.pending.values():
            task.cancel()
        await ls.run(ls.engine.close)
        ls.worker.shutdown(wait=False)

    return server
