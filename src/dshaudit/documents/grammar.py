"""The citation grammar: `PATH[:LINES][#SYMBOL][@PIN]`, optionally followed by
content anchors (`→ `text`` or `-> `a` + `b``), and the forms people write
citations in when they do not write for dshaudit:

- `permalink`: `<web>/blob/<ref>/path#L10-L20` (`#L10`, `?plain=1`, `/raw/`),
  the URL's ref being the citation's pin;
- `line-phrase`: `path (line 12)`, `path (lines 10–20)`, `path, lines 10-20`,
  `path L10-L20`, `path（第 170–190 行）`, `path（第 35–78、240–345 行）`;
- `symbol`: `path:Name`, `path:Class.member`;
- `quoted-code`: `` `path` (`text`) `` or `` `path`（`text`） ``: text expected in the file;
- `line-fragment`: a link's line fragment written on a bare path, `path#L10` or `path#L10-L20`;
- `continuation`: lines alone, `` `:626` `` or `:40-41`, right after a citation in the same
  passage: more lines of the file that citation names (at its pin).

Every citation keeps the form it was written in (`canonical` for dshaudit's
own). This module only knows text. Which parts of a Markdown file are scanned
is decided in `findings.py`; here a chunk of text goes in and citations, with
their offsets, come out.
"""

from __future__ import annotations

import posixpath
import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import PurePosixPath

from dshaudit.core.model import LineRange

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
_PLUS_RE = re.compile(r"[ \t]*\+[ \t]*\n?[ \t]*")

MAX_LINE_NUMBER = 10_000_000  # larger numbers are malformed, not just out of range
MAX_LINE_PARTS = 100  # `path:a,b,c,…`: more parts than this are malformed


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
    form: str = "canonical"  # how it was written: canonical, permalink, relative-link, line-phrase, symbol,
    # quoted-code, line-fragment, continuation
    expected_code: tuple[str, ...] = ()  # quoted-code: the text expected in the file
    marked_quoted: bool = False  # written as `quoted: CITATION`
    anchors_end: int = -1  # offset just after its anchors (after the citation when it has none)
    written: str = ""  # the whole citation as written, its line phrase or quoted code included
    declared: tuple[str, ...] = ()  # code a fence beside it quotes: expected in the declaration it cites


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
    parts = spec.split(",")
    if len(parts) > MAX_LINE_PARTS:
        # Each part is checked and carried on its own: thousands of them are a list, not a citation.
        first = parse_lines(",".join(parts[:MAX_LINE_PARTS]))[0]
        return first, f"{len(parts)} line ranges in one citation; at most {MAX_LINE_PARTS}"
    for part in parts:
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


_TICKS_RE = re.compile(r"`+")


class _Ticks:
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
    return _Ticks(text).spans()


def _code_content(raw: str) -> str:
    # CommonMark: one leading and trailing space is stripped when both are present.
    if len(raw) >= 2 and raw[0] == " " and raw[-1] == " " and raw.strip():
        raw = raw[1:-1]
    return raw.replace("\n", " ")


def _anchors_after(text: str, pos: int, ticks: _Ticks) -> tuple[tuple[str, ...], int]:
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


# A line phrase after a path (and the backtick closing its code span, if any).
_PARTS = r"\d+(?:[ \t]*[-–—~～][ \t]*L?\d+)?(?:[ \t]*[,，、][ \t]*\d+(?:[ \t]*[-–—~～][ \t]*L?\d+)?)*"
_LINE_PHRASE_RE = re.compile(
    rf"""`?(?:
        [ \t]*[(（][ \t]*(?:lines?|L)[ \t]*(?P<p1>{_PARTS})[ \t]*[)）]     # (line 12), (lines 10-20), (L12)
      | [ \t]*[(（][ \t]*第[ \t]*(?P<p2>{_PARTS})[ \t]*行[ \t]*[)）]     # （第 170–190 行）
      | ,[ \t]*lines?[ \t]+(?P<p3>{_PARTS})                                # , lines 10-20
      | [ \t]+L(?P<p4>\d+(?:[-–]L?\d+)?)(?![\w-])                        #  L10-L20
    )""",
    re.VERBOSE,
)
# `path:Name` or `path:Class.member`, for source files.
_SYMBOL_COLON_RE = re.compile(r":(?P<symbol>[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)(?![\w$(/.:-])")
# `` `path` (`text`) `` or `` `path`（`text`） ``: text expected in the file.
# The quoted text is bounded: an unclosed quote is looked for within a line's
# first few hundred characters, not to its end from every path on it.
MAX_QUOTED_CODE = 400
_QUOTED_CODE_RE = re.compile(r"`[ \t]*[(（][ \t]*(?P<tick>`+)(?P<code>.{1,%d}?)(?P=tick)[ \t]*[)）]" % MAX_QUOTED_CODE)
_PERMALINKS: dict[str, re.Pattern[str]] = {}


