"""The blocks of a Markdown document: where its prose is, and where its code.

markdown-it-py tells the blocks apart (fenced and indented code, HTML, prose):
fences, tables, lists and block quotes have edge cases a line-by-line scanner
gets wrong. Positions are line ranges, since markdown-it keeps line maps for
blocks only.
"""

from __future__ import annotations

import re

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
    slow part of reading findings."""
    from dshaudit.platform import cache

    key = cache.digest(BLOCKS_VERSION, str(skip), text)
    shard = cache.current().shard(BLOCKS_SHARD, BLOCKS_VERSION, _BLOCKS_SHAPE)
    hit = shard.get(key)
    if hit is None:
        chunks, fences = _blocks(text, skip)
        hit = {"chunks": chunks, "fences": fences}
        shard.put(key, hit)
    return [tuple(c) for c in hit["chunks"]], [tuple(f) for f in hit["fences"]]


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
