"""Running fact detectors over one snapshot.

A detector is data (`registry.toml`): an id, the counting rule in words, the
paths it looks at, the literal text its matches must contain, an optional
tree-sitter query (`queries/*.scm`) and the name of a reducer that turns
matches into a value. This module does the shared work: list and filter
paths, find the files holding the literal (one `git grep`), parse only those,
run the query once per file, and refuse to answer when a parse error sits
where the literal occurs.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache, lru_cache
from importlib import resources
from itertools import takewhile
from typing import Any, Protocol

import tree_sitter

from dshaudit.core.model import Evidence
from dshaudit.facts.specs import PARSED_NEEDLE_MASK, all_needles, registry_toml
from dshaudit.git.snapshot import Snapshot
from dshaudit.lang.parsing import CannotEvaluate, TreeCache, node_lines, node_text
from dshaudit.lang.symbols import language_for, parse
from dshaudit.platform.cache import Cache, Shard, digest, shaped


class Workers(Protocol):
    """Where per-file work runs when there is enough of it (parallel.Pool): work items
    (detector id or "needles", path, blob id) in, (shard name, key, result) out."""

    def map(self, items: list[tuple[str, str, str]]) -> list[tuple[str, str, object]]: ...

    def chunks(self, items: list[tuple[str, str, str]]) -> Iterator[list[tuple[str, str, object]]]: ...


class Layout:
    """What the detectors know of DSH's folders, from the `[layout]` table of
    registry.toml: which folders are workspace packages and which files are tests."""

    def __init__(self, table: dict[str, Any]):
        self.package_roots: dict[str, int] = dict(table["package_roots"])
        self.test_dirs = frozenset(table["test_dirs"])
        self.test_file_suffixes = tuple(table["test_file_suffixes"])
        self.test_support = tuple(f"{folder.rstrip('/')}/" for folder in table["test_support"])
        # Each path's answer, kept: `history` counts the tree's test files again at every
        # commit that adds or removes one, and the tree is mostly the same paths each time.
        self._tests: dict[str, bool] = {}

    def is_test_path(self, path: str) -> bool:
        """A test file: its name ends in a test suffix (`.spec.ts`), or a test
        folder (`tests`, `__tests__`) is on its path."""
        known = self._tests.get(path)
        if known is None:
            known = self._tests[path] = path.endswith(self.test_file_suffixes) or any(
                part in self.test_dirs for part in path.split("/")[:-1]
            )
        return known

    def is_test_support(self, path: str) -> bool:
        """Under a folder of test helpers that are not tests by name."""
        return path.startswith(self.test_support)

    def package_of(self, path: str) -> str:
        """The workspace package folder a path belongs to (`packages/core/agent-loop`):
        as many folders below its root folder as the root's depth; else the top folder."""
        parts = path.split("/")
        depth = self.package_roots.get(parts[0])
        if depth is not None and len(parts) > depth + 1:
            return "/".join(parts[: depth + 1])
        return parts[0]

    def family_of(self, folder: str) -> str | None:
        """The family of a package folder under a two-deep root (`core` for
        `packages/core/agent-loop`); None elsewhere."""
        parts = folder.split("/")
        if len(parts) == 3 and self.package_roots.get(parts[0]) == 2:
            return parts[1]
        return None


@lru_cache(maxsize=1)
def layout() -> Layout:
    return Layout(registry_toml()["layout"])


_SIMPLE_GLOB_RE = re.compile(r"^(?P<prefix>[^*?{\[]*?)(?:\*\*/\*(?P<ext>\.[\w.]+)|\*\*)?$")


# A test for one path; its answer is used for its truth (a regex's `match` is one).
PathTest = Callable[[str], object]


@cache
def glob_predicate(glob: str) -> PathTest:
    """A test for one path: plain string checks for the common shapes (`a/b.ts`,
    `dir/**`, `dir/**/*.ts`), the regex otherwise. Same answers, far less work."""
    m = _SIMPLE_GLOB_RE.match(glob)
    if m and "*" not in m.group("prefix"):
        prefix, ext = m.group("prefix"), m.group("ext")
        if glob == prefix:
            return lambda p: p == glob
        if ext:
            return lambda p: p.startswith(prefix) and p.endswith(ext) and len(p) >= len(prefix) + len(ext)
        return lambda p: p.startswith(prefix)
    return glob_regex(glob).match


def narrowing_pathspecs(globs: Sequence[str]) -> tuple[str, ...]:
    """git pathspecs that match every path one of `globs` matches, and perhaps
    more (the caller filters by the globs); () when they would not narrow the
    tree. A pathspec without magic is an fnmatch pattern whose `*` spans
    folders, so `**/*.ts` becomes `*.ts` and `a/**/b.ts` becomes `a/*b.ts`."""
    specs = []
    for glob in globs:
        if any(c in glob for c in "?[{\\") or glob.startswith(":"):
            return ()  # nothing simpler that surely matches as much
        spec = re.sub(r"\*+", "*", re.sub(r"\*\*/", "*", glob))
        if spec.strip("*/") == "":
            return ()
        specs.append(spec)
    return tuple(specs)


