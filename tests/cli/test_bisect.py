"""`dshaudit bisect` finds the planted commit, for a citation and for a fact."""

from __future__ import annotations

import pytest

from conftest import run_cli
from fixture_repo import _commit, _write, git

EVENTS = "export const KNOWN_SESSION_EVENT_TYPES: ReadonlySet<string> = new Set([\n{}])\n"


@pytest.fixture
def history(tmp_path, monkeypatch):
    """Twelve commits; commit 7 inserts lines above the cited one and adds an event type."""
    root = tmp_path / "hist"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    shas = []
    events = ["'a/one'", "'a/two'"]
    for i in range(12):
        header = "// a header line\n// another\n" if i >= 7 else ""
        if i == 7:
            events.append("'a/three'")
        _write(
            root,
            "src/context.ts",
            f"{header}export class Context {{\n  constructor() {{\n    this.fiber = new Fiber()\n  }}\n}}\n",
        )
        _write(
            root, "packages/core/session/src/known-event-types.ts", EVENTS.format("".join(f"  {e},\n" for e in events))
        )
        _write(root, "NOTES.md", f"commit {i}\n")
        shas.append(_commit(root, f"change {i}", f"2026-08-{i + 1:02d}T10:00:00Z", f"c{i}"))
    work = tmp_path / "work"
    (work / "findings").mkdir(parents=True)
    (work / "dshaudit.toml").write_text(f'[pins]\ngood = "{shas[0]}"\nbad = "{shas[-1]}"\n')
    (work / "findings" / "a.md").write_text("---\npin: good\n---\nSee `src/context.ts:3` → `this.fiber`.\n")
    monkeypatch.chdir(work)
    monkeypatch.setenv("DSH_REPO", str(root))
    return shas


def test_bisect_a_citation_in_findings(history):
    run = run_cli("bisect", "findings/a.md:4", "--good", "good", "--bad", "bad", "--format", "json")
    assert run.exit_code == 0, run.stderr
    doc = run.json
    assert doc["first"]["sha"] == history[7]
    assert doc["first"]["subject"] == "change 7"
    assert doc["first"]["date"].startswith("2026-08-08")
    assert (doc["before"], doc["after"]) == ("ok", "content_mismatch")
    assert doc["commits"] == 11 and doc["probes"] <= 6


def test_bisect_a_bare_citation_and_a_fact(history):
    run = run_cli("bisect", "src/context.ts:3", "--anchor", "this.fiber", "--good", "good", "--bad", "bad")
    assert run.stdout.splitlines()[0].startswith(history[7])
    run = run_cli("bisect", "session.known-event-types.count", "--good", "good", "--bad", "bad", "--format", "json")
    assert run.json["first"]["sha"] == history[7]
    assert (run.json["before"], run.json["after"]) == ("2", "3")


def test_bisect_when_nothing_changed(history):
    run = run_cli("bisect", "src/context.ts:3", "--anchor", "this.fiber", "--good", "good", "--bad", history[5])
    assert run.exit_code == 0
    assert run.stdout.strip().endswith("the same at good and " + history[5][:12] + " (ok)")


def test_bisect_bad_input(history):
    run = run_cli("bisect", "no such thing", "--good", "good", "--bad", "bad")
    assert run.exit_code == 2 and "neither a findings location" in run.stderr
    run = run_cli("bisect", "findings/a.md:2", "--good", "good", "--bad", "bad")
    assert run.exit_code == 2 and "no citation on that line" in run.stderr
    run = run_cli("bisect", "src/context.ts:3", "--good", "bad", "--bad", "good")
    assert run.exit_code == 2 and "is not an ancestor" in run.stderr


def test_git_failing_to_answer_is_not_read_as_not_an_ancestor(history):
    """`git merge-base --is-ancestor` says "no" with status 1; a commit it cannot read is another failure."""
    from dshaudit.core.errors import InputError, RepoError
    from dshaudit.git.log import first_parent_path
    from dshaudit.git.repository import DshRepository

    repository = DshRepository.open(None, "unused")
    with pytest.raises(InputError, match="is not an ancestor"):
        first_parent_path(repository, history[-1], history[0])
    with pytest.raises(RepoError, match="cannot tell whether 000000000000 is an ancestor"):
        first_parent_path(repository, "0" * 40, history[0])
