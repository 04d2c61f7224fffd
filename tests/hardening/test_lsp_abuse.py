"""`dshaudit lsp` against a client that breaks the protocol: bodies that are not
JSON, wrong or missing Content-Length, a message too large to hold, a document
over the findings limit, versions that go backwards, requests about documents
never opened, `dshaudit://` URIs that climb out of the tree. Each is answered
with an error or null, the server keeps serving, reads nothing but git's
objects and the documents it was given, and ends promptly on exit."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from fixture_repo import write_config
from lsp_client import uri_of

FINDING = "---\npin: v1\n---\n`vendor/cordis/src/context.ts:14` → `this.fiber`\n"
MOVED = "---\npin: v1\n---\n`vendor/cordis/src/context.ts:15` → `this.fiber`\n"
CANARY = "CANARY-52e1d0-never-read"


class Raw:
    """A client that writes bytes: whatever the test says, framed or not."""

    def __init__(self, folder: Path, env: dict[str, str]):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "dshaudit", "lsp"],
            cwd=folder,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.messages: queue.Queue[dict] = queue.Queue()
        self.notes: list[dict] = []
        self.answers: list[dict] = []  # responses read while waiting for another
        self.next_id = 0
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def close(self) -> None:
        """The server ended (killed if it still runs), and the thread that read it with it: a
        test after this one may fork, which must not happen beside a thread still running."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.reader.join(10)

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        while True:
            length = 0
            while (line := out.readline()) not in (b"\r\n", b""):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            if not line:
                return
            self.messages.put(json.loads(out.read(length)))

    def write(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message: dict, length: int | None = None) -> None:
        body = json.dumps(message).encode()
        self.write(b"Content-Length: %d\r\n\r\n" % (len(body) if length is None else length) + body)

    def notify(self, method: str, params: dict) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method: str, params: dict | None, **framing) -> dict:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}, **framing)
        return self.answer(self.next_id)

    def answer(self, msg_id: int | None, timeout: float = 30.0) -> dict:
        """The response to `msg_id` (None: an error about a message that could not be read)."""
        deadline = time.monotonic() + timeout
        while True:
            kept = next((a for a in self.answers if a.get("id") == msg_id), None)
            if kept is not None:
                self.answers.remove(kept)
                return kept
            message = self.messages.get(timeout=max(0.01, deadline - time.monotonic()))
            if "method" in message:
                if "id" in message:  # a request of the server's own (progress): answered
                    self.send({"jsonrpc": "2.0", "id": message["id"], "result": None})
                self.notes.append(message)
            else:
                self.answers.append(message)

    def diagnostics(self, uri: str, version: int, timeout: float = 30.0) -> list[dict]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for note in self.notes:
                p = note.get("params") or {}
                if note["method"] == "textDocument/publishDiagnostics" and p["uri"] == uri and p["version"] == version:
                    self.notes.remove(note)
                    return p["diagnostics"]
            try:
                self.notes.append(self.messages.get(timeout=0.05))
            except queue.Empty:
                pass
        raise AssertionError(f"no diagnostics for version {version} of {uri}")

    def open(self, path: Path, text: str, version: int = 1) -> str:
        uri = uri_of(path)
        doc = {"uri": uri, "languageId": "markdown", "version": version, "text": text}
        self.notify("textDocument/didOpen", {"textDocument": doc})
        return uri

    def change(self, uri: str, text: str, version: int) -> None:
        self.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]},
        )

    def hover(self, uri: str, line: int, character: int) -> dict:
        return self.request(
            "textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}
        )

    def still_serving(self) -> None:
        """A request any server answers: the virtual document of nothing is an error, at once."""
        got = self.request("workspace/textDocumentContent", {"uri": "dshaudit://nothing"})
        assert got["error"]["code"] == -32602, got

    def end(self, timeout: float = 5.0) -> int:
        self.request("shutdown", None)
        self.notify("exit", {})
        return self.proc.wait(timeout)


@pytest.fixture
def server(tmp_path, fixture_repo):
    folder = tmp_path / "ws"
    folder.mkdir()
    write_config(folder, fixture_repo)
    (folder / "findings").mkdir()
    env = {**os.environ, "DSH_REPO": str(fixture_repo.path), "DSHAUDIT_CACHE_DIR": str(tmp_path / "cache")}
    raw = Raw(folder, env)
    init = {"processId": None, "rootUri": uri_of(folder), "capabilities": {}, "initializationOptions": {"debounce": 0}}
    assert "result" in raw.request("initialize", init)
    raw.notify("initialized", {})
    yield raw, folder
    raw.close()


