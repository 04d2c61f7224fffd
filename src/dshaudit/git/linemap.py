"""Carry line numbers across a diff, as code review tools port comments
between patch sets.

A diff is a list of hunks `(old_start, old_count, new_start, new_count)` in
git's unified-diff numbering (`@@ -a,b +c,d @@` with `-U0`). A line outside
every hunk's old side is unchanged and moves by the lines inserted and deleted
above it; a line inside a hunk's old side was changed or deleted and has no
place of its own on the new side.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass

_HUNK_RE = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", re.M)


@dataclass(frozen=True)
class Hunk:
    old_start: int
    old_count: int
    new_start: int
    new_count: int

    @property
    def old_end(self) -> int:
        """Last old line the hunk replaces (old_start - 1 for a pure insertion)."""
        return self.old_start + self.old_count - 1


def parse_hunks(diff_text: str) -> list[Hunk]:
    return [Hunk(int(a), int(b) if b else 1, int(c), int(d) if d else 1) for a, b, c, d in _HUNK_RE.findall(diff_text)]


@dataclass(frozen=True)
class LineMapping:
    """Where old line N went: `line` when it is unchanged, else the hunk that took it."""

    old: int
    line: int | None
    hunk: Hunk | None


class LineMapper:
    def __init__(self, hunks: list[Hunk]):
        self.hunks = sorted(hunks, key=lambda h: h.old_start)
        # An insertion after old line a (`-a,0`) affects lines > a, like a change starting at a + 1.
        self._keys = [h.old_start + (1 if h.old_count == 0 else 0) for h in self.hunks]

    def map(self, line: int) -> LineMapping:
        i = bisect_right(self._keys, line) - 1
        delta = 0
        if i >= 0:
            h = self.hunks[i]
            if h.old_count > 0 and h.old_start <= line <= h.old_end:
                return LineMapping(line, None, h)
            # After hunk i: the new side's end tells where the unchanged run resumes.
            new_after = h.new_start + h.new_count - 1 if h.new_count else h.new_start
            old_after = h.old_end if h.old_count else h.old_start
            delta = new_after - old_after
        return LineMapping(line, line + delta, None)

    def map_range(self, start: int, end: int) -> tuple[int, int] | None:
        """New (start, end) when every line of the range is unchanged and stays
        contiguous; None when any of it was edited or something was inserted inside."""
        a, b = self.map(start), self.map(end)
        if a.line is None or b.line is None or b.line - a.line != end - start:
            return None
        return a.line, b.line

    def touched(self, start: int, end: int) -> list[Hunk]:
        """Hunks whose old side overlaps [start, end] or that insert inside it."""
        out = []
        for h in self.hunks:
            if h.old_count > 0 and h.old_start <= end and start <= h.old_end:
                out.append(h)
            elif h.old_count == 0 and start <= h.old_start < end:
                out.append(h)
        return out
