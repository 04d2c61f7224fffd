"""The tree of one DSH commit, read straight from the git object database.

Nothing is checked out: paths are looked up in the commit's tree, listed once,
and blobs come from git by id, so several commits can be read in one run.
repository.py opens the clone a Snapshot reads from; grep.py searches its text.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from .grep import Grep

if TYPE_CHECKING:
    from .repository import DshRepository

MODE_SYMLINK = 0o120000
MODE_GITLINK = 0o160000


@dataclass(frozen=True)
class Entry:
    """What a path names at a commit."""

    kind: str  # "blob", "tree", "symlink", "submodule"
    path: str
    blob_sha: str | None = None


class Snapshot:
    """The tree of one commit: look up paths, read blobs, list files.

    The whole tree is listed once (`git ls-tree -r -t`): one process, a few
    milliseconds, after which every lookup is a dictionary access."""

    def __init__(self, repository: DshRepository, sha: str):
        self.repository = repository
        self.sha = sha
        self._index: dict[str, tuple[str, str, str]] | None = None
        self._paths: list[str] | None = None
        self._blob_ids: dict[str, str] | None = None
        self._by_basename: dict[str, list[str]] | None = None
        self.grep = Grep(repository.repo, sha)
        self._by_name: dict[str, list[str]] | None = None
        self._by_dir: dict[str, list[str]] = {}
        self._below: dict[str, int] | None = None

    def index(self) -> dict[str, tuple[str, str, str]]:
        """path -> (mode, type, object id) for every entry, folders included."""
        if self._index is None:
            out = self.repository.repo.git.ls_tree("-r", "-t", "-z", "--full-tree", self.sha)
            index = {}
            for record in out.split("\0"):
                if record:
                    meta, _, path = record.partition("\t")
                    mode, kind, obj = meta.split(" ")
                    index[path] = (mode, kind, obj)
            self._index = index
        return self._index

    def derive(self, sha: str, removed: list[str], added: list[tuple[str, str, str]]) -> "Snapshot":
        """The tree of commit `sha`, when what changes from this tree to it is
        known (`git log --raw` gives it for every commit at once): this listing
        with the `removed` paths taken out and the `added` (path, mode, object id)
        put in; folders come and go with the files below them. `history` walks
        dozens of commits this way without listing each one's tree again."""
        index = dict(self.index())
        below = dict(self._files_below())
        for path in removed:
            if index.pop(path, None) is None:
                continue
            for folder in _folders(path):
                below[folder] -= 1
                if not below[folder]:
                    del below[folder]
                    index.pop(folder, None)
        for path, mode, obj in added:
            if path not in index:
                for folder in _folders(path):
                    below[folder] = below.get(folder, 0) + 1
                    index.setdefault(folder, ("040000", "tree", ""))  # a folder's own id is never read
            index[path] = (mode, "commit" if int(mode, 8) == MODE_GITLINK else "blob", obj)
        child = Snapshot(self.repository, sha)
        child._index, child._below = index, below
        return child

    def _files_below(self) -> dict[str, int]:
        """Folder -> how many files it holds, at any depth."""
        if self._below is None:
            below: dict[str, int] = {}
            for path, (_, kind, _) in self.index().items():
                if kind != "tree":
                    for folder in _folders(path):
                        below[folder] = below.get(folder, 0) + 1
            self._below = below
        return self._below

    def entry(self, path: str) -> Entry | None:
        record = self.index().get(path.rstrip("/")) if path else None
        if record is None:
            return None
        mode, kind, obj = record
        if kind == "tree":
            return Entry("tree", path)
        if kind == "commit" or int(mode, 8) == MODE_GITLINK:
            return Entry("submodule", path)
        if int(mode, 8) == MODE_SYMLINK:
            return Entry("symlink", path, obj)
        return Entry("blob", path, obj)

    def read(self, blob_sha: str) -> bytes:
        return self.repository.repo.odb.stream(bytes.fromhex(blob_sha)).read()

    def read_many(self, blob_ids: list[str]) -> dict[str, bytes]:
        """Many blobs through one `git cat-file --batch`, far faster than one at a time."""
        return self.repository.read_blobs(blob_ids)

    def paths(self) -> list[str]:
        """Every file path at this commit (not folders), sorted."""
        if self._paths is None:
            self._paths = sorted(p for p, (_, kind, _) in self.index().items() if kind != "tree")
        return self._paths

    def paths_ending_with(self, tail: str) -> list[str]:
        """Files whose path ends with `tail` at a folder boundary (`agent/src/index.ts`
        finds `packages/core/agent/src/index.ts`), sorted; by file name first, so
        each lookup reads only the files of that name."""
        if self._by_basename is None:
            by_name: dict[str, list[str]] = {}
            for p in self.paths():
                by_name.setdefault(p.rsplit("/", 1)[-1], []).append(p)
            self._by_basename = by_name
        tail = tail.strip("/")
        return [p for p in self._by_basename.get(tail.rsplit("/", 1)[-1], []) if p == tail or p.endswith("/" + tail)]

    def blob_ids(self) -> dict[str, str]:
        """Regular files (no symlinks, no submodules) and their blob ids, by path, sorted."""
        if self._blob_ids is None:
            self._blob_ids = {
                p: obj for p, (mode, kind, obj) in sorted(self.index().items())
                if kind == "blob" and int(mode, 8) != MODE_SYMLINK
            }
        return self._blob_ids

    def closest_paths(self, path: str, n: int = 1) -> list[str]:
        """Existing paths most like `path`, for a hint on a missing file.

        In order: a file of the same name anywhere; a file of a similar name in
        the same folder; any file in that folder (a rename); a file of a
        similar name anywhere; a file below the nearest folder that exists."""
        if self._by_name is None:
            by_name: dict[str, list[str]] = {}
            by_dir: dict[str, list[str]] = {}
            for p in self.paths():
                pp = PurePosixPath(p)
                by_name.setdefault(pp.name, []).append(p)
                by_dir.setdefault(str(pp.parent), []).append(p)
            self._by_name, self._by_dir = by_name, by_dir
        wanted = PurePosixPath(path)
        base = wanted.name

        def best(candidates: list[str]) -> list[str]:
            return difflib.get_close_matches(path, candidates, n=n, cutoff=0.0)

        if base in self._by_name:
            return best(self._by_name[base])
        siblings = self._by_dir.get(str(wanted.parent), [])
        names = difflib.get_close_matches(base, [PurePosixPath(p).name for p in siblings], n=n, cutoff=0.6)
        if names:
            return [str(wanted.parent / name) for name in names]
        if siblings:
            return best(siblings)
        names = difflib.get_close_matches(base, self._by_name, n=5, cutoff=0.6)
        if names:
            return best([p for name in names for p in self._by_name[name]])
        for folder in wanted.parents:
            prefix = "" if str(folder) == "." else f"{folder}/"
            below = [p for p in self.paths() if p.startswith(prefix)] if prefix else []
            if below:
                return best(below[:2000])
        return []


def _folders(path: str) -> list[str]:
    """`a/b/c.ts` -> [`a`, `a/b`]."""
    parts = path.split("/")[:-1]
    return ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]


# Names that moved to modules of their own, still importable from here for the
# modules that import them from here.
