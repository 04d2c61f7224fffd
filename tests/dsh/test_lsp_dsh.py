"""`dshaudit lsp` on a real DSH clone ($DSH_REPO): the acceptance run on a copy of the
delegation-depth finding. Skipped, with the reason, when no clone is named."""

from __future__ import annotations

import os
import re
import shutil
import time

import pytest
from lsprotocol import types

from conftest import REPO_ROOT
from lsp_client import at, change, hover_at, open_document, published, start, where

pytestmark = [pytest.mark.dsh, pytest.mark.asyncio(loop_scope="module")]


async def test_acceptance_on_a_copy_of_the_delegation_depth_finding(tmp_path, dsh_repo):
    """The issue's acceptance run: one citation's line moved by 5 fails within a
    few seconds, on that citation only, and clears when the edit is undone;
    hover on another citation shows its cited line; completion after
    `claim: subagent.` offers subagent.max-depth-default; shutdown and exit are clean."""
    shutil.copy(REPO_ROOT / "dshaudit.toml", tmp_path / "dshaudit.toml")
    original = (REPO_ROOT / "findings" / "06-delegation-depth.md").read_text()
    env = {**os.environ, "DSH_REPO": str(dsh_repo), "DSHAUDIT_CACHE_DIR": str(tmp_path / "cache")}
    client = await start(tmp_path, env, debounce_ms=200)
    try:
        uri = open_document(client, tmp_path / "06-delegation-depth.md", original)
        before = await published(client, uri, 1, timeout=120)
        assert not [d for d in before if d.severity != types.DiagnosticSeverity.Information]

        lines = original.split("\n")
        (moved_at,) = [i for i, line in enumerate(lines) if "tool-subagent/src/index.ts:78`" in line]
        edited = original.replace("tool-subagent/src/index.ts:78`", "tool-subagent/src/index.ts:83`")
        started = time.monotonic()
        change(client, uri, edited, 2)
        after = await published(client, uri, 2, timeout=10)
        assert time.monotonic() - started < 5
        new = [d for d in after if d not in before]
        assert [(d.range.start.line, d.severity, d.code) for d in new] == [
            (moved_at, types.DiagnosticSeverity.Error, "content_mismatch")
        ]

        change(client, uri, original, 3)
        assert await published(client, uri, 3, timeout=10) == before

        (other_at,) = [i for i, line in enumerate(lines) if "tool-subagent/src/index.ts:98`" in line]
        hover = await hover_at(client, uri, at(other_at, where(lines[other_at], "index.ts:98")))
        assert hover is not None and isinstance(hover.contents, types.MarkupContent)
        assert re.search(r"^> 98 \|\s+maxDepth: z\.union\(", hover.contents.value, re.M)

        text = "`claim: subagent."
        change(client, uri, original + "\n" + text, 4)
        result = await client.text_document_completion_async(
            types.CompletionParams(text_document=types.TextDocumentIdentifier(uri), position=at(len(lines), len(text)))
        )
        assert isinstance(result, types.CompletionList)
        assert "subagent.max-depth-default" in {i.label for i in result.items}
    finally:
        await client.shutdown_session()
    assert client._server is not None and client._server.returncode == 0
    await client.stop()
