"""The tree of one DSH commit, read straight from the git object database.

Nothing is checked out: paths are looked up in the commit's tree, listed once,
and blobs come from git by id, so several commits can be read in one run.
repository.py opens the clone a Snapshot reads from; grep.py searches its text.
"""

from __future__ import annotations

import difflib
import heapq
from bisect import bisect_left
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from dshaudit.git import run
from dshaudit.git.grep import Grep


class ObjectStore(Protocol):
    """What a snapshot reads through: the clone (repository.py's DshRepository), seen
    only as far as a snapshot needs it, so that the two modules do not import each other."""

    @property
    def git_dir(self) -> str: ...

    def read_blob(self, blob_id: str) -> bytes: ...

    def read_blobs(self, blob_ids: list[str]) -> dict[str, bytes]: ...

    def has_commit(self, sha: str) -> bool: ...

    def commit_of(self, sha_or_prefix: str) -> str | None: ...

    def tags_at(self, commit: str) -> list[str]: ...

    def snapshot(self, sha: str, pin_name: str | None = None) -> Snapshot: ...


MODE_SYMLINK = 0o120000
MODE_GITLINK = 0o160000


@dataclass(frozen=True)
class Entry:
    """What a path names at a commit."""

    kind: str  # "blob", "tree", "symlink", "submodule"
    path: str
    blob_sha: str | None = None


def _regular(mode: str, kind: str) -> bool:
    """Whether a tree entry is a regular file: a blob, and no symbolic link."""
    return kind == "blob" and int(mode, 8) != MODE_SYMLINK


def _blob_ids_changed(
    ids: dict[str, str], gone: list[str], added: list[str], index: dict[str, tuple[str, str, str]]
) -> tuple[dict[str, str], bool]:
    """A tree's regular files and blob ids (`Snapshot.blob_ids`) after a commit that removes
    the paths `gone` and adds or changes the paths `added`, `index` being the listing after
    it: the parent's, changed where the commit changes them (a file changed in place keeps
    its place in the order); and whether a path new to them was added at their end, out of
    order. A walk derives them at every commit, and sorting and testing every entry of the
    tree each time would cost more than the commit's few changes."""
    out = dict(ids)
    for path in gone:
        out.pop(path, None)
    new = False
    for path in added:
        mode, kind, obj = index[path]
        if _regular(mode, kind):
            new = new or path not in out
            out[path] = obj
        else:
            out.pop(path, None)
    return out, new


@runtime_checkable
class CarriedByPaths(Protocol):
    """Something worked out from a tree's set of files (`Snapshot.by_paths`) that a tree
    derived from it can take over, once told which paths came, went or changed mode."""

    def carried(self, listing: frozenset[str], child: Snapshot) -> CarriedByPaths: ...


