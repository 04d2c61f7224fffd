"""What a reducer is, where it registers, and what every reducer shares.

A detector that reads syntax does it in two steps, so that its work on one
file can be cached by blob id and never redone:

- `per_file(spec, path, matches) -> partial`: JSON-able facts about one file
  (names found, literal values, evidence as [path, first, last]);
- `combine(spec, ctx, partials) -> Measurement`: the fact's value from the
  partials of every file it read, in path order.

A detector about the tree as a whole (manifests, file counts, text over every
file) is one `whole(ctx, spec) -> Measurement`: it reads a few small files,
only paths, or asks git grep; its result is cached per commit.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import tree_sitter

from dshaudit.core.model import Evidence, LineRange
from dshaudit.documents.searches import Search
from dshaudit.facts.engine import FactContext, Match, Measurement
from dshaudit.lang.parsing import CannotEvaluate

if TYPE_CHECKING:
    from dshaudit.facts.specs import DetectorSpec

# What per_file keeps of one file: JSON-able, since it is cached.
Partial = dict[str, Any]
# The partials of every file a detector read, as (path, partial) in path order.
Partials = list[tuple[str, Partial]]
# A place as partials keep it: [path, first line, last line].
Place = list[str | int]

PerFile = Callable[["DetectorSpec", str, list[Match]], Partial]
Combine = Callable[["DetectorSpec", FactContext, Partials], Measurement]
# Whole-tree detectors take the matches argument of a query detector's
# signature, always empty: they run no query.
Whole = Callable[[FactContext, "DetectorSpec", list[Match]], Measurement]
Searches = Callable[["DetectorSpec"], list[Search]]

PerFileT = TypeVar("PerFileT", bound=PerFile)
CombineT = TypeVar("CombineT", bound=Combine)
WholeT = TypeVar("WholeT", bound=Whole)

PER_FILE: dict[str, PerFile] = {}  # name -> per_file(spec, path, matches) for query detectors
COMBINE: dict[str, Combine] = {}  # name -> combine(spec, ctx, partials)
WHOLE: dict[str, Whole] = {}  # name -> whole(ctx, spec, [])
SEARCHES: dict[str, Searches] = {}  # name -> the searches (search.py) whole detector `name` counts


def per_file(name: str) -> Callable[[PerFileT], PerFileT]:
    def register(fn: PerFileT) -> PerFileT:
        PER_FILE[name] = fn
        return fn

    return register


def combine(name: str) -> Callable[[CombineT], CombineT]:
    def register(fn: CombineT) -> CombineT:
        COMBINE[name] = fn
        return fn

    return register


def whole(fn: WholeT) -> WholeT:
    WHOLE[fn.__name__] = fn
    return fn


def ev(path: str, node: tree_sitter.Node) -> Place:
    return [path, node.start_point[0] + 1, node.end_point[0] + 1]


def evidence(items: Iterable[Sequence[Any]]) -> tuple[Evidence, ...]:
    """Places read back from partials or the cache ([path, first, last]) as Evidence."""
    return tuple(Evidence(p, LineRange(a, b)) for p, a, b in items)


def line_of(text: str, needle: str, start: int = 0) -> int | None:
    i = text.find(needle, start)
    return None if i < 0 else text.count("\n", 0, i) + 1


def require(items: Collection[object], spec: DetectorSpec) -> None:
    if not items:
        raise CannotEvaluate(f"nothing matched in {', '.join(spec.paths)}: the code this fact reads is not there")


def flat(partials: Partials, key: str) -> list[Any]:
    return [item for _, partial in partials for item in partial.get(key, [])]