def _permalink_re(web_url: str) -> re.Pattern[str]:
    if web_url not in _PERMALINKS:
        _PERMALINKS[web_url] = re.compile(
            re.escape(web_url.rstrip("/"))
            + r"/(?:blob|raw)/(?P<ref>[A-Za-z0-9][\w.\-]*)/(?P<path>[^\s#?()\[\]<>\"'`]+)"
            + r"(?:\?plain=1)?(?:#L(?P<a>\d+)(?:-L(?P<b>\d+))?)?"
        )
    return _PERMALINKS[web_url]


def _normalise_parts(spec: str) -> str:
    """`35–78、240–345` or `10 - L20` as the canonical `35-78,240-345`."""
    spec = re.sub(r"[ \t]*[,，、][ \t]*", ",", spec)
    return re.sub(r"[ \t]*[-–—~～][ \t]*L?", "-", spec)


# A Markdown link's target: `[text](target)`, `[text](<target>)`, and its line fragment (`L10-L20`).
_LINK_TARGET_RE = re.compile(r"\]\(<?(?P<target>[^)\s<>]+)>?(?:\s+\"[^\"]*\")?\)")
_LINE_FRAGMENT_RE = re.compile(r"L(?P<a>\d+)(?:-L?(?P<b>\d+))?(?:C\d+)?")
# The same fragment written on a bare path: `path#L10-L20`.
_FRAGMENT_CITATION_RE = re.compile(
    rf"(?<![\w./:@\\\-+])(?P<path>(?:{SEGMENT}/)*{SEGMENT})#{_LINE_FRAGMENT_RE.pattern}"
    r"(?:@(?P<pin>[A-Za-z0-9](?:[\w.\-]*[A-Za-z0-9])?))?(?![\w/\\])"
)
# What joins two paths of one passage (`a/b/c.ts and src/d.ts`, `与`, `、`): the second may be relative to the first.
JOINED_RE = re.compile(r"[\s`]*(?:,|and|与|和|及|、|&)[\s`]*")


def _relative_links(text: str, link_base: str) -> list[RawCitation]:
    """Links relative to the document's folder in the tree that name lines:
    `[Source](../../x/y.ts#L42)`, `(../y.ts#L10-L20)`. A link to a whole file or a
    heading is a link, not a citation."""
    out = []
    for m in _LINK_TARGET_RE.finditer(text):
        target = m.group("target")
        path, _, fragment = target.partition("#")
        lines_m = _LINE_FRAGMENT_RE.fullmatch(fragment)
        if not path or not lines_m or re.match(r"^[a-z][a-z0-9+.-]*:", path, re.IGNORECASE) or path.startswith("/"):
            continue
        path = path.removeprefix("./").split("?", 1)[0]
        resolved = posixpath.normpath(posixpath.join(link_base, path)) if link_base else posixpath.normpath(path)
        problem = None
        if resolved == ".." or resolved.startswith("../"):
            problem = f"the link `{target}` leaves the tree (from {link_base or 'the root'}/)"
            resolved = path
        spec = lines_m.group("a") + (f"-{lines_m.group('b')}" if lines_m.group("b") else "")
        lines, bad = parse_lines(spec)
        start = m.start("target")
        out.append(
            RawCitation(
                target, resolved, lines, problem or bad, None, None, (), start, m.end(), "relative-link", written=target
            )
        )
    return out