class Snapshot:
    """The tree of one commit: look up paths, read blobs, list files.

    The whole tree is listed once (`git ls-tree -r -t`): one process, a few
    milliseconds, after which every lookup is a dictionary access."""

    def __init__(self, repository: ObjectStore, sha: str):
        self.repository = repository
        self.sha = sha
        self._index: dict[str, tuple[str, str, str]] | None = None
        self._paths: list[str] | None = None
        self._blob_ids: dict[str, str] | None = None
        self._blob_ids_unsorted = False  # paths `derive` added to them, not yet put in order
        self._by_basename: dict[str, list[str]] | None = None
        self.grep = Grep(repository.git_dir, sha)
        self._by_name: dict[str, list[str]] | None = None
        self._by_dir: dict[str, list[str]] = {}
        self._below: dict[str, int] | None = None
        self._near: _NearIndex | None = None
        # What is worked out from the set of regular files alone (which paths a glob selects),
        # shared by the trees `derive` makes that hold the same files (only contents changed).
        self.by_paths: dict[str, Any] = {}

    def index(self) -> dict[str, tuple[str, str, str]]:
        """path -> (mode, type, object id) for every entry, folders included."""
        if self._index is None:
            out = run.output_text(["ls-tree", "-r", "-t", "-z", "--full-tree", self.sha], self.repository.git_dir)
            index = {}
            for record in out.split("\0"):
                if record:
                    meta, _, path = record.partition("\t")
                    mode, kind, obj = meta.split(" ")
                    index[path] = (mode, kind, obj)
            self._index = index
        return self._index

    def moved_to(self, repository: ObjectStore) -> Snapshot:
        """The same tree, read through another handle on the clone: its listing, and
        what was worked out from it, shared (none of it changes once made)."""
        other = Snapshot(repository, self.sha)
        other._index, other._paths = self._index, self._paths
        other._blob_ids = self.blob_ids() if self._blob_ids is not None else None
        other._by_basename, other._below = self._by_basename, self._below
        return other

    def derive(self, sha: str, removed: list[str], added: list[tuple[str, str, str]]) -> Snapshot:
        """The tree of commit `sha`, when what changes from this tree to it is
        known (`git log --raw` gives it for every commit at once): this listing
        with the `removed` paths taken out and the `added` (path, mode, object id)
        put in; folders come and go with the files below them. `history` walks
        dozens of commits this way without listing each one's tree again."""
        index = dict(self.index())
        below = dict(self._files_below())
        # A file changed in place is on both sides: it stays where it was, and its folders hold it.
        kept = {path for path, _, _ in added}
        gone = [path for path in removed if path not in kept]
        for path in gone:
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
        if self._blob_ids is not None:
            child._blob_ids, added_out_of_order = _blob_ids_changed(
                self._blob_ids, gone, [path for path, _, _ in added], index
            )
            # Put in order when asked for (`blob_ids`): a walk asks at few of its commits.
            child._blob_ids_unsorted = self._blob_ids_unsorted or added_out_of_order
        # The paths that came, went or changed mode; a file whose content alone changed is none of them.
        old = self.index()
        listing = {p for p in gone if p in old} | {path for path, mode, _ in added if old.get(path, ("",))[0] != mode}
        if not listing:
            child.by_paths = self.by_paths  # the same files, of the same modes
        else:
            child.by_paths = {
                key: value.carried(frozenset(listing), child)
                for key, value in self.by_paths.items()
                if isinstance(value, CarriedByPaths)
            }
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
        return self.repository.read_blob(blob_sha)

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

    def is_regular(self, path: str) -> bool:
        """Whether `path` is a regular file here (one of `blob_ids`), asked without listing them all."""
        record = self.index().get(path)
        return record is not None and _regular(record[0], record[1])

    def blob_ids(self) -> dict[str, str]:
        """Regular files (no symlinks, no submodules) and their blob ids, by path, sorted."""
        if self._blob_ids is None:
            self._blob_ids = {p: obj for p, (mode, kind, obj) in sorted(self.index().items()) if _regular(mode, kind)}
        elif self._blob_ids_unsorted:
            self._blob_ids, self._blob_ids_unsorted = dict(sorted(self._blob_ids.items())), False
        return self._blob_ids

    def closest_paths(self, path: str, n: int = 1) -> list[str]:
        """Existing paths most like `path`, for a hint on a missing file.

        In order: a file of the same name anywhere; a file of a similar name in
        the same folder; any file in that folder (a rename); a file of a
        similar name anywhere; a file below the nearest folder that exists.
        An index of the tree (names, folders, name trigrams) is built once, and
        each step compares `path` with a few candidates it picks, so a hint
        costs about a millisecond, not a pass over the tree."""
        if self._near is None:
            self._near = _NearIndex(self.paths(), [p for p, (_, kind, _) in self.index().items() if kind == "tree"])
        return self._near.closest(path, n)


