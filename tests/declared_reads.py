"""What measuring a fact reads, recorded, against what registry.toml declares it reads.

`dshaudit history` re-measures a fact only at commits that touch what the fact
declares (`paths`, `reads`, `lists`): a reducer that reads more would let a change
pass unseen. Used on the facts fixture (tests/unit/facts/test_declared_reads.py)
and on a real DSH clone (tests/dsh/test_history_dsh.py)."""

from __future__ import annotations

from dshaudit.facts.book import registry


def covered_by(globs: tuple[str, ...]):
    from dshaudit.facts.engine import glob_predicate

    tests = [glob_predicate(g) for g in globs]
    return lambda path: any(t(path) for t in tests)


def reads_of(spec, snapshot, pin):
    """What measuring `spec` at `snapshot` reads: file contents, file names, and
    whether it walked the whole listing itself."""
    from dshaudit.facts.book import measure_one
    from dshaudit.facts.engine import FactContext
    from dshaudit.platform.cache import Cache

    class Listing(dict):
        def __init__(self, ids, seen):
            super().__init__(ids)
            self.seen = seen

        def __iter__(self):
            self.seen["all"] = True
            return super().__iter__()

        def __contains__(self, key):
            self.seen["names"].add(key)
            return super().__contains__(key)

    class Recording(FactContext):
        def __init__(self):
            super().__init__(snapshot, Cache(None))
            self.seen = {"content": set(), "names": set(), "all": False}
            self.inside = 0

        def _in(self, fn, *args, **kwargs):
            self.inside += 1
            try:
                return fn(*args, **kwargs)
            finally:
                self.inside -= 1

        def paths(self, globs, exclude_tests=False):
            out = self._in(super().paths, globs, exclude_tests)
            self.seen["names"].update(out)
            return out

        def files_with(self, needle, globs, exclude_tests=False, *, filter_only=True):
            self.seen["content"].update(self._in(super().paths, globs, exclude_tests))
            return self._in(super().files_with, needle, globs, exclude_tests, filter_only=filter_only)

        def read(self, path):
            self.seen["content"].add(path)
            return self._in(super().read, path)

        def blob_ids(self):
            ids = super().blob_ids()
            return ids if self.inside else Listing(ids, self.seen)

    ctx = Recording()
    measure_one(spec, ctx, pin)
    return ctx.seen


def check_declared_reads(snapshot, pin):
    from dshaudit.facts.reducers import SEARCHES

    for spec in registry().values():
        seen = reads_of(spec, snapshot, pin)
        content, names = covered_by(spec.content_globs), covered_by(spec.content_globs + spec.name_globs)
        assert all(content(p) for p in seen["content"]), (spec.id, sorted(p for p in seen["content"] if not content(p)))
        assert all(names(p) for p in seen["names"]), (spec.id, sorted(p for p in seen["names"] if not names(p))[:5])
        # A reducer that walks the whole listing must say which names it looks for there.
        assert not seen["all"] or spec.lists, spec.id
        # A fact that greps reads the content of `paths`: history watches it through git log -G.
        assert spec.reduce not in SEARCHES or not spec.names_only, spec.id
