"""Quoted code, compared by structure with the code of one DSH commit.

A fragment is a code span that tree-sitter parses, without error, as one of:

- an object literal, `{ kind: 'x', a }` (or a bare list of pairs, `kind: 'x', a`);
- a binding: `NAME = value`, `const NAME = value`, `obj.key = value`, `key: value`;
- an expression or statement that holds a call, a `new`, an object, an
  assignment or an arrow function (`ctx.plugin(Loader)`, `return this.log.length`
  is not one: it holds none of these).

Anything else (a shell command, prose in backticks, a type, a kebab-case name
that parses as a subtraction) is not a fragment and is not checked here.

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
entry or a typed property (`timedOut: boolean`) for `:`. None matching while
some exist is `value_differs`, naming one of them.

Candidate files are found through the name index (`nameindex.py`): a match
must contain every name and plain string of the fragment, so only files that
hold all of them are read; at most `MATCH_FILE_CAP` are parsed. A fragment is
left undecided (None) when more files than that hold its names and none of
those read matches, or when the only files holding them are not code.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING

import tree_sitter

from dshaudit.core.model import LineRange
from dshaudit.lang.parsing import js_literal, unwrap
from dshaudit.lang.symbols import language_for, parse, walk
from dshaudit.platform import cache

if TYPE_CHECKING:
    from dshaudit.git.snapshot import Snapshot
    from dshaudit.index.nameindex import NameIndex

VERSION = "1"  # bump when matching changes what a cached verdict means
MAX_FRAGMENT_CHARS = 400
MATCH_FILE_CAP = 60  # files read to find a match
DECLARATION_FILE_CAP = 60  # files read to find a binding's declarations
CODE_SUFFIXES = (".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs", ".json")

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
_LITERALS = frozenset(
    {
        "number",
        "string",
        "true",
        "false",
        "null",
        "undefined",
        "unary_expression",
        "binary_expression",
        "template_string",
    }
)
_NOISE = frozenset({",", ";", "comment"})
_KEY_COLON_RE = re.compile(r"""^\s*(?:[A-Za-z_$][\w$]*|'[^'\n]*'|"[^"\n]*")\s*:(?!:)""")
_STRING_RE = re.compile(r"""'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`[^`]*`""")
_KEBAB_RE = re.compile(r"[A-Za-z0-9_]-[A-Za-z_]")
_TRAILING_ELLIPSIS_RE = re.compile(r"(?:\.\.\.|…)(?=\s*(?:[,}\])]|$))|…")
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


@dataclass(frozen=True)
class FragmentVerdict:
    status: str  # "ok", "value_differs", "no_match", or "phantom" (a binding's name occurs nowhere)
    message: str
    place: tuple[str, LineRange] | None = None


@lru_cache(maxsize=1)
def _parser() -> tree_sitter.Parser:
    return tree_sitter.Parser(language_for("fragment.ts"))


def _parts(node: tree_sitter.Node) -> list[tuple[tree_sitter.Node, str | None]]:
    """Children with the field each fills, without punctuation that means nothing."""
    return [(c, node.field_name_for_child(i)) for i, c in enumerate(node.children) if c.type not in _NOISE]


def _text(node: tree_sitter.Node) -> str:
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


def _is_wildcard(node: tree_sitter.Node) -> bool:
    return node.type in _NAME_TYPES and re.fullmatch(r"[A-Z]|_", _text(node)) is not None


def _tokens(node: tree_sitter.Node) -> tuple[str, ...]:
    out: dict[str, None] = {}
    for n in walk(node):
        if n.type in _NAME_TYPES and not _is_wildcard(n):
            out[_text(n).lstrip("#")] = None
        elif n.type == "string_fragment" and n.parent is not None and n.parent.type == "string":
            s = _text(n)
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
    src = _TRAILING_ELLIPSIS_RE.sub("", src).strip()
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
                    return wrapped, pair, "binding", "pair", (_key_text(key),), value
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
                return src, top, "binding", "declaration", (_text(name),), value
        return None
    if top.type == "expression_statement":
        expr = top.named_children[0]
        if expr.type == "assignment_expression":
            left, right = expr.child_by_field_name("left"), expr.child_by_field_name("right")
            chain = _chain(left) if left is not None else None
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


# -- structural comparison -------------------------------------------------------