# -- framing -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "junk, code",
    [
        (b"Content-Length: 9\r\n\r\n{not json", -32700),
        (b"Content-Length: 4\r\n\r\n\xff\xfe\x00\x01", -32700),
        (b"Content-Length: 2\r\n\r\n[]", -32600),
        (b"Content-Length: 4\r\n\r\nnull", -32600),
    ],
)
def test_a_body_that_is_not_a_message_is_answered_with_an_error(server, junk, code):
    raw, _ = server
    raw.write(junk)
    assert raw.answer(None)["error"]["code"] == code
    raw.still_serving()


def test_a_wrong_content_length_costs_that_message_only(server):
    raw, _ = server
    hover = {"textDocument": {"uri": "file:///nowhere.md"}, "position": {"line": 0, "character": 0}}
    body = json.dumps({"jsonrpc": "2.0", "id": 900, "method": "textDocument/hover", "params": hover}).encode()
    raw.write(b"Content-Length: %d\r\n\r\n" % (len(body) - 7) + body)  # too short: the rest is junk
    assert raw.answer(None)["error"]["code"] == -32700
    raw.still_serving()
    raw.write(b"Content-Length: %d\r\n\r\n" % (len(body) + 40) + body)  # too long: it runs into the next
    raw.still_serving()
    assert raw.answer(900, timeout=5)["result"] is None
    raw.write(b"Content-Type: text/plain\r\n\r\n" + body)  # no length at all: nothing to read it by
    raw.write(b"garbage\r\nContent-Length: x\r\n\r\n")
    raw.still_serving()