class _NearIndex:
    """The tree's paths indexed for `Snapshot.closest_paths`."""

    SHORTLIST = 8  # candidates compared in full (difflib) at each step
    COMMON = 400  # a trigram in more names than this tells nothing, when rarer ones are there

    def __init__(self, paths: list[str], folders: list[str]):
        self.paths = paths  # sorted
        self.folders = set(folders)
        self.by_name: dict[str, list[str]] = {}
        self.by_dir: dict[str, list[str]] = {}
        for p in paths:
            folder, _, name = p.rpartition("/")
            self.by_name.setdefault(name, []).append(p)
            self.by_dir.setdefault(folder, []).append(p)
        self.grams: dict[str, list[str]] = {}  # trigram -> the distinct names holding it
        self._name_grams: dict[str, set[str]] = {}
        self.by_segment: dict[str, list[str]] = {}  # folder name -> the files below a folder of that name
        for p in paths:
            for seg in set(p.split("/")[:-1]):
                self.by_segment.setdefault(seg, []).append(p)
        for name in self.by_name:
            for g in self._grams_of(name):
                self.grams.setdefault(g, []).append(name)
        self._memo: dict[tuple[str, int], list[str]] = {}

    def closest(self, path: str, n: int) -> list[str]:
        key = (path, n)
        if key not in self._memo:
            self._memo[key] = self._closest(path, n)
        return self._memo[key]

    def _closest(self, path: str, n: int) -> list[str]:
        folder, _, base = path.strip("/").rpartition("/")
        if base in self.by_name:
            return self._best(path, self._by_folders(path, self.by_name[base]), n)
        siblings = self.by_dir.get(folder, [])
        if siblings:
            names = difflib.get_close_matches(
                base, self._like_name(base, [s.rpartition("/")[2] for s in siblings]), n=n, cutoff=0.6
            )
            if names:
                return [f"{folder}/{name}" if folder else name for name in names]
            return self._best(path, self._like_name_paths(base, siblings), n)
        names = difflib.get_close_matches(base, self._similar_names(base), n=5, cutoff=0.6)
        if names:
            return self._best(path, self._by_folders(path, [p for name in names for p in self.by_name[name]]), n)
        while folder:
            if folder in self.folders:
                lo = bisect_left(self.paths, folder + "/")
                hi = bisect_left(self.paths, folder + "0")  # "0" sorts just after "/"
                if hi > lo:
                    return self._best(path, self._like_name_paths(base, self.paths[lo:hi], folder), n)
            folder = folder.rpartition("/")[0]
        return []

    def _best(self, path: str, candidates: list[str], n: int) -> list[str]:
        return difflib.get_close_matches(path, candidates, n=n, cutoff=0.0)

    def _by_folders(self, path: str, candidates: list[str]) -> list[str]:
        """The few candidates sharing the most folder names with `path`,
        counted from the folder index (rare folder names only, when there are
        some: `src` is in every package and tells none apart)."""
        if len(candidates) <= self.SHORTLIST:
            return candidates
        among = set(candidates)
        postings = sorted((self.by_segment.get(seg, []) for seg in set(path.split("/")[:-1])), key=len)
        rare = [ps for ps in postings if 0 < len(ps) <= self.COMMON] or [ps for ps in postings[:1] if ps]
        counts: dict[str, int] = {}
        for ps in rare:
            for c in ps:
                if c in among:
                    counts[c] = counts.get(c, 0) + 1
        ranked = heapq.nsmallest(self.SHORTLIST, counts, key=lambda c: (-counts[c], c))
        return ranked + [c for c in candidates[: self.SHORTLIST] if c not in counts][: self.SHORTLIST - len(ranked)]

    def _like_name(self, base: str, names: list[str]) -> list[str]:
        """The few names sharing the most trigrams with `base`."""
        if len(names) <= self.SHORTLIST:
            return names
        grams = _trigrams(base)
        return heapq.nsmallest(self.SHORTLIST, names, key=lambda m: (-len(grams & self._grams_of(m)), m))

    def _like_name_paths(self, base: str, paths: list[str], folder: str = "") -> list[str]:
        """The few of `paths` (all of them below `folder`, when given) whose names are most like `base`."""
        if len(paths) <= self.SHORTLIST:
            return paths
        if folder and len(paths) > 4 * self.SHORTLIST:
            # A whole subtree: the files below it named like `base`, found from the name index;
            # else the first few of it.
            below = [
                p
                for name in self._similar_names(base, 4 * self.SHORTLIST)
                for p in self.by_name[name]
                if p.startswith(folder + "/")
            ]
            paths = below or paths[: 4 * self.SHORTLIST]
        grams = _trigrams(base)
        return heapq.nsmallest(
            self.SHORTLIST, paths, key=lambda p: (-len(grams & self._grams_of(p.rpartition("/")[2])), p)
        )

    def _grams_of(self, name: str) -> set[str]:
        grams = self._name_grams.get(name)
        if grams is None:
            grams = self._name_grams[name] = _trigrams(name)
        return grams

    def _similar_names(self, base: str, keep: int = SHORTLIST) -> list[str]:
        """Names of the tree sharing the most trigrams with `base`, from the
        index (rare trigrams only, when there are some): a shortlist, never a scan."""
        postings = sorted((self.grams.get(g, []) for g in _trigrams(base)), key=len)
        rare = [names for names in postings if 0 < len(names) <= self.COMMON] or [ps for ps in postings[:2] if ps]
        counts: dict[str, int] = {}
        for names in rare:
            for name in names:
                counts[name] = counts.get(name, 0) + 1
        return sorted(counts, key=lambda m: (-counts[m], m))[:keep]


def _trigrams(text: str) -> set[str]:
    padded = f"^{text.lower()}$"
    return {padded[i : i + 3] for i in range(len(padded) - 2)}


def _folders(path: str) -> list[str]:
    """`a/b/c.ts` -> [`a`, `a/b`]."""
    parts = path.split("/")[:-1]
    return ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]