# Characters that do not show, or show as nothing: format characters (zero-width
# space and joiners, soft hyphen, word joiner, byte order mark, bidi marks),
# line and paragraph separators, combining marks, controls, private-use and
# unassigned code points, and the blank "letters" of some scripts. Inside a citation they make it name another
# path, or split it so that no citation is found at all: it is reported instead.
_HIDDEN_CATEGORIES = frozenset("Cf Mn Me Cc Co Cs Cn Zl Zp".split())
_BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")


def hidden_character(ch: str) -> bool:
    import unicodedata

    return ch not in "\t\n" and (unicodedata.category(ch) in _HIDDEN_CATEGORIES or ch in _BLANK_LETTERS)


def describe_character(ch: str) -> str:
    """`U+200B ZERO WIDTH SPACE`."""
    import unicodedata

    return f"U+{ord(ch):04X} {unicodedata.name(ch, '(unnamed)')}"


def find_citations(text: str, web_url: str | None = None, link_base: str | None = None) -> list[RawCitation]:
    """Every citation in a chunk of Markdown text, in order of appearance.
    With `web_url` (DSH's web address), permalinks into it are citations too.
    With `link_base` (the document's folder in DSH's tree; "" for its root),
    relative links to lines (`../x.ts#L10`) are citations of the file they resolve to.
    A citation with a hidden character in it (see `hidden_character`) is found
    as if the character were not there, and carries a problem naming it."""
    found = list(_find_citations(text, web_url, link_base))
    if text.isascii() and text.isprintable():
        return found
    hidden = {ch for ch in set(text) if hidden_character(ch)}
    if not hidden:
        return found
    where = [i for i, ch in enumerate(text) if ch not in hidden]
    clean = "".join(text[i] for i in where)
    flagged = []
    for c in _find_citations(clean, web_url, link_base):
        extent = max(c.end, c.start + len(c.written))  # a line phrase or quoted code is part of it
        a, b = where[c.start], where[extent - 1] + 1
        inside = sorted({ch for ch in text[a:b] if ch in hidden}, key=text[a:b].index)
        if not inside:
            continue
        names = ", ".join(describe_character(ch) for ch in inside)
        problem = f"holds {names}, a character that does not show (what is seen is not what is cited); delete it"
        flagged.append(
            RawCitation(
                text[a:b],
                c.path,
                c.lines,
                problem,
                c.symbol,
                c.pin,
                (),
                a,
                b,
                c.form,
                c.expected_code,
                c.marked_quoted,
                b,
                text[a:b],
            )
        )
    if not flagged:
        return found
    spans = [(f.start, f.end) for f in flagged]
    found = [f for f in found if not any(a < max(f.end, f.anchors_end) and f.start < b for a, b in spans)]
    return sorted(found + flagged, key=lambda c: c.start)


