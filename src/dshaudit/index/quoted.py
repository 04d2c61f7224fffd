"""Quoted code, compared by structure with the code of one DSH commit.

What a fragment is and how it matches code are lang/fragments.py's and
lang/matching.py's; here a fragment meets a commit. Candidate files are found
through the name index (`nameindex.py`): a match must contain every name and
plain string of the fragment, so only files that hold all of them are read; at
most `MATCH_FILE_CAP` are parsed. A binding none of whose declarations matches,
while some exist, is `value_differs`, naming one of them. A fragment is left
undecided (None) when more files than that hold its names and none of those
read matches, or when the only files holding them are not code.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import tree_sitter

from dshaudit.core.model import LineRange
from dshaudit.lang.fragments import Fragment
from dshaudit.lang.matching import (
    CODE_SUFFIXES,
    DECLARING,
    declarations,
    first_match,
    holds_needle,
    needle,
    nodes_of,
    object_keys,
    parse_code,
    parsed_source,
    reading_kind,
    shown_text,
    text_place,
    type_fits,
)
from dshaudit.platform import cache

if TYPE_CHECKING:
    from dshaudit.git.snapshot import Snapshot
    from dshaudit.index.nameindex import NameIndex

VERSION = "2"  # bump when matching changes what a cached verdict means
MATCH_FILE_CAP = 60  # files read to find a match
DECLARATION_FILE_CAP = 60  # files read to find a binding's declarations


@dataclass(frozen=True)
class FragmentVerdict:
    status: str  # "ok", "value_differs", "no_match", or "phantom" (a binding's name occurs nowhere)
    message: str
    place: tuple[str, LineRange] | None = None


# A cached verdict: none ({}), or one of the statuses and a message, with the place it found.
_STATUSES = frozenset({"ok", "value_differs", "no_match", "phantom"})
_ENTRY = cache.shaped(({}, {"status": str, "message": str, "path?": str, "start?": int, "end?": int}))


def _SHAPE(value: object) -> bool:
    return _ENTRY(value) and (not value or value["status"] in _STATUSES)  # type: ignore[index]


def cache_key(fragment: Fragment, sha: str) -> str:
    return cache.digest(sha, fragment.kind, fragment.source)


def cached(fragment: Fragment, sha: str) -> bool:
    """Whether the fragment's verdict at this commit is in the cache."""
    return cache.current().shard("reference-fragments", VERSION, _SHAPE).get(cache_key(fragment, sha)) is not None


def evaluate(fragment: Fragment, snapshot: Snapshot, index: NameIndex) -> FragmentVerdict | None:
    """The fragment against the commit: cached per (commit, fragment source)."""
    return evaluate_all([fragment], snapshot, index)[0]


def evaluate_all(fragments: list[Fragment], snapshot: Snapshot, index: NameIndex) -> list[FragmentVerdict | None]:
    """Several fragments against one commit, their files read together."""
    shard = cache.current().shard("reference-fragments", VERSION, _SHAPE)
    files = _Files(snapshot)
    keys = [cache_key(f, snapshot.sha) for f in fragments]
    todo = {k: f for k, f in zip(keys, fragments) if shard.get(k) is None}
    plans = {k: _plan(f, snapshot, index) for k, f in todo.items()}
    for k, f in todo.items():
        verdict = _evaluate(f, snapshot, index, plans[k], files)
        if verdict is None:
            shard.put(k, {})
        else:
            entry: dict[str, object] = {"status": verdict.status, "message": verdict.message}
            if verdict.place is not None:
                entry.update(path=verdict.place[0], start=verdict.place[1].start, end=verdict.place[1].end)
            shard.put(k, entry)
    out: list[FragmentVerdict | None] = []
    for k in keys:
        hit = shard.get(k)
        place = (hit["path"], LineRange(hit["start"], hit["end"])) if hit.get("path") else None
        out.append(FragmentVerdict(hit["status"], hit["message"], place) if hit else None)
    return out


