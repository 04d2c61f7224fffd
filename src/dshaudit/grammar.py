"""The citation grammar: `PATH[:LINES][#SYMBOL][@PIN]`, optionally followed by
content anchors (`→ `text`` or `-> `a` + `b``).

This module only knows text. Which parts of a Markdown file are scanned is
decided in `findings.py`; here a chunk of text goes in and citations, with
their offsets, come out.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass

from .model import LineRange

# File endings that make a slash-less token a path (`package.json:5`).
# With a slash, any name is a path; without one, `example.com:8080` must not be.
ROOT_FILE_EXTENSIONS = frozenset(
    "ts tsx mts cts js jsx mjs cjs json jsonc json5 md mdx yml yaml toml txt sh "
    "py lock css scss html scm patch cfg ini".split()
)
# Symbols are TypeScript/JavaScript declarations; `docs/x.md#heading` is a link, not a citation.
SYMBOL_EXTENSIONS = frozenset("ts tsx mts cts js jsx mjs cjs".split())

SEGMENT = r"[\w.\-@+]+"
_PART = r"\d+(?:[-–]\d+)?"
CITATION_RE = re.compile(
    rf"""
    (?<![\w./:@\\\-+])                       # not inside a URL, a longer path or a word
    (?P<path>/?(?:{SEGMENT}/)*{SEGMENT})
    (?::(?P<lines>{_PART}(?:,{_PART})*))?
    (?:\#(?P<symbol>[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*))?
    (?:@(?P<pin>[A-Za-z0-9](?:[\w.\-]*[A-Za-z0-9])?))?
    (?![\w/\\]|:\d|[-–]\d|,\d)               # not `10:30:15`, `a.ts:3:7`, `C:\\`
    """,
    re.VERBOSE,
)

# After a citation (and the backtick closing its code span, if any).
_ARROW_RE = re.compile(r"[ \t]*\n?[ \t]*(?:→|->)[ \t]*\n?[ \t]*")
_CODE_SPAN_RE = re.compile(r"(?<!`)(`+)(?!`)(.+?)(?<!`)\1(?!`)", re.DOTALL)
_PLUS_RE = re.compile(r"[ \t]*\+[ \t]*\n?[ \t]*")

MAX_LINE_NUMBER = 10_000_000  # larger numbers are malformed, not just out of range


@dataclass(frozen=True)
class RawCitation:
    """A citation found in text, before it is tied to a findings file."""

    text: str
    path: str
    lines: tuple[LineRange, ...]
    problem: str | None  # why the lines are malformed: `path:0`, `path:5-3`, absurd numbers
    symbol: str | None
    pin: str | None
    anchors: tuple[str, ...]
    start: int  # offset of the citation in the scanned text
    end: int  # offset just after the citation (anchors not included)


def _extension(path: str) -> str:
    base = path.rsplit("/", 1)[-1]
    return base.rsplit(".", 1)[-1].lower() if "." in base.strip(".") else ""


def looks_like_path(path: str) -> bool:
    if "/" in path.strip("/"):
        return True
    return _extension(path) in ROOT_FILE_EXTENSIONS


def parse_lines(spec: str) -> tuple[tuple[LineRange, ...], str | None]:
    """`15-16,492` -> ranges, and what is wrong with them, if anything."""
    ranges = []
    problem = None
    for part in spec.split(","):
        a, _, b = part.replace("–", "-").partition("-")
        longest = max(len(a), len(b))
        if longest > 12:
            # int() of thousands of digits is slow, then refused: never convert them.
            problem = problem or f"a line number {longest} digits long is beyond any file dshaudit reads"
            ranges.append(LineRange(MAX_LINE_NUMBER + 1, MAX_LINE_NUMBER + 1))
            continue
        start = int(a)
        end = int(b) if b else start
        if start < 1:
            problem = problem or "line numbers start at 1"
        elif end < start:
            problem = problem or f"range {start}-{end} runs backwards"
        elif end > MAX_LINE_NUMBER:
            problem = problem or f"line {end} is beyond any file dshaudit reads"
        ranges.append(LineRange(min(start, MAX_LINE_NUMBER + 1), min(end, MAX_LINE_NUMBER + 1)))
    return tuple(ranges), problem


def code_spans(text: str) -> list[tuple[int, int, int, int]]:
    """(span start, content start, content end, span end) for each inline code span."""
    return [(m.start(), m.start(2), m.end(2), m.end()) for m in _CODE_SPAN_RE.finditer(text)]


def _code_content(raw: str) -> str:
    # CommonMark: one leading and trailing space is stripped when both are present.
    if len(raw) >= 2 and raw[0] == " " and raw[-1] == " " and raw.strip():
        raw = raw[1:-1]
    return raw.replace("\n", " ")


def _anchors_after(text: str, pos: int) -> tuple[str, ...]:
    m = _ARROW_RE.match(text, pos)
    if not m:
        return ()
    anchors = []
    pos = m.end()
    while True:
        span = _CODE_SPAN_RE.match(text, pos)
        if not span:
            break
        content = _code_content(span.group(2))
        if content.strip():
            anchors.append(content.strip())
        pos = span.end()
        plus = _PLUS_RE.match(text, pos)
        if not plus or not _CODE_SPAN_RE.match(text, plus.end()):
            break
        pos = plus.end()
    return tuple(anchors)


def find_citations(text: str) -> list[RawCitation]:
    """Every citation in a chunk of Markdown text, in order of appearance."""
    spans = code_spans(text)
    span_starts = [s[1] for s in spans]  # content starts, sorted: bisect finds the enclosing span
    found = []
    for m in CITATION_RE.finditer(text):
        path, lines_spec, symbol, pin = m.group("path", "lines", "symbol", "pin")
        if symbol and _extension(path) not in SYMBOL_EXTENSIONS:
            if not lines_spec:
                continue  # a Markdown link to a heading
            symbol = None
        if not lines_spec and not symbol:
            continue
        if not looks_like_path(path):
            continue
        lines, problem = parse_lines(lines_spec) if lines_spec else ((), None)
        # Anchors follow the citation, or the code span that holds it.
        after = m.end()
        k = bisect_right(span_starts, m.start()) - 1
        if k >= 0:
            _, c_start, c_end, s_end = spans[k]
            if c_start <= m.start() and m.end() <= c_end and text[m.end():c_end].strip() == "":
                after = s_end
        found.append(
            RawCitation(
                text=m.group(0),
                path=path,
                lines=lines,
                problem=problem,
                symbol=symbol,
                pin=pin,
                anchors=_anchors_after(text, after),
                start=m.start(),
                end=m.end(),
            )
        )
    return found
