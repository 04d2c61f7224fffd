"""The blocks of a Markdown document: where its prose is, and where its code.

markdown-it-py tells the blocks apart (fenced and indented code, HTML, prose):
fences, tables, lists and block quotes have edge cases a line-by-line scanner
gets wrong. Positions are line ranges, since markdown-it keeps line maps for
blocks only.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from markdown_it import MarkdownIt

# Only the blocks are needed (their kinds and line maps): inline parsing is
# not run at all, which also keeps a file of pathological brackets (`![[[[…`,
# costly to markdown-it's link rules) linear.
_md = MarkdownIt("commonmark").enable("table").disable(["inline", "text_join"])
BLOCKS_VERSION = "2"  # bump when _blocks changes what it returns
BLOCKS_SHARD = "markdown-blocks"  # the cache shard they are kept in, by the text's digest
_CODE_HTML_RE = re.compile(r"\s*<(!--|pre\b|script\b|style\b|textarea\b|code\b)", re.IGNORECASE)


def prose_chunks(text: str, skip: int) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """Line ranges [a, b) of prose blocks, and of fenced blocks, below the front
    matter; remembered by the text's digest, since Markdown parsing is the
    slow part of reading findings. A text that differs from one read lately only
    by words typed into a line of prose has that text's blocks (`_typed_into`)."""
    from dshaudit.platform import cache

    key = cache.digest(BLOCKS_VERSION, str(skip), text)
    shard = cache.current().shard(BLOCKS_SHARD, BLOCKS_VERSION, _BLOCKS_SHAPE)
    hit = shard.get(key)
    rows = text.count("\n")
    if hit is None:
        chunks, fences = next(
            (
                ([*c], [*f])
                for earlier, at, lines, (c, f) in _RECENT
                if at == skip and lines == rows and _typed_into(earlier, text, c)
            ),
            None,
        ) or _blocks(text, skip)
        hit = {"chunks": chunks, "fences": fences}
        shard.put(key, hit)
    chunks, fences = [tuple(c) for c in hit["chunks"]], [tuple(f) for f in hit["fences"]]
    _RECENT.insert(0, (text, skip, rows, (tuple(chunks), tuple(fences))))  # kept apart from the lists handed out
    del _RECENT[MAX_RECENT:]
    return chunks, fences


# The texts read last, with their line breaks counted (a text typed into has as many), and their
# blocks: an editor sends a document again at each keystroke.
_RECENT: list[tuple[str, int, int, tuple[tuple[tuple[int, int], ...], tuple[tuple[int, int], ...]]]] = []
MAX_RECENT = 8
# What a line may start with before its text: spaces, and the markers of block quotes and list items.
_CONTAINERS_RE = re.compile(r"(?:[ \t]*(?:>|[-*+]|[0-9]{1,9}[.)])(?=[ \t]|$))*[ \t]*")
# Characters that, typed into a line, could start, end or reshape a block around it: a table's cells
# (`|`, an escaped `\|`), the end of an HTML block (`>`, `-->`, `?>`, `]]>`), a link reference
# definition's destination and title, and a fence's characters.
_BLOCK_CHARACTERS = frozenset("|\\<>[]()'\"`~\r")


def _typed_into(earlier: str, text: str, chunks: Sequence[tuple[int, int]]) -> bool:
    """Whether `text` is `earlier` with only the end of one line of prose changed, past the
    first character of its text (a letter; or a bracket or quote where no link reference
    definition may be open), and with none of `_BLOCK_CHARACTERS`: then it has the same
    blocks. Which lines are fenced, indented code or HTML that holds code is decided by how
    lines start (indentation, markers, first characters), by which are blank, and by a few
    characters anywhere in a line (those above); the rest of a line of prose takes part in
    none of it, so the blocks of every line stay as they were."""
    if not earlier:
        return False
    start = _common_start(earlier, text)
    end = _common_end(earlier, text, start)
    before, after = earlier[start : len(earlier) - end], text[start : len(text) - end]
    if "\n" in before or "\n" in after or not _BLOCK_CHARACTERS.isdisjoint(before + after):
        return False
    row = earlier.count("\n", 0, start)
    chunk = next((a for a, b in chunks if a <= row < b), None)
    if chunk is None:
        return False
    line_start = earlier.rfind("\n", 0, start) + 1
    first = _text_start(earlier, line_start)
    if first >= start:
        return False
    if earlier[first].isalpha():
        return True
    # A line opened by a quote or a bracket may be the title of a link reference definition
    # (`[x]: /url` and, on the next line, `"Title"`), which what follows can make invalid.
    if earlier[first] not in "(\"'":
        return False
    lines = earlier.split("\n", row + 1)[chunk:row]
    return not any(line[_text_start(line, 0) :].startswith("[") for line in lines)


def _text_start(text: str, at: int) -> int:
    """Where a line's text starts, past its indentation and the markers of block quotes and list items."""
    lead = _CONTAINERS_RE.match(text, at)
    return lead.end() if lead else at


def _common_start(a: str, b: str) -> int:
    """How many characters `a` and `b` share at their start, found by halving (each comparison in C)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def _common_end(a: str, b: str, start: int) -> int:
    """How many characters `a` and `b` share at their end, not reaching back into their common `start`."""
    low, high = 0, min(len(a), len(b)) - start
    while low < high:
        middle = (low + high + 1) // 2
        if a[len(a) - middle :] == b[len(b) - middle :]:
            low = middle
        else:
            high = middle - 1
    return low


def _blocks_shape(value: object) -> bool:
    from dshaudit.platform.cache import shaped

    pairs = [[int, int]]
    return shaped({"chunks": pairs, "fences": pairs})(value)


_BLOCKS_SHAPE = _blocks_shape


def _blocks(text: str, skip: int) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    lines = text.split("\n")
    masked = "\n" * skip + "\n".join(lines[skip:])
    excluded = [False] * len(lines)
    fences = []
    for tok in _md.parse(masked):
        # HTML blocks are prose (a citation in a <details> or an HTML table is
        # checked like any other), except comments and blocks holding code.
        hidden_html = tok.type == "html_block" and _CODE_HTML_RE.match(tok.content)
        if tok.map is not None and (tok.type in ("fence", "code_block") or hidden_html):
            a, b = tok.map
            for i in range(a, min(b, len(lines))):
                excluded[i] = True
            if tok.type == "fence":
                fences.append((a, b))
    for i in range(skip):
        excluded[i] = True
    chunks = []
    i = 0
    while i < len(lines):
        if excluded[i] or not lines[i].strip():
            i += 1
            continue
        j = i
        while j < len(lines) and not excluded[j] and lines[j].strip():
            j += 1
        chunks.append((i, j))
        i = j
    return chunks, fences
