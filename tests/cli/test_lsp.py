"""`dshaudit lsp` end to end: a pytest-lsp client drives the server over stdio,
on the fixture repository (no DSH_REPO needed)."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest
import pytest_asyncio
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from conftest import run_cli
from fixture_repo import CONTEXT_V1, write_config
from lsp_client import at, change, hover_at, open_document, published, start, where

PASSING = {"ok", "confirmed", "absent"}
FINDING = """\
---
pin: v1
---
# The root context

The constructor builds the services (`vendor/cordis/src/context.ts:15` → `ReflectService`),
and the origin is fixed (`vendor/cordis/src/context.ts:9` → `'cordis'`).
An agent factory is set once: `packages/core/agent/src/index.ts:17`.
The logger comes last (`vendor/cordis/src/context.ts:20` → `this.logger = new LoggerService`).
It names `NoSuchServiceAnywhere`, and `createAgent` (`packages/core/agent/src/index.ts:6`).

`claim: core.context-builtin-services.count == 5`
`claim: core.context-builtin-services.count == 4`
"""


# One server for the module (starting one takes a second or two); each test
# opens documents of its own name, so none sees another's.
pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture(scope="module")
def lsp_workspace(tmp_path_factory, fixture_repo):
    folder = tmp_path_factory.mktemp("lsp")
    write_config(folder, fixture_repo)
    (folder / "findings").mkdir()
    env = {**os.environ, "DSH_REPO": str(fixture_repo.path), "DSHAUDIT_CACHE_DIR": str(folder / "cache")}
    return folder, env


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def client(lsp_workspace):
    folder, env = lsp_workspace
    client = await start(folder, env)
    yield client
    await client.shutdown_session()
    await client.stop()


@pytest.fixture
def doc(lsp_workspace, request) -> Path:
    """A path for this test's document, in the findings folder."""
    return lsp_workspace[0] / "findings" / f"{request.node.name}.md"


async def opened(client: LanguageClient, path: Path, text: str = FINDING) -> str:
    """The document opened, once its first diagnostics are in."""
    uri = open_document(client, path, text)
    await published(client, uri, 1)
    return uri


# -- diagnostics ---------------------------------------------------------------------


async def test_diagnostics_are_checks_verdicts_on_the_citation(client, lsp_workspace, doc):
    _, env = lsp_workspace
    path = doc
    uri = open_document(client, path, FINDING)
    diagnostics = await published(client, uri, 1)

    run = run_cli("check", str(path), "--format", "json", env={k: env[k] for k in ("DSH_REPO", "DSHAUDIT_CACHE_DIR")})
    expected = sorted(
        (item["source"]["line"], item["source"]["column"], item["status"], item["message"])
        for section in ("citations", "claims", "references")
        for item in run.json.get(section, [])
        if item["status"] not in PASSING
    )
    got = sorted((d.range.start.line + 1, d.range.start.character + 1, d.code, d.message) for d in diagnostics)
    assert got == expected
    assert {status for _, _, status, _ in got} >= {"content_mismatch", "suspect", "contradicted", "phantom"}

    lines = FINDING.split("\n")
    (mismatch,) = [d for d in diagnostics if d.code == "content_mismatch"]
    start = where(lines[8], "vendor/cordis/src/context.ts:20")
    assert mismatch.range == types.Range(at(8, start), at(8, start + len("vendor/cordis/src/context.ts:20")))
    assert mismatch.severity == types.DiagnosticSeverity.Error and mismatch.source == "dshaudit"
    assert mismatch.message == "`this.logger = new LoggerService` is not on line 20; now at line 18"
    (suspect,) = [d for d in diagnostics if d.code == "suspect"]
    assert suspect.severity == types.DiagnosticSeverity.Warning
    (contradicted,) = [d for d in diagnostics if d.code == "contradicted"]
    claim = "`claim: core.context-builtin-services.count == 4`"
    assert contradicted.range == types.Range(at(12, 0), at(12, len(claim)))
    assert contradicted.message == "measured 5"


