"""Whether code matches a quoted fragment (fragments.py), by structure.

Matching ignores whitespace, comments, trailing commas and quote style, and:
- an object literal matches a code object holding every quoted entry (extra
  code entries are allowed; `{ a }` is `{ a: a }`); a quoted key the code
  object lacks matches nothing;
- a dotted name matches a longer one that ends with it (`ctx.get` matches
  `this.ctx.get`), and a call's quoted arguments match the first arguments of
  the code's call;
- numbers compare by value (`600_000` is `10 * 60 * 1000`), strings by content;
- a single capital letter (`X`) or `_` stands for anything, and `…` or a
  trailing `...` for "more entries".

A binding also compares its value with the name's actual declarations: a
variable, an assignment, a class field or an enum member for `=`, an object
entry or a typed property (`timedOut: boolean`) for `:` (`declarations`). An
object quoted as the value of a typed property or variable (`sandbox: { mode:
'strict' }`) is a value of that type when each of its keys is a member the
type declares: an object type, or an interface or type alias of that name in
the same file (`type_fits`).

A file of code is parsed (`parse_code`) and the nodes of the types a fragment
can match found in it (`nodes_of`); a file of another kind is searched for the
fragment's text (`text_place`).
"""

from __future__ import annotations

import json
from bisect import bisect_left
from collections.abc import Callable, Iterator
from functools import lru_cache

import tree_sitter

from dshaudit.core.model import LineRange
from dshaudit.lang.fragments import (
    TRAILING_ELLIPSIS_RE,
    Fragment,
    is_wildcard,
    key_text,
    name_chain,
    node_text,
    string_content,
)
from dshaudit.lang.parsing import js_literal, unwrap
from dshaudit.lang.symbols import language_for, parse, walk

CODE_SUFFIXES = (".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs", ".json")

_NOISE = frozenset({",", ";", "comment"})


def _parts(node: tree_sitter.Node) -> list[tuple[tree_sitter.Node, str | None]]:
    """Children with the field each fills, without punctuation that means nothing."""
    return [(c, node.field_name_for_child(i)) for i, c in enumerate(node.children) if c.type not in _NOISE]


def _literal(node: tree_sitter.Node) -> tuple[str, object] | None:
    """A literal's value, tagged with its kind (so that `1` is not `true`)."""
    node = unwrap(node)
    if node.type in ("string", "template_string"):
        content = string_content(node)
        return None if content is None else ("s", content)
    if node.type in ("true", "false"):
        return ("b", node.type == "true")
    if node.type in ("null", "undefined"):
        return (node.type, None)
    if node.type == "unary_expression":
        operator, operand = node.child_by_field_name("operator"), node.child_by_field_name("argument")
        if operator is not None and operand is not None and node_text(operator) == "-":
            inner = _literal(operand)
            if inner is not None and inner[0] == "n" and isinstance(inner[1], (int, float)):
                return ("n", -inner[1])
        return None
    if node.type in ("number", "binary_expression"):
        try:
            value = js_literal(node)
        except (AttributeError, ValueError, TypeError):
            return None
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return ("n", value)
    return None


def _entry(node: tree_sitter.Node) -> tuple[str | None, tree_sitter.Node | None]:
    """An object entry's key and value: `{ a }` is `{ a: a }`."""
    if node.type == "pair":
        key = node.child_by_field_name("key")
        return (key_text(key) if key is not None else None), node.child_by_field_name("value")
    if node.type == "shorthand_property_identifier":
        return node_text(node), node
    if node.type == "method_definition":
        name = node.child_by_field_name("name")
        return (node_text(name) if name is not None else None), node
    return None, None


def _entries(obj: tree_sitter.Node) -> list[tree_sitter.Node]:
    return [c for c in obj.named_children if c.type != "comment"]


def _entry_matches(q: tree_sitter.Node, c: tree_sitter.Node) -> bool:
    if q.type == "spread_element" or c.type == "spread_element":
        return q.type == c.type == "spread_element" and match(q.named_children[0], c.named_children[0])
    (qk, qv), (ck, cv) = _entry(q), _entry(c)
    if qk is None or qk != ck or qv is None or cv is None:
        return False
    if "method_definition" in (q.type, c.type):
        return q.type == c.type and _generic(q, c)
    return match(qv, cv)


def _generic(q: tree_sitter.Node, c: tree_sitter.Node) -> bool:
    if q.type != c.type:
        return False
    qs, cs = _parts(q), _parts(c)
    if not qs and not cs:
        return node_text(q) == node_text(c)
    if len(qs) != len(cs):
        return False
    for (a, fa), (b, fb) in zip(qs, cs):
        if fa != fb or a.is_named != b.is_named:
            return False
        if a.is_named:
            if not match(a, b):
                return False
        elif a.type != b.type:
            return False
    return True


