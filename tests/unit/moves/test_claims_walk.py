"""How `history` splits the claims between its two claims' walks, and joins their answers."""

from dshaudit.core.model import Claim, SourceLocation
from dshaudit.moves.claims_walk import ClaimsWalk, merge_claims


def _claim(ref: str, problem: str | None = None) -> Claim:
    return Claim("claim", f"{ref} == 1", ref, "==", 1, SourceLocation("doc.md", 1, 1), problem)


def test_searches_and_tree_docs_are_walked_apart_from_the_detectors():
    assert ClaimsWalk.of_search(_claim("search('TODO', 'packages/**').count"))
    assert ClaimsWalk.of_search(_claim("tree-docs('docs').stale"))
    assert not ClaimsWalk.of_search(_claim("session.surface-op-kinds.count"))
    assert not ClaimsWalk.of_search(_claim("search('TODO').count", problem="cannot be read"))


def test_detectors_that_count_searches_are_walked_with_the_searches():
    # Both walks would otherwise screen the tree at FROM, each reading the files both select.
    assert ClaimsWalk.of_search(_claim("scale.markers.TODO"))
    assert ClaimsWalk.of_search(_claim("scale.absent-strings.ollama"))
    assert not ClaimsWalk.of_search(_claim("scale.typescript-files"))


def test_two_walks_are_joined_in_the_claims_order_with_each_commit_counted_once():
    first = (["a", "c"], [1, 0, 2], [True, False, False])
    second = (["b"], [0, 3, 1], [False, False, True])
    histories, changed, touched = merge_claims([False, True, False], first, second)  # type: ignore[arg-type]
    assert histories == ["a", "b", "c"]
    assert changed == [1, 3, 3]
    assert touched == [True, False, True]
