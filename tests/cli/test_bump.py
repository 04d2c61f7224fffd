"""`dshaudit bump` on the fixture repository: documents moved to a new pin in place, and the
pull-request body that says what moved and what needs a person."""

from __future__ import annotations

from markdown_it import MarkdownIt

from conftest import run_cli, write_findings

WEB = "https://example.invalid/dsh"  # the fixture config's upstream URL
CONTEXT = "vendor/cordis/src/context.ts"
APP = "packages/ui/src/App.tsx"


def _page(fixture_repo) -> str:
    v1 = fixture_repo.shas["v1"]
    return (
        f"- The fiber: [context]({WEB}/blob/{v1}/{CONTEXT}#L14)\n"
        f"- The whole file: [context]({WEB}/blob/{v1}/{CONTEXT})\n"
        f"- A folder: [vendor]({WEB}/tree/{v1}/vendor/cordis)\n"
        f"- A branch: [main]({WEB}/blob/main/{CONTEXT})\n"
        f"- Lost: [app]({WEB}/blob/{v1}/{APP}#L4)\n"
    )


def test_bump_moves_every_permalink_form_and_says_what_needs_a_person(workspace, fixture_repo, tmp_path):
    v2 = fixture_repo.shas["v2"]
    page = workspace / "findings" / "links.md"
    page.write_bytes(("\ufeff" + _page(fixture_repo)).replace("\n", "\r\n").encode("utf-8"))
    pr = tmp_path / "pr.md"
    run = run_cli("bump", "--to", "v2", "--output", str(pr))
    assert run.exit_code == 1, run.stderr  # the App line was edited: a person must look
    written = page.read_bytes().decode("utf-8")
    assert written.startswith("\ufeff") and written.count("\r\n") == 5 and "\n" not in written.replace("\r\n", "")
    lines = written.lstrip("\ufeff").split("\r\n")
    assert lines[0] == f"- The fiber: [context]({WEB}/blob/{v2}/{CONTEXT}#L17)"
    assert lines[1] == f"- The whole file: [context]({WEB}/blob/{v2}/{CONTEXT})"
    assert lines[2] == f"- A folder: [vendor]({WEB}/tree/{v2}/vendor/cordis)"
    assert lines[3] == f"- A branch: [main]({WEB}/blob/{v2}/{CONTEXT})"  # pinned to the release too
    assert lines[4] == _page(fixture_repo).split("\n")[4]  # left exactly as it was
    body = pr.read_text()
    assert "### Moved" in body and f"`{CONTEXT}:17`" in body
    assert "### Fix by hand" in body and f"`findings/links.md:5`: `{APP}:4`" in body
    # The branch is ahead of v2: carried back through the diff, with no history to walk.
    assert "were carried through the diff to v2, which is not ahead of them" in body
    # It renders as GitHub-flavoured Markdown: its tables are tables.
    tokens = MarkdownIt("commonmark").enable("table").parse(body)
    assert [t.type for t in tokens].count("table_open") >= 1


def test_dry_run_writes_nothing_and_prints_the_body(workspace, fixture_repo):
    page = workspace / "findings" / "links.md"
    page.write_text(_page(fixture_repo))
    before = page.read_bytes()
    run = run_cli("bump", "--to", "v2", "--dry-run")
    assert run.exit_code == 1, run.stderr
    assert page.read_bytes() == before
    assert run.stdout.startswith("## Move to v2") and "Nothing was written" in run.stdout


def test_a_clean_move_exits_0_and_front_matter_pins_move_too(workspace, fixture_repo):
    doc = write_findings(workspace, f"The fiber (`{CONTEXT}:14` → `this.fiber`).\n")
    run = run_cli("bump", "--to", "v2")
    assert run.exit_code == 0, run.stdout + run.stderr
    assert "pin: v2" in doc.read_text() and f"`{CONTEXT}:17`" in doc.read_text()
    assert "Every citation moved cleanly" in run.stdout


def test_branch_links_are_pinned_to_the_release_unless_kept(workspace, fixture_repo):
    v3 = fixture_repo.shas["v3"]
    page = workspace / "findings" / "links.md"
    page.write_text(f"- A branch: [main]({WEB}/blob/main/{CONTEXT})\n")
    assert run_cli("bump", "--to", "v3", "--keep-branches").exit_code == 0
    assert page.read_text() == f"- A branch: [main]({WEB}/blob/main/{CONTEXT})\n"
    assert run_cli("bump", "--to", "v3").exit_code == 0
    assert page.read_text() == f"- A branch: [main]({WEB}/blob/{v3}/{CONTEXT})\n"


def test_a_file_link_moves_only_while_the_names_beside_it_are_declared_there(
    workspace, fixture_repo, tmp_path, monkeypatch
):
    from conftest import extend_fixture

    shas = extend_fixture(
        workspace,
        fixture_repo,
        tmp_path,
        monkeypatch,
        (
            "first",
            {"packages/acp/src/bridge.ts": "export function startBridge() {}\nexport function stopBridge() {}\n"},
        ),
        ("second", {"packages/acp/src/bridge.ts": "export function startBridge() {}\n"}),
    )
    link = f"{WEB}/blob/{shas['first']}/packages/acp/src/bridge.ts"
    page = workspace / "findings" / "links.md"
    text = f"- [`bridge.ts`]({link}): `startBridge`\n- [`bridge.ts`]({link}): `startBridge`, `stopBridge`\n"
    page.write_text(text)
    run = run_cli("bump", "--to", "second")
    assert run.exit_code == 1, run.stdout + run.stderr
    lines = page.read_text().split("\n")
    assert lines[0] == f"- [`bridge.ts`]({WEB}/blob/{shas['second']}/packages/acp/src/bridge.ts): `startBridge`"
    assert lines[1] == text.split("\n")[1]  # stopBridge is gone: left as it was
    assert "\\`stopBridge\\`, listed beside it, is not declared in packages/acp/src/bridge.ts at second" in run.stdout


def test_raw_and_plain_forms_and_a_renamed_file_are_bumped(workspace, fixture_repo):
    """v2 moves the agent module to registry.ts: the link follows the rename."""
    v1, v2 = fixture_repo.shas["v1"], fixture_repo.shas["v2"]
    page = workspace / "findings" / "links.md"
    page.write_text(
        f"- [raw](https://raw.example.invalid/{v1}/{CONTEXT})\n"
        f"- [plain]({WEB}/blob/{v1}/{CONTEXT}?plain=1#L14)\n"
        f"- [agent]({WEB}/blob/{v1}/packages/core/agent/src/index.ts)\n"
    )
    run = run_cli("bump", "--to", "v2")
    assert run.exit_code == 0, run.stdout + run.stderr
    lines = page.read_text().split("\n")
    assert lines[1] == f"- [plain]({WEB}/blob/{v2}/{CONTEXT}?plain=1#L17)"
    assert lines[2] == f"- [agent]({WEB}/blob/{v2}/packages/core/agent/src/registry.ts)"
    assert lines[0] == f"- [raw](https://raw.example.invalid/{v1}/{CONTEXT})"  # another host: not DSH's link


def test_an_output_onto_a_document_is_refused_before_anything_moves(workspace, fixture_repo):
    page = workspace / "findings" / "links.md"
    page.write_text(_page(fixture_repo))
    before = page.read_bytes()
    run = run_cli("bump", "--to", "v2", "--output", "findings/links.md")
    assert run.exit_code == 2 and "which this run read" in run.stderr
    assert page.read_bytes() == before  # not moved, not overwritten
