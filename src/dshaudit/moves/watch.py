"""When a commit can change what a claim measures: a fact (`FactWatch`) or a search (`SearchWatch`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from dshaudit.git.log import Change, Pickaxe, Step
from dshaudit.git.repository import DshRepository

if TYPE_CHECKING:
    from dshaudit.documents.searches import Search
    from dshaudit.facts.engine import PathTest


class PathSelection:
    """Which paths one of some tests holds for, each path tested once: the walk asks
    it of the files of every commit, and most of them change again and again."""

    def __init__(self, tests: list[PathTest]):
        self._tests = tests
        self._test: PathTest = tests[0] if len(tests) == 1 else (lambda path: any(test(path) for test in tests))
        self._tested: set[str] = set()
        self._held: set[str] = set()

    def among(self, paths: frozenset[str]) -> frozenset[str]:
        """Those of `paths` a test holds for."""
        if not self._tests:
            return frozenset()
        new = paths - self._tested
        if new:
            self._held.update(filter(self._test, new))
            self._tested |= new
        return paths & self._held

    def __bool__(self) -> bool:
        return bool(self._tests)


class FactWatch:
    """When a commit can change a fact (registry.toml declares what each reads):
    it changes a file whose content the fact reads, or adds, deletes or renames
    one whose name it reads. Two narrowings, each a superset of what can matter:
    a detector that parses only files holding its literal (`needle`) changes
    only where a changed file holds one, before or after; a fact that greps
    the whole tree, only where a changed line holds what it greps for (`git log
    -G`, in the files where one of its searches matches at FROM or in a version
    some commit makes: `follow`)."""

    def __init__(
        self,
        fact_id: str,
        repository: DshRepository,
        from_sha: str,
        to_sha: str,
        shared: SearchSelections | None = None,
    ):
        from dshaudit.facts.book import registry
        from dshaudit.facts.engine import glob_predicate
        from dshaudit.facts.reducers import SEARCHES

        spec = registry()[fact_id]
        self.fact_id = fact_id
        self._content = PathSelection([glob_predicate(g) for g in spec.content_globs])
        self._names = PathSelection([glob_predicate(g) for g in spec.name_globs])
        # The needle narrows `paths` only: `reads` (a file the reducer reads itself) counts whenever it changes.
        self._needled = PathSelection(
            [glob_predicate(g) for g in spec.paths] if spec.needle and spec.kind == "query" else []
        )
        self.needles = tuple(spec.needle or ()) if self._needled else ()
        self._content_globs = spec.content_globs
        self._range = (repository, from_sha, to_sha)
        # The searches the detector counts, if it counts some: each followed through the walk's
        # changed files like a search claim (`SearchWatch`), and one `git log -G` per case rule,
        # for their alternation, once `follow` knows where they can match.
        self.counts_searches = spec.reduce in SEARCHES
        shared = shared if shared is not None else SearchSelections()
        self.searches = (
            [SearchWatch(q.text, shared) for q in SEARCHES[spec.reduce](spec)] if self.counts_searches else []
        )
        self._pickaxes: list[Pickaxe] | None = None

    def follow(self, matched_at_from: Callable[[Search], list[tuple[str, int]]]) -> None:
        """Start the pickaxes of a fact that counts searches, once the walk's changed files
        were searched (`SearchWatch.found`, by `regrep`): a changed line can match only in a
        file where a search matches in some version of it, at FROM (`matched_at_from`) or
        as a commit of the walk left it, so only those files are diffed. That is also what
        the searches read: regular files, binary ones skipped, which no change to a link, a
        submodule or a binary file can make them count."""
        from dshaudit.documents.searches import extended

        if not self.counts_searches:
            return
        matching = self._matching(matched_at_from)
        paths = None if matching is None else sorted(self._content.among(frozenset(matching)))
        queries = [w.spec for w in self.searches]
        repository, from_sha, to_sha = self._range
        self._pickaxes = [
            Pickaxe(
                repository,
                from_sha,
                to_sha,
                "|".join(f"({extended(q)})" for q in queries if ("-i" in q.flags) == folded),
                folded,
                self._content_globs,
                paths,
            )
            for folded in sorted({"-i" in q.flags for q in queries})
        ]

    def _matching(self, matched_at_from: Callable[[Search], list[tuple[str, int]]]) -> set[str] | None:
        """The files where a search the fact counts matches at FROM or in a version the walk
        makes; None when one reached its bound, at FROM or in the walk: they are not known."""
        from dshaudit.index.search import SearchBound

        matching: set[str] = set()
        for watch in self.searches:
            if watch.found is None:
                return None
            try:
                at_from = matched_at_from(watch.spec)
            except SearchBound:
                return None
            matching |= {p for p, _ in at_from} | {p for _, p in watch.found}
        return matching

    def needle_blobs(self, step: Step) -> set[str]:
        """The blobs whose literals decide whether this commit can change the fact."""
        needled = self._needled.among(step.touched) if self.needles else frozenset()
        if not needled:
            return set()
        return {b for c in step.changes if _either(c, needled) for b in (c.old_blob, c.new_blob) if b}

    def touched_by(self, step: Step, holds_needle: Callable[[str], bool]) -> bool:
        names, content = self._names.among(step.listed), self._content.among(step.touched)
        if not (names or content):
            return False
        needled = self._needled.among(step.touched)
        for c in step.changes:
            if c.status in "ADR" and _either(c, names):
                return True
            if not _either(c, content):
                continue
            if self.counts_searches:
                if self._pickaxes is None:
                    raise RuntimeError(f"{self.fact_id}: the walk asked before `follow`")
                return any(step.commit.sha in p.commits() for p in self._pickaxes)
            if not _either(c, needled) or any(holds_needle(b) for b in (c.old_blob, c.new_blob) if b):
                return True
        return False

    def close(self) -> None:
        for p in self._pickaxes or ():
            p.close()


class SearchWatch:
    """When a commit can change a search claimed in the findings (search.py): it
    changes a file the pathspecs select (for `files(...)`, adds, deletes or
    renames one). A search fact follows the walk by `search.advance`: the
    changed files searched again, the rest kept. A `tree-docs(...)` fact, which
    checks whole documents, is measured at --from and --to only."""

    needles: tuple[str, ...] = ()

    def __init__(self, fact_id: str, shared: SearchSelections | None = None):
        from dshaudit.documents import searches

        self.spec = searches.parse(fact_id)
        self.ends_only = self.spec.kind == "tree-docs"
        # Searches with the same pathspecs (most name none, the whole tree) test each path and
        # list each commit's changes once between them: a walk has thousands of each.
        shared = shared if shared is not None else SearchSelections()
        self._selected = shared.selection(self.spec.pathspecs)
        self._changed = shared.changes(self.spec.pathspecs, self.spec.kind == "files")  # commit -> changed_paths
        self._places = shared.places
        self.found: dict[tuple[str, str], list[int]] | None = None  # see `regrep`

    def needle_blobs(self, step: Step) -> set[str]:
        return set()

    def changed_paths(self, step: Step) -> tuple[tuple[str | None, str | None], ...]:
        sha = step.commit.sha
        if sha not in self._changed:
            wanted = "ADR" if self.spec.kind == "files" else "ADRMT"
            selected = self._selected.among(step.touched)
            self._changed[sha] = (
                tuple((c.old_path, c.new_path) for c in step.changes if c.status in wanted and _either(c, selected))
                if selected
                else ()
            )
        return self._changed[sha]

    def places(self, steps: list[Step]) -> list[tuple[str, str, str]]:
        """(commit, path, blob) of each file a commit changes that this search reads again:
        the regular files (git grep reads no link, no submodule)."""
        from dshaudit.index.derive import REGULAR_MODES, fresh_paths

        if self.ends_only or self.spec.kind != "search":
            return []
        # The same for every search of these pathspecs: worked out once for them all.
        key = (self.spec.pathspecs, tuple(step.commit.sha for step in steps))
        if key in self._places:
            return self._places[key]
        out = []
        for step in steps:
            changed = self.changed_paths(step)
            fresh = fresh_paths(self.spec, changed, self._selected.among(step.touched).__contains__) if changed else []
            if not fresh:
                continue
            blobs = {c.new_path: c.new_blob for c in step.changes if c.new_path and c.new_mode in REGULAR_MODES}
            out += [(step.commit.sha, p, blob) for p in fresh if (blob := blobs.get(p))]
        self._places[key] = out
        return out

    def touched_by(self, step: Step, holds_needle: Callable[[str], bool]) -> bool:
        return not self.ends_only and bool(self.changed_paths(step))

    def close(self) -> None:
        pass


class SearchSelections:
    """What the searches of one walk share by their pathspecs: which paths they select
    (`PathSelection`), and each commit's changes among those (`SearchWatch.changed_paths`,
    for `files(...)` searches apart: they count additions, deletions and renames only)."""

    def __init__(self) -> None:
        self._selections: dict[tuple[str, ...], PathSelection] = {}
        self._changes: dict[tuple[tuple[str, ...], bool], dict[str, tuple[tuple[str | None, str | None], ...]]] = {}
        # (pathspecs, the commits walked) -> `SearchWatch.places`
        self.places: dict[tuple[tuple[str, ...], tuple[str, ...]], list[tuple[str, str, str]]] = {}

    def selection(self, pathspecs: tuple[str, ...]) -> PathSelection:
        from dshaudit.git.pathspec import selector

        if pathspecs not in self._selections:
            self._selections[pathspecs] = PathSelection([selector(pathspecs)])
        return self._selections[pathspecs]

    def changes(
        self, pathspecs: tuple[str, ...], names_only: bool
    ) -> dict[str, tuple[tuple[str | None, str | None], ...]]:
        return self._changes.setdefault((pathspecs, names_only), {})


def _either(change: Change, paths: frozenset[str]) -> bool:
    """Whether the change's path before or after it is one of `paths`."""
    return change.old_path in paths or change.new_path in paths