def _chain(node: tree_sitter.Node) -> list[str] | None:
    """`this.ctx.get` as ["this", "ctx", "get"]; None for anything but a dotted name."""
    node = unwrap(node)
    if node.type in _NAME_TYPES or node.type == "this":
        return [_text(node)]
    if node.type == "member_expression":
        obj, prop = node.child_by_field_name("object"), node.child_by_field_name("property")
        if obj is None or prop is None:
            return None
        head = _chain(obj)
        return None if head is None else head + [_text(prop)]
    return None


def _string_content(node: tree_sitter.Node) -> str | None:
    text = _text(node)
    if node.type == "string" and len(text) >= 2:
        return re.sub(r"\\(['\"])", r"\1", text[1:-1])
    if node.type == "template_string" and not any(c.type == "template_substitution" for c in node.children):
        return text[1:-1]
    return None


def _literal(node: tree_sitter.Node) -> tuple[str, object] | None:
    """A literal's value, tagged with its kind (so that `1` is not `true`)."""
    node = unwrap(node)
    if node.type in ("string", "template_string"):
        content = _string_content(node)
        return None if content is None else ("s", content)
    if node.type in ("true", "false"):
        return ("b", node.type == "true")
    if node.type in ("null", "undefined"):
        return (node.type, None)
    if node.type == "unary_expression":
        operator, operand = node.child_by_field_name("operator"), node.child_by_field_name("argument")
        if operator is not None and operand is not None and _text(operator) == "-":
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


def _key_text(node: tree_sitter.Node) -> str:
    content = _string_content(node)
    return content if content is not None else _text(node)


def _entry(node: tree_sitter.Node) -> tuple[str | None, tree_sitter.Node | None]:
    """An object entry's key and value: `{ a }` is `{ a: a }`."""
    if node.type == "pair":
        key = node.child_by_field_name("key")
        return (_key_text(key) if key is not None else None), node.child_by_field_name("value")
    if node.type == "shorthand_property_identifier":
        return _text(node), node
    if node.type == "method_definition":
        name = node.child_by_field_name("name")
        return (_text(name) if name is not None else None), node
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
        return _text(q) == _text(c)
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
    if _is_wildcard(q):
        return True
    lq = _literal(q)
    if lq is not None:
        return lq == _literal(c)
    qchain = _chain(q)
    if qchain is not None:
        cchain = _chain(c)
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
            if n is not None and _text(n) == name:
                return node.child_by_field_name("value"), None
        elif t == "assignment_expression":
            left = node.child_by_field_name("left")
            chain = _chain(left) if left is not None else None
            if chain is not None and len(chain) >= len(target) and tuple(chain[-len(target) :]) == target:
                return node.child_by_field_name("right"), None
        elif t in ("public_field_definition", "enum_assignment") and alone:
            n = node.child_by_field_name("name")
            if n is not None and _key_text(n) == name:
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
        if n is None or _key_text(n) != name:
            return None
        annotation = node.child_by_field_name("type")
        value = node.child_by_field_name("value")
        if annotation is not None:
            return value, _squash(_text(annotation).lstrip(":").strip())
        if value is not None:
            return value, None
    return None


def _binding_holds(fragment: Fragment, value: tree_sitter.Node | None, type_text: str | None) -> bool:
    if fragment.value is None:
        return False
    if value is not None and match(fragment.value, value):
        return True
    return type_text is not None and _squash(_text(fragment.value)) == type_text


# -- searching a commit -------------------------------------------------------------


def _candidates(
    fragment: Fragment, nodes: Callable[[frozenset[str]], list[tree_sitter.Node]]
) -> Iterator[tree_sitter.Node]:
    """Code nodes the fragment may match, in source order, among the nodes of a file
    (`nodes`: those of some types)."""
    if fragment.kind == "binding":
        for n in nodes(_DECLARING):
            found = _declared(fragment, n)
            if found is not None and _binding_holds(fragment, *found):
                yield n
        return
    wanted = unwrap(fragment.node).type
    for n in nodes(frozenset({wanted})):
        if match(fragment.node, n):
            yield n