class _Files:
    """The files fragments are compared with, at one commit. What a file says
    about a fragment depends on its content only, so it is cached by blob id
    (`fragment-blobs`): at a new commit only the files that changed are read
    and parsed. Blobs are read in batches, once per run."""

    def __init__(self, snapshot: Snapshot):
        self.snapshot = snapshot
        self.blobs = snapshot.blob_ids()
        self.shard = cache.current().shard("fragment-blobs", VERSION)
        self.data: dict[str, bytes] = {}  # the files read (to parse, or to look for a fragment's text), by blob id
        self.trees: dict[tuple[str, str], tree_sitter.Node] = {}  # parsed once for every fragment that reads them
        self.found: dict[tuple[str, str, frozenset[str]], list[tree_sitter.Node]] = {}  # nodes by type, per file

    def read(self, paths: list[str]) -> None:
        missing = sorted({self.blobs[p] for p in paths} - set(self.data))
        if missing:
            self.data.update(self.snapshot.read_many(missing))

    def source(self, path: str) -> bytes:
        blob = self.blobs[path]
        if blob not in self.data:
            self.data[blob] = self.snapshot.read(blob)
        return self.data[blob]

    def tree(self, path: str) -> tree_sitter.Node:
        key = (self.blobs[path], reading_kind(path))
        if key not in self.trees:
            self.trees[key] = parse_code(path, self.source(path))
        return self.trees[key]

    def nodes(self, path: str, types: frozenset[str]) -> list[tree_sitter.Node]:
        """The file's nodes of these types, found once for every fragment that asks
        (fragments of one kind look for the same types in the same files)."""
        key = (self.blobs[path], reading_kind(path), types)
        if key not in self.found:
            self.found[key] = nodes_of(self.tree(path), types, reading_kind(path) == "tsx")
        return self.found[key]

    def _needle_key(self, fragment: Fragment, path: str) -> str:
        return cache.digest("needle", needle(fragment), self.blobs[path])

    def holds_text(self, fragment: Fragment, path: str) -> bool:
        """Whether the file holds the fragment's text as written (whitespace and
        quote style aside). A file read to learn it is kept: it is the next one
        compared."""
        key = self._needle_key(fragment, path)
        if self.shard.get(key) is None:
            self.shard.put(key, 1 if holds_needle(needle(fragment), self.source(path)) else 0)
        return bool(self.shard.get(key))

    def match(self, fragment: Fragment, path: str) -> LineRange | None:
        """Where the file first matches the fragment, if it does."""
        key = cache.digest("match", fragment.kind, fragment.source, self.blobs[path], reading_kind(path))
        hit = self.shard.get(key)
        if hit is None:
            source = self.source(path)
            lines: LineRange | None
            if reading_kind(path) == "text":
                lines = text_place(fragment, source)
            else:
                lines = first_match(fragment, lambda types: self.nodes(path, types), parsed_source(path, source))
            hit = [lines.start, lines.end] if lines is not None else 0
            self.shard.put(key, hit)
        return LineRange(hit[0], hit[1]) if hit else None

    def type_fits(
        self, fragment: Fragment, path: str
    ) -> list[tuple[LineRange, str, tuple[str, ...] | None, tuple[str, ...]]]:
        """The file's typed declarations of the binding, its quoted keys against their types (`type_fits`)."""
        key = cache.digest("type-fits", fragment.kind, fragment.source, self.blobs[path], reading_kind(path))
        hit = self.shard.get(key)
        if hit is None:
            source = parsed_source(path, self.source(path))
            found = type_fits(fragment, lambda types: self.nodes(path, types), source)
            hit = [
                [lines.start, lines.end, shown, None if members is None else list(members), list(missing)]
                for lines, shown, members, missing in found
            ]
            self.shard.put(key, hit)
        return [
            (LineRange(a, b), shown, None if members is None else tuple(members), tuple(missing))
            for a, b, shown, members, missing in hit
        ]

    def declarations(self, fragment: Fragment, path: str) -> list[tuple[LineRange, str]]:
        """The file's declarations of the fragment's binding: where, and the value shown."""
        key = cache.digest("declarations", fragment.kind, fragment.source, self.blobs[path], reading_kind(path))
        hit = self.shard.get(key)
        if hit is None:
            found = declarations(fragment, self.nodes(path, DECLARING), parsed_source(path, self.source(path)))
            hit = [[lines.start, lines.end, value] for lines, value in found]
            self.shard.put(key, hit)
        return [(LineRange(a, b), value) for a, b, value in hit]


@dataclass(frozen=True)
class _Plan:
    """The files a fragment is compared with, or the verdict that needs none."""

    verdict: FragmentVerdict | None = None
    undecided: bool = False
    holding: tuple[str, ...] = ()  # files holding every token, code first, in path order
    reading: list[str] = field(default_factory=list)  # the first MATCH_FILE_CAP of them


def _plan(fragment: Fragment, snapshot: Snapshot, index: NameIndex) -> _Plan:
    at = snapshot.sha[:8]
    if not fragment.tokens:
        return _Plan(undecided=True)  # nothing to find candidate files by: `[1, 2]`
    where = index.paths(fragment.tokens)
    absent = [t for t in fragment.tokens if not where[t]]
    if fragment.kind == "binding" and fragment.name in absent:
        return _Plan(FragmentVerdict("phantom", f"`{fragment.name}` occurs nowhere at {at}"))
    if absent and fragment.kind != "binding":
        names = ", ".join(f"`{t}`" for t in absent[:3])
        return _Plan(
            FragmentVerdict(
                "no_match", f"no code at {at} matches: {names} occur{'s' if len(absent) == 1 else ''} nowhere"
            )
        )
    holding = sorted(
        set.intersection(*(set(where[t]) for t in fragment.tokens)) if not absent else set(),
        key=lambda p: (not p.endswith(CODE_SUFFIXES), p),
    )
    blobs = snapshot.blob_ids()
    return _Plan(holding=tuple(holding), reading=[p for p in holding if p in blobs][:MATCH_FILE_CAP])


