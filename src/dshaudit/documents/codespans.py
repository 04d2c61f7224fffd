"""Inline code spans, as CommonMark reads them, and the anchors after a
citation (`→ `text`` or `-> `a` + `b``), which are code spans themselves."""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right

# After a citation (and the backtick closing its code span, if any).
_ARROW_RE = re.compile(r"[ \t]*\n?[ \t]*(?:→|->)[ \t]*\n?[ \t]*")
_PLUS_RE = re.compile(r"[ \t]*\+[ \t]*\n?[ \t]*")

_TICKS_RE = re.compile(r"`+")


class Ticks:
    """The backtick runs of a text, indexed once. A code span opens at a run
    and closes at the next run of the same length (CommonMark); finding that
    run by bisection keeps a text of many unclosed runs linear, where a
    pattern that scans ahead from every opener is quadratic."""

    def __init__(self, text: str):
        self.runs = [(m.start(), m.end()) for m in _TICKS_RE.finditer(text)]
        self.run_starts = [a for a, _ in self.runs]
        self.end_of = dict(self.runs)
        self.by_length: dict[int, list[int]] = {}
        for a, b in self.runs:
            self.by_length.setdefault(b - a, []).append(a)

    def span_at(self, pos: int) -> tuple[int, int, int, int] | None:
        """The code span opening at `pos`: (start, content start, content end, end)."""
        end = self.end_of.get(pos)
        if end is None:
            return None
        closers = self.by_length[end - pos]
        k = bisect_right(closers, end)
        if k == len(closers):
            return None
        close = closers[k]
        return pos, end, close, close + (end - pos)

    def spans(self) -> list[tuple[int, int, int, int]]:
        out = []
        i = 0
        while i < len(self.runs):
            span = self.span_at(self.runs[i][0])
            if span is None:
                i += 1
                continue
            out.append(span)
            i = bisect_left(self.run_starts, span[3], i + 1)
        return out


def code_spans(text: str) -> list[tuple[int, int, int, int]]:
    """(span start, content start, content end, span end) for each inline code span."""
    return Ticks(text).spans()


def _code_content(raw: str) -> str:
    # CommonMark: one leading and trailing space is stripped when both are present.
    if len(raw) >= 2 and raw[0] == " " and raw[-1] == " " and raw.strip():
        raw = raw[1:-1]
    return raw.replace("\n", " ")


def anchors_after(text: str, pos: int, ticks: Ticks) -> tuple[tuple[str, ...], int]:
    """The anchors after `pos`, and where they end (`pos` when there are none)."""
    m = _ARROW_RE.match(text, pos)
    if not m:
        return (), pos
    anchors = []
    end = pos
    pos = m.end()
    while True:
        span = ticks.span_at(pos)
        if not span:
            break
        content = _code_content(text[span[1] : span[2]])
        if content.strip():
            anchors.append(content.strip())
        pos = end = span[3]
        plus = _PLUS_RE.match(text, pos)
        if not plus or not ticks.span_at(plus.end()):
            break
        pos = plus.end()
    return tuple(anchors), end


def marked_quoted(text: str, spans: list[tuple[int, int, int, int]], span_starts: list[int], start: int) -> bool:
    """Whether the code span holding the citation reads `quoted: CITATION`."""
    k = bisect_right(span_starts, start) - 1
    if k < 0:
        return False
    _, c_start, c_end, _ = spans[k]
    return c_start <= start < c_end and re.fullmatch(r"\s*quoted:\s*", text[c_start:start]) is not None


def after_span(text: str, spans: list[tuple[int, int, int, int]], span_starts: list[int], start: int, end: int) -> int:
    """Where anchors may begin: after the citation, or after the code span that holds only it."""
    k = bisect_right(span_starts, start) - 1
    if k >= 0:
        _, c_start, c_end, s_end = spans[k]
        if c_start <= start and end <= c_end and text[end:c_end].strip() == "":
            return s_end
    return end
