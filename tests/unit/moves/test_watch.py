"""When a commit can change a search claimed in the findings (watch.py)."""

from __future__ import annotations

from dshaudit.git import pathspec
from dshaudit.git.log import Change, Commit, Step
from dshaudit.moves.watch import SearchSelections, SearchWatch


def _step(sha: str, *changes: Change) -> Step:
    return Step(Commit(sha, "2026-01-01", "a change"), "parent", changes)


def test_searches_with_the_same_pathspecs_test_each_path_once_between_them(monkeypatch):
    asked: list[str] = []
    selector = pathspec.selector

    def counting(specs):
        test = selector(specs)
        return lambda path: asked.append(path) or test(path)

    monkeypatch.setattr(pathspec, "selector", counting)
    shared = SearchSelections()
    watches = [SearchWatch(f"search('{word}', 'src/**')", shared) for word in ("alpha", "beta", "gamma")]
    other = SearchWatch("files('src/**')", shared)
    step = _step(
        "c1",
        Change("M", "src/a.ts", "src/a.ts", "1" * 40, "2" * 40, "100644"),
        Change("A", None, "docs/b.md", None, "3" * 40, "100644"),
    )
    for w in watches:
        assert w.changed_paths(step) == (("src/a.ts", "src/a.ts"),)
    assert other.changed_paths(step) == ()  # a files() search counts additions, deletions and renames only
    assert sorted(asked) == ["docs/b.md", "src/a.ts"]


def test_a_search_alone_still_reads_the_changes_its_pathspecs_select():
    watch = SearchWatch("search('x', 'docs/**')")
    step = _step("c2", Change("A", None, "docs/b.md", None, "3" * 40, "100644"))
    assert watch.changed_paths(step) == ((None, "docs/b.md"),)
    assert watch.touched_by(step, lambda _blob: False)


def test_the_places_a_search_is_grepped_in_are_listed_once_for_its_pathspecs():
    """Every search of the same pathspecs is grepped again in the same changed files: one list
    for them all. A search of other pathspecs, a files() search and a tree-docs fact have theirs."""
    shared = SearchSelections()
    steps = [
        _step(
            "c1",
            Change("M", "src/a.ts", "src/a.ts", "1" * 40, "2" * 40, "100644"),
            Change("A", None, "docs/b.md", None, "3" * 40, "100644"),
            Change("A", None, "src/link.ts", None, "4" * 40, "120000"),
        ),
        _step("c2", Change("D", "src/a.ts", None, "2" * 40, None, "000000")),
    ]
    alpha, beta = (SearchWatch(f"search('{word}', 'src/**')", shared) for word in ("alpha", "beta"))
    docs = SearchWatch("search('alpha', 'docs/**')", shared)
    assert alpha.places(steps) == [("c1", "src/a.ts", "2" * 40)]
    assert beta.places(steps) is alpha.places(steps)
    assert docs.places(steps) == [("c1", "docs/b.md", "3" * 40)]
    assert alpha.places(steps[1:]) == []
    assert SearchWatch("files('src/**')", shared).places(steps) == []
    assert SearchWatch("tree-docs('docs')", shared).places(steps) == []