# Remembered by chunk: a document edited in the language server is parsed again
# on each keystroke, and all of its chunks but one are as they were.
@lru_cache(maxsize=4096)
def _find_citations(text: str, web_url: str | None, link_base: str | None) -> tuple[RawCitation, ...]:
    ticks = _Ticks(text)
    spans = ticks.spans()
    span_starts = [s[1] for s in spans]  # content starts, sorted: bisect finds the enclosing span
    found: list[RawCitation] = []
    urls: list[tuple[int, int]] = []
    if link_base is not None:
        for raw in _relative_links(text, link_base):
            urls.append((raw.start, raw.end))
            anchors, anchors_end = _anchors_after(
                text, _after_span(text, spans, span_starts, raw.start, raw.end), ticks
            )
            found.append(replace(raw, anchors=anchors, anchors_end=anchors_end))
    if web_url:
        for m in _permalink_re(web_url).finditer(text):
            urls.append((m.start(), m.end()))
            if not m.group("a"):
                continue  # a link to a whole file: not a citation of lines
            lines_spec = m.group("a") + (f"-{m.group('b')}" if m.group("b") else "")
            lines, problem = parse_lines(lines_spec)
            path = m.group("path")
            anchors, anchors_end = _anchors_after(
                text, _after_span(text, spans, span_starts, m.start(), m.end()), ticks
            )
            found.append(
                RawCitation(
                    m.group(0),
                    path,
                    lines,
                    problem,
                    None,
                    m.group("ref"),
                    anchors,
                    m.start(),
                    m.end(),
                    "permalink",
                    anchors_end=anchors_end,
                    written=m.group(0),
                )
            )
    links = sorted(urls)  # a fragment inside a link or permalink is theirs
    link_starts = [a for a, _ in links]
    for m in _FRAGMENT_CITATION_RE.finditer(text):
        k = bisect_right(link_starts, m.start()) - 1
        if (k >= 0 and m.start() < links[k][1]) or not looks_like_path(m.group("path")):
            continue
        urls.append((m.start(), m.end()))
        lines, problem = parse_lines(m.group("a") + (f"-{m.group('b')}" if m.group("b") else ""))
        anchors, anchors_end = _anchors_after(text, _after_span(text, spans, span_starts, m.start(), m.end()), ticks)
        found.append(
            RawCitation(
                m.group(0),
                m.group("path"),
                lines,
                problem,
                None,
                m.group("pin"),
                anchors,
                m.start(),
                m.end(),
                "line-fragment",
                anchors_end=anchors_end,
                written=m.group(0),
                marked_quoted=_marked_quoted(text, spans, span_starts, m.start()),
            )
        )
    urls.sort()
    url_starts = [a for a, _ in urls]
    for m in CITATION_RE.finditer(text):
        k = bisect_right(url_starts, m.start()) - 1
        if k >= 0 and m.start() < urls[k][1]:
            continue
        path, lines_spec, symbol, pin = m.group("path", "lines", "symbol", "pin")
        if symbol and _extension(path) not in SYMBOL_EXTENSIONS:
            if not lines_spec:
                continue  # a Markdown link to a heading
            symbol = None
        if not looks_like_path(path):
            continue
        end, form = m.end(), "canonical"
        written_end = end
        quoted: tuple[str, ...] = ()
        if not lines_spec and not symbol:
            wild = _wild_form(text, m.end(), path)
            if wild is None:
                continue
            form, lines_spec, symbol, quoted, end, written_end = wild
        lines, problem = parse_lines(lines_spec) if lines_spec else ((), None)
        anchors, anchors_end = _anchors_after(text, _after_span(text, spans, span_starts, m.start(), end), ticks)
        found.append(
            RawCitation(
                text=text[m.start() : end] if form == "symbol" else m.group(0),
                path=path,
                lines=lines,
                problem=problem,
                symbol=symbol,
                pin=pin,
                anchors=anchors,
                start=m.start(),
                end=end,
                form=form,
                expected_code=quoted,
                marked_quoted=_marked_quoted(text, spans, span_starts, m.start()),
                anchors_end=anchors_end,
                written=text[m.start() : written_end],
            )
        )
    found.sort(key=lambda c: c.start)
    return tuple(_with_continuations(text, found, spans, span_starts, ticks))


# `:626` or `:40-41` standing alone (a code span of its own, or between spaces and
# punctuation), after a citation: more lines of the same file.
_CONTINUATION_RE = re.compile(rf"(?<![\w./:@\\\-+)\]>])(?P<lines>:{_PART}(?:,{_PART})*)(?![\w/\\:]|\.\d|[-–,]\d)")
MAX_CONTINUATION_GAP = 120  # characters between a citation and a continuation of it


