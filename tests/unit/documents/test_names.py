"""Code-like names in prose: what counts as a name, and what is only a word."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from dshaudit.documents.names import code_names, is_identifier_like


def kinds(text: str) -> list[tuple[str, str]]:
    return [(n.kind, n.text) for n in code_names(text)]


def test_the_kinds_of_names():
    text = (
        "core/agent 将 AgentFactory 定义为一个接口，通过 AgentRegistry.setFactory（packages/core/agent/src/index.ts:176-181）"
        "the @anthropic-ai/claude-agent-sdk@0.3.220 dependency, 'unavailable', “Production dsh does not install”, "
        "DEFAULT_HOOK_TIMEOUT_MS and persist_session; `ctx.plugin(X)` at https://example.com/a.b"
    )
    assert kinds(text) == [
        ("identifier", "AgentFactory"),
        ("dotted", "AgentRegistry.setFactory"),
        ("package", "@anthropic-ai/claude-agent-sdk@0.3.220"),
        ("string", "unavailable"),
        ("string", "Production dsh does not install"),
        ("identifier", "DEFAULT_HOOK_TIMEOUT_MS"),
        ("identifier", "persist_session"),
        ("code", "ctx.plugin(X)"),
    ]


def test_words_acronyms_product_names_and_files_are_not_names():
    assert kinds("The Context runs on macOS with OpenAI, MCP and JSONL; see e.g. index.ts and docs/a.md.") == []
    for word in ("setFactory", "AgentRegistry", "snake_case", "$ctx", "_private", "SCREAMING_CASE"):
        assert is_identifier_like(word), word
    for word in ("Context", "macOS", "OpenAI", "MCP", "plain", "A"):
        assert not is_identifier_like(word), word


def test_underscore_emphasis_is_markup_not_part_of_a_name():
    assert kinds("_Official screenshot of the settings page._") == []
    assert kinds("the _private_ field and __strong words__ here") == []
    # An underscore with no closing one is a name's; one inside a code span pairs with nothing outside it.
    assert kinds("call _internalHelper() first") == [("identifier", "_internalHelper")]
    assert kinds("a `_npx` dir and _more with `code_name`_ done") == [("code", "_npx"), ("code", "code_name")]
    assert kinds("_see my_var_name here_") == [("identifier", "my_var_name")]


def test_spans_to_skip_are_not_names():
    text = "see `claim: x.count == 5` and `quoted: a/b.ts:3` and Foo.bar"
    assert kinds(text) == [("dotted", "Foo.bar")]
    assert kinds("AgentRegistry.setFactory") == [("dotted", "AgentRegistry.setFactory")]
    assert code_names("AgentRegistry.setFactory", skip=[(0, 24)]) == []


@given(st.text(max_size=300))
def test_names_never_overlap_and_point_into_the_text(text):
    names = code_names(text)
    for a, b in zip(names, names[1:]):
        assert a.end <= b.start
    for n in names:
        assert 0 <= n.start < n.end <= len(text)


# Words of every shape the screen tells apart: plain, capitalised, inner capitals, underscores,
# `$`, digits, letters outside ASCII (a capital among them), and what stands around words.
_WORD_PIECES = [
    "plain",
    "Word",
    "setFactory",
    "HTTP",
    "snake_case",
    "$x",
    "_x",
    "x1",
    "naïve",
    "fooÄbar",
    "É",
    "ß",
    " ",
    ".",
    "/",
    "-",
    "@",
    "`",
    "\n",
    "_",
]


@given(st.lists(st.sampled_from(_WORD_PIECES), max_size=12).map("".join))
def test_the_word_screen_passes_over_no_identifier(text):
    """The pattern's screen finds the identifiers that every word tried one by one would."""
    import re

    from dshaudit.documents import names

    plain = re.compile(r"(?<![\w$.@/-])[A-Za-z_$][\w$]*(?![\w$/@-])")
    everyone = [m.span() for m in plain.finditer(text) if is_identifier_like(m.group(0))]
    assert [m.span() for m in names._WORD_RE.finditer(text) if is_identifier_like(m.group(0))] == everyone


def _blanked_one_character_at_a_time(text: str, spans: list[tuple[int, int, int, int]]) -> str:
    """Underscore emphasis blanked as its definition reads, over a list of the text's characters."""
    from dshaudit.documents.names import _UNDERSCORE_EMPHASIS_RE

    if "_" not in text:
        return text
    outside = list(text)
    for start, _, _, end in spans:
        outside[start:end] = "\0" * (end - start)
    chars = list(text)
    for m in _UNDERSCORE_EMPHASIS_RE.finditer("".join(outside)):
        width = len(m[1])
        chars[m.start() : m.start() + width] = " " * width
        chars[m.end() - width : m.end()] = " " * width
    return "".join(chars)


@given(st.text(alphabet="_`ab \n*\\x", max_size=40))
def test_emphasis_is_blanked_in_place_around_code_spans(text):
    from dshaudit.documents.codespans import code_spans
    from dshaudit.documents.names import _without_emphasis

    spans = code_spans(text)
    assert _without_emphasis(text, spans) == _blanked_one_character_at_a_time(text, spans)


# The look-behind-first forms of three patterns of names.py, as their definitions read: each
# pattern there leads with its literal (so that the engine jumps between its occurrences) and
# must find the very matches these do.
_LOOK_BEHIND_FIRST = {
    "_PACKAGE_RE": r"(?<![\w@/.-])@[a-z0-9][\w.-]*/[a-z0-9][\w.-]*(?:@\d[\w.+-]*)?",
    "URL_RE": r"\bhttps?://\S+",
    "_UNDERSCORE_EMPHASIS_RE": r"(?<![\w\\])(_{1,2})(?=[^\s_])([^\n]*?[^\s_\\])\1(?!\w)",
}


@given(
    st.lists(
        st.sampled_from(["@", "@a/b", "/", ".", "-", "_", "\\", "a", "Z", "0", " ", "\n", "é", "https://", "http"]),
        max_size=12,
    ).map("".join)
)
def test_patterns_led_by_their_literal_match_as_their_definitions_read(text):
    import re

    from dshaudit.documents import names

    for name, definition in _LOOK_BEHIND_FIRST.items():
        fast = getattr(names, name)
        found = [(m.span(), m.groups()) for m in fast.finditer(text)]
        assert found == [(m.span(), m.groups()) for m in re.finditer(definition, text)], name