@cache
def glob_regex(glob: str) -> re.Pattern[str]:
    """`packages/*/*/src/**/*.ts` as a regex: `*` stays in one folder, `**/` spans any."""
    out, i = [], 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:[^/]+/)*")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        elif glob[i] == "{":
            j = glob.index("}", i)
            out.append("(?:" + "|".join(re.escape(x) for x in glob[i + 1 : j].split(",")) + ")")
            i = j + 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


@dataclass
class Match:
    path: str
    captures: dict[str, list[tree_sitter.Node]]

    def text(self, name: str) -> str | None:
        nodes = self.captures.get(name)
        return node_text(nodes[0]) if nodes else None

    def node(self, name: str) -> tree_sitter.Node | None:
        nodes = self.captures.get(name)
        return nodes[0] if nodes else None

    def required(self, name: str) -> tree_sitter.Node:
        """The node of a capture that every pattern of the query has: its
        absence means the query and its reducer disagree, a bug here."""
        node = self.node(name)
        if node is None:
            raise LookupError(f"{self.path}: the query captured no @{name}, which its reducer needs")
        return node


@dataclass
class Measurement:
    value: object
    fields: dict[str, Any] = field(default_factory=dict)
    evidence: tuple[Evidence, ...] = ()


@cache
def load_query(name: str, tsx: bool) -> tree_sitter.Query:
    source = resources.files(__package__).joinpath("queries", name).read_text(encoding="utf-8")
    return tree_sitter.Query(language_for("x.tsx" if tsx else "x.ts"), source)


def needle_shard(cache: Cache) -> Shard:
    """Which detector literals each blob holds, by blob id: bit k is `all_needles()[k]`."""
    return cache.shard("needles", digest(NEEDLE_VERSION, *all_needles()), shaped(int))


def _literal_start(glob: str) -> str:
    """What every path a glob selects starts with: the glob up to its first wildcard."""
    return re.split(r"[*?{\[]", glob, maxsplit=1)[0]


class GlobSets(dict[str, set[str]]):
    """The regular files each glob selects in one tree (`Snapshot.by_paths`). A tree
    derived from it (history's walk) takes them over: only the paths that came, went
    or changed mode are tested again, not every file of the tree at every commit."""

    def carried(self, listing: frozenset[str], child: Snapshot) -> GlobSets:
        came = [p for p in listing if child.is_regular(p)]
        out = GlobSets()
        for glob, paths in self.items():
            test = glob_predicate(glob)
            selected = {p for p in came if test(p)}
            # A glob whose files the commit neither removed nor added keeps its set (no one
            # changes a set once made): most globs at most commits, and copying the large ones
            # at every commit would cost more than the rest of the walk's listing work.
            unchanged = selected <= paths and paths.isdisjoint(listing - selected)
            out[glob] = paths if unchanged else (paths - listing) | selected
        return out


class FactContext:
    """What detectors may ask of a snapshot. Blobs are read in batches, each
    file is parsed at most once per run, and the per-file work of every
    detector is cached by blob id (see cache.py), so a blob seen before is
    neither read nor parsed again."""

    def __init__(self, snapshot: Snapshot, cache: Cache | None = None, prefilter: bool = True):
        self.snapshot = snapshot
        self.cache = cache if cache is not None else Cache(None)
        self.prefilter = prefilter
        self._blobs: dict[str, bytes] = {}
        self._paths: dict[tuple[tuple[str, ...], bool], list[str]] = {}
        # Which paths each glob selects, shared by the contexts of trees that hold the same
        # files (Snapshot.by_paths): a history walk measures facts at dozens of commits.
        self._globs: GlobSets = snapshot.by_paths.setdefault("globs", GlobSets())
        self._under: dict[str, list[str]] = snapshot.by_paths.setdefault("under", {})  # literal prefix -> paths
        self._sorted: list[str] | None = None  # every regular file, in path order
        self.pool: Workers | None = None  # when the caller provides one
        self.trees = TreeCache()

    # -- paths and text --------------------------------------------------------

    def blob_ids(self) -> dict[str, str]:
        return self.snapshot.blob_ids()

    def paths(self, globs: Sequence[str], exclude_tests: bool = False) -> list[str]:
        """Regular files matching any of `globs`, in path order."""
        key = (tuple(globs), exclude_tests)
        if key not in self._paths:
            matched: set[str] = set()
            for g in globs:
                matched |= self._glob(g)
            is_test = layout().is_test_path
            # blob_ids() is in path order, so sorting what matched keeps that order.
            self._paths[key] = [p for p in sorted(matched) if not (exclude_tests and is_test(p))]
        return self._paths[key]

    def _glob(self, glob: str) -> set[str]:
        if glob not in self._globs:
            prefix = _literal_start(glob)
            if prefix not in self._under:
                # The paths are sorted: those that start with the prefix are one run of them.
                if self._sorted is None:
                    self._sorted = list(self.blob_ids())
                start = bisect_left(self._sorted, prefix)
                self._under[prefix] = list(takewhile(lambda p: p.startswith(prefix), self._sorted[start:]))
            match = glob_predicate(glob)
            self._globs[glob] = {p for p in self._under[prefix] if match(p)}
        return self._globs[glob]

    def load(self, paths: list[str]) -> None:
        """Read the blobs of these paths in one batch, those not read yet."""
        ids = self.blob_ids()
        missing = [ids[p] for p in paths if p in ids and ids[p] not in self._blobs]
        if missing:
            self._blobs.update(self.snapshot.read_many(missing))

    def forget(self, paths: list[str]) -> None:
        """Drop the bytes of these paths (a later read fetches them again)."""
        ids = self.blob_ids()
        for p in paths:
            self._blobs.pop(ids.get(p, ""), None)

    def read(self, path: str) -> bytes:
        blob = self.blob_ids().get(path)
        if blob is None:
            raise CannotEvaluate(f"{path} does not exist at this pin")
        if blob not in self._blobs:
            self._blobs[blob] = self.snapshot.read(blob)
        return self._blobs[blob]

    def text(self, path: str) -> str:
        return self.read(path).decode("utf-8", "replace")

    def needle_shard(self) -> Shard:
        return needle_shard(self.cache)

    def files_with(
        self, needle: str | tuple[str, ...], globs: list[str], exclude_tests: bool = False, *, filter_only: bool = True
    ) -> list[str]:
        """Paths matching `globs` whose content holds `needle` (any of several), remembered per blob.
        As a prefilter (`filter_only`), it can be switched off: then every path
        matching the globs is returned and the detector must find nothing more."""
        paths = self.paths(globs, exclude_tests)
        if filter_only and not self.prefilter:
            return paths
        needles = all_needles()
        wanted = (needle,) if isinstance(needle, str) else needle
        if not set(wanted) <= set(needles):
            raise ValueError(f"needle {needle!r} is not declared in registry.toml")
        bit = sum(1 << needles.index(n) for n in wanted)
        shard = self.needle_shard()
        ids = self.blob_ids()
        unknown = [p for p in paths if shard.get(ids[p]) is None]
        if unknown:
            # In C: git grep -o over the unknown files says which literals each holds,
            # except in the few files where one match may hide another literal
            # (Grep.needles): those are read, and every literal looked for.
            hits = self.snapshot.grep.needles(needles, unknown)
            for p in unknown:
                held = hits[p]
                if held is not None:
                    shard.put(ids[p], sum(1 << k for k, n in enumerate(needles) if n in held))
            holding = [p for p in unknown if hits[p] is None]
            encoded = [n.encode("utf-8") for n in needles]
            for i in range(0, len(holding), 400):
                chunk = holding[i : i + 400]
                had = {ids[p] for p in chunk if ids[p] in self._blobs}
                self.load(chunk)
                for p in chunk:
                    data = self._blobs[ids[p]]
                    shard.put(ids[p], sum(1 << k for k, n in enumerate(encoded) if n in data))
                # Keep what a detector will parse; let the rest go.
                self.forget([p for p in chunk if ids[p] not in had and not (shard.get(ids[p]) & PARSED_NEEDLE_MASK())])
        return [p for p in paths if shard.get(ids[p]) & bit]


def file_matches(
    query_name: str, path: str, source: bytes, needle: tuple[str, ...] | None, trees: TreeCache | None = None
) -> list[Match]:
    """One query over one file. A parse error on a line holding a needle
    makes the answer unknowable: CannotEvaluate, not an undercount."""
    tree = trees.get(path, source) if trees is not None else parse(path, source)
    if tree.root_node.has_error and needle:
        _refuse_if_error_near(path, tree, source, needle)
    query = load_query(query_name, path.endswith(".tsx"))
    return [Match(path, captures) for _, captures in tree_sitter.QueryCursor(query).matches(tree.root_node)]


def _refuse_if_error_near(path: str, tree: tree_sitter.Tree, source: bytes, needle: tuple[str, ...]) -> None:
    lines = source.decode("utf-8", "replace").split("\n")
    needle_lines = {i + 1 for i, ln in enumerate(lines) if any(n in ln for n in needle)}
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.is_error or node.is_missing:
            span = node_lines(node)
            hit = sorted(n for n in needle_lines if span.start <= n <= span.end)
            if hit or (node.is_missing and span.start in needle_lines):
                raise CannotEvaluate(
                    f"tree-sitter-typescript cannot parse {path}:{span} where {' or '.join(map(repr, needle))} occurs "
                    f"(line {hit[0] if hit else span.start}); the count would be a guess",
                    (Evidence(path, span),),
                )
            continue
        stack.extend(c for c in node.children if c.has_error or c.is_error or c.is_missing)


# Bump when the meaning of cached needle or per-file results changes.
NEEDLE_VERSION = "1"
