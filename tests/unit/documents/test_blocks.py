"""A document typed into (blocks.py): when the blocks of the text before are taken for the
text after, they are the blocks a parse of the text after finds."""

from __future__ import annotations

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from dshaudit.documents import blocks
from dshaudit.documents.blocks import _blocks, _typed_into, prose_chunks
from dshaudit.platform import cache

# Lines that open, close, continue or reshape a block: fences, indented code, block quotes
# (lazy too), list items, headings and their underlines, tables, HTML blocks of each kind,
# link reference definitions, escapes; and plain prose among them.
LINES = [
    "",
    "Plain prose with words",
    "more words here",
    "    indented code",
    "\tcode after a tab",
    "```",
    "```ts",
    "~~~",
    "> quoted words",
    ">no space quote",
    "- item words",
    "1. first item",
    "2) second item",
    "  continued words",
    "# Heading words",
    "Title words",
    "===",
    "---",
    "***",
    "name | value",
    "--|--",
    "| left | right |",
    "<div>",
    "</div>",
    "<!-- a comment",
    "ends here -->",
    "<pre>",
    "</pre>",
    "<?php",
    "done ?> after",
    "<![CDATA[",
    "data ]]> after",
    "<!DOCTYPE words",
    "[ref]: /url",
    "[ref]: /url 'a title",
    "title goes on'",
    "words with `code` in them",
    "word \\| escaped",
    "* star item words",
    "   three spaces words",
    "(words in brackets)",
    "(a title) after",
    '"quoted words" after',
    "'single quoted' words",
]
TYPED = [
    "x",
    "word ",
    " ",
    "\t",
    "|",
    "\\",
    ">",
    "<",
    "'",
    '"',
    "(",
    ")",
    "[",
    "]",
    "`",
    "~",
    "-",
    "=",
    "#",
    "*",
    "1.",
    "-->",
]


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    lines=st.lists(st.sampled_from(LINES), min_size=1, max_size=25),
    row=st.integers(0, 100),
    column=st.integers(0, 40),
    removed=st.integers(0, 3),
    typed=st.lists(st.sampled_from(TYPED), max_size=3),
    skip=st.integers(0, 2),
)
@example(lines=["name | value", "--|--", "    indented"], row=0, column=6, removed=0, typed=["|"], skip=0)
@example(lines=["<?php", "Plain prose with words", "    indented"], row=1, column=9, removed=0, typed=["?>"], skip=0)
@example(lines=["name | value", "--|--", "    indented"], row=0, column=5, removed=0, typed=["\\"], skip=0)
@example(
    lines=["[ref]: /url 'a title", "title goes on'", "    indented"], row=1, column=13, removed=1, typed=[], skip=0
)
@example(lines=["[ref]: /url", "    indented"], row=0, column=11, removed=0, typed=[" ", "x"], skip=0)
@example(lines=["[ref]: /url", "(a title)", "    indented"], row=1, column=9, removed=0, typed=["x"], skip=0)
def test_blocks_taken_over_after_typing_are_the_blocks_of_the_new_text(
    lines: list[str], row: int, column: int, removed: int, typed: list[str], skip: int
) -> None:
    row, skip = row % len(lines), min(skip, len(lines))  # a front matter's lines are lines of the text
    line = lines[row]
    column = min(column, len(line))
    edited = [*lines[:row], line[:column] + "".join(typed) + line[column + removed :], *lines[row + 1 :]]
    before, after = "\n".join(lines), "\n".join(edited)
    chunks, fences = _blocks(before, skip)
    if _typed_into(before, after, chunks):
        assert _blocks(after, skip) == (chunks, fences)


def test_words_typed_into_prose_take_the_blocks_of_the_text_before(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("DSHAUDIT_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(blocks, "_RECENT", [])
    cache.begin()
    try:
        text = "Intro words\n\n```ts\nconst x = 1;\n```\n\n- item words\n\n    code\n"
        chunks, fences = prose_chunks(text, 0)
        first = (list(chunks), list(fences))
        chunks.append((99, 100))  # the lists handed out are the caller's own
        parsed = []
        monkeypatch.setattr(blocks, "_blocks", lambda t, s: parsed.append(t) or ([], []))
        assert prose_chunks(text.replace("item words", "item words typed"), 0) == first
        assert parsed == []
        # A cell's border typed into the line parses the text again, as does an edit of a fence.
        prose_chunks(text.replace("Intro words", "Intro | words"), 0)
        prose_chunks(text.replace("const x", "const xy"), 0)
        assert len(parsed) == 2
    finally:
        cache.end()
