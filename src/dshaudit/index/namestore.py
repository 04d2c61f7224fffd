"""What the cache knows of names at one commit, and what this run has learnt.

Each answer is cached per (commit, name) in the `reference-names` shard, so a
warm lookup is a dictionary access and runs no git at all. The files that hold
each name are stored too, one shard per commit (`reference-paths`, as positions
in the commit's sorted list of files), for a later commit to start from: its
*base* (`choose_base`), the indexed commit whose files are mostly the same. An
absence claim's first places are cached in `reference-absence`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from dshaudit.core.model import SHA_RE
from dshaudit.platform import cache

if TYPE_CHECKING:
    from dshaudit.git.snapshot import Snapshot

VERSION = "1"  # bump when the lookup rule changes what a cached answer means
ABSENCE_PLACES = 3  # places an absence claim's refutation names
# A base pays while its changed files are a small part of the tree: searching
# most of the tree through pathspecs costs as much as searching all of it.
FULL_SCAN_SHARE = 0.6
BASE_CANDIDATES = 3  # commits tried as a base, those that know most of the names first

# Cached entries as they are written below; another shape is dropped (cache.py) and looked up again.
_NAMES_SHAPE = cache.shaped(int)
_ABSENCE_SHAPE = cache.shaped([[str, int]])
_STORED_SHAPE = cache.shaped([int])  # positions of the files a name occurs in, in the commit's sorted paths


@dataclass
class Base:
    """An indexed commit, and which files of this commit are the same there."""

    sha: str
    files: list[str]  # its files, sorted: the stored answers are positions in this list
    stored: dict[str, list[int]]  # names whose files it stored
    same: frozenset[str]  # files of this commit with the same blob at the base
    changed: list[str]  # files of this commit that are new or have another blob, sorted

    def kept(self, name: str) -> set[str]:
        """The files of this commit that hold `name` by the base's answer: those unchanged."""
        return {p for i in self.stored[name] if (p := self.files[i]) in self.same}

    def witnessed(self, name: str) -> bool:
        return any(self.files[i] in self.same for i in self.stored[name])


class NameStore:
    """The answers known at one commit: in memory (`present`, `paths`) and in the cache."""

    def __init__(self, snapshot: Snapshot):
        self.snapshot = snapshot
        self.sha = snapshot.sha
        self.present: dict[str, bool] = {}
        self.paths: dict[str, frozenset[str]] = {}
        self._positions: dict[str, int] | None = None  # file -> its place in the sorted list of files

    def _presence(self) -> cache.Shard:
        return cache.current().shard("reference-names", VERSION, _NAMES_SHAPE)

    def _stored(self, sha: str) -> cache.Shard:
        """The files of each name at commit `sha`, where they were stored."""
        return cache.current().shard("reference-paths", f"{VERSION}-{sha}", _STORED_SHAPE)

    def _absences(self) -> cache.Shard:
        return cache.current().shard("reference-absence", VERSION, _ABSENCE_SHAPE)

    def known(self, name: str) -> bool | None:
        if name not in self.present:
            hit = self._presence().get(f"{self.sha} {name}")
            if hit is None:
                return None
            self.present[name] = bool(hit)
        return self.present[name]

    def record(self, name: str, where: set[str]) -> None:
        """A complete answer: the files that hold `name` here."""
        self.paths[name] = frozenset(where)
        self.present[name] = bool(where)
        self._presence().put(f"{self.sha} {name}", 1 if where else 0)
        if self._positions is None:
            self._positions = {p: i for i, p in enumerate(self.snapshot.blob_ids())}
        position = self._positions
        if all(p in position for p in where):
            self._stored(self.sha).put(name, sorted(position[p] for p in where))

    def load_stored(self, names: list[str]) -> None:
        missing = [n for n in names if n not in self.paths]
        if not missing:
            return
        shard = self._stored(self.sha)
        if any(shard.get(n) is not None for n in missing):
            files = list(self.snapshot.blob_ids())
            for n in missing:
                hit = shard.get(n)
                if hit is not None:
                    self.paths[n] = frozenset(files[i] for i in hit)
                    self.present[n] = bool(hit)

    def choose_base(self, names: list[str], texts: list[str]) -> Base | None:
        """The indexed commit that answers most of `names` and `texts`, when few files changed since."""
        wanted, claims = set(names), set(texts)
        votes: dict[str, int] = {}
        for key in self._presence().keys():
            sha, _, name = key.partition(" ")
            if name in wanted and sha != self.sha:
                votes[sha] = votes.get(sha, 0) + 1
        for key in self._absences().keys():
            sha, _, rest = key.partition(" ")
            limit, _, text = rest.partition(" ")
            if text in claims and limit == str(ABSENCE_PLACES) and sha != self.sha:
                votes[sha] = votes.get(sha, 0) + 1
        files = self.snapshot.blob_ids()
        best: tuple[tuple[int, int], Base] | None = None
        repository = self.snapshot.repository
        for sha in sorted(votes, key=lambda s: (-votes[s], s))[:BASE_CANDIDATES]:
            stored = self._stored(sha)
            known = {n: stored.get(n) for n in wanted if stored.get(n) is not None}
            answered = sum(1 for t in claims if self.complete_absence(sha, t) is not None)
            if not (known or answered) or not SHA_RE.fullmatch(sha) or not repository.has_commit(sha):
                continue
            there = repository.snapshot(sha).blob_ids()
            changed = sorted(p for p, blob in files.items() if there.get(p) != blob)
            if len(changed) > FULL_SCAN_SHARE * len(files):
                continue
            score = (len(known) + answered, -len(changed))
            if best is None or score > best[0]:
                same = frozenset(p for p, blob in files.items() if there.get(p) == blob)
                best = (score, Base(sha, list(there), known, same, changed))
        return best[1] if best else None

    def record_present(self, name: str) -> None:
        """`name` occurs here (in a file a base found it in, which did not change), its files unknown."""
        self.present[name] = True
        self._presence().put(f"{self.sha} {name}", 1)

    def absence_hit(self, text: str, limit: int) -> list[tuple[str, int]] | None:
        hit = self._absences().get(f"{self.sha} {limit} {text}")
        return None if hit is None else [(p, int(n)) for p, n in hit]

    def complete_absence(self, sha: str, text: str) -> list[tuple[str, int]] | None:
        """The lines that hold `text` at `sha`, when its cached answer names all of them."""
        hit = self._absences().get(f"{sha} {ABSENCE_PLACES} {text}")
        if hit is None or len(hit) >= ABSENCE_PLACES:
            return None
        return [(p, int(n)) for p, n in hit if int(n)]

    def put_absence(self, text: str, limit: int, places: list[tuple[str, int]]) -> None:
        self._absences().put(f"{self.sha} {limit} {text}", [list(p) for p in places])