async def test_a_moved_line_fails_and_clears_when_the_edit_is_undone(client, doc):
    good = FINDING.replace(
        "`vendor/cordis/src/context.ts:20` → `this.logger = new LoggerService`",
        "`vendor/cordis/src/context.ts:18` → `this.logger = new LoggerService`",
    )
    uri = open_document(client, doc, good)
    before = await published(client, uri, 1)
    assert not [d for d in before if d.code == "content_mismatch"]

    moved = good.replace("context.ts:9`", "context.ts:14`")  # the origin's line moved by 5
    change(client, uri, moved, 2)
    after = await published(client, uri, 2)
    (error,) = [d for d in after if d.severity == types.DiagnosticSeverity.Error and d not in before]
    assert error.range.start.line == 6 and error.code == "content_mismatch"
    assert error.message == "`'cordis'` is not on line 14; now at line 9"

    change(client, uri, good, 3)
    assert await published(client, uri, 3) == before


async def test_only_the_latest_version_is_published(lsp_workspace, doc):
    """Checks start at once (no pause after an edit) and take longer than the
    edits (a document of 150 citations): a check whose document changed while
    it ran is not published, so versions are published in order, each with
    its own diagnostics, the last one last."""
    folder, env = lsp_workspace
    client = await start(folder, env, debounce_ms=0)
    head, body = FINDING[: FINDING.index("# The root")], FINDING[FINDING.index("# The root") :]
    text = head + body * 30

    def version_text(version: int) -> str:
        return text.replace("context.ts:15", f"context.ts:{version + 40}", 1)

    try:
        uri = open_document(client, doc, text)
        await published(client, uri, 1)
        for version in range(2, 12):
            change(client, uri, version_text(version), version)
        await published(client, uri, 11)
        await asyncio.sleep(0.5)
        sent = [p for p in client.published if p.uri == uri]  # type: ignore[attr-defined]
        versions = [p.version for p in sent]
        assert versions == sorted(set(versions)) and versions[0] == 1 and versions[-1] == 11
        for params in sent[1:]:
            (out_of_range,) = [d for d in params.diagnostics if d.code == "out_of_range"]
            assert out_of_range.message == f"line {params.version + 40} is past the end of the file (34 lines at v1)"
        assert len(versions) < 11  # some checks were overtaken by edits, and dropped
    finally:
        await client.shutdown_session()
        await client.stop()


async def test_a_file_without_a_pin_gets_one_diagnostic(client, lsp_workspace):
    folder, _ = lsp_workspace
    uri = open_document(client, folder / "notes-without-a-pin.md", FINDING.split("---\n", 2)[2])
    (only,) = await published(client, uri, 1)
    assert only.message.startswith("no pin for `vendor/cordis/src/context.ts:15`: name one in the file's front matter")
    # On the first citation that needs one (the third line of the document).
    assert only.severity == types.DiagnosticSeverity.Error and only.range.start.line == 2


async def test_a_malformed_file_gets_one_diagnostic_where_it_is_malformed(client, lsp_workspace):
    folder, _ = lsp_workspace
    uri = open_document(
        client, folder / "findings" / "bad.md", "---\npin: [v1\n---\n`vendor/cordis/src/context.ts:9`\n"
    )
    (only,) = await published(client, uri, 1)
    assert only.message.startswith("malformed front matter")
    assert only.range.start.line in (1, 2)
    uri = open_document(
        client, folder / "findings" / "unknown.md", "---\npin: v9\n---\n`vendor/cordis/src/context.ts:9`\n"
    )
    (only,) = await published(client, uri, 1)
    assert only.message.startswith("front matter: pin 'v9' is not in dshaudit.toml") and only.range.start.line == 1


async def test_closing_a_document_clears_its_diagnostics(client, doc):
    uri = open_document(client, doc, FINDING)
    assert await published(client, uri, 1)
    client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri)))
    await asyncio.sleep(0.3)
    assert list(client.diagnostics[uri]) == []


