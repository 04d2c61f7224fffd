"""Quoted code (`parse_fragment`) and how it is compared by structure with the code of a
commit (`match`, `evaluate`): ok, value_differs, no_match, phantom, or undecided."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dshaudit.core.model import LineRange
from dshaudit.index.nameindex import NameIndex, forget
from dshaudit.index.quoted import FragmentVerdict, cached, evaluate, evaluate_all
from dshaudit.lang.fragments import MAX_FRAGMENT_CHARS, parse_fragment
from dshaudit.lang.matching import match

AGENT = """\
export const LIMIT = 0
export const DEFAULT_TIMEOUT_MS = 10 * 60 * 1000

export interface AgentFactory {
  readonly timedOut: boolean
}

export class AgentRegistry {
  private factory?: AgentFactory

  setFactory(factory: AgentFactory) {
    this.factory = factory
  }
}

export const marker = { kind: 'plugin', plugin: 'compact', extra: 1 }

export function emit(session: Session, seq: number) {
  session.append("user/message", { surfaceOp: 'append', seq })
}
"""
AGENT_PATH = "packages/agent/src/index.ts"
RESET = "export function reset(registry: AgentRegistry) {\n  registry.factory = undefined\n}\n"
GUIDE = "# Guide\n\nMount it with `ctx.plugin(Loader)`.\n"


def parsed(text: str):
    fragment = parse_fragment(text)
    assert fragment is not None, text
    return fragment


def matches(quoted: str, code: str) -> bool:
    """Whether quoted code matches a piece of code, both parsed as fragments."""
    return match(parsed(quoted).node, parsed(code).node)


# -- what is a fragment ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "kind", "binding", "target"),
    [
        ("{ kind: 'x', a }", "object", "", ()),
        ("kind: 'x', a", "object", "", ()),  # a bare list of pairs
        ("const LIMIT = 5", "binding", "declaration", ("LIMIT",)),
        ("this.factory = factory", "binding", "assignment", ("this", "factory")),
        ("timedOut: boolean", "binding", "pair", ("timedOut",)),
        ("ctx.plugin(Loader)", "expression", "", ()),
        ("return new Foo()", "expression", "", ()),
        ("throw new Error('boom')", "expression", "", ()),
    ],
)
def test_parse_fragment_reads_objects_bindings_and_structured_expressions(text, kind, binding, target):
    fragment = parsed(text)
    assert (fragment.kind, fragment.binding, fragment.target, fragment.text) == (kind, binding, target, text)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "npm run build",  # a shell command
        "log-only",  # a kebab-case word, not a subtraction
        "{ts,tsx}",  # a glob: braces without entries
        "foo",  # a bare name
        "a.b.c",  # a dotted name
        "return this.log.length",  # no call, object, assignment or arrow in it
        "Record<string, number>",  # a type
        "let a = 1, b = 2",  # two bindings at once
        "'quoted: value'",  # a string
        "f(" + "x, " * MAX_FRAGMENT_CHARS + ")",  # too long
    ],
)
def test_parse_fragment_refuses_what_is_not_quoted_code(text):
    assert parse_fragment(text) is None


def test_a_binding_names_its_last_component_and_tokens_hold_names_and_plain_strings():
    assignment = parsed("obj.key = value")
    assert (assignment.name, assignment.tokens) == ("key", ("obj", "key", "value"))
    call = parsed("f(X, 'b', _)")  # wildcards are no tokens: any file may hold what they stand for
    assert (call.name, call.tokens) == ("", ("f", "b"))


def test_a_trailing_ellipsis_stands_for_more_entries():
    assert parsed("{ a: 1, ... }").tokens == parsed("{ a: 1, … }").tokens == ("a",)
    assert matches("{ a: 1, ... }", "{ a: 1, b: 2 }")
    assert matches("f(a, …)", "f(a, b)")


# -- matching by structure -----------------------------------------------------------------------


def test_an_object_matches_one_holding_every_quoted_entry():
    assert matches("{ kind: 'x' }", "{ kind: 'x', extra: 2 }")
    assert matches("{ a, kind: 'x' }", "{ kind: 'x', a: a }")  # shorthand is `a: a`
    assert parse_fragment("{ a }") is None  # braces around names only: no entry, no object
    assert not matches("{ kind: 'x', nope: 1 }", "{ kind: 'x', extra: 2 }")
    assert not matches("{ kind: 'y' }", "{ kind: 'x' }")


def test_a_dotted_name_matches_a_longer_one_that_ends_with_it():
    assert matches("ctx.get(a)", "this.ctx.get(a)")
    assert not matches("this.ctx.get(a)", "ctx.get(a)")
    assert not matches("ctx.get(a)", "ctx.set(a)")


def test_quoted_arguments_match_the_first_arguments_of_the_call():
    assert matches("f(a)", "f(a, b)")
    assert not matches("f(a, b)", "f(a)")
    assert not matches("f(b)", "f(a, b)")


def test_numbers_compare_by_value_and_strings_by_content():
    assert matches("x = 600_000", "x = 10 * 60 * 1000")
    assert matches("f('a')", 'f("a")')
    assert not matches("x = 1", "x = true")  # a number is not a boolean
    assert not matches("f('1')", "f(1)")  # nor a string


def test_a_capital_letter_or_underscore_stands_for_anything():
    assert matches("f(X, 'b')", "f(g(1, 2), 'b')")
    assert matches("f(_)", "f({ a: 1 })")
    assert not matches("f(X, 'b')", "f(1, 'c')")


def test_comments_and_trailing_commas_are_ignored():
    assert matches("{ a: 1, }", "{ a: 1 /* one */ }")
    assert matches("f(a, b,)", "f(a, /* two */ b)")


# -- against a commit -------------------------------------------------------------------------------


@pytest.fixture
def commit(make_repo, fresh_cache):
    """The agent package, a second file that clears the factory, and a guide; with a cache of its own."""
    forget()
    built = make_repo({AGENT_PATH: AGENT, "packages/agent/src/reset.ts": RESET, "docs/guide.md": GUIDE})
    snapshot = built.snapshot()
    yield snapshot, NameIndex(snapshot)
    forget()


def verdict(commit, text: str) -> FragmentVerdict | None:
    snapshot, index = commit
    return evaluate(parsed(text), snapshot, index)


def decided(commit, text: str) -> FragmentVerdict:
    """The verdict on quoted code (it must not be left undecided)."""
    found = verdict(commit, text)
    assert found is not None, text
    return found


def test_matching_code_is_ok_with_its_place(commit):
    found = verdict(commit, "session.append('user/message', X)")
    assert found == FragmentVerdict("ok", f"matches {AGENT_PATH}:19", (AGENT_PATH, LineRange(19, 19)))
    assert decided(commit, "{ kind: 'plugin', plugin: 'compact' }").place == (AGENT_PATH, LineRange(16, 16))


def test_a_binding_matches_the_value_a_declaration_gives_its_name(commit):
    assert decided(commit, "DEFAULT_TIMEOUT_MS = 600_000").status == "ok"
    assert decided(commit, "timedOut: boolean").place == (AGENT_PATH, LineRange(5, 5))  # a typed property
    assert decided(commit, "this.factory = factory").place == (AGENT_PATH, LineRange(12, 12))


def test_a_binding_with_another_value_names_the_declarations(commit):
    differs = verdict(commit, "const LIMIT = 5")
    assert differs == FragmentVerdict(
        "value_differs", f"`LIMIT` is 0 at {AGENT_PATH}:1, not 5", (AGENT_PATH, LineRange(1, 1))
    )
    two = decided(commit, "factory = null")  # `this.factory = factory` and `registry.factory = undefined`
    assert two.status == "value_differs"
    assert two.message == f"`factory` is factory at {AGENT_PATH}:12, not null (and 1 more declaration)"
    assert decided(commit, "factory = undefined").place == ("packages/agent/src/reset.ts", LineRange(2, 2))


def test_a_binding_whose_name_occurs_nowhere_is_a_phantom(commit):
    snapshot, _ = commit
    assert verdict(commit, "const MAX_AGENTS = 5") == FragmentVerdict(
        "phantom", f"`MAX_AGENTS` occurs nowhere at {snapshot.sha[:8]}"
    )


def test_code_no_file_holds_in_this_shape_is_no_match(commit):
    snapshot, _ = commit
    at = snapshot.sha[:8]
    assert verdict(commit, "{ kind: 'plugin', nope: 2 }") == FragmentVerdict(
        "no_match", f"no code at {at} matches: `nope` occurs nowhere"
    )
    shape = verdict(commit, "emit(seq, session)")
    assert shape == FragmentVerdict(
        "no_match", f"no code at {at} matches: 1 file hold `emit`, `seq`, `session`, none in this shape"
    )


def test_code_quoted_in_a_document_matches_its_text(commit):
    assert verdict(commit, "ctx.plugin(Loader)") == FragmentVerdict(
        "ok", "matches docs/guide.md:3", ("docs/guide.md", LineRange(3, 3))
    )


def test_a_fragment_is_undecided_without_names_or_when_only_prose_holds_them(commit):
    assert verdict(commit, "() => 1") is None  # nothing to find candidate files by
    assert verdict(commit, "Mount(it)") is None  # only the guide holds `Mount` and `it`: not code


def test_verdicts_are_cached_per_commit_and_evaluated_together_in_order(commit):
    snapshot, index = commit
    fragments = [parsed("const LIMIT = 0"), parsed("{ kind: 'plugin', nope: 2 }")]
    assert not any(cached(f, snapshot.sha) for f in fragments)
    assert [v and v.status for v in evaluate_all(fragments, snapshot, index)] == ["ok", "no_match"]
    assert all(cached(f, snapshot.sha) for f in fragments)


# -- which nodes can declare a binding ------------------------------------------------------

CONFIG_JSON = '{\n  "name": "@scope/agent",\n  "limits": { "LIMIT": 4, "depth": 2 },\n  "depth": 3\n}\n'


@pytest.mark.parametrize(
    ("path", "code", "quoted"),
    [
        (AGENT_PATH, AGENT, "const LIMIT = 0"),
        (AGENT_PATH, AGENT, "const LIMIT = 7"),  # declared, with another value
        (AGENT_PATH, AGENT, "this.factory = factory"),
        (AGENT_PATH, AGENT, "kind: 'plugin'"),
        (AGENT_PATH, AGENT, "plugin: 'compact'"),
        (AGENT_PATH, AGENT, "timedOut: boolean"),
        (AGENT_PATH, AGENT, "absentName = 1"),  # nowhere in the file
        ("packages/agent/config.json", CONFIG_JSON, '"depth": 3'),  # offsets in brackets
        ("packages/agent/config.json", CONFIG_JSON, '"depth": 2'),
        ("packages/agent/config.json", CONFIG_JSON, '"LIMIT": 4'),
    ],
)
def test_the_nodes_a_binding_is_looked_for_in_are_those_that_hold_its_name(path, code, quoted):
    """Narrowed to the nodes whose text holds the name, a binding is found where it is
    found among all of a file's declaring nodes, and its declarations are the same."""
    from dshaudit.lang.matching import DECLARING, declarations, first_match, nodes_of, parse_code, parsed_source

    fragment = parsed(quoted)
    assert fragment.kind == "binding"
    root = parse_code(path, code.encode())
    nodes = nodes_of(root, DECLARING, False)
    source = parsed_source(path, code.encode())

    def of(types):
        return nodes_of(root, types, False)

    assert first_match(fragment, of, source) == first_match(fragment, of)
    assert declarations(fragment, nodes, source) == declarations(fragment, nodes)
    assert declarations(fragment, nodes) or quoted.startswith("absentName")


