"""When a commit can change what a claim measures: a fact (`FactWatch`) or a search (`SearchWatch`)."""

from __future__ import annotations

from collections.abc import Callable

from dshaudit.git.log import Change, Pickaxe, Step
from dshaudit.git.repository import DshRepository


class FactWatch:
    """When a commit can change a fact (registry.toml declares what each reads):
    it changes a file whose content the fact reads, or adds, deletes or renames
    one whose name it reads. Two narrowings, each a superset of what can matter:
    a detector that parses only files holding its literal (`needle`) changes
    only where a changed file holds one, before or after; a fact that greps
    the whole tree, only where a changed line holds what it greps for."""

    def __init__(self, fact_id: str, repository: DshRepository, from_sha: str, to_sha: str):
        from dshaudit.documents.searches import extended
        from dshaudit.facts.book import registry
        from dshaudit.facts.engine import glob_predicate
        from dshaudit.facts.reducers import SEARCHES

        spec = registry()[fact_id]
        self.fact_id = fact_id
        self._content = [glob_predicate(g) for g in spec.content_globs]
        self._names = [glob_predicate(g) for g in spec.name_globs]
        # The needle narrows `paths` only: `reads` (a file the reducer reads itself) counts whenever it changes.
        self._needled = [glob_predicate(g) for g in spec.paths] if spec.needle and spec.kind == "query" else []
        self.needles = tuple(spec.needle or ()) if self._needled else ()
        # One `git log -G` per case rule, for the alternation of the detector's searches.
        queries = SEARCHES[spec.reduce](spec) if spec.reduce in SEARCHES else None
        self._pickaxes = (
            [
                Pickaxe(
                    repository,
                    from_sha,
                    to_sha,
                    "|".join(f"({extended(q)})" for q in queries if ("-i" in q.flags) == folded),
                    folded,
                    spec.content_globs,
                )
                for folded in sorted({"-i" in q.flags for q in queries})
            ]
            if queries is not None
            else None
        )

    def needle_blobs(self, step: Step) -> set[str]:
        """The blobs whose literals decide whether this commit can change the fact."""
        if not self.needles:
            return set()
        return {b for c in step.changes if self._needled_change(c) for b in (c.old_blob, c.new_blob) if b}

    def _needled_change(self, c: Change) -> bool:
        return any(test(p) for p in (c.old_path, c.new_path) if p for test in self._needled)

    def touched_by(self, step: Step, holds_needle: Callable[[str], bool]) -> bool:
        for c in step.changes:
            paths = [p for p in (c.old_path, c.new_path) if p]
            if c.status in "ADR" and any(test(p) for p in paths for test in self._names):
                return True
            if not any(test(p) for p in paths for test in self._content):
                continue
            if self._pickaxes is not None:
                return any(step.commit.sha in p.commits() for p in self._pickaxes)
            if not self._needled_change(c) or any(holds_needle(b) for b in (c.old_blob, c.new_blob) if b):
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

    def __init__(self, fact_id: str):
        from dshaudit.documents import searches

        self.spec = searches.parse(fact_id)
        self.ends_only = self.spec.kind == "tree-docs"
        self._changed: dict[str, tuple[tuple[str | None, str | None], ...]] = {}  # commit -> changed_paths
        self.found: dict[tuple[str, str], list[int]] | None = None  # see `regrep`

    def needle_blobs(self, step: Step) -> set[str]:
        return set()

    def changed_paths(self, step: Step) -> tuple[tuple[str | None, str | None], ...]:
        from dshaudit.git.pathspec import selector

        sha = step.commit.sha
        if sha not in self._changed:
            wanted = "ADR" if self.spec.kind == "files" else "ADRMT"
            selected = selector(self.spec.pathspecs)
            self._changed[sha] = tuple(
                (c.old_path, c.new_path)
                for c in step.changes
                if c.status in wanted
                and (
                    (c.old_path is not None and selected(c.old_path))
                    or (c.new_path is not None and selected(c.new_path))
                )
            )
        return self._changed[sha]

    def places(self, steps: list[Step]) -> list[tuple[str, str, str]]:
        """(commit, path, blob) of each file a commit changes that this search reads again:
        the regular files (git grep reads no link, no submodule)."""
        from dshaudit.index.derive import REGULAR_MODES, fresh_paths

        if self.ends_only or self.spec.kind != "search":
            return []
        out = []
        for step in steps:
            blobs = {c.new_path: c.new_blob for c in step.changes if c.new_path and c.new_mode in REGULAR_MODES}
            out += [
                (step.commit.sha, p, blob)
                for p in fresh_paths(self.spec, self.changed_paths(step))
                if (blob := blobs.get(p))
            ]
        return out

    def touched_by(self, step: Step, holds_needle: Callable[[str], bool]) -> bool:
        return not self.ends_only and bool(self.changed_paths(step))

    def close(self) -> None:
        pass
