"""Where DSH comes from: paths, bare mirrors, $DSH_REPO, the cache, and unusable clones."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from conftest import run_cli, write_findings
from fixture_repo import git

CITE = "`vendor/cordis/src/context.ts:14` → `this.fiber`\n"


def test_bare_clone_without_core_bare_config(workspace, fixture_repo):
    assert not (fixture_repo.bare / "config").exists()
    write_findings(workspace, CITE)
    run = run_cli("check", "--repo", str(fixture_repo.bare))
    assert run.exit_code == 0, run.stderr
    assert run.stdout.endswith("1 citations in 1 files: 1 ok, 0 failed\n")


def test_repo_option_beats_environment(workspace, fixture_repo, monkeypatch):
    monkeypatch.setenv("DSH_REPO", str(workspace / "nowhere"))
    write_findings(workspace, CITE)
    assert run_cli("check").exit_code == 3
    assert run_cli("check", "--repo", str(fixture_repo.path)).exit_code == 0


def test_missing_repository_is_exit_3(workspace, monkeypatch):
    monkeypatch.setenv("DSH_REPO", str(workspace / "nowhere"))
    write_findings(workspace, CITE)
    run = run_cli("check")
    assert run.exit_code == 3
    assert run.stderr.startswith("dshaudit: ") and "no such DSH clone" in run.stderr
    assert len(run.stderr.splitlines()) == 1


def test_missing_sha_is_exit_3_naming_it(workspace, fixture_repo, tmp_path):
    old = tmp_path / "old.git"
    git(
        tmp_path,
        "clone",
        "-q",
        "--bare",
        "--no-local",
        "--single-branch",
        "--no-tags",
        "--branch",
        "v1",
        str(fixture_repo.path),
        str(old),
    )
    write_findings(workspace, CITE, pin="v2")
    run = run_cli("check", "--repo", str(old))
    sha = fixture_repo.shas["v2"]
    assert run.exit_code == 3
    assert run.stderr == (
        f"dshaudit: commit pin v2 = {sha} is not in the DSH clone at {old}; "
        f"get it with: git --git-dir={old} fetch origin {sha}\n"
    )


def test_shallow_clone_never_passes(workspace, fixture_repo, tmp_path):
    shallow = tmp_path / "shallow.git"
    git(tmp_path, "clone", "-q", "--bare", "--depth", "1", f"file://{fixture_repo.path}", str(shallow))
    assert (shallow / "shallow").exists()
    write_findings(workspace, CITE, pin="v3")
    run = run_cli("check", "--repo", str(shallow))
    assert run.exit_code == 3
    assert "is a shallow clone" in run.stderr and "--unshallow" in run.stderr


def test_a_partial_clone_whose_remote_is_gone_is_a_one_line_error(workspace, fixture_repo, tmp_path):
    """A clone made with --filter=blob:none holds no file contents: git fetches each from the
    clone's remote when it is read. With that remote out of reach, the check says why it
    cannot read the cited file, in one line, rather than stopping on git's silence."""
    source = tmp_path / "source.git"
    git(tmp_path, "clone", "-q", "--bare", f"file://{fixture_repo.path}", str(source))
    git(source, "config", "uploadpack.allowFilter", "true")
    partial = tmp_path / "partial.git"
    git(tmp_path, "clone", "-q", "--bare", "--filter=blob:none", f"file://{source}", str(partial))
    source.rename(tmp_path / "gone.git")
    write_findings(workspace, CITE, pin="v3")
    run = run_cli("check", "--repo", str(partial))
    assert run.exit_code == 3, run.stderr
    assert run.stderr.count("\n") == 1 and run.stderr.startswith("dshaudit: "), run.stderr
    assert "partial clone" in run.stderr and "--filter" in run.stderr, run.stderr


def test_cached_clone_made_on_first_use_then_reused(workspace, fixture_repo, monkeypatch):
    url = f"file://{fixture_repo.path}"
    write_findings(workspace, CITE)
    first = run_cli("check", "--repo", url)
    assert first.exit_code == 0, first.stderr
    clones = list((workspace / "cache" / "repos").glob("*.git"))
    assert len(clones) == 1 and (clones[0] / "HEAD").exists()
    assert not list((workspace / "cache" / "repos").glob(".clone-*")), "temporary clone left behind"
    marker = clones[0] / "marker"
    marker.write_text("still the same clone")
    assert run_cli("check", "--repo", url).exit_code == 0
    assert marker.exists()


