"""An index of some files of a commit: `git grep --cached` on it says what
`git grep COMMIT -- PATHS` says, for a bare clone with no config and for an
ordinary one."""

from __future__ import annotations

import os
import subprocess
import tempfile

import pytest

from dshaudit.git.fileindex import FileIndex
from dshaudit.git.repository import DshRepository


def _grep(git_dir: str, args: list[str], env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(
        ["git", "--literal-pathspecs", f"--git-dir={git_dir}", "grep", *args],
        capture_output=True,
        env={**os.environ, **(env or {})},
    )
    assert proc.returncode in (0, 1), proc.stderr
    return proc.stdout.decode("utf-8", "surrogateescape")


@pytest.fixture(params=["bare", "ordinary"])
def clone(request, fixture_repo):
    path = fixture_repo.bare if request.param == "bare" else fixture_repo.path / ".git"
    return str(path), DshRepository(path, "fixture").snapshot(fixture_repo.shas["v3"])


@pytest.mark.parametrize("pattern", ["e", "const", "caf", "IHDR", "nowhere at all"])
@pytest.mark.parametrize("pick", [slice(None), slice(None, None, 2), slice(1, 3)])
def test_an_index_greps_as_the_tree_does_for_the_files_it_lists(clone, pattern, pick):
    git_dir, snap = clone
    files = list(snap.blob_ids().items())[pick]
    listing = FileIndex.of(git_dir, [p for p, _ in files], dict(files))
    assert listing is not None and listing.left_out == []
    try:
        flags = ["-n", "-I", "-F", "-e", pattern]
        by_index = _grep(git_dir, ["--cached", *flags], listing.env)
        by_tree = _grep(git_dir, [*flags, snap.sha, "--", *(p for p, _ in files)])
        assert by_index == by_tree.replace(f"{snap.sha}:", "")
        if pattern == "e" and pick == slice(None):
            assert by_index  # the comparison is not of two empty outputs
    finally:
        listing.close()
    assert not os.path.exists(listing.folder)


def test_attributes_files_are_left_out_of_the_index(clone):
    """No `.gitattributes` is listed: git would read attributes from it."""
    git_dir, snap = clone
    blob = snap.blob_ids()["package.json"]
    files = [("package.json", blob), (".gitattributes", blob), ("docs/.gitattributes", blob)]
    listing = FileIndex.of(git_dir, [p for p, _ in files], dict(files))
    assert listing is not None
    try:
        listed = (
            subprocess.run(
                ["git", f"--git-dir={git_dir}", "ls-files", "-z"],
                capture_output=True,
                env={**os.environ, **listing.env},
            )
            .stdout.decode()
            .split("\0")[:-1]
        )
        assert listed == ["package.json"]
        assert listing.left_out == [".gitattributes", "docs/.gitattributes"]
    finally:
        listing.close()
    assert FileIndex.of(git_dir, [p for p, _ in files[1:]], dict(files)) is None  # nothing else to list


def test_the_paths_an_index_does_not_list_are_left_out_in_their_order(clone):
    """A path with no blob id given (a link, a submodule, a file the caller knows
    nothing of) is not listed: the caller names it as a pathspec, as a tree grep would."""
    git_dir, snap = clone
    blobs = snap.blob_ids()
    paths = ["vendor/submodule", "package.json", "docs/context-link.ts", "docs/.gitattributes", "assets/logo.bin"]
    listing = FileIndex.of(git_dir, paths, blobs | {"docs/.gitattributes": blobs["package.json"]})
    assert listing is not None
    try:
        assert listing.left_out == ["vendor/submodule", "docs/context-link.ts", "docs/.gitattributes"]
    finally:
        listing.close()


def test_an_index_git_would_list_only_in_part_is_not_made(clone, tmp_path, monkeypatch):
    """git skips a path it will not put in an index, and succeeds: such an index is refused."""
    git_dir, snap = clone
    blob = snap.blob_ids()["package.json"]
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    assert FileIndex.of(git_dir, ["package.json", ".git/hooks/x"], {"package.json": blob, ".git/hooks/x": blob}) is None
    assert not list(tmp_path.iterdir())  # its folder is gone


def test_an_index_interrupted_while_written_leaves_nothing_behind(clone, tmp_path, monkeypatch):
    git_dir, snap = clone

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(subprocess, "run", interrupted)
    with pytest.raises(KeyboardInterrupt):
        FileIndex.of(git_dir, list(snap.blob_ids()), snap.blob_ids())
    assert not list(tmp_path.iterdir())
