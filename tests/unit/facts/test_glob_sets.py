"""Which files each glob selects, carried from a tree to one derived from it (history's walk)."""

from __future__ import annotations

from dshaudit.facts.engine import GlobSets, glob_predicate
from dshaudit.git.snapshot import Snapshot


class _Store:
    git_dir = "."


def _tree(files: list[str], modes: dict[str, str] | None = None) -> Snapshot:
    tree = Snapshot(_Store(), "0" * 40)  # type: ignore[arg-type]
    tree._index = {p: ((modes or {}).get(p, "100644"), "blob", "1" * 40) for p in files}
    return tree


def _fresh(globs: list[str], tree: Snapshot) -> dict[str, set[str]]:
    return {g: {p for p in tree.blob_ids() if glob_predicate(g)(p)} for g in globs}


def test_carried_sets_are_those_a_fresh_listing_selects_and_untouched_ones_are_kept():
    globs = ["src/**/*.ts", "docs/**", "README.md"]
    before = ["README.md", "docs/a.md", "src/a.ts", "src/b.ts", "src/x/c.ts", "tool.sh"]
    parent = GlobSets(_fresh(globs, _tree(before)))
    cases = [
        # (files after, paths that came, went or changed mode)
        (["README.md", "docs/a.md", "src/a.ts", "src/b.ts", "src/x/c.ts", "src/y/d.ts", "tool.sh"], {"src/y/d.ts"}),
        (["README.md", "docs/a.md", "src/a.ts", "src/x/c.ts", "tool.sh"], {"src/b.ts"}),
        (["README.md", "src/a.ts", "src/b.ts", "src/x/c.ts", "tool.sh", "docs/b.md"], {"docs/a.md", "docs/b.md"}),
        (before + ["other.txt"], {"other.txt"}),
    ]
    for after, listing in cases:
        child = _tree(after)
        carried = parent.carried(frozenset(listing), child)
        assert dict(carried) == _fresh(globs, child)
        for g in globs:
            touched = any(glob_predicate(g)(p) for p in listing)
            assert (carried[g] is parent[g]) is not touched, (g, listing)


def test_a_file_that_becomes_a_link_leaves_the_sets():
    parent = GlobSets({"src/**": {"src/a.ts", "src/b.ts"}})
    child = _tree(["src/a.ts", "src/b.ts"], {"src/b.ts": "120000"})
    assert parent.carried(frozenset({"src/b.ts"}), child) == {"src/**": {"src/a.ts"}}
