"""A check run again on the same inputs is answered with the outcome kept from the
last run (app/memo.py): the same bytes in every format, and computed afresh as soon
as any input changes, a ref of the clone included."""

from __future__ import annotations

import pytest

from conftest import run_cli, write_findings
from fixture_repo import bare_clone, commit_elsewhere, git

WEB = "https://example.invalid/dsh"  # the fixture config's upstream URL
CONTEXT = "vendor/cordis/src/context.ts"
KEPT = "the outcome of an earlier run of the same inputs"
BODY = (
    f"Cited: `{CONTEXT}:14` → `this.fiber`, and `{CONTEXT}:99` → `nothing`.\n"
    "A name: `createAgent`; one that is not: `neverDeclaredAnywhere`.\n"
)


def check(*args: str):
    run = run_cli("-v", "check", *args)
    assert run.exit_code in (0, 1), run.stderr
    return run


@pytest.mark.parametrize("fmt", ["text", "json", "sarif", "junit", "github", "markdown"])
def test_a_second_run_is_the_kept_outcome_byte_for_byte(workspace, fmt):
    write_findings(workspace, BODY)
    first = check("--format", fmt)
    second = check("--format", fmt)
    assert KEPT not in first.stderr and KEPT in second.stderr
    assert (second.stdout, second.exit_code) == (first.stdout, first.exit_code)
    assert first.exit_code == 1  # the run had something to report, not nothing


def test_any_changed_input_is_checked_afresh(workspace, fixture_repo):
    path = write_findings(workspace, BODY)
    check()
    path.write_text(path.read_text().replace(":99", ":15"))
    assert KEPT not in check().stderr  # the document
    assert KEPT not in check("--strict").stderr  # an option
    with (workspace / "dshaudit.toml").open("a") as config:
        config.write("# a comment changes no setting\n")
    assert KEPT in check().stderr
    with (workspace / "dshaudit.toml").open("a") as config:
        config.write(f'extra = "{fixture_repo.shas["v2"]}"\n')  # one more pin under [pins]
    assert KEPT not in check().stderr  # the configuration


def test_without_the_cache_nothing_is_kept(workspace):
    write_findings(workspace, BODY)
    check()
    assert KEPT not in run_cli("-v", "--no-cache", "check").stderr


def test_a_moved_branch_is_read_again(workspace, fixture_repo, tmp_path, monkeypatch):
    """A permalink to a branch holds the commit the branch names today: once the
    branch moves, the kept outcome is not used, and the new commit is read."""
    clone = bare_clone(fixture_repo, tmp_path / "clone")
    monkeypatch.setenv("DSH_REPO", str(clone))
    git(clone, "update-ref", "refs/heads/moving", fixture_repo.shas["v1"])
    write_findings(workspace, f"Branch: {WEB}/blob/moving/{CONTEXT}#L14 → `this.fiber`\n")
    first = run_cli("check", "--format", "json").json["citations"][0]
    assert check().stderr.count(KEPT) == 1
    git(clone, "update-ref", "refs/heads/moving", fixture_repo.shas["v3"])
    moved = run_cli("-v", "check", "--format", "json")
    assert KEPT not in moved.stderr
    assert (first["resolved"]["sha"], moved.json["citations"][0]["resolved"]["sha"]) == (
        fixture_repo.shas["v1"],
        fixture_repo.shas["v3"],
    )


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_commit_fetched_since_is_read_again(workspace, fixture_repo, tmp_path, monkeypatch, jobs):
    """A commit the text names and the clone lacked: once fetched, the check is made afresh,
    whether the names were looked up here or in a process of their own."""
    clone = bare_clone(fixture_repo, tmp_path / "clone")
    monkeypatch.setenv("DSH_REPO", str(clone))
    work = tmp_path / "work"
    later = commit_elsewhere(fixture_repo, work, {"later.ts": "export const later = 1\n"})
    write_findings(workspace, f"The fix landed in commit `{later[:10]}`.\n")

    def commit_status(run):
        return [r["status"] for r in run.json["references"] if r["kind"] == "commit"]

    assert commit_status(run_cli("--jobs", jobs, "check", "--format", "json")) == ["unknown_commit"]
    git(clone, "fetch", "-q", str(work), "later")
    fetched = run_cli("-v", "--jobs", jobs, "check", "--format", "json")
    assert KEPT not in fetched.stderr and commit_status(fetched) == ["ok"]


def test_the_pages_of_one_repository_list_its_code_once(workspace, monkeypatch):
    """Pages not written for dshaudit add the state of their repository's code files to
    the key of the kept outcome: a run on many pages of one repository lists it once,
    not once a page (a warm run on a real handbook would otherwise start a git a page)."""
    from dshaudit.documents import ownrepo

    git(workspace, "init", "-q")
    (workspace / "tool.py").write_text("def helper():\n    return 1\n")
    git(workspace, "add", "tool.py")
    pages = ["guide.md", "more/one.md", "more/two.md"]
    for page in pages:
        (workspace / page).parent.mkdir(exist_ok=True)
        (workspace / page).write_text(f"# {page}\n\nSee `{CONTEXT}:14` → `this.fiber`; `helper` is ours.\n")
    listed: list[str] = []
    code_files = ownrepo._code_files
    monkeypatch.setattr(ownrepo, "_code_files", lambda root: listed.append(root) or code_files(root))
    first = check(*pages, "--pin", "v1")
    listed.clear()
    second = check(*pages, "--pin", "v1")
    assert KEPT in second.stderr and (second.stdout, second.exit_code) == (first.stdout, first.exit_code)
    assert listed == [str(workspace.resolve())]
    (workspace / "tool.py").write_text("def helper():\n    return 2\n\n\ndef other():\n    return 3\n")
    assert KEPT not in check(*pages, "--pin", "v1").stderr  # the repository's code changed
