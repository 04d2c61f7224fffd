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
is decided in `markdown.py`; here a chunk of text goes in and citations, with
their offsets, come out. What a path and a line list look like is paths.py's;
code spans and anchors are codespans.py's; the patterns of the other forms
are forms.py's.
"""

from __future__ import annotations

import posixpath
import re
from bisect import bisect_right
from dataclasses import dataclass, replace
from functools import cached_property, lru_cache

from dshaudit.core.model import LineRange
from dshaudit.documents.codespans import Ticks, after_span, anchors_after, marked_quoted
from dshaudit.documents.forms import (
    FRAGMENT_CITATION_RE,
    LINE_FRAGMENT_RE,
    LINE_PHRASE_RE,
    LINK_LINES_RE,
    LINK_TARGET_RE,
    PERMALINK_TRAILING,
    QUOTED_CODE_RE,
    SYMBOL_COLON_RE,
    may_hold_permalink,
    normalise_parts,
    permalink_re,
)
from dshaudit.documents.paths import (
    PART,
    ROOT_FILE_EXTENSIONS,
    SEGMENT,
    SYMBOL_EXTENSIONS,
    extension,
    looks_like_path,
    parse_lines,
)

# A plain word, with no dot or slash and nothing after it that could add lines or a
# symbol, is no path (`looks_like_path`): the match the pattern would make there is
# rejected, and it would take just that word, so skipping it inside the regular
# expression finds the same citations without a Python step for every word of prose.
PLAIN_WORD_SCREEN = r"(?!(?>[\w\-@+]+)(?![./\\\#:]))"
CITATION_RE = re.compile(
    rf"""
    (?<![\w./:@\\\-+])                       # not inside a URL, a longer path or a word
    {PLAIN_WORD_SCREEN}
    (?P<path>/?(?:{SEGMENT}/)*{SEGMENT})
    (?::(?P<lines>{PART}(?:,{PART})*))?
    (?:\#(?P<symbol>[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*))?
    (?:@(?P<pin>[A-Za-z0-9](?:[\w.\-]*[A-Za-z0-9])?))?
    (?![\w/\\]|:\d|[-–]\d|,\d)               # not `10:30:15`, `a.ts:3:7`, `C:\\`
    """,
    re.VERBOSE,
)


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
    form: str = "canonical"  # how it was written: canonical, permalink, tree-permalink, relative-link,
    # line-phrase, symbol, quoted-code, line-fragment, continuation
    expected_code: tuple[str, ...] = ()  # quoted-code: the text expected in the file
    marked_quoted: bool = False  # written as `quoted: CITATION`
    anchors_end: int = -1  # offset just after its anchors (after the citation when it has none)
    written: str = ""  # the whole citation as written, its line phrase or quoted code included
    declared: tuple[str, ...] = ()  # code a fence beside it quotes: expected in the declaration it cites


def _whole_permalink(m: re.Match[str]) -> RawCitation | None:
    """A permalink to a whole file (`permalink`, no lines) or to a folder (`tree-permalink`):
    it holds when the file or folder is there at its ref. Written in running text, the
    punctuation after it (`see URL.`) is not part of its path. A line phrase beside a
    link to a file (`[x.ts](URL) (lines 700–725)`, `, lines 51 to 60`) names its lines."""
    path = m.group("path")
    if not m.group("a"):
        path = path.rstrip(PERMALINK_TRAILING)
    end = m.start("path") + len(path) if path != m.group("path") else m.end()
    if m.group("kind") != "tree" and not m.group("a"):
        beside = LINK_LINES_RE.match(m.string, end)
        if beside:
            parts = beside.group("p5a", "p5b")
            spec = f"{parts[0]}-{parts[1]}" if parts[0] else next(g for g in beside.group("p1", "p2", "p3", "p4") if g)
            lines, problem = parse_lines(normalise_parts(spec))
            return RawCitation(
                m.string[m.start() : end],
                path,
                lines,
                problem,
                None,
                m.group("ref"),
                (),
                m.start(),
                end,
                "permalink",
                # The phrase is the citation's, but what `anchor --write` rewrites is the link alone.
                anchors_end=beside.end(),
                written=m.string[m.start() : end],
            )
    form = "tree-permalink" if m.group("kind") == "tree" else "permalink"
    written = m.string[m.start() : end]
    if not path.strip("/"):
        return None  # `<web>/blob/REF/.`: no path to hold
    return RawCitation(
        written,
        path.rstrip("/"),
        (),
        None,
        None,
        m.group("ref"),
        (),
        m.start(),
        end,
        form,
        anchors_end=end,
        written=written,
    )


# What joins two paths of one passage (`a/b/c.ts and src/d.ts`, `与`, `、`): the second may be relative to the first.
JOINED_RE = re.compile(r"[\s`]*(?:,|and|与|和|及|、|&)[\s`]*")


def _relative_links(text: str, link_base: str) -> list[RawCitation]:
    """Links relative to the document's folder in the tree that name lines:
    `[Source](../../x/y.ts#L42)`, `(../y.ts#L10-L20)`. A link to a whole file or a
    heading is a link, not a citation."""
    out = []
    for m in LINK_TARGET_RE.finditer(text):
        target = m.group("target")
        path, _, fragment = target.partition("#")
        lines_m = LINE_FRAGMENT_RE.fullmatch(fragment)
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


# The hidden characters of ASCII: its controls, less the tab and the newline.
_ASCII_HIDDEN_RE = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


# The `#L12`, `#L12-L20` (or `#L12C3-L20C9`) that ends a permalink to lines.
_LINE_FRAGMENT_RE = re.compile(r"#L\d+(?:C\d+)?(?:-L\d+(?:C\d+)?)?$")


def relinked(link: str, start: int, end: int) -> str | None:
    """The permalink to lines pointed at lines start..end instead; None for a link without lines."""
    if not _LINE_FRAGMENT_RE.search(link):
        return None
    return _LINE_FRAGMENT_RE.sub(f"#L{start}" if start == end else f"#L{start}-L{end}", link)


@lru_cache(maxsize=1 << 16)  # a character at a time: Chinese text alone has thousands
def hidden_character(ch: str) -> bool:
    return _hidden(ch)


def _hidden(ch: str) -> bool:
    import unicodedata

    return ch not in "\t\n" and (unicodedata.category(ch) in _HIDDEN_CATEGORIES or ch in _BLANK_LETTERS)


def describe_character(ch: str) -> str:
    """`U+200B ZERO WIDTH SPACE`."""
    import unicodedata

    return f"U+{ord(ch):04X} {unicodedata.name(ch, '(unnamed)')}"


def find_citations(
    text: str, web_url: str | None = None, link_base: str | None = None, *, plain: bool = False
) -> list[RawCitation]:
    """Every citation in a chunk of Markdown text, in order of appearance.
    With `web_url` (DSH's web address), permalinks into it are citations too.
    With `link_base` (the document's folder in DSH's tree; "" for its root),
    relative links to lines (`../x.ts#L10`) are citations of the file they resolve to.
    A citation with a hidden character in it (see `hidden_character`) is found
    as if the character were not there, and carries a problem naming it. `plain`:
    the caller knows the text holds no hidden character (its whole document holds none)."""
    found = list(_find_citations(text, web_url, link_base))
    if plain:
        return found
    hidden = hidden_in(text)
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


_SOURCE_ENDINGS = "|".join(sorted(SYMBOL_EXTENSIONS, key=len, reverse=True))
# What some form needs beside its path, one of which every citation holds (a continuation
# follows a citation): lines after a colon (`path:12`); a line fragment (`#L12`, a relative
# link's too); a symbol after a source file's name (`a.ts#Name`, `a.ts:Name`, a pin
# between); a line phrase (`(line 12)`, `, lines 10-20`, ` L10`, `（第 3 行）`); quoted code
# (`` `path` (`text`) ``). Loose on purpose (no path asked for): they only have to say no
# to text with none of them. Each starts with a literal, which the regular expression
# engine looks for first: together they read a text faster than one alternation would.
_FORM_NEEDS = tuple(
    re.compile(p)
    for p in (
        r":\d",
        r"#L\d",
        rf"\.(?i:{_SOURCE_ENDINGS})(?:@[\w.\-]*)?[#:][A-Za-z_$]",
        r"lines?[ \t]*\d",
        r"L[ \t]*\d",
        r"第[ \t]*\d",
        r"`[ \t]*[(（][ \t]*`",
    )
)


def may_hold_citation(text: str, web_url: str | None = None) -> bool:
    """Whether `find_citations` may find a citation anywhere in `text`, known from one scan
    for what each form needs (hidden characters, which it reads through, taken out first).
    False means none; True means the grammar must look."""
    return holds_form_needs(without_hidden(text), web_url)


def hidden_in(text: str) -> set[str]:
    """The hidden characters (`hidden_character`) `text` holds. Only the characters
    outside the runs known to be visible (`_visible_runs_re`) are asked about: a set of
    every character of a page in Chinese costs more than the rest of reading it."""
    if text.isascii() and not _ASCII_HIDDEN_RE.search(text):
        return set()
    unknown = set(_visible_runs_re().sub("", text)) - _SEEN_VISIBLE
    hidden = {ch for ch in unknown if hidden_character(ch)}
    if len(_SEEN_VISIBLE) < _SEEN_VISIBLE_LIMIT:
        _SEEN_VISIBLE.update(unknown - hidden)
    return hidden


# The characters found visible so far: a document's characters less these are the few to ask
# about (a Chinese document has thousands, most of them in the documents before it). Bounded,
# for a document made of every character there is.
_SEEN_VISIBLE: set[str] = set()
_SEEN_VISIBLE_LIMIT = 1 << 16


# Where documents' characters mostly come from: ASCII, Latin letters and signs, punctuation,
# arrows and symbols, CJK punctuation and kana, CJK ideographs, full-width forms. Each
# character of these blocks is asked once a process (`_visible_runs_re`), in this Python's own
# Unicode data, so a hidden one among them (a combining mark, a separator) is still asked about.
_MOSTLY_VISIBLE = ((0x20, 0x24F), (0x2000, 0x2BFF), (0x3000, 0x30FF), (0x4E00, 0x9FFF), (0xFF00, 0xFFEF))


@lru_cache(maxsize=1)
def _visible_runs_re() -> re.Pattern[str]:
    """Runs of tabs, line breaks and the visible characters of `_MOSTLY_VISIBLE`: what is
    left of a text without them is all a hidden character can be among."""
    runs: list[tuple[int, int]] = []
    for low, high in _MOSTLY_VISIBLE:
        start = None
        for code in range(low, high + 2):
            visible = code <= high and not _hidden(chr(code))
            if visible and start is None:
                start = code
            elif not visible and start is not None:
                runs.append((start, code - 1))
                start = None
    members = "".join(f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in runs)
    return re.compile(f"[\\t\\n{members}]+")


def without_hidden(text: str) -> str:
    """`text` with its hidden characters taken out."""
    hidden = hidden_in(text)
    return text.translate(dict.fromkeys(map(ord, hidden))) if hidden else text


def holds_form_needs(text: str, web_url: str | None) -> bool:
    """Whether `text` holds, as it is, what some citation form needs (`_FORM_NEEDS`, a permalink's start)."""
    return any(need.search(text) for need in _FORM_NEEDS) or bool(web_url and may_hold_permalink(text, web_url))


# What every citation holds somewhere: a path with a slash inside it, or a known file
# ending (`looks_like_path`); a permalink's `://`; a link's `](`; a line fragment's `#L`.
# A chunk with none of them (most of a document's prose) holds no citation.
_MAYBE_CITATION_RE = re.compile(
    rf"[\w.\-@+]/|\.(?:{'|'.join(sorted(ROOT_FILE_EXTENSIONS, key=len, reverse=True))})|://|\]\(|#L",
    re.IGNORECASE,
)


class _CodeSpans:
    """The code spans of a chunk, found when a citation first asks what stands around it:
    most chunks the grammar reads hold no citation, and need none."""

    def __init__(self, text: str):
        self._text = text

    @cached_property
    def ticks(self) -> Ticks:
        return Ticks(self._text)

    @cached_property
    def spans(self) -> list[tuple[int, int, int, int]]:
        return self.ticks.spans()

    @cached_property
    def starts(self) -> list[int]:
        """The spans' content starts, sorted: bisect finds the enclosing span."""
        return [s[1] for s in self.spans]


# Remembered by chunk: a document edited in the language server is parsed again
# on each keystroke, and all of its chunks but one are as they were.
@lru_cache(maxsize=4096)
def _find_citations(text: str, web_url: str | None, link_base: str | None) -> tuple[RawCitation, ...]:
    if not _MAYBE_CITATION_RE.search(text) or not holds_form_needs(text, web_url):
        return ()
    code = _CodeSpans(text)
    found: list[RawCitation] = []
    urls: list[tuple[int, int]] = []
    if link_base is not None:
        for raw in _relative_links(text, link_base):
            urls.append((raw.start, raw.end))
            anchors, anchors_end = anchors_after(
                text, after_span(text, code.spans, code.starts, raw.start, raw.end), code.ticks
            )
            found.append(replace(raw, anchors=anchors, anchors_end=anchors_end))
    if web_url and may_hold_permalink(text, web_url):
        for m in permalink_re(web_url).finditer(text):
            urls.append((m.start(), m.end()))
            if not m.group("a") or m.group("kind") == "tree":
                whole = _whole_permalink(m)
                if whole is not None:
                    found.append(whole)
                continue
            lines_spec = m.group("a") + (f"-{m.group('b')}" if m.group("b") else "")
            lines, problem = parse_lines(lines_spec)
            path = m.group("path")
            anchors, anchors_end = anchors_after(
                text, after_span(text, code.spans, code.starts, m.start(), m.end()), code.ticks
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
    for m in FRAGMENT_CITATION_RE.finditer(text) if "#L" in text else ():
        k = bisect_right(link_starts, m.start()) - 1
        if (k >= 0 and m.start() < links[k][1]) or not looks_like_path(m.group("path")):
            continue
        urls.append((m.start(), m.end()))
        lines, problem = parse_lines(m.group("a") + (f"-{m.group('b')}" if m.group("b") else ""))
        anchors, anchors_end = anchors_after(
            text, after_span(text, code.spans, code.starts, m.start(), m.end()), code.ticks
        )
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
                marked_quoted=marked_quoted(text, code.spans, code.starts, m.start()),
            )
        )
    urls.sort()
    url_starts = [a for a, _ in urls]
    for m in CITATION_RE.finditer(text):
        k = bisect_right(url_starts, m.start()) - 1
        if k >= 0 and m.start() < urls[k][1]:
            continue
        path, lines_spec, symbol, pin = m.group("path", "lines", "symbol", "pin")
        if symbol and extension(path) not in SYMBOL_EXTENSIONS:
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
        anchors, anchors_end = anchors_after(
            text, after_span(text, code.spans, code.starts, m.start(), end), code.ticks
        )
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
                marked_quoted=marked_quoted(text, code.spans, code.starts, m.start()),
                anchors_end=anchors_end,
                written=text[m.start() : written_end],
            )
        )
    found.sort(key=lambda c: c.start)
    return tuple(_with_continuations(text, found, code))


