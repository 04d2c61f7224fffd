"""The screen that spares a document the Markdown parse: a document it passes over
holds no citation the whole reading would find."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from dshaudit.documents import grammar, markdown

WEB = "https://github.com/example/dsh"

# Lines of the kinds that make blocks and citations, so that fences, lists, quotes,
# links and citations meet in every order.
_LINES = [
    "",
    "Some prose.",
    "See `pkg/a.ts:12` here.",
    "pkg/a.ts (lines 3-4)",
    "```ts",
    "```",
    "// pkg/b.ts:7",
    "//pkg/b.ts:7",
    "    indented pkg/a.ts:9",
    "- item pkg/c.ts:1",
    "> quoted `x.ts:2`",
    "[link](../src/a.ts#L3)",
    f"{WEB}/blob/abc123/pkg/a.ts#L5",
    "<details>",
    "</details>",
    "<!-- pkg/d.ts:4 -->",
    "| a | pkg/e.ts:5 |",
    "|---|---|",
    "`",
    "# Heading",
    "---",
]
_DOCUMENTS = st.lists(st.sampled_from(_LINES), max_size=14).map("\n".join)


def _without_screen(text: str) -> list:
    screen = markdown._may_cite
    markdown._may_cite = lambda *args: True
    try:
        return markdown.citations_in_markdown(text, "doc.md", 0, WEB, link_base="docs")
    finally:
        markdown._may_cite = screen


@given(_DOCUMENTS)
@example("```\n//pkg/b.ts:7\nx\n```")
@example("```ts\n`\n```\nSee `pkg/a.ts:12` here.")
@settings(max_examples=300)
def test_a_document_the_screen_passes_over_holds_no_citation(text):
    if not markdown._may_cite(text, text.split("\n"), WEB, "docs"):
        assert _without_screen(text) == []


def test_the_screen_passes_over_prose_without_citations():
    """It does pass over something: plain prose, code without a citation, a link to a page."""
    text = "Some prose.\n\n```ts\nconst x = 1;\n```\n\nSee [the guide](guide.md).\n"
    assert not markdown._may_cite(text, text.split("\n"), WEB, "docs")
    read = "Read pkg/a.ts:12 first."
    assert markdown._may_cite(read, read.split("\n"), WEB, "docs")


# Pieces of every citation form and of text that looks like one, hidden characters and
# full-width punctuation among them, joined in every order.
_PIECES = [
    " ",
    "\n",
    "\n\n",
    "`",
    "(",
    ")",
    "（",
    "）",
    ",",
    ":",
    "#",
    "@",
    "/",
    ".",
    "-",
    "–",
    "L",
    "l",
    "line",
    "lines",
    "第",
    "行",
    "12",
    "3",
    "pkg/a.ts",
    "a.ts",
    "b.tsx",
    "c.md",
    "x.json",
    "Name",
    "Class.member",
    "rc7",
    "to",
    "\u200b",
    "\u00ad",
    "\x07",
    "[t](",
    "../src/a.ts",
    f"{WEB}/blob/abc123/",
    f"{WEB}/tree/main/",
    "https://raw.githubusercontent.com/example/dsh/abc123/",
]


@given(st.lists(st.sampled_from(_PIECES), max_size=16).map("".join))
@example("pkg/a.ts:1\u200b2")
@example("`pkg/a.ts` (`run()`)")
@example("pkg/a.ts（第 3–5 行）")
@example("a.ts@rc7:Name")
@settings(max_examples=500)
def test_text_the_literal_screen_passes_over_holds_no_citation(text):
    """`may_hold_citation` saying no means the grammar finds nothing, in any form."""
    if not grammar.may_hold_citation(text, WEB):
        assert grammar.find_citations(text, WEB, "docs") == []
        assert grammar.find_citations(text, WEB) == []


def test_the_literal_screen_says_no_to_prose_and_code_without_citations():
    assert not grammar.may_hold_citation("Some prose about pkg/a.ts and `run()`.\n\nconst x = {a: 1};", WEB)
    assert grammar.may_hold_citation("see pkg/a.ts (line 3)", WEB)
    assert grammar.may_hold_citation(f"{WEB}/blob/abc123/pkg/a.ts", WEB)


@given(st.lists(st.sampled_from([*_LINES, "See `pkg/a.ts:1\u200b2` here.", "pkg/a\u00ad.ts (line 3)"]), max_size=10))
@example(["See `pkg/a.ts:1\u200b2` here."])
@settings(max_examples=200)
def test_a_document_is_read_alike_whether_or_not_its_hidden_characters_were_looked_for_once(lines):
    """The chunks of a document without hidden characters are not asked for them again."""
    text = "\n".join(lines)
    once = markdown.citations_in_markdown(text, "doc.md", 0, WEB, link_base="docs")
    looked_for = markdown.hidden_in
    markdown.hidden_in = lambda _text: {"\u200b"}  # as if the document held one: each chunk is asked
    try:
        each = markdown.citations_in_markdown(text, "doc.md", 0, WEB, link_base="docs")
    finally:
        markdown.hidden_in = looked_for
    assert once == each


def test_a_hidden_character_in_a_citation_of_a_document_is_named():
    text = "Intro.\n\n- See `pkg/a.ts:1\u200b2` here.\n"
    [citation] = markdown.citations_in_markdown(text, "doc.md", 0, WEB, link_base="docs")
    assert citation.problem and "U+200B ZERO WIDTH SPACE" in citation.problem