def test_a_message_too_large_to_hold_is_read_past_and_refused(server):
    from dshaudit.lsp.server import MAX_MESSAGE_BYTES

    raw, _ = server
    raw.write(b"Content-Length: %d\r\n\r\n" % (MAX_MESSAGE_BYTES + 1))
    chunk = b" " * (1 << 20)
    for _ in range(MAX_MESSAGE_BYTES // len(chunk)):
        raw.write(chunk)
    raw.write(b"  ")
    error = raw.answer(None)["error"]
    assert error["code"] == -32600 and f"at most {MAX_MESSAGE_BYTES} are read" in error["message"]
    raw.still_serving()
    assert raw.end() == 0


def test_a_declared_length_never_sent_ends_with_the_input(server):
    raw, _ = server
    raw.write(b"Content-Length: 999999999999\r\n\r\n{")
    assert raw.proc.stdin is not None
    raw.proc.stdin.close()
    assert raw.proc.wait(5) == 0 or raw.proc.returncode == 1


# -- documents -----------------------------------------------------------------------------


def test_a_document_over_the_findings_limit_gets_one_diagnostic_and_the_server_goes_on(server):
    from dshaudit.documents.findings import MAX_FINDINGS_BYTES

    raw, folder = server
    big = FINDING + ("x" * 1023 + "\n") * (MAX_FINDINGS_BYTES // 1024 + 1)
    uri = raw.open(folder / "findings" / "big.md", big)
    (d,) = raw.diagnostics(uri, 1, timeout=60)
    assert f"larger than the {MAX_FINDINGS_BYTES} dshaudit reads" in d["message"] and d["severity"] == 1
    raw.change(uri, FINDING, 2)
    assert raw.diagnostics(uri, 2) == []
    assert "this.fiber" in raw.hover(uri, 3, 5)["result"]["contents"]["value"]


def test_versions_that_go_backwards_are_answered_for_the_text_held(server):
    raw, folder = server
    uri = raw.open(folder / "findings" / "v.md", FINDING, version=5)
    assert raw.diagnostics(uri, 5) == []
    raw.change(uri, MOVED, 3)  # an older number, a newer text
    (d,) = raw.diagnostics(uri, 3)
    assert d["code"] == "content_mismatch"
    raw.change(uri, FINDING, 9)
    raw.change(uri, MOVED + "\n", 3)  # the number of a text analysed before, another text
    hover = raw.hover(uri, 3, 5)["result"]["contents"]["value"]
    assert "context.ts:15" in hover, hover


def test_requests_on_documents_never_opened_are_null_and_read_nothing(server, tmp_path):
    raw, folder = server
    outside = tmp_path / "outside.md"
    outside.write_text(f"---\npin: v1\n---\n`vendor/cordis/src/context.ts:14` → `{CANARY}`\n")
    for uri in (uri_of(outside), uri_of(folder / "findings" / "never.md"), "untitled:Untitled-1"):
        where = {"textDocument": {"uri": uri}, "position": {"line": 3, "character": 5}}
        for method in ("textDocument/hover", "textDocument/definition", "textDocument/completion"):
            got = raw.request(method, where)
            assert got.get("result") is None and CANARY not in json.dumps(got), (method, got)
        ranged = {"textDocument": {"uri": uri}, "range": {"start": where["position"], "end": where["position"]}}
        got = raw.request("textDocument/codeAction", {**ranged, "context": {"diagnostics": []}})
        assert got.get("result") is None, got
        raw.change(uri, "changed", 2)  # a change to a document never opened: ignored
        raw.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    raw.still_serving()
    assert not any(CANARY in json.dumps(n) for n in raw.notes)


@pytest.mark.parametrize(
    "tail",
    [
        "/../../../../etc/passwd",
        "/%2e%2e/%2e%2e/etc/passwd",
        "//etc/passwd",
        "/vendor/cordis/../../../etc/passwd",
        "/vendor/cordis/src/context.ts/../../../../etc/hostname",
        "/.git/config",
        "/sub",  # a submodule: no blob of its own
        "/",
    ],
)
def test_dshaudit_uris_that_climb_out_are_errors(server, fixture_repo, tail):
    raw, folder = server
    raw.diagnostics(raw.open(folder / "findings" / "u.md", FINDING), 1)  # the clone is open
    sha = fixture_repo.shas["v3"]
    good = raw.request("workspace/textDocumentContent", {"uri": f"dshaudit://{sha}/vendor/cordis/src/context.ts"})
    assert "this.fiber" in good["result"]["text"]
    got = raw.request("workspace/textDocumentContent", {"uri": f"dshaudit://{sha}{tail}"})
    assert got["error"]["code"] == -32602 and "root:" not in json.dumps(got), got
    for uri in ("dshaudit://../../etc/passwd", "file:///etc/passwd", f"dshaudit://{sha[:12]}/x", "dshaudit:"):
        got = raw.request("workspace/textDocumentContent", {"uri": uri})
        assert got["error"]["code"] == -32602, got


# -- ending -------------------------------------------------------------------------------


def test_shutdown_then_exit_ends_at_once_with_0_and_exit_alone_with_1(server, tmp_path, fixture_repo):
    raw, folder = server
    uri = raw.open(folder / "findings" / "e.md", FINDING)
    raw.diagnostics(uri, 1)
    began = time.monotonic()
    assert raw.end(timeout=5) == 0 and time.monotonic() - began < 5
    alone = Raw(folder, {**os.environ, "DSH_REPO": str(fixture_repo.path), "DSHAUDIT_CACHE_DIR": str(tmp_path / "c")})
    init = {"processId": None, "rootUri": uri_of(folder), "capabilities": {}}
    assert "result" in alone.request("initialize", init)
    alone.notify("exit", {})
    try:
        assert alone.proc.wait(5) == 1
    finally:
        alone.close()


def test_exit_while_a_check_runs_does_not_wait_for_it(server, monkeypatch):
    raw, folder = server
    uri = raw.open(
        folder / "findings" / "slow.md", "".join(f"`claim: search(-E 'x[{i}]y').count == 0`\n" for i in range(400))
    )
    raw.notify("exit", {})
    began = time.monotonic()
    raw.proc.wait(5)
    assert time.monotonic() - began < 5 and uri


def test_a_document_outside_the_workspace_reads_no_configuration_above_it(server, tmp_path):
    """Opened from outside the workspace, a document is checked with the workspace's
    configuration: a dshaudit.toml beside it, outside, is never read."""
    raw, _ = server
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "dshaudit.toml").write_text(f"this is not toml {CANARY} [[[\n")
    uri = raw.open(elsewhere / "doc.md", FINDING)
    assert raw.diagnostics(uri, 1) == []  # read with the workspace's pins; the file outside would be an error
    raw.still_serving()