def test_a_cached_clone_is_made_whatever_remote_name_the_user_gives_clones(workspace, fixture_repo, monkeypatch):
    """`clone.defaultRemoteName` renames the remote a clone makes: the cached clone's remote is
    still `origin`, which its tags and later commits are fetched from."""
    settings = workspace / "user-gitconfig"
    settings.write_text("[clone]\n\tdefaultRemoteName = upstream\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(settings))
    write_findings(workspace, CITE)
    run = run_cli("check", "--repo", f"file://{fixture_repo.path}")
    assert run.exit_code == 0, run.stderr


def test_upstream_url_from_config_is_the_default(workspace, fixture_repo, monkeypatch):
    monkeypatch.delenv("DSH_REPO")
    text = (workspace / "dshaudit.toml").read_text()
    (workspace / "dshaudit.toml").write_text(text.replace("https://example.invalid/dsh", f"file://{fixture_repo.path}"))
    write_findings(workspace, CITE)
    assert run_cli("check").exit_code == 0
    assert len(list((workspace / "cache" / "repos").glob("*.git"))) == 1


def test_unreachable_url_is_exit_3(workspace, tmp_path):
    write_findings(workspace, CITE)
    run = run_cli("check", "--repo", f"file://{tmp_path}/no-such-repo")
    assert run.exit_code == 3
    last = run.stderr.splitlines()[-1]
    assert last.startswith("dshaudit: file://") and "cannot clone: fatal:" in last


@pytest.mark.parametrize("url", ["ext::sh -c touch% /tmp/pwned", "file::/tmp/x", "fd::3"])
def test_dangerous_url_schemes_refused(workspace, url):
    write_findings(workspace, CITE)
    run = run_cli("check", "--repo", url)
    assert run.exit_code == 2
    assert "refusing to clone from this URL" in run.stderr


def test_findings_without_citations_need_no_repository(workspace, monkeypatch):
    monkeypatch.setenv("DSH_REPO", str(workspace / "nowhere"))
    write_findings(workspace, "No citations here.\n")
    run = run_cli("check")
    assert run.exit_code == 0
    assert run.stdout == "0 citations in 0 files: 0 ok, 0 failed\n"


def test_console_script_runs(workspace, fixture_repo):
    """The installed entry point, as a user runs it, in a real process."""
    write_findings(workspace, CITE)
    script = Path(sys.executable).parent / "dshaudit"
    proc = subprocess.run([str(script), "check"], capture_output=True, text=True, cwd=workspace)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.endswith("1 ok, 0 failed\n")


def test_cached_clone_fetches_only_when_a_pin_is_missing(workspace, fixture_repo, tmp_path):
    upstream = tmp_path / "upstream"
    git(tmp_path, "clone", "-q", "--no-local", "--branch", "v1", str(fixture_repo.path), str(upstream))
    url = f"file://{upstream}"
    write_findings(workspace, CITE)
    first = run_cli("check", "--repo", url)
    assert first.exit_code == 0 and "cloning" in first.stderr
    again = run_cli("check", "--repo", url)
    assert again.exit_code == 0 and again.stderr == ""  # nothing missing: no clone, no fetch
    (upstream / "NEW.md").write_text("new upstream work\n")
    git(upstream, "checkout", "-q", "-b", "main")
    git(upstream, "add", "NEW.md")
    git(upstream, "commit", "-q", "-m", "new upstream commit")
    new_sha = git(upstream, "rev-parse", "HEAD")
    write_findings(workspace, f"`NEW.md:1@{new_sha}` → `new upstream work`\n")
    run = run_cli("check", "--repo", url)
    assert run.exit_code == 0, run.stdout + run.stderr
    assert f"fetching {url} for commit {new_sha}" in run.stderr


def test_unknown_pin_option_is_exit_2(workspace):
    write_findings(workspace, CITE)
    run = run_cli("check", "--pin", "--upload-pack=touch /tmp/x")
    assert run.exit_code == 2
    assert run.stderr.startswith("dshaudit: --pin: pin '--upload-pack=touch /tmp/x' is not in dshaudit.toml")


def test_a_twin_starts_with_the_trees_listed_and_reads_through_its_own_handle(fixture_repo):
    from dshaudit.git.repository import DshRepository

    here = DshRepository(fixture_repo.bare, "fixture")
    sha = fixture_repo.shas["v2"]
    snapshot = here.snapshot(sha)
    listed = snapshot.index()
    twin = here.twin()
    # The twin does not list the tree again (a forked check process does not pay for it twice) ...
    again = twin.snapshot(sha)
    assert again.index() is listed and again.paths() == snapshot.paths()
    # ... and reads blobs through its own git process, not the original's.
    assert again.repository is twin
    path = again.paths()[0]
    assert again.read(again.blob_ids()[path]) == snapshot.read(snapshot.blob_ids()[path])
    assert twin.snapshot(fixture_repo.shas["v1"]).index() is not None  # a tree not listed before is listed as usual


def test_a_handle_reads_each_blob_from_git_once_however_it_is_asked_for(fixture_repo, monkeypatch):
    """The facts, the citations and the claims on DSH's documents read many of the same
    files, one blob at a time or many at once: git is asked for each blob once."""
    from dshaudit.git import objects
    from dshaudit.git.repository import DshRepository

    one_by_one: list[str] = []
    real_read = objects.ObjectReader.read
    monkeypatch.setattr(
        objects.ObjectReader, "read", lambda self, oid: (one_by_one.append(oid), real_read(self, oid))[1]
    )
    in_batches: list[list[str]] = []
    real_each = DshRepository._read_each
    monkeypatch.setattr(
        DshRepository, "_read_each", lambda self, ids: (in_batches.append(list(ids)), real_each(self, ids))[1]
    )
    handle = DshRepository(fixture_repo.bare, "fixture")
    try:
        blobs = handle.snapshot(fixture_repo.shas["v2"]).blob_ids()
        first, second = sorted(blobs.values())[:2]
        alone = handle.read_blob(second)
        together = list(handle.each_blob([second, "1" * 40, first, second]))  # a missing id is skipped
        assert together == [(first, handle.read_blob(first)), (second, alone)]  # in id order
        assert handle.read_blobs([first, second]) == {first: together[0][1], second: alone}
        assert one_by_one == [second] and in_batches == [sorted(["1" * 40, first]), []]
    finally:
        handle.close()


def test_findings_with_a_pin_and_nothing_to_look_up_open_no_clone(workspace, monkeypatch):
    from dshaudit.git.repository import DshRepository

    monkeypatch.delenv("DSH_REPO", raising=False)
    monkeypatch.setattr(DshRepository, "open", classmethod(lambda cls, *a: pytest.fail("the clone was opened")))
    write_findings(workspace, "No citations here, and no code named.\n")
    run = run_cli("check", "--pin", "v1")
    assert run.exit_code == 0, run.stderr


def test_a_handle_asks_git_once_what_a_revision_names_until_a_fetch(fixture_repo, tmp_path, monkeypatch):
    """The language server re-checks a document at every keystroke through one handle: it
    remembers what each revision names, and forgets it when a fetch may have changed that."""
    from dshaudit.git import run

    handle, new = _cached_clone_one_commit_behind(fixture_repo, tmp_path)
    asked: list[str] = []
    real = run.run
    monkeypatch.setattr(run, "run", lambda args, *a, **k: (asked.append(args[0]), real(args, *a, **k))[1])
    try:
        assert handle.resolve_abbreviated(new[:10]) is None
        assert handle.resolve_abbreviated(new[:10]) is None
        assert asked.count("rev-parse") == 1
        handle.fetch_missing(new)
        assert handle.resolve_abbreviated(new[:10]) == new
    finally:
        handle.close()


def test_a_handle_asks_git_once_what_kind_an_object_is_until_a_fetch(fixture_repo, tmp_path, monkeypatch):
    """Digits in a document are asked about before the names' pass and again for the message:
    the handle answers the second time itself, and asks again once a fetch may have brought the object."""
    from dshaudit.git import objects

    handle, new = _cached_clone_one_commit_behind(fixture_repo, tmp_path)
    asked: list[str] = []
    real = objects.ObjectReader.kind
    monkeypatch.setattr(objects.ObjectReader, "kind", lambda self, oid: (asked.append(oid), real(self, oid))[1])
    try:
        assert handle.object_type(new) is None and handle.commit_of(new) is None
        assert asked == [new]
        handle.fetch_missing(new)
        assert handle.object_type(new) == "commit" and handle.commit_of(new) == new
    finally:
        handle.close()


def _cached_clone_one_commit_behind(fixture_repo, tmp_path):
    """A handle on a cached bare clone whose upstream has one commit more; and that commit."""
    from dshaudit.git.repository import DshRepository

    upstream, clone = tmp_path / "upstream", tmp_path / "clone.git"
    git(tmp_path, "clone", "-q", "--no-local", str(fixture_repo.path), str(upstream))
    git(tmp_path, "clone", "-q", "--bare", "--no-local", str(upstream), str(clone))
    (upstream / "NEW.md").write_text("new upstream work\n")
    git(upstream, "add", "NEW.md")
    git(upstream, "commit", "-q", "-m", "new upstream commit")
    return DshRepository(clone, f"file://{upstream}", cached=True), git(upstream, "rev-parse", "HEAD")
