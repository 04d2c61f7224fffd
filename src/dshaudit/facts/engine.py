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
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import PurePosixPath

import tree_sitter

from ..model import Evidence, LineRange
from ..snapshot import Snapshot
from ..symbols import language_for, parse

TEST_NAME_RE = re.compile(r"\.(spec|e2e|test)\.tsx?$")
TEST_DIRS = frozenset({"tests", "test", "__tests__"})


def is_test_path(path: str) -> bool:
    """A test file by the audit's rule: a `.spec`, `.e2e` or `.test` name, or a
    `tests`/`test`/`__tests__` folder on the path."""
    if TEST_NAME_RE.search(path):
        return True
    return any(part in TEST_DIRS for part in PurePosixPath(path).parts[:-1])


@lru_cache(maxsize=None)
def glob_regex(glob: str) -> re.Pattern:
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
            out.append("(?:" + "|".join(re.escape(x) for x in glob[i + 1:j].split(",")) + ")")
            i = j + 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


def package_of(path: str) -> str:
    """The workspace package folder a path belongs to (`packages/core/agent-loop`)."""
    parts = path.split("/")
    if parts[0] == "packages" and len(parts) > 3:
        return "/".join(parts[:3])
    if parts[0] in ("vendor", "apps", "python", "examples") and len(parts) > 2:
        return "/".join(parts[:2])
    return parts[0]


class CannotEvaluate(Exception):
    """A detector cannot measure honestly: say where and why."""

    def __init__(self, message: str, evidence: tuple[Evidence, ...] = ()):
        super().__init__(message)
        self.evidence = evidence


@dataclass
class Match:
    path: str
    captures: dict[str, list[tree_sitter.Node]]

    def text(self, name: str) -> str | None:
        nodes = self.captures.get(name)
        return nodes[0].text.decode("utf-8", "replace") if nodes else None

    def node(self, name: str) -> tree_sitter.Node | None:
        nodes = self.captures.get(name)
        return nodes[0] if nodes else None


def node_lines(node: tree_sitter.Node) -> LineRange:
    return LineRange(node.start_point[0] + 1, node.end_point[0] + 1)


def evidence_of(path: str, node: tree_sitter.Node) -> Evidence:
    return Evidence(path, node_lines(node))


@dataclass
class Measurement:
    value: object
    fields: dict = field(default_factory=dict)
    evidence: tuple[Evidence, ...] = ()


@lru_cache(maxsize=None)
def load_query(name: str, tsx: bool) -> tree_sitter.Query:
    source = resources.files(__package__).joinpath("queries", name).read_text(encoding="utf-8")
    return tree_sitter.Query(language_for("x.tsx" if tsx else "x.ts"), source)


class FactContext:
    """What a reducer may ask of a snapshot. Caches per blob, so detectors that
    look at the same file share one read and one parse."""

    def __init__(self, snapshot: Snapshot):
        self.snapshot = snapshot
        self._blob_ids: dict[str, str] | None = None
        self._trees: dict[tuple[str, str], tree_sitter.Tree] = {}

    # -- paths and text --------------------------------------------------------

    def blob_ids(self) -> dict[str, str]:
        if self._blob_ids is None:
            self._blob_ids = self.snapshot.blob_ids()
        return self._blob_ids

    def paths(self, globs: list[str], exclude_tests: bool = False) -> list[str]:
        regexes = [glob_regex(g) for g in globs]
        return [
            p
            for p in self.blob_ids()
            if any(r.match(p) for r in regexes) and not (exclude_tests and is_test_path(p))
        ]

    def read(self, path: str) -> bytes:
        blob = self.blob_ids().get(path)
        if blob is None:
            raise CannotEvaluate(f"{path} does not exist at this pin")
        return self.snapshot.read(blob)

    def text(self, path: str) -> str:
        return self.read(path).decode("utf-8", "replace")

    def grep(self, needle: str, paths: list[str]) -> list[str]:
        """The paths among `paths` whose content holds `needle` (fixed string)."""
        if not paths:
            return []
        hits = set(self.snapshot.grep_files(needle))
        return [p for p in paths if p in hits]

    # -- syntax ------------------------------------------------------------------

    def tree(self, path: str) -> tree_sitter.Tree:
        key = (self.blob_ids()[path], "tsx" if path.endswith(".tsx") else "ts")
        if key not in self._trees:
            self._trees[key] = parse(path, self.read(path))
        return self._trees[key]

    def query(self, query_name: str, paths: list[str], needle: str | None = None) -> list[Match]:
        """Run one query over each file (holding `needle`, when given), in path order.
        A parse error on a line holding the needle makes the answer unknowable."""
        files = self.grep(needle, paths) if needle else paths
        matches = []
        for path in sorted(files):
            tree = self.tree(path)
            if tree.root_node.has_error and needle:
                self._refuse_if_error_near(path, tree, needle)
            query = load_query(query_name, path.endswith(".tsx"))
            for _, captures in tree_sitter.QueryCursor(query).matches(tree.root_node):
                matches.append(Match(path, captures))
        return matches

    def _refuse_if_error_near(self, path: str, tree: tree_sitter.Tree, needle: str) -> None:
        lines = self.text(path).split("\n")
        needle_lines = {i + 1 for i, ln in enumerate(lines) if needle in ln}
        stack = [tree.root_node]
        while stack:
            node = stack.pop()
            if node.is_error or node.is_missing:
                span = node_lines(node)
                hit = sorted(n for n in needle_lines if span.start <= n <= span.end)
                if hit or (node.is_missing and span.start in needle_lines):
                    raise CannotEvaluate(
                        f"tree-sitter-typescript cannot parse {path}:{span} where {needle!r} occurs "
                        f"(line {hit[0] if hit else span.start}); the count would be a guess",
                        (Evidence(path, span),),
                    )
                continue
            stack.extend(c for c in node.children if c.has_error or c.is_error or c.is_missing)


_WRAPPERS = frozenset({"as_expression", "satisfies_expression", "non_null_expression", "parenthesized_expression"})


def unwrap(node: tree_sitter.Node) -> tree_sitter.Node:
    """`x as const`, `x satisfies T`, `x!`, `(x)`: the x they wrap."""
    while node.type in _WRAPPERS and node.named_child_count >= 1:
        node = node.named_children[0]
    return node


def js_literal(node: tree_sitter.Node) -> object:
    """The value of a literal node: number, string, boolean, null; else its source text."""
    node = unwrap(node)
    text = node.text.decode("utf-8", "replace")
    if node.type == "number":
        clean = text.replace("_", "")
        try:
            return int(clean, 0) if re.fullmatch(r"0[xob][0-9a-f]+|\d+", clean, re.I) else float(clean)
        except ValueError:
            return text
    if node.type == "string":
        return "".join(c.text.decode("utf-8", "replace") for c in node.named_children if c.type == "string_fragment")
    if node.type in ("true", "false"):
        return node.type == "true"
    if node.type in ("null", "undefined"):
        return None
    if node.type == "binary_expression":
        # Constant arithmetic such as `10 * 60 * 1000`.
        left, right = node.child_by_field_name("left"), node.child_by_field_name("right")
        op = node.child_by_field_name("operator").text.decode()
        a, b = js_literal(left), js_literal(right)
        if isinstance(a, (int, float)) and isinstance(b, (int, float)) and op in "+-*":
            return {"+": a + b, "-": a - b, "*": a * b}[op]
    return text
