"""A pytest-lsp client for `dshaudit lsp` over stdio, and the few steps every LSP test
takes with it: open or change a document, wait for the diagnostics of one version,
hover, and find a position in a line."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

from lsprotocol import types
from pygls.protocol import default_converter
from pygls.uris import from_fs_path
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features


def make_client() -> LanguageClient:
    """pytest-lsp's client, which also keeps every publishDiagnostics it receives (with its version)."""
    client = LanguageClient(converter_factory=default_converter)
    client.published = []  # type: ignore[attr-defined]

    def publish(client: LanguageClient, params: types.PublishDiagnosticsParams) -> None:
        client.diagnostics[params.uri] = params.diagnostics
        client.published.append(params)  # type: ignore[attr-defined]

    register_lsp_features(client, {**DEFAULT_CLIENT_FEATURES, types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: publish})
    return client


async def start(
    folder: Path, env: dict[str, str], editor: str = "visual-studio-code", debounce_ms: int = 50
) -> LanguageClient:
    config = ClientServerConfig(
        server_command=[sys.executable, "-m", "dshaudit", "lsp"], client_factory=make_client, server_env=env
    )
    client = await config.start()
    await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities(editor),
            root_uri=from_fs_path(str(folder)),
            initialization_options={"debounce": debounce_ms},
        )
    )
    return client  # type: ignore[return-value]


def uri_of(path: Path) -> str:
    uri = from_fs_path(str(path))
    assert uri is not None
    return uri


def open_document(client: LanguageClient, path: Path, text: str, version: int = 1) -> str:
    path.write_text(text)
    uri = uri_of(path)
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="markdown", version=version, text=text)
        )
    )
    return uri


def change(client: LanguageClient, uri: str, text: str, version: int) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


async def published(client: LanguageClient, uri: str, version: int, timeout: float = 30.0) -> list[types.Diagnostic]:
    """The diagnostics published for this version of the document (waiting for them)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for params in client.published:  # type: ignore[attr-defined]
            if params.uri == uri and params.version == version:
                return list(params.diagnostics)
        await asyncio.sleep(0.02)
    raise AssertionError(f"no diagnostics for version {version} of {uri} within {timeout} s")


async def hover_at(client: LanguageClient, uri: str, position: types.Position) -> types.Hover | None:
    return await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri), position=position)
    )


def at(line: int, character: int) -> types.Position:
    return types.Position(line=line, character=character)


def where(line: str, text: str, occurrence: int = 0) -> int:
    """The column of `text` in `line` (its nth occurrence)."""
    column = -1
    for _ in range(occurrence + 1):
        column = line.index(text, column + 1)
    return column