def match(q: tree_sitter.Node, c: tree_sitter.Node) -> bool:
    """Whether quoted node `q` matches code node `c` (the rules in the module docstring)."""
    q, c = unwrap(q), unwrap(c)
    if is_wildcard(q):
        return True
    lq = _literal(q)
    if lq is not None:
        return lq == _literal(c)
    qchain = name_chain(q)
    if qchain is not None:
        cchain = name_chain(c)
        return cchain is not None and len(cchain) >= len(qchain) and cchain[-len(qchain) :] == qchain
    if q.type == "object":
        if c.type != "object":
            return False
        centries = _entries(c)
        return all(any(_entry_matches(qe, ce) for ce in centries) for qe in _entries(q))
    if q.type == "arguments":
        qa = [a for a in q.named_children if a.type != "comment"]
        ca = [a for a in c.named_children if a.type != "comment"] if c.type == "arguments" else []
        return c.type == "arguments" and len(qa) <= len(ca) and all(match(a, b) for a, b in zip(qa, ca))
    return _generic(q, c)


# -- bindings ---------------------------------------------------------------------


def _squash(text: str) -> str:
    return "".join(text.split()).replace('"', "'").rstrip(",;")


def _squash_bytes(data: bytes) -> bytes:
    # What b"".join(data.split()) gives (ASCII whitespace gone), in one pass in C.
    return data.translate(None, b" \t\n\r\x0b\x0c").replace(b'"', b"'")


def _declared(fragment: Fragment, node: tree_sitter.Node) -> tuple[tree_sitter.Node | None, str | None] | None:
    """If `node` declares the fragment's binding: (its value, or its type's text)."""
    name, target = fragment.name, fragment.target
    t = node.type
    if fragment.binding in ("declaration", "assignment"):
        alone = len(target) == 1 or (len(target) == 2 and target[0] == "this")
        if t == "variable_declarator" and len(target) == 1:
            n = node.child_by_field_name("name")
            if n is not None and node_text(n) == name:
                return node.child_by_field_name("value"), None
        elif t == "assignment_expression":
            left = node.child_by_field_name("left")
            chain = name_chain(left) if left is not None else None
            if chain is not None and len(chain) >= len(target) and tuple(chain[-len(target) :]) == target:
                return node.child_by_field_name("right"), None
        elif t in ("public_field_definition", "enum_assignment") and alone:
            n = node.child_by_field_name("name")
            if n is not None and key_text(n) == name:
                return node.child_by_field_name("value"), None
        return None
    # `key: value`: an object entry, or a typed property, parameter or variable.
    if t in ("pair", "shorthand_property_identifier"):
        key, value = _entry(node)
        return (value, None) if key == name else None
    if t in (
        "property_signature",
        "public_field_definition",
        "required_parameter",
        "optional_parameter",
        "variable_declarator",
    ):
        n = node.child_by_field_name("name") or node.child_by_field_name("pattern")
        if n is None or key_text(n) != name:
            return None
        annotation = node.child_by_field_name("type")
        value = node.child_by_field_name("value")
        if annotation is not None:
            return value, _squash(node_text(annotation).lstrip(":").strip())
        if value is not None:
            return value, None
    return None


def _binding_holds(fragment: Fragment, value: tree_sitter.Node | None, type_text: str | None) -> bool:
    if fragment.value is None:
        return False
    if value is not None and match(fragment.value, value):
        return True
    return type_text is not None and _squash(node_text(fragment.value)) == type_text


def _candidates(
    fragment: Fragment, nodes: Callable[[frozenset[str]], list[tree_sitter.Node]], source: bytes | None = None
) -> Iterator[tree_sitter.Node]:
    """Code nodes the fragment may match, in source order, among the nodes of a file
    (`nodes`: those of some types; `source`: the bytes they were parsed from, when known)."""
    if fragment.kind == "binding":
        for n in _holding(fragment.name, nodes(DECLARING), source):
            found = _declared(fragment, n)
            if found is not None and _binding_holds(fragment, *found):
                yield n
        return
    wanted = unwrap(fragment.node).type
    for n in nodes(frozenset({wanted})):
        if match(fragment.node, n):
            yield n