def _evaluate(
    fragment: Fragment, snapshot: Snapshot, index: NameIndex, plan: _Plan, files: _Files
) -> FragmentVerdict | None:
    if plan.verdict is not None or plan.undecided:
        return plan.verdict
    at = snapshot.sha[:8]
    holding, reading = plan.holding, plan.reading
    for path in _text_holders_first(fragment, reading, files):
        lines = files.match(fragment, path)
        if lines is not None:
            return FragmentVerdict("ok", f"matches {path}:{lines}", (path, lines))
    if fragment.kind == "binding":
        typed = _type_fits(fragment, snapshot, index, files)
        fits = [(path, lines, shown) for path, lines, shown, members, missing in typed if members and not missing]
        if fits:
            path, lines, shown = fits[0]
            return FragmentVerdict(
                "ok", f"its keys are members of {shown}, the type of `{fragment.name}` at {path}:{lines}", (path, lines)
            )
        if any(members is None for _, _, _, members, _ in typed):
            return None  # a type not wholly in sight: any key may be one of its members
        if typed:
            path, lines, shown, members, missing = typed[0]
            assert members is not None
            return FragmentVerdict(
                "value_differs",
                f"`{missing[0]}` is no member of {shown}, the type of `{fragment.name}` at {path}:{lines} "
                f"(its members: {_listed(members)})",
                (path, lines),
            )
        differs = _declarations(fragment, snapshot, index, files)
        if differs:
            path, lines, shown = differs[0]
            quoted = shown_text(fragment.value, None)
            more = (
                f" (and {len(differs) - 1} more declaration{'s' if len(differs) > 2 else ''})"
                if len(differs) > 1
                else ""
            )
            return FragmentVerdict(
                "value_differs",
                f"`{'.'.join(fragment.target)}` is {shown} at {path}:{lines}, not {quoted}{more}",
                (path, lines),
            )
    if len(holding) > len(reading) or any(not p.endswith(CODE_SUFFIXES) for p in holding):
        return None  # not every candidate was compared by structure: undecided
    if not holding:
        return FragmentVerdict("no_match", f"no file at {at} holds all of {_listed(fragment.tokens)}")
    return FragmentVerdict(
        "no_match",
        f"no code at {at} matches: {len(holding)} file{'s' if len(holding) != 1 else ''} hold "
        f"{_listed(fragment.tokens)}, none in this shape",
    )


def _text_holders_first(fragment: Fragment, paths: list[str], files: _Files) -> Iterator[str]:
    """The files that hold the fragment's text as written (whitespace and quote
    style aside) first, then the others, each in its order: most fragments
    match in the first that holds it, and the files after that one are never
    read to learn whether they hold it (at a new pin, a read each)."""
    others = []
    for path in paths:
        if files.holds_text(fragment, path):
            yield path
        else:
            others.append(path)
    yield from others


def _listed(tokens: tuple[str, ...]) -> str:
    shown = ", ".join(f"`{t}`" for t in tokens[:4])
    return shown + (f" and {len(tokens) - 4} more" if len(tokens) > 4 else "")


def _declaring_paths(fragment: Fragment, snapshot: Snapshot, index: NameIndex, files: _Files) -> list[str]:
    """The code files that may declare the binding's name, read, in path order (none if too many hold it)."""
    paths = sorted(p for p in index.paths([fragment.name])[fragment.name] if p.endswith(CODE_SUFFIXES))
    if len(paths) > DECLARATION_FILE_CAP:
        return []
    blobs = snapshot.blob_ids()
    paths = [p for p in paths if p in blobs]
    files.read(paths)
    return paths


def _declarations(
    fragment: Fragment, snapshot: Snapshot, index: NameIndex, files: _Files
) -> list[tuple[str, LineRange, str]]:
    """Every declaration of the binding's name, in path order (none if too many files hold it)."""
    paths = _declaring_paths(fragment, snapshot, index, files)
    return [(path, lines, shown) for path in paths for lines, shown in files.declarations(fragment, path)]


def _type_fits(
    fragment: Fragment, snapshot: Snapshot, index: NameIndex, files: _Files
) -> list[tuple[str, LineRange, str, tuple[str, ...] | None, tuple[str, ...]]]:
    """For an object quoted as a binding's value: each typed declaration of the name, with
    the type, its members (None: not wholly in sight) and the quoted keys it lacks (`type_fits`)."""
    if object_keys(fragment.value) is None:
        return []
    paths = [p for p in _declaring_paths(fragment, snapshot, index, files) if reading_kind(p) in ("ts", "tsx")]
    return [(path, *fit) for path in paths for fit in files.type_fits(fragment, path)]
