"""Some files of a commit listed in a git index file of our own, so that
`git grep --cached` searches exactly them, with no pathspec.

Why: git tests every entry of the tree it walks against every pathspec it is
given, which costs a large share of a grep of many named files. An index that
lists them is cheap to write (`git update-index --index-info`, into a temporary
folder: nothing is written to the clone), and `git grep --cached` reads the
blobs it lists, no others.

What stays as it was: the blobs are those of the tree, and only regular files
are listed (a grep of a tree searches no symbolic link or submodule either:
the callers give the blob ids of regular files only). Beside the index, git reads
attributes (which files are binary). A bare clone takes none from the tree,
with or without an index; no `.gitattributes` file is ever listed, so none
comes from this index in any clone, and those few paths are left to the
caller (`left_out`), to be grepped through a pathspec as before.
"""

from __future__ import annotations

import os
import posixpath
import shutil
import tempfile

from dshaudit.git import run


class FileIndex:
    """An index file listing (path, blob) pairs; `env` points git at it; `close` removes it."""

    def __init__(self, folder: str, left_out: list[str]):
        self.folder = folder
        self.path = os.path.join(folder, "index")
        self.left_out = left_out  # the paths asked for and not listed, in their order

    @property
    def env(self) -> dict[str, str]:
        return {"GIT_INDEX_FILE": self.path}

    @property
    def grep_options(self) -> list[str]:
        """How `git grep` reads the listed files: from their blobs."""
        return ["--cached"]

    @classmethod
    def of(cls, git_dir: str, paths: list[str], blobs: dict[str, str]) -> FileIndex | None:
        """An index of those of `paths` that are regular files with a blob id in `blobs`,
        `.gitattributes` files aside; the others are `left_out`, for the caller to name
        as pathspecs. None when there is none to list, or git cannot list every one
        of them (the caller then names them all)."""
        listed = [(p, blobs[p]) for p in paths if p in blobs and posixpath.basename(p) != ".gitattributes"]
        if not listed:
            return None
        taken = {p for p, _ in listed}
        made = cls(tempfile.mkdtemp(prefix="dshaudit-index-"), [p for p in paths if p not in taken])
        entries = run.nul_terminated(f"100644 {blob}\t{p}" for p, blob in listed)
        try:
            done = run.run(["update-index", "-z", "--index-info"], git_dir, input=entries, env=made.env)
        except BaseException:  # Ctrl-C, or no git: nothing is left behind
            made.close()
            raise
        # git skips a path it will not put in an index (`.git/x`) with a warning, and
        # succeeds: anything said means the index may not list every file.
        if done.returncode != 0 or done.stderr.strip():
            made.close()
            return None
        return made

    def close(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)