def _holding(name: str, nodes: list[tree_sitter.Node], source: bytes | None) -> list[tree_sitter.Node]:
    """Those of `nodes` (in source order) whose text holds `name`: the only ones that can
    declare it, since a name, a key or a string is written as it reads. Where the file has
    no such text, that is none, found in C; a node is then kept only if one of the places
    where the text occurs lies within it. All of them without `source`, or for a name with
    a quote or backslash in it (a string may escape those)."""
    if source is None or not name or any(c in name for c in "'\"\\"):
        return nodes
    needle = name.encode("utf-8")
    places: list[int] = []
    at = source.find(needle)
    while at >= 0:
        places.append(at)
        at = source.find(needle, at + 1)
    if not places:
        return []
    held = []
    for n in nodes:
        i = bisect_left(places, n.start_byte)
        if i < len(places) and places[i] + len(needle) <= n.end_byte:
            held.append(n)
    return held


# The node types `_declared` looks at: all others declare nothing.
DECLARING = frozenset(
    {
        "variable_declarator",
        "assignment_expression",
        "public_field_definition",
        "enum_assignment",
        "pair",
        "shorthand_property_identifier",
        "property_signature",
        "required_parameter",
        "optional_parameter",
    }
)


def nodes_of(root: tree_sitter.Node, types: frozenset[str], tsx: bool) -> list[tree_sitter.Node]:
    """The nodes of these types under `root` (itself included), in `walk`'s order. A
    query finds them in C: walking a file's every node in Python, and asking each
    one, was most of the time a fragment took."""
    query = _type_query(tsx, types)
    if query is None:
        return [n for n in walk(root) if n.type in types]
    found = tree_sitter.QueryCursor(query).captures(root).get("n", [])
    # Source order; of two nodes that start together, the outer first, as walk gives them.
    return sorted(found, key=lambda n: (n.start_byte, -n.end_byte))


@lru_cache(maxsize=256)
def _type_query(tsx: bool, types: frozenset[str]) -> tree_sitter.Query | None:
    """A query capturing every node whose type is one of `types`, named or not (a
    type such as `string` is both: a string literal, and the keyword in `x: string`).
    None when the grammar knows a type under neither form: the caller walks the tree."""
    language = language_for("x.tsx" if tsx else "x.ts")
    forms = []
    for t in sorted(types):
        named = t == "ERROR" or language.id_for_node_kind(t, True) is not None
        anonymous = language.id_for_node_kind(t, False) is not None
        if not (named or anonymous):
            return None
        forms += ([f"({t})"] if named else []) + ([json.dumps(t)] if anonymous else [])
    try:
        return tree_sitter.Query(language, "[" + " ".join(forms) + "] @n")
    except tree_sitter.QueryError:
        return None


def parsed_source(path: str, data: bytes) -> bytes:
    """The bytes `parse_code` parses for a file: a JSON file as an expression, in
    brackets (its line numbers stay; its byte offsets move by one)."""
    return b"(" + data + b")" if path.endswith(".json") else data


def parse_code(path: str, data: bytes) -> tree_sitter.Node:
    return parse(path, parsed_source(path, data)).root_node


def _lines(node: tree_sitter.Node) -> LineRange:
    return LineRange(node.start_point[0] + 1, node.end_point[0] + 1)


def text_place(fragment: Fragment, data: bytes) -> LineRange | None:
    """Where a non-code file holds the fragment's text, whitespace and quote style aside."""
    needle = _squash(fragment.text)
    lines = data.decode("utf-8", "replace").split("\n")
    squashed, starts = "", []
    for line in lines:
        starts.append(len(squashed))
        squashed += _squash(line)
    at = squashed.find(needle) if needle else -1
    if at < 0:
        return None
    first = max(i for i, s in enumerate(starts) if s <= at)
    return LineRange(first + 1, first + 1)


def shown_text(node: tree_sitter.Node | None, type_text: str | None) -> str:
    text = " ".join(node_text(node).split()) if node is not None else (type_text or "?")
    return text if len(text) <= 60 else text[:57] + "..."


def reading_kind(path: str) -> str:
    """What decides how a file is read: parsed as JSON, TSX or TypeScript, or searched as text."""
    if not path.endswith(CODE_SUFFIXES):
        return "text"
    return "json" if path.endswith(".json") else "tsx" if path.endswith((".tsx", ".jsx")) else "ts"


def first_match(
    fragment: Fragment, nodes: Callable[[frozenset[str]], list[tree_sitter.Node]], source: bytes | None = None
) -> LineRange | None:
    """The lines of the first code node the fragment matches, among the nodes of a file
    (`nodes`: those of some types; `source`: the bytes they were parsed from, when known)."""
    return next((_lines(n) for n in _candidates(fragment, nodes, source)), None)