async def test_diagnostics_and_hover_count_utf16_code_units(client, doc):
    text = "---\npin: v1\n---\n😀 中文 (`vendor/cordis/src/context.ts:20` → `this.logger = new LoggerService`)\n"
    uri = open_document(client, doc, text)
    (mismatch,) = [d for d in await published(client, uri, 1) if d.code == "content_mismatch"]
    start = len("😀 中文 (`".encode("utf-16-le")) // 2  # the emoji is two code units
    assert mismatch.range == types.Range(at(3, start), at(3, start + len("vendor/cordis/src/context.ts:20")))
    hover = await hover_at(client, uri, at(3, start + 1))
    assert hover is not None and hover.range == mismatch.range


# -- hover ---------------------------------------------------------------------------


async def test_hover_on_a_citation_shows_its_lines_symbol_and_permalink(client, doc, fixture_repo):
    uri = await opened(client, doc)
    line = FINDING.split("\n")[5]
    hover = await hover_at(client, uri, at(5, where(line, "context.ts:15")))
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    text = hover.contents.value
    sha = fixture_repo.shas["v1"]
    assert text.startswith(f"**`vendor/cordis/src/context.ts:15`** at v1 (`{sha[:12]}`): ok")
    assert "> 15 |     this.reflect = new ReflectService(self)" in text
    assert "In `Context.constructor` (lines 12-19)" in text
    assert f"(https://example.invalid/dsh/blob/{sha}/vendor/cordis/src/context.ts#L15)" in text
    start = where(line, "vendor/cordis/src/context.ts:15")
    assert hover.range == types.Range(at(5, start), at(5, start + len("vendor/cordis/src/context.ts:15")))


async def test_hover_on_a_claim_shows_value_rule_and_evidence(client, doc):
    uri = await opened(client, doc)
    hover = await hover_at(client, uri, at(11, 10))
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    text = hover.contents.value
    assert text.startswith("**`claim: core.context-builtin-services.count == 5`** at v1: confirmed: measured 5")
    assert "**Measured** at v1: `5`" in text
    assert "**Counting rule** (`core.context-builtin-services`): Services the Cordis root `Context` assigns" in text
    assert "- [vendor/cordis/src/context.ts:14-18](https://example.invalid/dsh/blob/" in text
    nothing = await hover_at(client, uri, at(4, 3))
    assert nothing is None


# -- completion ----------------------------------------------------------------------


async def complete(
    client: LanguageClient, uri: str, text: str, version: int, line: int, column: int
) -> list[types.CompletionItem]:
    change(client, uri, text, version)
    result = await client.text_document_completion_async(
        types.CompletionParams(text_document=types.TextDocumentIdentifier(uri), position=at(line, column))
    )
    assert isinstance(result, types.CompletionList)
    return list(result.items)


async def test_completion_of_paths_symbols_facts_and_pins(client, doc):
    head = "---\npin: v1\n---\n"
    uri = open_document(client, doc, head)
    await published(client, uri, 1)

    items = await complete(client, uri, head + "See `vendor/cordis/src/co", 2, 3, len("See `vendor/cordis/src/co"))
    assert [i.label for i in items] == ["context.ts"]
    assert items[0].kind == types.CompletionItemKind.File
    assert isinstance(items[0].text_edit, types.TextEdit)
    assert items[0].text_edit.range == types.Range(
        at(3, len("See `vendor/cordis/src/")), at(3, len("See `vendor/cordis/src/co"))
    )
    items = await complete(client, uri, head + "`", 3, 3, 1)
    assert {"vendor/", "packages/", "package.json", "docs/"} <= {i.label for i in items}

    text = "`vendor/cordis/src/context.ts#Context.p"
    items = await complete(client, uri, head + text, 4, 3, len(text))
    labels = {i.label for i in items}
    assert {"Context", "Context.plugin", "Context.constructor", "Context.Config.timeout"} <= labels
    assert items[0].text_edit.range.start.character == text.index("#") + 1  # type: ignore[union-attr]

    text = "`claim: core."
    items = await complete(client, uri, head + text, 5, 3, len(text))
    assert "core.context-builtin-services" in {i.label for i in items}
    text = "`claim: core.context-builtin-services."
    items = await complete(client, uri, head + text, 6, 3, len(text))
    assert {"core.context-builtin-services.count", "core.context-builtin-services.names"} <= {i.label for i in items}

    items = await complete(client, uri, "---\npin: \n---\n", 7, 1, len("pin: "))
    assert [i.label for i in items] == ["v1", "v2", "v3"]
    text = "`vendor/cordis/src/context.ts:9@"
    items = await complete(client, uri, head + text, 8, 3, len(text))
    assert [i.label for i in items] == ["v1", "v2", "v3"]
    items = await complete(client, uri, head + "no code span here", 9, 3, 5)
    assert items == []


