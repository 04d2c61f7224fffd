"""The stretches of a document's prose that a statement fills: a sentence, a
list item's sentence, or a table row, each in the section its heading opens.

A name in a document not written for dshaudit is a claim about DSH only when
its stretch, or its section's heading, ties it to DSH (checking/scoping.py
says what ties); this module only finds the stretches.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field
from functools import lru_cache

from dshaudit.documents.blocks import prose_chunks
from dshaudit.documents.inference import sentence_scopes

_HEADING_RE = re.compile(r"^ {0,3}#{1,6}\s+(.*)$")


@dataclass(frozen=True)
class Stretch:
    """[start, end) of the text; `section` indexes `Outline.headings` (-1: before the first)."""

    start: int
    end: int
    section: int


@dataclass(frozen=True)
class Outline:
    """A document's headings (offset spans of their text) and the stretches of its prose, and
    where each of its lines starts (so that a place given as line and column is an offset)."""

    headings: tuple[tuple[int, int], ...]
    stretches: tuple[Stretch, ...]
    line_starts: tuple[int, ...]
    _stretch_starts: tuple[int, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_stretch_starts", tuple(s.start for s in self.stretches))

    def around(self, offset: int) -> Stretch | None:
        """The stretch holding `offset`, if it is in prose."""
        k = bisect_right(self._stretch_starts, offset) - 1
        if k >= 0 and offset < self.stretches[k].end:
            return self.stretches[k]
        return None

    def offset(self, line: int, column: int) -> int | None:
        """The offset of a 1-based line and column; None past the text."""
        return self.line_starts[line - 1] + column - 1 if 0 < line <= len(self.line_starts) else None

    def place(self, offset: int) -> tuple[int, int]:
        """The 1-based line and column of an offset."""
        line = bisect_right(self.line_starts, offset)
        return line, offset - self.line_starts[line - 1] + 1


# Remembered by text: the names pass, the checks beside linked files and rebase each ask.
@lru_cache(maxsize=256)
def outline(text: str, skip_lines: int = 0) -> Outline:
    lines = text.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    headings: list[tuple[int, int]] = []
    heading_lines: list[int] = []
    chunks, _ = prose_chunks(text, skip_lines)
    found: list[tuple[int, int, int]] = []  # start, end, line index
    for a, b in chunks:
        base = starts[a]
        chunk = "\n".join(lines[a:b])
        for i in range(a, b):
            m = _HEADING_RE.match(lines[i])
            if m:
                headings.append((starts[i] + m.start(1), starts[i] + m.end(1)))
                heading_lines.append(i)
        for s, e in _chunk_stretches(chunk):
            found.append((base + s, base + e, bisect_right(starts, base + s) - 1))
    out = [Stretch(s, e, bisect_right(heading_lines, line) - 1) for s, e, line in sorted(found)]
    return Outline(tuple(headings), tuple(out), tuple(starts[:-1]))


def _chunk_stretches(chunk: str) -> list[tuple[int, int]]:
    """The stretches of one prose block: each table row whole; elsewhere each sentence
    within its list item (inference's scopes), found from the block's start on."""
    out: list[tuple[int, int]] = []
    scopes = sentence_scopes(chunk)
    pos = 0
    line_start = 0
    for line in chunk.split("\n"):
        line_end = line_start + len(line)
        if line.lstrip().startswith("|") or _HEADING_RE.match(line):
            out.append((line_start, line_end))
            pos = line_end + 1
        else:
            pos = max(pos, line_start)
            while pos < line_end:
                if chunk[pos].isspace():
                    pos += 1
                    continue
                b = max(scopes.scope(pos, pos + 1)[1], pos + 1)
                out.append((pos, b))
                pos = b
        line_start = line_end + 1
    # Overlaps (a sentence that runs on past a row) are cut where the next stretch starts.
    merged: list[tuple[int, int]] = []
    for a, b in sorted(out):
        if merged and a < merged[-1][1]:
            a = merged[-1][1]
        if a < b:
            merged.append((a, b))
    return merged