def declarations(
    fragment: Fragment, nodes: list[tree_sitter.Node], source: bytes | None = None
) -> list[tuple[LineRange, str]]:
    """The declarations of the fragment's binding among these nodes (a file's nodes of
    the DECLARING types): where each is, and its value (or type) as shown in a message.
    A declaration with a type and no value does not count against a quoted object:
    the object is judged by its keys (`type_fits`)."""
    out = []
    quoted_object = object_keys(fragment.value) is not None
    for n in _holding(fragment.name, nodes, source):
        found = _declared(fragment, n)
        if found is None or (found[0] is None and (found[1] is None or quoted_object)):
            continue
        out.append((_lines(n), shown_text(*found)))
    return out


# The declarations that give a type a name: what a type annotation's name is looked up among.
TYPE_DECLARING = frozenset({"interface_declaration", "type_alias_declaration"})
_TYPED = frozenset({"property_signature", "public_field_definition", "required_parameter", "optional_parameter"})


def object_keys(node: tree_sitter.Node | None) -> tuple[str, ...] | None:
    """The keys a quoted object literal gives (its spreads aside), or None for any other value."""
    if node is None or unwrap(node).type != "object":
        return None
    return tuple(key for key, _ in map(_entry, _entries(unwrap(node))) if key is not None)


def type_fits(
    fragment: Fragment, nodes: Callable[[frozenset[str]], list[tree_sitter.Node]], source: bytes | None = None
) -> list[tuple[LineRange, str, tuple[str, ...] | None, tuple[str, ...]]]:
    """For a binding whose quoted value is an object: each typed declaration of its name
    in a file (`nodes`: the file's nodes of some types), with where it is, the type as
    written, the members it declares, and the quoted keys that are none of them. The
    members are None for a type not wholly in sight (imported, generic, extending
    another, with an index signature): of that one nothing can be said."""
    keys = object_keys(fragment.value)
    if keys is None or fragment.binding not in ("pair", "declaration"):
        return []
    named: dict[str, tree_sitter.Node] | None = None
    out = []
    for n in _holding(fragment.name, nodes(DECLARING), source):
        if n.type not in _TYPED and n.type != "variable_declarator":
            continue
        name = n.child_by_field_name("name") or n.child_by_field_name("pattern")
        annotation = n.child_by_field_name("type")
        if name is None or annotation is None or key_text(name) != fragment.name or not annotation.named_children:
            continue
        if named is None:
            named = {}
            for d in nodes(TYPE_DECLARING):
                declared = d.child_by_field_name("name")
                if declared is not None:
                    named.setdefault(node_text(declared), d)
        shown = " ".join(node_text(annotation.named_children[0]).split())
        members = _members(annotation.named_children[0], named)
        missing = tuple(k for k in keys if k not in members) if members is not None else ()
        out.append((_lines(n), shown, members, missing))
    return out


def _members(type_node: tree_sitter.Node, named: dict[str, tree_sitter.Node], depth: int = 0) -> tuple[str, ...] | None:
    """The member names a type declares, when all of them are in sight."""
    t = type_node.type
    if depth > 8:
        return None
    if t == "parenthesized_type" and type_node.named_children:
        return _members(type_node.named_children[0], named, depth + 1)
    if t == "union_type":  # `Options | undefined`: the one object type it allows
        parts = [p for p in _union_parts(type_node) if node_text(p).strip() not in ("undefined", "null")]
        return _members(parts[0], named, depth + 1) if len(parts) == 1 else None
    if t == "object_type":
        return _body_members(type_node)
    if t == "type_identifier":
        declared = named.get(node_text(type_node))
        if declared is None:
            return None
        if declared.type == "interface_declaration":
            if any(c.type == "extends_type_clause" for c in declared.named_children):
                return None
            body = declared.child_by_field_name("body")
            return _body_members(body) if body is not None else None
        value = declared.child_by_field_name("value")
        return _members(value, named, depth + 1) if value is not None else None
    return None


def _union_parts(node: tree_sitter.Node) -> list[tree_sitter.Node]:
    if node.type != "union_type":
        return [node]
    return [part for child in node.named_children for part in _union_parts(child)]


def _body_members(body: tree_sitter.Node) -> tuple[str, ...] | None:
    names = []
    for member in body.named_children:
        if member.type == "index_signature":
            return None  # any key is a member
        if member.type in ("property_signature", "method_signature"):
            name = member.child_by_field_name("name")
            if name is not None:
                names.append(key_text(name))
    return tuple(names)


def needle(fragment: Fragment) -> bytes:
    """The fragment's text as written, whitespace and quote style aside (`holds_needle`)."""
    return _squash(TRAILING_ELLIPSIS_RE.sub("", fragment.text)).strip("{}").encode("utf-8")


def holds_needle(needle: bytes, data: bytes) -> bool:
    """Whether a file's bytes hold a fragment's `needle`, whitespace and quote style aside."""
    return needle in _squash_bytes(data)
