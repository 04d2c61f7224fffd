"""The files of a new pin written out while the interpreter imports (`prefetch`):
started only for a check at another pin than the one the last check noted, used
only for files written with the blob asked for, the same greps either way."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

import pytest
from conftest import write_findings

from dshaudit import prefetch
from dshaudit.fileindex import FileIndex
from dshaudit.repository import DshRepository

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="prefetch runs on Linux only (folders there tell case apart)")


@pytest.fixture
def bare(fixture_repo, tmp_path):
    """A bare clone of the fixture of its own (a test may add `info/attributes` to it)."""
    path = tmp_path / "clone.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(fixture_repo.path), str(path)], check=True)
    return path


@pytest.fixture
def noted(bare, fixture_repo, tmp_path, monkeypatch):
    """The note a check at v1 leaves, in a cache folder of this test's own."""
    monkeypatch.setenv("DSHAUDIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(prefetch, "_started", None)
    prefetch.remember(str(bare), dict(fixture_repo.shas), fixture_repo.shas["v1"])
    return bare


def test_a_check_at_another_pin_than_the_noted_one_is_planned(noted, fixture_repo):
    v1, v3 = fixture_repo.shas["v1"], fixture_repo.shas["v3"]
    repo = ["--repo", str(noted)]
    assert prefetch._plan(["check", "--pin", "v3", *repo]) == (str(noted), v1, v3)
    assert prefetch._plan(["-q", "check", "findings", f"--repo={noted}", "--pin=v3"]) == (str(noted), v1, v3)
    assert prefetch._plan(["check", "--pin", v3, *repo]) == (str(noted), v1, v3)  # a SHA given as it is
    for argv in (["check", *repo], ["check", "--pin", "v1", *repo], ["report", "--pin", "v3", *repo],
                 ["--no-cache", "check", "--pin", "v3", *repo], ["check", "--pin", "nosuch", *repo],
                 ["check", "--pin", "v3", "--repo", "https://example.invalid/x.git"]):
        assert prefetch._plan(argv) is None, argv


def test_no_plan_without_the_note_for_this_clone_or_where_attributes_may_apply(noted, fixture_repo, tmp_path,
                                                                              monkeypatch):
    argv = ["check", "--pin", "v3", "--repo", str(noted)]
    monkeypatch.setenv("DSHAUDIT_NO_CACHE", "1")
    assert prefetch._plan(argv) is None
    monkeypatch.delenv("DSHAUDIT_NO_CACHE")
    (noted / "info").mkdir(exist_ok=True)
    (noted / "info" / "attributes").write_text("*.ts binary\n")
    assert prefetch._plan(argv) is None
    (noted / "info" / "attributes").unlink()
    assert prefetch._plan(argv) is not None
    prefetch.remember(str(fixture_repo.path / ".git"), dict(fixture_repo.shas), fixture_repo.shas["v1"])
    assert prefetch._plan(argv) is None  # the note is another clone's
    (tmp_path / "cache" / prefetch.NOTE).write_text("{not json")
    assert prefetch._plan(argv) is None


def _changed(git_dir: str, old: str, new: str) -> list[str]:
    out = subprocess.run(["git", f"--git-dir={git_dir}", "diff-tree", "-r", "-z", "--name-only", "--no-renames", old, new],
                         capture_output=True, check=True).stdout.decode()
    return [p for p in out.split("\0") if p]


@linux_only
def test_the_changed_files_are_written_with_their_blobs_and_grepped_as_the_blobs_are(noted, fixture_repo):
    git_dir = str(noted)
    prefetch.start(["check", "--pin", "v3", "--repo", git_dir])
    started = prefetch._started
    assert started is not None
    try:
        snap = DshRepository(noted, "fixture").snapshot(fixture_repo.shas["v3"])
        blobs = snap.blob_ids()
        changed = [p for p in _changed(git_dir, fixture_repo.shas["v1"], fixture_repo.shas["v3"]) if p in blobs]
        assert changed
        folder = prefetch.folder_for(git_dir, changed, blobs)
        assert folder is not None
        for path in changed:
            blob = subprocess.run(["git", f"--git-dir={git_dir}", "cat-file", "blob", blobs[path]],
                                  capture_output=True, check=True).stdout
            with open(os.path.join(folder, path), "rb") as f:
                assert f.read() == blob, path
        unchanged = next(p for p in blobs if p not in changed)
        assert prefetch.folder_for(git_dir, [*changed, unchanged], blobs) is None  # not written: the blobs are read
        assert prefetch.folder_for(git_dir, changed, {**blobs, changed[0]: blobs[unchanged]}) is None

        listing = FileIndex.of(git_dir, changed, blobs)
        assert listing is not None and listing.work_tree == folder and listing.grep_options == []
        try:
            for pattern in ("e", "const", "nowhere at all"):
                args = ["grep", "-n", "-I", "-F", "-e", pattern]
                written = subprocess.run(["git", f"--git-dir={git_dir}", *args], capture_output=True,
                                         env={**os.environ, **listing.env}).stdout
                cached = subprocess.run(["git", f"--git-dir={git_dir}", "grep", "--cached", *args[1:]],
                                        capture_output=True, env={**os.environ, "GIT_INDEX_FILE": listing.path}).stdout
                assert written == cached, pattern
        finally:
            listing.close()
    finally:
        prefetch._stop()
    assert not os.path.exists(started.folder)


def test_a_folder_whose_maker_no_longer_runs_is_removed_by_the_next_start(tmp_path):
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    mine, left = (tempfile.mkdtemp(prefix=prefetch._PREFIX) for _ in range(2))
    for folder, pid in ((mine, os.getpid()), (left, ended.pid)):
        with open(os.path.join(folder, "owner"), "w") as f:
            f.write(str(pid))
    try:
        prefetch._remove_stale()
        assert os.path.isdir(mine) and not os.path.exists(left)
    finally:
        for folder in (mine, left):
            subprocess.run(["rm", "-rf", folder], check=True)


@linux_only
def test_a_check_at_a_new_pin_says_the_same_with_the_files_written_out(workspace, fixture_repo):
    """The whole program, as `dshaudit` runs it: the check at v1 leaves the note, the
    check at v3 writes the changed files out first, and says what it says without."""
    write_findings(workspace, "`src/context.ts:1` holds `import` and `Context`.\n")
    env = {**os.environ, "DSH_REPO": str(fixture_repo.path), "DSHAUDIT_CACHE_DIR": str(workspace / "cache")}

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "dshaudit", *args], cwd=workspace, env=env, capture_output=True)

    assert run("check").returncode == 0
    note = json.loads((workspace / "cache" / prefetch.NOTE).read_text())
    assert note["base"] == fixture_repo.shas["v1"]
    before = set(os.listdir(tempfile.gettempdir()))
    shm = set(os.listdir("/dev/shm")) if os.path.isdir("/dev/shm") else set()
    trace = workspace / "trace"
    env["GIT_TRACE"] = str(trace)
    written = run("check", "--pin", "v3", "--format", "json")
    del env["GIT_TRACE"]
    traced = trace.read_text()
    assert "checkout-index" in traced  # the helper ran
    assert " grep " in traced and not any(" grep --cached" in line or "grep' '--cached" in line
                                          for line in traced.splitlines())  # every grep of listed files read them
    (workspace / "cache" / prefetch.NOTE).unlink()
    subprocess.run(["rm", "-rf", str(workspace / "cache")], check=True)
    assert run("check").returncode == 0
    (workspace / "cache" / prefetch.NOTE).unlink()
    read = run("check", "--pin", "v3", "--format", "json")
    assert written.stdout == read.stdout and written.returncode == read.returncode
    left = {n for n in set(os.listdir(tempfile.gettempdir())) - before if n.startswith(prefetch._PREFIX)}
    if os.path.isdir("/dev/shm"):
        left |= {n for n in set(os.listdir("/dev/shm")) - shm if n.startswith(prefetch._PREFIX)}
    assert not left


def test_the_helper_writes_no_list_when_it_cannot_write_every_file_as_asked(noted, fixture_repo, tmp_path):
    """Over its size limit, or for a commit the clone lacks, the helper ends with no
    list of what it wrote: then no grep reads the folder."""
    v1, v3 = fixture_repo.shas["v1"], fixture_repo.shas["v3"]
    for helper, target in ((prefetch._HELPER.replace("LIMIT = 200 * 1024 * 1024", "LIMIT = 10"), v3),
                           (prefetch._HELPER, "0" * 40)):
        folder = tempfile.mkdtemp(dir=tmp_path)
        subprocess.run([sys.executable, "-S", "-c", helper, str(noted), v1, target, folder], capture_output=True)
        assert not os.path.exists(os.path.join(folder, "written"))
    folder = tempfile.mkdtemp(dir=tmp_path)
    subprocess.run([sys.executable, "-S", "-c", prefetch._HELPER, str(noted), v1, v3, folder], check=True)
    assert os.path.exists(os.path.join(folder, "written"))  # the same call within the limit lists them