# The node types `_declared` looks at: all others declare nothing.
_DECLARING = frozenset(
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


def _nodes_of(root: tree_sitter.Node, types: frozenset[str], tsx: bool) -> list[tree_sitter.Node]:
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


def _parse_code(path: str, data: bytes) -> tree_sitter.Node:
    if path.endswith(".json"):
        data = b"(" + data + b")"  # JSON is an expression; the line numbers stay
    return parse(path, data).root_node


def _lines(node: tree_sitter.Node) -> LineRange:
    return LineRange(node.start_point[0] + 1, node.end_point[0] + 1)


def _text_place(fragment: Fragment, data: bytes) -> LineRange | None:
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


def _shown(node: tree_sitter.Node | None, type_text: str | None) -> str:
    text = " ".join(_text(node).split()) if node is not None else (type_text or "?")
    return text if len(text) <= 60 else text[:57] + "..."


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


def _reading_kind(path: str) -> str:
    """What decides how a file is read: parsed as JSON, TSX or TypeScript, or searched as text."""
    if not path.endswith(CODE_SUFFIXES):
        return "text"
    return "json" if path.endswith(".json") else "tsx" if path.endswith((".tsx", ".jsx")) else "ts"


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
        key = (self.blobs[path], _reading_kind(path))
        if key not in self.trees:
            self.trees[key] = _parse_code(path, self.source(path))
        return self.trees[key]

    def nodes(self, path: str, types: frozenset[str]) -> list[tree_sitter.Node]:
        """The file's nodes of these types, found once for every fragment that asks
        (fragments of one kind look for the same types in the same files)."""
        key = (self.blobs[path], _reading_kind(path), types)
        if key not in self.found:
            self.found[key] = _nodes_of(self.tree(path), types, _reading_kind(path) == "tsx")
        return self.found[key]

    @staticmethod
    def _needle(fragment: Fragment) -> bytes:
        return _squash(_TRAILING_ELLIPSIS_RE.sub("", fragment.text)).strip("{}").encode("utf-8")

    def _needle_key(self, fragment: Fragment, path: str) -> str:
        return cache.digest("needle", self._needle(fragment), self.blobs[path])

    def holds_text(self, fragment: Fragment, path: str) -> bool:
        """Whether the file holds the fragment's text as written (whitespace and
        quote style aside). A file read to learn it is kept: it is the next one
        compared."""
        key = self._needle_key(fragment, path)
        if self.shard.get(key) is None:
            self.shard.put(key, 1 if self._needle(fragment) in _squash_bytes(self.source(path)) else 0)
        return bool(self.shard.get(key))

    def match(self, fragment: Fragment, path: str) -> LineRange | None:
        """Where the file first matches the fragment, if it does."""
        key = cache.digest("match", fragment.kind, fragment.source, self.blobs[path], _reading_kind(path))
        hit = self.shard.get(key)
        if hit is None:
            source = self.source(path)
            lines: LineRange | None
            if _reading_kind(path) == "text":
                lines = _text_place(fragment, source)
            else:
                lines = next((_lines(n) for n in _candidates(fragment, lambda types: self.nodes(path, types))), None)
            hit = [lines.start, lines.end] if lines is not None else 0
            self.shard.put(key, hit)
        return LineRange(hit[0], hit[1]) if hit else None

    def declarations(self, fragment: Fragment, path: str) -> list[tuple[LineRange, str]]:
        """The file's declarations of the fragment's binding: where, and the value shown."""
        key = cache.digest("declarations", fragment.kind, fragment.source, self.blobs[path], _reading_kind(path))
        hit = self.shard.get(key)
        if hit is None:
            hit = []
            for n in self.nodes(path, _DECLARING):
                found = _declared(fragment, n)
                if found is not None and (found[0] is not None or found[1] is not None):
                    lines = _lines(n)
                    hit.append([lines.start, lines.end, _shown(*found)])
            self.shard.put(key, hit)
        return [(LineRange(a, b), shown) for a, b, shown in hit]


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
        differs = _declarations(fragment, snapshot, index, files)
        if differs:
            path, lines, shown = differs[0]
            more = (
                f" (and {len(differs) - 1} more declaration{'s' if len(differs) > 2 else ''})"
                if len(differs) > 1
                else ""
            )
            return FragmentVerdict(
                "value_differs",
                f"`{'.'.join(fragment.target)}` is {shown} at {path}:{lines}, not {_shown(fragment.value, None)}{more}",
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


def _declarations(
    fragment: Fragment, snapshot: Snapshot, index: NameIndex, files: _Files
) -> list[tuple[str, LineRange, str]]:
    """Every declaration of the binding's name, in path order (none if too many files hold it)."""
    paths = sorted(p for p in index.paths([fragment.name])[fragment.name] if p.endswith(CODE_SUFFIXES))
    if len(paths) > DECLARATION_FILE_CAP:
        return []
    blobs = snapshot.blob_ids()
    paths = [p for p in paths if p in blobs]
    files.read(paths)
    return [(path, lines, shown) for path in paths for lines, shown in files.declarations(fragment, path)]