# -- code actions --------------------------------------------------------------------


async def actions(client: LanguageClient, uri: str, line: int) -> list[types.CodeAction]:
    result = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri),
            range=types.Range(at(line, 0), at(line, 0)),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )
    return [a for a in result or [] if isinstance(a, types.CodeAction)]


def single_edit(action: types.CodeAction, uri: str) -> types.TextEdit:
    assert action.edit is not None and action.edit.changes is not None
    (edit,) = action.edit.changes[uri]
    return edit


async def test_code_actions_anchor_move_and_carry(client, doc):
    uri = await opened(client, doc)
    lines = FINDING.split("\n")

    (anchor,) = [a for a in await actions(client, uri, 7) if a.title.startswith("Anchor")]
    assert anchor.title == "Anchor this citation on `setFactory`"
    edit = single_edit(anchor, uri)
    start = where(lines[7], "packages/core/agent/src/index.ts:17")
    assert edit.range == types.Range(at(7, start), at(7, start + len("packages/core/agent/src/index.ts:17")))
    assert edit.new_text == "packages/core/agent/src/index.ts:17` → `setFactory"

    found = await actions(client, uri, 8)
    (move,) = [a for a in found if a.title.startswith("Move")]
    assert move.title == "Move to where the anchor is now: vendor/cordis/src/context.ts:18"
    edit = single_edit(move, uri)
    start = where(lines[8], "vendor/cordis/src/context.ts:20")
    assert edit.range == types.Range(at(8, start), at(8, start + len("vendor/cordis/src/context.ts:20")))
    assert edit.new_text == "vendor/cordis/src/context.ts:18"
    assert not [a for a in found if a.title.startswith("Carry")]  # it does not hold: nothing to carry

    carried = {a.title: a for a in await actions(client, uri, 5) if a.title.startswith("Carry")}
    assert set(carried) == {
        "Carry to pin v2: vendor/cordis/src/context.ts:18@v2 (shifted)",
        "Carry to pin v3: vendor/cordis/src/context.ts:18@v3 (shifted)",
    }
    edit = single_edit(carried["Carry to pin v2: vendor/cordis/src/context.ts:18@v2 (shifted)"], uri)
    assert edit.new_text == "vendor/cordis/src/context.ts:18@v2"
    start = where(lines[5], "vendor/cordis/src/context.ts:15")
    assert edit.range.start == at(5, start)

    # The edits, made, give a document that holds.
    fixed = FINDING.replace(
        "`packages/core/agent/src/index.ts:17`", "`packages/core/agent/src/index.ts:17` → `setFactory`"
    )
    fixed = fixed.replace("context.ts:20", "context.ts:18").replace("context.ts:15`", "context.ts:18@v2`")
    change(client, uri, fixed, 2)
    assert {d.code for d in await published(client, uri, 2)} == {"phantom", "suspect", "contradicted"}


async def test_a_suspect_permalink_is_offered_the_lines_its_text_describes(client, doc, fixture_repo):
    """A document not written for dshaudit links lines 2-3 of the agent module for `setFactory`,
    which that module declares at 17-21: the action points the link there."""
    link = f"https://example.invalid/dsh/blob/{fixture_repo.shas['v1']}/packages/core/agent/src/index.ts"
    text = f"- [`AgentRegistry.setFactory` sets the factory]({link}#L2-L3)\n"
    uri = await opened(client, doc, text)
    found = await actions(client, uri, 0)
    (point,) = [a for a in found if a.title.startswith("Point")]
    assert point.title == "Point this permalink at the lines its text describes"
    edit = single_edit(point, uri)
    assert edit.new_text == f"{link}#L17-L21"
    assert edit.range.start == at(0, text.index(link))


