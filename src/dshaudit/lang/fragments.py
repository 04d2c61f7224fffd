"""Quoted code: which code spans of a document are fragments, parsed.

A fragment is a code span that tree-sitter parses, without error, as one of:

- an object literal, `{ kind: 'x', a }` (or a bare list of pairs, `kind: 'x', a`);
- a binding: `NAME = value`, `const NAME = value`, `obj.key = value`, `key: value`;
- an expression or statement that holds a call, a `new`, an object, an
  assignment or an arrow function (`ctx.plugin(Loader)`, `return this.log.length`
  is not one: it holds none of these).

Anything else (a shell command, prose in backticks, a type, a kebab-case name
that parses as a subtraction) is not a fragment and is not checked.

A fragment's `tokens` are the names and plain strings every code that matches
it must contain. How a fragment matches code is matching.py's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

import tree_sitter

from dshaudit.lang.parsing import unwrap
from dshaudit.lang.symbols import language_for, walk

MAX_FRAGMENT_CHARS = 400

# Node types whose presence makes an expression worth comparing.
_STRUCTURE = frozenset(
    {
        "call_expression",
        "new_expression",
        "object",
        "assignment_expression",
        "augmented_assignment_expression",
        "arrow_function",
        "pair",
    }
)
_NAME_TYPES = frozenset(
    {
        "identifier",
        "property_identifier",
        "shorthand_property_identifier",
        "type_identifier",
        "shorthand_property_identifier_pattern",
        "private_property_name",
    }
)

_KEY_COLON_RE = re.compile(r"""^\s*(?:[A-Za-z_$][\w$]*|'[^'\n]*'|"[^"\n]*")\s*:(?!:)""")
_STRING_RE = re.compile(r"""'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`[^`]*`""")
_KEBAB_RE = re.compile(r"[A-Za-z0-9_]-[A-Za-z_]")
TRAILING_ELLIPSIS_RE = re.compile(r"(?:\.\.\.|…)(?=\s*(?:[,}\])]|$))|…")
_PLAIN_STRING_RE = re.compile(r"[^'\"`\\\n]+")


@dataclass(frozen=True, eq=False)
class Fragment:
    """A quoted piece of code, parsed."""

    text: str  # as written
    source: str  # what was parsed (normalised, perhaps wrapped)
    node: tree_sitter.Node  # the fragment itself: an object, expression or statement
    kind: str  # "object", "binding" or "expression"
    binding: str = ""  # "declaration", "assignment" or "pair", for a binding
    target: tuple[str, ...] = ()  # a binding's name, as a dotted chain
    value: tree_sitter.Node | None = None  # a binding's value
    tokens: tuple[str, ...] = field(default=())  # names and plain strings a match must contain

    @property
    def name(self) -> str:
        """What a binding binds (its last component); empty for other fragments."""
        return self.target[-1] if self.target else ""


@lru_cache(maxsize=1)
def _parser() -> tree_sitter.Parser:
    return tree_sitter.Parser(language_for("fragment.ts"))


def node_text(node: tree_sitter.Node) -> str:
    return (node.text or b"").decode("utf-8", "replace")


def _without_strings(text: str) -> str:
    return _STRING_RE.sub("''", text)


def _top(source: str) -> tree_sitter.Node | None:
    """The one statement `source` parses to, if it parses without error."""
    root = _parser().parse(source.encode("utf-8")).root_node
    if root.has_error:
        return None
    statements = [c for c in root.named_children if c.type != "comment"]
    return statements[0] if len(statements) == 1 else None


def is_wildcard(node: tree_sitter.Node) -> bool:
    return node.type in _NAME_TYPES and re.fullmatch(r"[A-Z]|_", node_text(node)) is not None


def _tokens(node: tree_sitter.Node) -> tuple[str, ...]:
    out: dict[str, None] = {}
    for n in walk(node):
        if n.type in _NAME_TYPES and not is_wildcard(n):
            out[node_text(n).lstrip("#")] = None
        elif n.type == "string_fragment" and n.parent is not None and n.parent.type == "string":
            s = node_text(n)
            if _PLAIN_STRING_RE.fullmatch(s) and s.strip():
                out[s] = None
    return tuple(t for t in out if t)