# -- an object quoted as a typed property's value ------------------------------------------------

SANDBOX = """\
export interface SandboxOptions {
  mode: 'strict' | 'open'
  network?: boolean
  allow(path: string): boolean
}

export interface HostConfig {
  sandbox?: SandboxOptions
  limits: { cpu: number; memory?: number }
  extra: Record<string, unknown>
}

export interface Wider extends SandboxOptions {
  label: string
}

export interface Plugin {
  options: Wider
}
"""
SANDBOX_PATH = "packages/host/src/config.ts"


@pytest.fixture
def typed(make_repo, fresh_cache):
    forget()
    built = make_repo({SANDBOX_PATH: SANDBOX})
    snapshot = built.snapshot()
    yield snapshot, NameIndex(snapshot)
    forget()


def test_an_object_quoted_as_a_typed_property_is_judged_by_its_keys(typed):
    """Each key a member of the declared type: it is a value of that type, though no code writes it."""
    ok = decided(typed, "sandbox: { mode: 'strict', network: false }")
    assert ok == FragmentVerdict(
        "ok",
        f"its keys are members of SandboxOptions, the type of `sandbox` at {SANDBOX_PATH}:8",
        (SANDBOX_PATH, LineRange(8, 8)),
    )
    assert decided(typed, "limits: { cpu: 2 }").status == "ok"  # an object type written in place


