"""Declarations of a TypeScript file, by dotted name, from its tree-sitter tree.

`Context` is a class, `Context.constructor` its constructor,
`AgentRegistry.setFactory` a method, `reg.setFactory` a property of an object
literal bound to `const reg`. Overloads and merged declarations share a name,
so a name maps to a list of spans. A span starts at the declaration's leading
comments (its JSDoc, or `//` lines right above it): a citation of a `@param`
line belongs to the method it documents.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache

import tree_sitter
import tree_sitter_typescript

from dshaudit.core.model import LineRange

# Node types that declare a name, read from their `name` (or `key`) field.
DECLARATIONS = frozenset(
    {
        "class_declaration",
        "abstract_class_declaration",
        "class",
        "interface_declaration",
        "type_alias_declaration",
        "enum_declaration",
        "function_declaration",
        "generator_function_declaration",
        "function_signature",
        "variable_declarator",
        "method_definition",
        "method_signature",
        "abstract_method_signature",
        "public_field_definition",
        "property_signature",
        "internal_module",
        "module",
        "enum_assignment",
        "pair",
    }
)
_WRAPPERS = frozenset({"export_statement", "ambient_declaration"})
_DECLARATION_LISTS = frozenset({"lexical_declaration", "variable_declaration"})


def _doc_comment_start(node: tree_sitter.Node) -> int:
    """The 0-based row where a declaration begins, its leading comments included:
    the comments right above it (a JSDoc block, or `//` lines), with no blank line between."""
    row = node.start_point[0]
    prev = node.prev_sibling
    while prev is not None and prev.type == "comment" and prev.end_point[0] >= row - 1:
        row = prev.start_point[0]
        prev = prev.prev_sibling
    return row


def walk(node: tree_sitter.Node) -> Iterator[tree_sitter.Node]:
    """Every node below `node` (itself included), in source order."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))


@cache
def language_for(path: str) -> tree_sitter.Language:
    if path.endswith(".tsx") or path.endswith(".jsx"):
        return tree_sitter.Language(tree_sitter_typescript.language_tsx())
    return tree_sitter.Language(tree_sitter_typescript.language_typescript())


def parse(path: str, source: bytes) -> tree_sitter.Tree:
    return tree_sitter.Parser(language_for(path)).parse(source)


@dataclass(frozen=True)
class SymbolTable:
    spans: dict[str, tuple[LineRange, ...]]
    first_error_line: int | None  # where tree-sitter could not parse, if anywhere

    def resolve(self, name: str) -> tuple[LineRange, ...]:
        """Exact dotted name, else a unique match on its trailing components
        (`Q.m` finds `N.Q.m` when nothing else ends that way)."""
        if name in self.spans:
            return self.spans[name]
        suffix = "." + name
        matches = [k for k in self.spans if k.endswith(suffix)]
        if len(matches) == 1:
            return self.spans[matches[0]]
        return ()

    def names(self) -> list[str]:
        return sorted(self.spans)

    def enclosing(self, lines: LineRange) -> tuple[str, LineRange] | None:
        """The innermost declaration that holds all of `lines`, and its span
        (the shortest span; of equal ones, the most qualified name)."""
        holding = [
            (s.end - s.start, -name.count("."), name, s)
            for name, spans in self.spans.items()
            for s in spans
            if s.start <= lines.start and lines.end <= s.end
        ]
        if not holding:
            return None
        _, _, name, span = min(holding)
        return name, span


def _name_of(node: tree_sitter.Node) -> str | None:
    name = node.child_by_field_name("key" if node.type == "pair" else "name")
    if name is None:
        return None
    text = (name.text or b"").decode("utf-8", "replace")
    if name.type in ("string", "template_string"):
        return text.strip("'\"`")
    if name.type not in ("identifier", "type_identifier", "property_identifier", "private_property_name", "number"):
        return None
    return text


def _first_error_line(root: tree_sitter.Node) -> int | None:
    if not root.has_error:
        return None
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_error or node.is_missing:
            return node.start_point[0] + 1
        stack.extend(c for c in reversed(node.children) if c.has_error or c.is_error or c.is_missing)
    return None


@cache
def _declarations_query(tsx: bool) -> tree_sitter.Query:
    """Every node of the DECLARATIONS types (the named ones: `class` is a keyword too)."""
    language = language_for("x.tsx" if tsx else "x.ts")
    kinds = [t for t in sorted(DECLARATIONS) if language.id_for_node_kind(t, True) is not None]
    return tree_sitter.Query(language, "[" + " ".join(f"({t})" for t in kinds) + "] @declaration")


def build_symbol_table(path: str, source: bytes) -> SymbolTable:
    """The declarations of the file: found by a query, in C, then named from the outside
    in. Nodes nest, so taken in source order (of two that start together, the outer
    first) the declarations that enclose one are those still open when it starts."""
    root = parse(path, source).root_node
    cursor = tree_sitter.QueryCursor(_declarations_query(path.endswith((".tsx", ".jsx"))))
    found = sorted(cursor.captures(root).get("declaration", []), key=lambda n: (n.start_byte, -n.end_byte))
    spans: dict[str, list[LineRange]] = {}
    enclosing: list[tuple[int, str]] = []  # (end byte, the dotted name its members take) of each open one
    for node in found:
        while enclosing and enclosing[-1][0] <= node.start_byte:
            enclosing.pop()
        name = _name_of(node)
        if name is None:
            continue
        start = node
        if (
            start.type == "variable_declarator"
            and start.parent is not None
            and start.parent.type in _DECLARATION_LISTS
            and start.parent.named_child_count == 1
        ):
            start = start.parent  # `const X = ...`: the statement, where a doc comment attaches
        while start.parent is not None and start.parent.type in _WRAPPERS:
            start = start.parent
        qualified = (enclosing[-1][1] if enclosing else "") + name
        spans.setdefault(qualified, []).append(LineRange(_doc_comment_start(start) + 1, node.end_point[0] + 1))
        enclosing.append((node.end_byte, qualified + "."))
    return SymbolTable(
        spans={k: tuple(sorted(v)) for k, v in spans.items()},
        first_error_line=_first_error_line(root),
    )
