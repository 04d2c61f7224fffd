"""What the detectors and quoted code share to read a syntax tree: a node's
lines, text and fields, the value of a literal, and one parse per content."""

from __future__ import annotations

import re

import tree_sitter

from dshaudit.core.model import Evidence, LineRange
from dshaudit.lang.symbols import parse


class CannotEvaluate(Exception):
    """A detector cannot measure honestly: say where and why."""

    def __init__(self, message: str, evidence: tuple[Evidence, ...] = ()):
        super().__init__(message)
        self.evidence = evidence

    def __reduce__(self) -> tuple[type[CannotEvaluate], tuple[str, tuple[Evidence, ...]]]:
        # crosses from a worker process whole, evidence included
        return (CannotEvaluate, (str(self), self.evidence))


def node_lines(node: tree_sitter.Node) -> LineRange:
    return LineRange(node.start_point[0] + 1, node.end_point[0] + 1)


def node_text(node: tree_sitter.Node) -> str:
    """A node's source text. tree-sitter has it whenever the tree was parsed
    from bytes, as every tree here is (symbols.parse); without it a detector
    would match against nothing, so that is an error, not an empty string."""
    text = node.text
    if text is None:
        raise RuntimeError(f"a {node.type} node at line {node.start_point[0] + 1} has no source text")
    return text.decode("utf-8", "replace")


def field_node(node: tree_sitter.Node, name: str) -> tree_sitter.Node:
    """The child in field `name` that the grammar always gives a node of this type
    (`left` of a binary_expression, `key` of a pair)."""
    child = node.child_by_field_name(name)
    if child is None:
        raise CannotEvaluate(f"a {node.type} at line {node.start_point[0] + 1} has no {name}")
    return child


class TreeCache:
    """Parses of this run, by content, so detectors reading one file share one parse."""

    def __init__(self, limit: int = 256):
        self.limit = limit
        self._trees: dict[tuple[bool, bytes], tree_sitter.Tree] = {}

    def get(self, path: str, source: bytes) -> tree_sitter.Tree:
        key = (path.endswith(".tsx"), source)
        tree = self._trees.get(key)
        if tree is None:
            if len(self._trees) >= self.limit:
                self._trees.clear()
            tree = self._trees[key] = parse(path, source)
        return tree


_WRAPPERS = frozenset({"as_expression", "satisfies_expression", "non_null_expression", "parenthesized_expression"})


def unwrap(node: tree_sitter.Node) -> tree_sitter.Node:
    """`x as const`, `x satisfies T`, `x!`, `(x)`: the x they wrap."""
    while node.type in _WRAPPERS and node.named_child_count >= 1:
        node = node.named_children[0]
    return node


def js_literal(node: tree_sitter.Node) -> object:
    """The value of a literal node: number, string, boolean, null; else its source text."""
    node = unwrap(node)
    text = node_text(node)
    if node.type == "number":
        clean = text.replace("_", "")
        try:
            return int(clean, 0) if re.fullmatch(r"0[xob][0-9a-f]+|\d+", clean, re.I) else float(clean)
        except ValueError:
            return text
    if node.type == "string":
        return "".join(node_text(c) for c in node.named_children if c.type == "string_fragment")
    if node.type in ("true", "false"):
        return node.type == "true"
    if node.type in ("null", "undefined"):
        return None
    if node.type == "binary_expression":
        # Constant arithmetic such as `10 * 60 * 1000`.
        op = node_text(field_node(node, "operator"))
        a, b = js_literal(field_node(node, "left")), js_literal(field_node(node, "right"))
        if isinstance(a, (int, float)) and isinstance(b, (int, float)) and op in "+-*":
            return {"+": a + b, "-": a - b, "*": a * b}[op]
    return text