def _with_continuations(
    text: str, found: list[RawCitation], spans: list[tuple[int, int, int, int]], span_starts: list[int], ticks: _Ticks
) -> list[RawCitation]:
    """`found`, with each continuation that follows one of them turned into a citation of its file."""
    if not found or ":" not in text:
        return found
    out = list(found)
    # Each citation's extent (its anchors included), in order: a bisect finds the one before a match.
    extents = [(c.start, max(c.end, c.start + len(c.written), c.anchors_end)) for c in found]
    starts = [a for a, _ in extents]
    for m in _CONTINUATION_RE.finditer(text):
        k = bisect_right(starts, m.start()) - 1
        if k < 0 or m.start() < extents[k][1]:
            continue  # before every citation, or inside one (its anchors)
        prev = found[k]
        gap = text[extents[k][1] : m.start()]
        if len(gap) > MAX_CONTINUATION_GAP or "\n\n" in gap or _SENTENCE_BREAK_RE.search(gap):
            continue
        k = bisect_right(span_starts, m.start()) - 1
        in_span = k >= 0 and spans[k][1] <= m.start() and m.end() <= spans[k][2]
        if in_span and text[spans[k][1] : spans[k][2]].strip() != m.group(0):
            continue  # inside other code: `a ? b :1`
        lines, problem = parse_lines(m.group("lines")[1:])
        anchors, anchors_end = _anchors_after(text, _after_span(text, spans, span_starts, m.start(), m.end()), ticks)
        out.append(
            RawCitation(
                m.group(0),
                prev.path,
                lines,
                problem,
                None,
                prev.pin,
                anchors,
                m.start(),
                m.end(),
                "continuation",
                anchors_end=anchors_end,
                written=m.group(0),
            )
        )
    return sorted(out, key=lambda c: c.start)


# Where one sentence ends and another starts: a continuation does not reach across it.
_SENTENCE_BREAK_RE = re.compile(r"[。！？]|[.!?;；](?:\s|$)")


def _marked_quoted(text: str, spans: list[tuple[int, int, int, int]], span_starts: list[int], start: int) -> bool:
    """Whether the code span holding the citation reads `quoted: CITATION`."""
    k = bisect_right(span_starts, start) - 1
    if k < 0:
        return False
    _, c_start, c_end, _ = spans[k]
    return c_start <= start < c_end and re.fullmatch(r"\s*quoted:\s*", text[c_start:start]) is not None


def _after_span(text: str, spans: list[tuple[int, int, int, int]], span_starts: list[int], start: int, end: int) -> int:
    """Where anchors may begin: after the citation, or after the code span that holds only it."""
    k = bisect_right(span_starts, start) - 1
    if k >= 0:
        _, c_start, c_end, s_end = spans[k]
        if c_start <= start and end <= c_end and text[end:c_end].strip() == "":
            return s_end
    return end


def _wild_form(text: str, pos: int, path: str) -> tuple[str, str | None, str | None, tuple[str, ...], int, int] | None:
    """A path with no `:LINES` or `#Symbol`: what follows it may still make it a
    citation. (form, lines, symbol, quoted text, end of the citation, end of
    what was written) or None."""
    if _extension(path) in SYMBOL_EXTENSIONS:
        m = _SYMBOL_COLON_RE.match(text, pos)
        if m:
            return "symbol", None, m.group("symbol"), (), m.end(), m.end()
    m = _LINE_PHRASE_RE.match(text, pos)
    if m:
        spec = next(g for g in m.group("p1", "p2", "p3", "p4") if g)
        return "line-phrase", _normalise_parts(spec), None, (), pos, m.end()
    m = _QUOTED_CODE_RE.match(text, pos)
    # `path` (`another/path:12` → ...) is a citation in brackets, not code quoted from the file.
    # Only a file quotes code: `plan/mode` (`{ active: boolean }`) names an event, and
    # `AGENTS.md` (`packages/`, `docs/`) lists several spans, not one quotation.
    if (
        m
        and m.group("code").strip()
        and _extension(path)
        and m.group("tick") not in m.group("code")
        and not find_citations(m.group("code"))
    ):
        return "quoted-code", None, None, (m.group("code").strip(),), pos, m.end()
    return None


def path_problem(path: str) -> str | None:
    """Why a cited path can never name a file in a repository, if it can't."""
    if path.startswith("/"):
        return "absolute paths are not repository paths"
    if "\\" in path:
        return "backslashes are not path separators in a git tree"
    parts = PurePosixPath(path).parts
    if any(p in ("..", ".") for p in path.split("/")) or not parts:
        return "'.' and '..' are not allowed in a repository path"
    if any(p == ".git" for p in parts):
        return "paths inside .git are not repository content"
    return None