# `:626` or `:40-41` standing alone (a code span of its own, or between spaces and
# punctuation), after a citation: more lines of the same file.
_CONTINUATION_RE = re.compile(rf"(?<![\w./:@\\\-+)\]>])(?P<lines>:{PART}(?:,{PART})*)(?![\w/\\:]|\.\d|[-–,]\d)")
MAX_CONTINUATION_GAP = 120  # characters between a citation and a continuation of it


def _with_continuations(text: str, found: list[RawCitation], code: _CodeSpans) -> list[RawCitation]:
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
        spans = code.spans
        k = bisect_right(code.starts, m.start()) - 1
        in_span = k >= 0 and spans[k][1] <= m.start() and m.end() <= spans[k][2]
        if in_span and text[spans[k][1] : spans[k][2]].strip() != m.group(0):
            continue  # inside other code: `a ? b :1`
        lines, problem = parse_lines(m.group("lines")[1:])
        anchors, anchors_end = anchors_after(
            text, after_span(text, code.spans, code.starts, m.start(), m.end()), code.ticks
        )
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


def _wild_form(text: str, pos: int, path: str) -> tuple[str, str | None, str | None, tuple[str, ...], int, int] | None:
    """A path with no `:LINES` or `#Symbol`: what follows it may still make it a
    citation. (form, lines, symbol, quoted text, end of the citation, end of
    what was written) or None."""
    if extension(path) in SYMBOL_EXTENSIONS:
        m = SYMBOL_COLON_RE.match(text, pos)
        if m:
            return "symbol", None, m.group("symbol"), (), m.end(), m.end()
    m = LINE_PHRASE_RE.match(text, pos)
    if m:
        spec = next(g for g in m.group("p1", "p2", "p3", "p4") if g)
        return "line-phrase", normalise_parts(spec), None, (), pos, m.end()
    m = QUOTED_CODE_RE.match(text, pos)
    # `path` (`another/path:12` → ...) is a citation in brackets, not code quoted from the file.
    # Only a file quotes code: `plan/mode` (`{ active: boolean }`) names an event, and
    # `AGENTS.md` (`packages/`, `docs/`) lists several spans, not one quotation.
    if (
        m
        and m.group("code").strip()
        and extension(path)
        and m.group("tick") not in m.group("code")
        and not find_citations(m.group("code"))
    ):
        return "quoted-code", None, None, (m.group("code").strip(),), pos, m.end()
    return None