# Remembered by text: a document edited in the language server is checked again
# on each keystroke, with the same code spans as before but one.
@lru_cache(maxsize=4096)
def parse_fragment(text: str) -> Fragment | None:
    """The fragment a code span holds, or None if it holds none (module docstring).
    Never raises, whatever the text."""
    src = " ".join(text.split())
    if not src or len(src) > MAX_FRAGMENT_CHARS or "\0" in src:
        return None
    bare = _without_strings(src)
    if _KEBAB_RE.search(bare):
        return None  # `log-only`, `dsh-compaction-basic`: words, not a subtraction
    src = TRAILING_ELLIPSIS_RE.sub("", src).strip()
    if not src:
        return None
    try:
        found = _classify(src)
    except (ValueError, UnicodeError, RecursionError):  # tree-sitter's own limits
        return None
    if found is None:
        return None
    source, node, kind, binding, target, value = found
    return Fragment(
        text=text,
        source=source,
        node=node,
        kind=kind,
        binding=binding,
        target=target,
        value=value,
        tokens=_tokens(node),
    )


_Found = tuple[str, tree_sitter.Node, str, str, tuple[str, ...], "tree_sitter.Node | None"]


def _classify(src: str) -> _Found | None:
    if src.startswith("{"):
        top = _top(f"({src})")
        if top is not None and top.type == "expression_statement":
            expr = unwrap(top.named_children[0])
            if expr.type == "object" and _has_entries(expr):
                return f"({src})", expr, "object", "", (), None
        return None
    top = _top(src)
    if top is not None:
        found = _statement(src, top)
        if found is not None:
            return found
    if _KEY_COLON_RE.match(src):
        wrapped = "({" + src + "})"
        top = _top(wrapped)
        if top is not None and top.type == "expression_statement":
            obj = unwrap(top.named_children[0])
            entries = [c for c in obj.named_children if c.type != "comment"] if obj.type == "object" else []
            if len(entries) == 1 and entries[0].type == "pair":
                pair = entries[0]
                key, value = pair.child_by_field_name("key"), pair.child_by_field_name("value")
                if key is not None and value is not None:
                    return wrapped, pair, "binding", "pair", (key_text(key),), value
            if obj.type == "object" and _has_entries(obj):
                return wrapped, obj, "object", "", (), None
    return None


def _has_entries(obj: tree_sitter.Node) -> bool:
    """An object with a `key: value`, a spread or a method: `{ts,tsx}` is a glob, not code."""
    return any(c.type in ("pair", "spread_element", "method_definition") for c in obj.named_children)


def _statement(src: str, top: tree_sitter.Node) -> _Found | None:
    if top.type in ("lexical_declaration", "variable_declaration"):
        declarators = [c for c in top.named_children if c.type == "variable_declarator"]
        if len(declarators) == 1:
            name, value = declarators[0].child_by_field_name("name"), declarators[0].child_by_field_name("value")
            if name is not None and value is not None and name.type == "identifier":
                return src, top, "binding", "declaration", (node_text(name),), value
        return None
    if top.type == "expression_statement":
        expr = top.named_children[0]
        if expr.type == "assignment_expression":
            left, right = expr.child_by_field_name("left"), expr.child_by_field_name("right")
            chain = name_chain(left) if left is not None else None
            if chain and right is not None:
                return src, expr, "binding", "assignment", tuple(chain), right
        if expr.type in ("identifier", "member_expression") or not _has_structure(expr):
            return None
        return src, expr, "expression", "", (), None
    if top.type in ("return_statement", "throw_statement") and _has_structure(top):
        return src, top, "expression", "", (), None
    return None


def _has_structure(node: tree_sitter.Node) -> bool:
    return any(n.type in _STRUCTURE for n in walk(node))


def name_chain(node: tree_sitter.Node) -> list[str] | None:
    """`this.ctx.get` as ["this", "ctx", "get"]; None for anything but a dotted name."""
    node = unwrap(node)
    if node.type in _NAME_TYPES or node.type == "this":
        return [node_text(node)]
    if node.type == "member_expression":
        obj, prop = node.child_by_field_name("object"), node.child_by_field_name("property")
        if obj is None or prop is None:
            return None
        head = name_chain(obj)
        return None if head is None else head + [node_text(prop)]
    return None


def string_content(node: tree_sitter.Node) -> str | None:
    text = node_text(node)
    if node.type == "string" and len(text) >= 2:
        return re.sub(r"\\(['\"])", r"\1", text[1:-1])
    if node.type == "template_string" and not any(c.type == "template_substitution" for c in node.children):
        return text[1:-1]
    return None


def key_text(node: tree_sitter.Node) -> str:
    content = string_content(node)
    return content if content is not None else node_text(node)
