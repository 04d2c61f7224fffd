"""The screen that spares a document the Markdown parse: a document it passes over
holds no citation the whole reading would find."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from dshaudit.documents import markdown

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
    if not markdown._may_cite(text.split("\n"), WEB, "docs"):
        assert _without_screen(text) == []


def test_the_screen_passes_over_prose_without_citations():
    """It does pass over something: plain prose, code without a citation, a link to a page."""
    text = "Some prose.\n\n```ts\nconst x = 1;\n```\n\nSee [the guide](guide.md).\n"
    assert not markdown._may_cite(text.split("\n"), WEB, "docs")
    assert markdown._may_cite("Read pkg/a.ts:12 first.".split("\n"), WEB, "docs")