def test_a_key_the_declared_type_lacks_is_named_with_the_type_and_its_members(typed):
    wrong = decided(typed, "sandbox: { mode: 'strict', netwrk: false }")
    assert wrong.status == "value_differs"
    assert wrong.message == (
        f"`netwrk` is no member of SandboxOptions, the type of `sandbox` at {SANDBOX_PATH}:8 "
        "(its members: `mode`, `network`, `allow`)"
    )
    assert decided(typed, "limits: { cpu: 2, disk: 1 }").message.startswith("`disk` is no member of {")


def test_a_type_not_wholly_in_sight_says_nothing(typed):
    """A record, or an interface that extends another: any key may fit, so nothing is flagged."""
    assert verdict(typed, "extra: { anything: 1 }") is None
    assert verdict(typed, "options: { label: 'x', mode: 'open' }") is None


_IDENTIFIERS = st.from_regex(r"[a-z][a-zA-Z0-9]{0,6}", fullmatch=True)


@given(st.lists(_IDENTIFIERS, min_size=1, max_size=6, unique=True), st.lists(_IDENTIFIERS, min_size=1, max_size=6))
def test_quoted_keys_fit_a_type_exactly_when_each_is_a_member(members, keys):
    from dshaudit.lang.matching import nodes_of, parse_code, type_fits

    code = "interface Opts {\n" + "".join(f"  {m}?: number\n" for m in members) + "}\n"
    code += "interface Host {\n  opts: Opts\n}\n"
    tree = parse_code("host.ts", code.encode())
    quoted = parsed("opts: { " + ", ".join(f"{k}: 1" for k in keys) + " }")
    [(lines, shown, declared, missing)] = type_fits(quoted, lambda types: nodes_of(tree, types, False))
    assert (shown, declared, lines) == ("Opts", tuple(members), LineRange(len(members) + 4, len(members) + 4))
    assert missing == tuple(k for k in keys if k not in members)
