"""Which names occur in the tree of one DSH commit: one indexed pass, cached per name.

The rule, for every name a document holds (`references.py` decides which):
a name occurs at a commit when it is found, case-sensitively, as a whole word
in some text file of the commit's tree. "Whole word" is git grep's `-w`: the
character before the name and the one after it, where there are any, are not
ASCII letters, digits or `_`. So `Registry` is absent from a tree that only
says `AgentRegistry`, and `setFactory` is present in `reg.setFactory(f)`.
Binary files (git's `-I`) are not searched, and a path is not an occurrence.

How it is indexed: the names not yet known at this commit are looked up
together, in one `git grep -o` pass over the commit per group of names
(namepass.py). Each answer is cached per (commit SHA, name), so a warm lookup
is a dictionary access and runs no git at all (namestore.py).

A new commit is indexed from one already indexed, its *base*. A file with the
same content at both commits holds the same names at both, and between two
pins most files do not change; so a name the base found in a file that did
not change occurs here with no search at all, and the files that hold a name
here are those the base found among the unchanged files and those a pass
finds among the changed ones, the only files it searches. With no base in the
cache, or when most of the tree changed, the pass covers the whole tree.

The passes run in the background: `start` plans what is not known yet and
starts the git processes, and the first answer that needs them waits for
them, so the caller can do other work meanwhile.

History (`deletion`, namehistory.py) is a bounded pickaxe on the first-parent
path, and an absence claim (`occurrences`, absence.py) a case-insensitive
whole-word search for its first few places: a claim made of word characters
rides in the names pass (its letters written `[aA]`), others share a `-F -i`
pass; a base narrows both to the changed files when its answer named every
place. All are cached. No text from a document is ever passed to git as an
option: patterns follow `-e`, pickaxe strings are glued to `-S` in the same
argument, revisions are validated SHAs, and paths follow `--` with pathspec
magic switched off.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dshaudit.core.errors import RepoError
from dshaudit.core.model import SHA_RE
from dshaudit.index.absence import Absences
from dshaudit.index.namegrep import CommitGrep
from dshaudit.index.namehistory import HISTORY_COMMITS, HistoryAnswer, NameHistory
from dshaudit.index.namepass import NamePasses, NameSearch
from dshaudit.index.namestore import ABSENCE_PLACES, Base, NameStore
from dshaudit.index.words import any_case, is_word

if TYPE_CHECKING:
    from dshaudit.git.snapshot import Snapshot


@dataclass
class _Pending:
    """What `start` set going; collected by `_finish`."""

    base: Base | None
    scoped: NameSearch | None  # among the base's changed files only
    whole: NameSearch | None

    def stop(self) -> None:
        for search in (self.scoped, self.whole):
            if search is not None:
                search.stop()

    def names(self) -> list[str]:
        """The names its passes look up."""
        return [n for search in (self.scoped, self.whole) if search is not None for n in search.names]


class NameIndex:
    """Name lookups at one commit, shared by every document checked in a run."""

    def __init__(self, snapshot: Snapshot):
        if not SHA_RE.fullmatch(snapshot.sha):
            raise RepoError(f"{snapshot.sha!r}: not a full commit SHA")
        self.snapshot = snapshot
        self.sha = snapshot.sha
        self.grep = CommitGrep(snapshot)
        self.store = NameStore(snapshot)
        self.absences = Absences(snapshot, self.grep, self.store)
        self.passes = NamePasses(snapshot, self.grep, self.absences)
        self.history = NameHistory(self.grep)
        self._pending: _Pending | None = None
        self._dated: set[str] = set()  # names whose deletion may be asked for (`start`)
        self.base: str | None = None  # the commit the last pass started from, if any (for tests and -v)

    @property
    def git_calls(self) -> int:
        """For tests and the benchmark: git processes this index started."""
        return self.grep.calls

    def start(
        self,
        presence: Iterable[str] = (),
        paths: Iterable[str] = (),
        absent: Iterable[str] = (),
        dated: Iterable[str] = (),
    ) -> None:
        """Start, in the background, what these answers need that is not known yet:
        whether each name of `presence` occurs, the files that hold each name of
        `paths`, and the places of each absence claim of `absent`. `present`,
        `paths` and `occurrences` wait for it. When one of `dated` turns out to
        occur nowhere, the history that dates it starts at once (`deletion`)."""
        self._finish()
        self._dated.update(dated)
        want_paths = list(dict.fromkeys(paths))
        self.store.load_stored(want_paths)
        want_paths = [n for n in want_paths if n not in self.store.paths]
        chosen = set(want_paths)
        want_presence = [n for n in dict.fromkeys(presence) if n not in chosen and self.store.known(n) is None]
        texts = [t for t in dict.fromkeys(absent) if t.isascii() and self.store.absence_hit(t, ABSENCE_PLACES) is None]
        if not (want_paths or want_presence or texts):
            return
        base = self.store.choose_base(want_paths + want_presence, texts)
        self.base = base.sha if base else None
        rest = []
        for name in want_presence:
            if base is not None and name in base.stored and base.witnessed(name):
                self.store.record_present(name)  # in a file that did not change: no search needed
            else:
                rest.append(name)
        names = want_paths + rest
        scoped = [n for n in names if base is not None and n in base.stored]
        whole = [n for n in names if base is None or n not in base.stored]
        texts_scoped = [t for t in texts if base is not None and self.store.complete_absence(base.sha, t) is not None]
        texts_whole = [t for t in texts if t not in texts_scoped]
        pending = self._pending = _Pending(base, None, None)
        try:
            if base is not None and (scoped or texts_scoped):
                pending.scoped = self.passes.start(scoped, texts_scoped, base.changed)
            if whole or texts_whole:
                pending.whole = self.passes.start(whole, texts_whole, None)
        except BaseException:
            self.stop()
            raise

    def _finish(self) -> None:
        """Wait for the pass `start` set going, and keep its answers."""
        pending, self._pending = self._pending, None
        if pending is None:
            return
        try:
            base = pending.base
            lines: dict[str, list[tuple[str, int]]] = {}
            if pending.scoped is not None:
                assert base is not None  # a search is scoped only to a base's changed files
                found, lines = self.passes.finish(pending.scoped)
                where = {name: base.kept(name) | found[name] for name in pending.scoped.names}
                # As a pass over the whole tree would: a name with other characters missed is looked up apart.
                where.update(self.passes.alone([n for n, w in where.items() if not w and not is_word(n)]))
                for name in pending.scoped.names:
                    self.store.record(name, where[name])
                for t in pending.scoped.texts:
                    lines[t] += [(p, n) for p, n in self.store.complete_absence(base.sha, t) or [] if p in base.same]
            if pending.whole is not None:
                found, more = self.passes.finish(pending.whole)
                lines.update(more)
                for name in pending.whole.names:
                    self.store.record(name, found[name])
            for t, places in lines.items():
                self.absences.record(t, ABSENCE_PLACES, sorted(places))
            if any(self.store.present.get(n) is False for n in pending.names() if n in self._dated):
                self.history.start()  # a name found nowhere: its history will be asked for
        except BaseException:
            pending.stop()
            raise

    def stop(self) -> None:
        """Stop a pass, or a read of the history, still running (its answers are not needed any more)."""
        pending, self._pending = self._pending, None
        if pending is not None:
            pending.stop()
        self.history.stop()

    def present(self, names: Iterable[str]) -> dict[str, bool]:
        """Whether each name occurs at this commit (the rule in the module docstring)."""
        wanted = list(dict.fromkeys(names))
        if self._pending is not None or any(self.store.known(n) is None for n in wanted):
            self.start(presence=wanted)
            self._finish()
        return {n: self.store.present[n] for n in wanted}

    def paths(self, names: Iterable[str]) -> dict[str, frozenset[str]]:
        """The files each name occurs in as a whole word."""
        wanted = list(dict.fromkeys(names))
        if self._pending is not None or any(n not in self.store.paths for n in wanted):
            self.start(paths=wanted)
            self._finish()
        return {n: self.store.paths[n] for n in wanted}

    def occurrences(self, text: str, limit: int = ABSENCE_PLACES) -> list[tuple[str, int]]:
        """The first places `text` occurs as a whole word: (path, line) in file
        contents, (path, 0) for a path that holds it. Smart case: a text with
        no capital letter is looked up in any case, one with a capital exactly."""
        if self._pending is not None:
            self._finish()
        hit = self.store.absence_hit(text, limit)
        if hit is None and limit == ABSENCE_PLACES and text.isascii():
            self.start(absent=[text])
            self._finish()
            hit = self.store.absence_hit(text, limit)
        if hit is None:
            hit = self.absences.record(text, limit, self.absences.first_lines(text, limit, any_case(text)))
        return hit

    def deletion(self, name: str, commits: int = HISTORY_COMMITS) -> HistoryAnswer:
        """The first-parent commit, within `commits` of this one, after which `name` no longer occurs."""
        return self.history.deletion(name, commits)

    def path_deletion(self, path: str, commits: int = HISTORY_COMMITS) -> HistoryAnswer:
        """The newest first-parent commit, within `commits` of this one, that removed `path`."""
        return self.history.path_deletion(path, commits)

    def deletions(self, names: list[str], commits: int = HISTORY_COMMITS) -> dict[str, HistoryAnswer]:
        """`deletion` for several names, answered from one read of the history."""
        return self.history.deletions(names, commits)


_indexes: dict[tuple[str, str], NameIndex] = {}


def index_for(snapshot: Snapshot) -> NameIndex:
    """The index of a snapshot's commit, one per process and commit."""
    key = (snapshot.repository.git_dir, snapshot.sha)
    if key not in _indexes:
        _indexes[key] = NameIndex(snapshot)
    return _indexes[key]


def forget() -> None:
    """Drop the in-process indexes (tests, and the warm benchmark, start afresh),
    stopping any pass still running."""
    for index in _indexes.values():
        index.stop()
    _indexes.clear()