async def test_carrying_a_citation_of_a_renamed_file(client, doc):
    text = "---\npin: v1\n---\nThe registry (`packages/core/agent/src/index.ts:17` → `setFactory`).\n"
    uri = open_document(client, doc, text)
    await published(client, uri, 1)
    titles = [a.title for a in await actions(client, uri, 3)]
    assert "Carry to pin v2: packages/core/agent/src/registry.ts:17@v2 (renamed)" in titles


# -- definition and the virtual document -----------------------------------------------


async def test_definition_opens_the_cited_blob_at_its_lines(client, doc, fixture_repo):
    uri = await opened(client, doc)
    line = FINDING.split("\n")[5]
    found = await client.text_document_definition_async(
        types.DefinitionParams(
            text_document=types.TextDocumentIdentifier(uri), position=at(5, where(line, "src/context.ts:15"))
        )
    )
    assert isinstance(found, types.Location)
    sha = fixture_repo.shas["v1"]
    assert found.uri == f"dshaudit://{sha}/vendor/cordis/src/context.ts"
    cited = CONTEXT_V1.split("\n")[14]
    assert found.range == types.Range(at(14, 0), at(14, len(cited)))

    content = await client.workspace_text_document_content_async(types.TextDocumentContentParams(uri=found.uri))
    assert content.text == CONTEXT_V1
    assert content.text.split("\n")[found.range.start.line] == "    this.reflect = new ReflectService(self)"


async def test_the_server_announces_its_virtual_documents(lsp_workspace):
    folder, env = lsp_workspace
    config = ClientServerConfig(server_command=[sys.executable, "-m", "dshaudit", "lsp"], server_env=env)
    client = await config.start()
    result = await client.initialize_session(types.InitializeParams(capabilities=client_capabilities("neovim")))
    try:
        capabilities = result.capabilities
        assert capabilities.workspace is not None and capabilities.workspace.text_document_content is not None
        assert list(capabilities.workspace.text_document_content.schemes) == ["dshaudit"]
        assert capabilities.hover_provider and capabilities.definition_provider and capabilities.code_action_provider
        assert capabilities.completion_provider is not None
        assert "`" in (capabilities.completion_provider.trigger_characters or [])
    finally:
        await client.shutdown_session()
        await client.stop()


# -- opening DSH ---------------------------------------------------------------------


async def test_a_first_clone_is_reported_as_progress_and_shutdown_is_clean(tmp_path, fixture_repo):
    """No DSH_REPO: the configuration's upstream (here a file:// URL) is cloned
    into the cache on first use, with $/progress, and diagnostics follow."""
    (tmp_path / "dshaudit.toml").write_text(
        write_config(tmp_path, fixture_repo)
        .read_text()
        .replace("https://example.invalid/dsh", fixture_repo.path.as_uri())
    )
    env = {k: v for k, v in os.environ.items() if k != "DSH_REPO"}
    env["DSHAUDIT_CACHE_DIR"] = str(tmp_path / "cache")
    client = await start(tmp_path, env)
    uri = open_document(client, tmp_path / "f.md", FINDING)
    diagnostics = await published(client, uri, 1, timeout=60)
    assert {d.code for d in diagnostics} >= {"content_mismatch", "suspect"}
    ((token, reports),) = [(t, r) for t, r in client.progress_reports.items() if r]
    assert isinstance(reports[0], types.WorkDoneProgressBegin) and reports[0].title == "dshaudit"
    assert isinstance(reports[-1], types.WorkDoneProgressEnd) and reports[-1].message == "DSH is open"
    assert list((tmp_path / "cache" / "repos").glob("*.git"))
    await client.shutdown_session()
    assert client._server is not None and client._server.returncode == 0
    await client.stop()
