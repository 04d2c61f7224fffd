"""Inferred anchors: what a citation without an anchor says its lines hold.

People who do not write for dshaudit cite `path:line` and name the thing in
the sentence around it ("filled through AgentRegistry.setFactory
(packages/core/agent/src/index.ts:176-181)"), or head a quoted block with the
citation (`// vendor/cordis/src/context.ts:77-81` and the code below it). The
code-like names of that sentence, list item or table cell (names.py), and
the lines of that block, are the citation's candidate anchors. A name right
before the citation (`X (path:12)`, `X at path:12`) is its subject, and then
it is the only candidate.

At check time a citation is `suspect` when none of its candidates is on the
cited lines, nor names the declaration that encloses them, while one of them
stands elsewhere in the file: the lines moved, or never held what the
sentence says. Precision comes first: no candidates, or candidates found
nowhere in the file, give no verdict at all.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from dshaudit.core.model import LineRange
from dshaudit.documents.names import CODE, PACKAGE, STRING, URL_RE, Name, code_names

_PATHISH_RE = re.compile(r"\]\([^)\s]*\)|[\w.@~-]*/[\w./@~-]*")

# Between a name and the citation it is the subject of: brackets, backticks, a word like "at".
_SUBJECT_GAP_RE = re.compile(r"^[\s`'\"]*(?:[(（\[]|\b(?:at|in|see|from)\b|见|在|于)?[\s`]*$", re.IGNORECASE)
# Sentence ends: CJK full stops anywhere, a Latin stop followed by space and a capital or CJK.
_SENTENCE_END_RE = re.compile(r"[。！？]|[.!?](?=\s+[A-Z\u4e00-\u9fff(（\"“])|;\s|；")
_BRACKETS_ONLY_RE = re.compile(r"\s*[(（\[][\s`\[]*")
_LIST_ITEM_RE = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
# A prose line that heads a quoted block: `// path:12-18` (the code follows on the next lines).
_HEADING_COMMENT_RE = re.compile(r"^\s*(?://|<!--|--)\s*")
MAX_BLOCK_LINES = 12
# A name on more lines of the file than this is a common word there, not evidence of where the code is.
MAX_OTHER_PLACES = 4


@dataclass(frozen=True)
class Inferred:
    """The candidate anchors of one citation."""

    names: tuple[str, ...] = ()
    block: tuple[str, ...] = ()  # lines of a block the citation heads
    words: tuple[str, ...] = ()  # the content words of its own sentence, clause or table row (stemmed)


class _Scopes:
    """Where the sentences, list items and table cells of one chunk begin and
    end, found once, so each citation's scope is a pair of binary searches."""

    def __init__(self, chunk: str):
        self.chunk = chunk
        self.items: list[int] = []  # offsets of list item markers
        self.line_starts: list[int] = []
        pos = 0
        for ln in chunk.split("\n"):
            self.line_starts.append(pos)
            if _LIST_ITEM_RE.match(ln):
                self.items.append(pos)
            pos += len(ln) + 1
        self.stops = [(m.start(), m.end()) for m in _SENTENCE_END_RE.finditer(chunk)]
        self.stop_starts = [a for a, _ in self.stops]

    def scope(self, start: int, end: int) -> tuple[int, int]:
        """The sentence, list item or table cell around [start, end)."""
        chunk = self.chunk
        line_start = self.line_starts[bisect_right(self.line_starts, start) - 1]
        line_end = chunk.find("\n", end)
        line_end = len(chunk) if line_end == -1 else line_end
        if chunk[line_start:line_end].lstrip().startswith("|"):  # a table cell: between the pipes
            a = chunk.rfind("|", line_start, start)
            b = chunk.find("|", end, line_end)
            return (a + 1 if a != -1 else line_start), (b if b != -1 else line_end)
        k = bisect_right(self.items, start)
        lo = self.items[k - 1] if k else 0
        nxt = bisect_left(self.items, end)
        hi = self.items[nxt] - 1 if nxt < len(self.items) else len(chunk)
        # The sentence inside the item: the last stop before the citation, the first after it.
        j = bisect_right(self.stop_starts, start) - 1
        while j >= 0 and self.stops[j][1] > start:
            j -= 1
        if j >= 0 and chunk[self.stops[j][0]] in ".。" and _BRACKETS_ONLY_RE.fullmatch(chunk, self.stops[j][1], start):
            j -= 1  # `It was created. (path:12)`: a citation set after the stop is the sentence's before it
        a = max(lo, self.stops[j][1]) if j >= 0 else lo
        n = bisect_left(self.stop_starts, end)
        b = min(hi, self.stops[n][1]) if n < len(self.stops) else hi
        return a, b


# A sentence, list item or table row citing more than this many places is a
# list of citations, not prose about each: no anchor is inferred for them (they
# are checked by path and lines, as any unanchored citation). It also bounds
# the work per citation, so a chunk of thousands of citations stays linear.
MAX_CITATIONS_IN_SCOPE = 16


class _Masks:
    """Spans that are not prose (citations, anchors, claims), merged into
    disjoint intervals, so the ones inside any stretch are found by bisection."""

    def __init__(self, spans: Sequence[tuple[int, int]]):
        self.spans: list[tuple[int, int]] = []
        for a, b in sorted(spans):
            if self.spans and a <= self.spans[-1][1]:
                self.spans[-1] = (self.spans[-1][0], max(self.spans[-1][1], b))
            else:
                self.spans.append((a, b))
        self.starts = [a for a, _ in self.spans]

    def within(self, a: int, b: int) -> list[tuple[int, int]]:
        """The spans meeting [a, b), in the chunk's offsets."""
        lo = max(0, bisect_right(self.starts, a) - 1)
        hi = bisect_left(self.starts, b)
        return [(s, e) for s, e in self.spans[lo:hi] if s < b and e > a]

    def relative(self, a: int, b: int) -> list[tuple[int, int]]:
        return [(s - a, e - a) for s, e in self.within(a, b)]


def infer(
    chunk: str,
    spans: list[tuple[int, int]],
    skip: list[tuple[int, int]],
    citations: list[tuple[int, int]] | None = None,
    heading: str = "",
) -> list[Inferred]:
    """Candidate anchors for each citation at `spans` (start, end) in `chunk`.
    `skip` lists every span that is not prose (citations, their anchors, claims).
    `citations` are all the citations of the chunk (with their anchors): in a
    sentence that holds several, a citation's own clause is the text between
    its neighbours, and only a sentence of at most two falls back to the whole.
    A citation whose own text names nothing (a bare list item) takes the names
    of the item or line that leads into it, else of its section's `heading`."""
    return list(_infer(chunk, tuple(spans), tuple(sorted(skip)), tuple(citations or ()), heading))


# Remembered by chunk, as grammar's citations are: an edited document's other chunks are as they were.
@lru_cache(maxsize=4096)
def _infer(
    chunk: str,
    spans: tuple[tuple[int, int], ...],
    skip: tuple[tuple[int, int], ...],
    citations: tuple[tuple[int, int], ...],
    heading: str,
) -> tuple[Inferred, ...]:
    scopes = _Scopes(chunk) if spans else None
    masks = _Masks(skip)
    cites = sorted(citations or [])
    cite_starts = [s for s, _ in cites]
    lead_ins = _LeadIns(chunk, masks)

    def crowded(a: int, b: int) -> bool:
        return bisect_left(cite_starts, b) - bisect_left(cite_starts, a) > MAX_CITATIONS_IN_SCOPE + 1

    out: list[Inferred] = []
    for start, end in spans:
        assert scopes is not None
        a, b = scopes.scope(start, end)
        row = _row(chunk, start, end)
        if crowded(a, b) or (row and crowded(*row)):
            out.append(Inferred())
            continue
        others = [
            (s, e) for s, e in cites[bisect_left(cite_starts, a) : bisect_left(cite_starts, b)] if not (s <= start < e)
        ]
        before = [e for s, e in others if e <= start]
        after = [s for s, e in others if s >= end]
        clause = (max(before, default=a), min(after, default=b))
        # Words between this citation and the next are the next one's clause (`A (c1), documented
        # as B (c2)`), unless code is attached right after it: this citation's clause ends with it.
        past = end + 1 if chunk[end : end + 1] == "`" else end  # the citation's own closing backtick
        cut = (
            bool(after)
            and not _ATTACHED_RE.match(chunk, past, min(after))
            and len(words_of(_masked(chunk, (end, min(after)), masks))) >= CLAUSE_WORDS
        )
        if cut:
            clause = (clause[0], end)
        # A continuation (`:183` after `x.ts:372`) cites other lines of the file: the names
        # of the sentence are its parent's, so it keeps to its own clause.
        continuation = chunk[start:end].lstrip("`").startswith(":")
        if others and (
            _has_names(chunk, clause, masks)
            or len(others) > 1
            or continuation
            or cut
            or (before and len(words_of(_masked(chunk, (max(before), start), masks))) >= CLAUSE_WORDS)
        ):
            a, b = clause
        names = [Name(n.text, n.kind, n.start + a, n.end + a) for n in code_names(chunk[a:b], masks.relative(a, b))]
        names = [n for n in names if _distinctive(n) and not _NEGATED_RE.search(chunk, max(0, n.start - 24), n.start)]
        subject = [n for n in names if n.end <= start and _SUBJECT_GAP_RE.match(chunk[n.end : start])]
        chosen = [_anchor_text(n) for n in subject[-1:] or names]
        if not chosen:
            chosen = lead_ins.names(start)
        if row:
            chosen += _row_labels(chunk, row, start)
        words = _scope_words(chunk, row or _own_clause(chunk, scopes.scope(start, end), start, end, others), masks)
        out.append(Inferred(tuple(dict.fromkeys(chosen)), _block(chunk, start, end), words))
    return tuple(out)


CLAUSE_WORDS = 2  # content words between two citations that make a clause of their own


def _masked(chunk: str, span: tuple[int, int], masks: _Masks) -> str:
    """The text of `span` with the masked parts (citations, anchors, claims) blanked."""
    a, b = span
    text = chunk[a:b]
    for lo, hi in masks.relative(a, b):
        lo, hi = max(lo, 0), min(hi, b - a)
        text = text[:lo] + " " * (hi - lo) + text[hi:]
    return text


# A name the text says is not there (`no \`origin\``, `without \`cwd\``, `没有 \`x\``) is not expected on the lines.
_NEGATED_RE = re.compile(
    r"(?:\b(?:no|not|without|nor|never|neither|lacks?)\s+(?:an?\s+|the\s+|any\s+)?|(?:没有|无|不含|并无)\s*)[`'\"“]?$",
    re.IGNORECASE,
)


# Code right after a citation (`x.ts:12` `name`, `x.ts:12` (`name`)) is said of it, whatever follows.
_ATTACHED_RE = re.compile(r"[\s,:(（→>-]*`")


def _own_clause(
    chunk: str, scope: tuple[int, int], start: int, end: int, others: list[tuple[int, int]]
) -> tuple[int, int]:
    """The words that speak of one citation among several in a sentence: those
    written before it, back to the previous citation that has words between
    (`A does x (c1) and B does y (c2)`: `B does y` is c2's); citations that
    follow one another (`(c1; c2)`) share the words before the first. A
    citation that opens its sentence takes the words after it instead."""
    a, b = scope
    lo = start
    for s, e in sorted((o for o in others if o[1] <= start), reverse=True):
        if words_of(chunk[e:lo]):
            return e, start
        lo = s
    if words_of(chunk[a:lo]):
        return a, start
    nxt = min((s for s, e in others if s >= end), default=b)
    return end, nxt


def _row(chunk: str, start: int, end: int) -> tuple[int, int] | None:
    """The whole table row around a citation in a table cell (its other cells name what it holds)."""
    line_start = chunk.rfind("\n", 0, start) + 1
    line_end = chunk.find("\n", end)
    line_end = len(chunk) if line_end == -1 else line_end
    return (line_start, line_end) if chunk[line_start:line_end].lstrip().startswith("|") else None


# A cell that is one capitalised marker word (`TODO`, `FIXME`, `NOTE`) labels what its row's citation holds.
_LABEL_CELL_RE = re.compile(r"`?([A-Z][A-Z0-9_]{2,})`?")


def _row_labels(chunk: str, row: tuple[int, int], start: int) -> list[str]:
    """The label cells of a table row, other than the citation's own cell."""
    a, b = row
    cells, at = [], a
    for cell in chunk[a:b].split("|"):
        if not at <= start < at + len(cell):
            cells.append(cell.strip())
        at += len(cell) + 1
    return [m.group(1) for c in cells if (m := _LABEL_CELL_RE.fullmatch(c))]


def _scope_words(chunk: str, span: tuple[int, int], masks: _Masks) -> tuple[str, ...]:
    text = _masked(chunk, span, masks)  # other citations and anchors, claims: not prose about these lines
    # Addresses and paths name files, not what the cited lines say: `[x](../packages/host/a.ts)`.
    return tuple(sorted(set(words_of(_PATHISH_RE.sub(" ", URL_RE.sub(" ", text)), stem=False))))


# Plain and kebab-case words (package and folder names), numbers and versions, file names, paths.
_PLAIN_WORD_RE = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*|[A-Z][a-z]+|\d[\w.+-]*|[\w.-]+\.[a-z]{1,5}|\S*/\S*")
_KEYWORDS = frozenset(
    "if else for while return true false null undefined void new this const let var function class "
    "import export default async await type interface enum extends".split()
)


# A slashed name that is not a path: an event or a channel (`internal/plugin`, `loader/entry-init`),
# lowercase words with no file ending, under no folder a path of the repository starts with.
_SLASHED_NAME_RE = re.compile(r"[a-z][a-z0-9-]*(?:/[a-z][a-z0-9-]*)+")
_PATH_ROOTS = frozenset(
    "packages apps vendor docs scripts src lib test tests node_modules dist build bin config examples tools".split()
)


def _distinctive(name: Name) -> bool:
    """Whether a name could tell one place from another: not a plain word, a
    keyword, a number or version, a file name or a path (those are mentions of
    files, which the citation itself already names)."""
    if name.kind == CODE and _SLASHED_NAME_RE.fullmatch(name.text):
        return name.text.split("/", 1)[0] not in _PATH_ROOTS
    if name.kind == CODE and (_PLAIN_WORD_RE.fullmatch(name.text) or name.text in _KEYWORDS):
        return False
    return not (name.kind == STRING and name.text in _KEYWORDS)


class _LeadIns:
    """The names of the line that leads into a list item: the nearest line
    above that is less indented (a parent item), or a sentence ending in `:`
    that a list continues. Remembered per item, so the walk up a long list is
    made once, not once per item."""

    def __init__(self, chunk: str, masks: _Masks):
        self.chunk = chunk
        self.masks = masks
        self._found: dict[int, tuple[int, list[str]]] = {}  # item line start -> (indent, names)

    def names(self, start: int) -> list[str]:
        chunk = self.chunk
        line_start = chunk.rfind("\n", 0, start) + 1
        line_end = chunk.find("\n", line_start)
        line = chunk[line_start : line_end if line_end != -1 else len(chunk)]
        if not _LIST_ITEM_RE.match(line):
            return []
        indent = len(line) - len(line.lstrip())
        names: list[str] = []
        pos = line_start - 1
        while pos > 0:
            prev_start = chunk.rfind("\n", 0, pos) + 1
            prev = chunk[prev_start:pos]
            known = self._found.get(prev_start)
            if known is not None and known[0] == indent:
                names = known[1]  # a sibling item: it leads in from the same line
                break
            if (
                prev.strip()
                and len(prev) - len(prev.lstrip()) < indent
                or (prev.strip() and not _LIST_ITEM_RE.match(prev) and prev.rstrip().endswith(":"))
            ):
                names = [
                    _anchor_text(n) for n in code_names(prev, self.masks.relative(prev_start, pos)) if _distinctive(n)
                ]
                break
            pos = prev_start - 1
        self._found[line_start] = (indent, names)
        return names


def _has_names(chunk: str, span: tuple[int, int], masks: _Masks) -> bool:
    a, b = span
    return bool(code_names(chunk[a:b], masks.relative(a, b)))


def _anchor_text(name: Name) -> str:
    """What to look for in the file: a package's name without its version."""
    if name.kind == PACKAGE:
        at = name.text.find("@", 1)
        return name.text[:at] if at != -1 else name.text
    return name.text


def _block(chunk: str, start: int, end: int) -> tuple[str, ...]:
    """The lines below a `// citation` line that heads them, up to the paragraph's end."""
    line_start = chunk.rfind("\n", 0, start) + 1
    line_end = chunk.find("\n", end)
    if line_end == -1:
        return ()
    head = _HEADING_COMMENT_RE.match(chunk, line_start)
    if not head or head.end() != start or chunk[end:line_end].strip(" `-–>") != "":
        return ()
    body = [ln.strip() for ln in chunk[line_end + 1 :].split("\n", MAX_BLOCK_LINES)[:MAX_BLOCK_LINES]]
    return tuple(ln for ln in body if ln)


# -- words ---------------------------------------------------------------------------------------
# A sentence about code shares words with the lines it is about: "the root manifest is private"
# and `"private": true`; "the line that follows empties the root fiber's disposables" and
# `this.fiber.disposables = []`. Identifiers are split at their capitals and underscores, and
# both sides are stemmed alike, so `MessageSourceMap` shares `source` and `map` with the prose.

_RUN_RE = re.compile(r"[A-Za-z][A-Za-z0-9]*")
_PART_RE = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")
_STOP = frozenset(
    """
    the and for are but not you all any can had her was one our out has him his how its may new now old
    see two way who did get let say she too use that with have this will your from they know want been
    good much some time very when come here just like long make many more only over such take than them
    well were what into also each which their there these those then other about after again being below
    between both does doing down during further once same should through under until while where whom why
    would could itself ever every because before above against within without upon whose nor off own yet
    line lines file files code cited cite citation text says said shows show here there thing things
    """.split()
)


def _stem(word: str) -> str:
    """A crude stem, the same for prose and code: `services`, `service` and `Service` meet."""
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ing", "ed")) and len(word) > 5:
        word = word[:-3] if word.endswith("ing") else word[:-2]
    elif word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        word = word[:-1]
    return word[:-1] if word.endswith("e") and len(word) > 3 else word


def words_of(text: str, stem: bool = True) -> list[str]:
    """The content words of a line of prose or code, in order, lowercase (and stemmed)."""
    out = []
    for run in _RUN_RE.findall(text):
        for part in _PART_RE.findall(run):
            low = part.lower()
            if len(low) >= 3 and low not in _STOP:
                out.append(_stem(low) if stem else low)
    return out


class WordIndex:
    """Which lines of a file hold each word: built once per blob."""

    def __init__(self, lines: list[str]):
        self.size = len(lines)
        self.lines_of: dict[str, list[int]] = {}
        for i, ln in enumerate(lines, 1):
            for w in set(words_of(ln)):
                self.lines_of.setdefault(w, []).append(i)

    def weight(self, word: str) -> float:
        """How much finding the word on some lines says about them: rare words say more."""
        hits = len(self.lines_of.get(word, ()))
        return math.log((self.size + 1) / hits) if hits else 0.0

    def present(self, word: str, lo: int, hi: int) -> bool:
        hits = self.lines_of.get(word, ())
        k = bisect_left(hits, lo)
        return k < len(hits) and hits[k] <= hi


# -- at check time -------------------------------------------------------------------------------

_ALNUM_RE = re.compile(r"[^0-9A-Za-z\u4e00-\u9fff]+")
_COMMENT_LINE_RE = re.compile(r"^\s*(?://|/\*|\*|#|<!--)")


def alnum(text: str) -> str:
    """Letters and digits only: quoted code survives lost backticks, quotes and spacing."""
    return _ALNUM_RE.sub("", text)


@dataclass(frozen=True)
class FileView:
    """What the suspect check needs of a cited file."""

    lines: list[str]
    declarations: dict[str, tuple[LineRange, ...]]  # dotted name -> spans, doc comments included
    words: WordIndex | None = None
    prose: bool = False  # Markdown or plain text

    def text(self, r: LineRange) -> str:
        return "\n".join(self.lines[r.start - 1 : r.end])

    def find(self, needle: str) -> list[int]:
        """1-based lines holding the needle, whitespace ignored (one line at a time; enough for names)."""
        want = squash(needle)
        return [i + 1 for i, ln in enumerate(self.lines) if want and want in squash(ln)]


def squash(text: str) -> str:
    """Text with all whitespace removed: anchors compare this way."""
    return "".join(text.split())


def suspect(inferred: Inferred, region: tuple[LineRange, ...], view: FileView) -> str | None:
    """Why the cited region does not hold what its candidates say, or None.
    None too when nothing can be said (no candidates, or none found anywhere)."""
    if inferred.block:
        return _suspect_block(inferred.block, region, view)
    elsewhere: list[tuple[str, str]] = []
    for name in inferred.names:
        where = _where(name, region, view)
        if where is None:
            return None  # on the cited lines, or the declaration that holds them
        if where:
            elsewhere.append((name, where))
    if elsewhere:
        said = "; ".join(f"`{name}` is {where}" for name, where in elsewhere[:3])
        return f"the lines cited hold none of the names the text gives them: {said}"
    return (
        _suspect_shape(region, view)
        or _suspect_midsentence(inferred.words, region, view)
        or (_suspect_words(inferred.words, region, view) if view.words else None)
    )


def _suspect_midsentence(words: tuple[str, ...], region: tuple[LineRange, ...], view: FileView) -> str | None:
    """A citation that starts inside a sentence of a comment (or paragraph) and
    shares no word with its own sentence: not lines someone chose by reading."""
    r = region[0]
    if (
        r.start < 2
        or view.words is None
        or not _continues_sentence(view.lines[r.start - 2], view.lines[r.start - 1], view.prose)
    ):
        return None
    if any(view.words.present(_stem(w), p.start, p.end) for w in words for p in region):
        return None
    first, last = _said(view.lines[r.start - 1], view.prose), _said(view.lines[region[-1].end - 1], view.prose)
    if _CLAUSE_BREAK_RE.search(first) and last.endswith((".", "!", "?")):
        return None  # a sentence that starts on the first line and ends on the last: cited whole
    return (
        f"line {r.start}, where the citation starts, goes on with a sentence that line {r.start - 1} begins, "
        "and the cited lines share no word with the text: they have probably moved"
    )


# A line of nothing but closing brackets and separators: the end of something, never its start.
_CLOSING_ONLY_RE = re.compile(r"^\s*[})\];,]*\s*$")
# A line that only opens a comment (`/**`), and the keywords that, with brackets alone, make a line
# with nothing of its own (`try {`, `} else {`, `return (`): nobody cites one of those by itself.
_COMMENT_OPENERS = frozenset({"/**", "/*", "<!--"})
_COMMENT_CLOSERS = frozenset({"*/", "-->"})
_OPENER_WORDS_RE = re.compile(r"\b(?:try|else|finally|return|do)\b")
# String literals and line comments: their brackets are not the code's.
_NOT_BRACKETS_RE = re.compile(r"'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\"|`(?:[^`\\\n]|\\.)*`|//.*$")


def _suspect_shape(region: tuple[LineRange, ...], view: FileView) -> str | None:
    """Whether the cited lines have the shape of numbers not read from this
    version of the file: lines someone picked by reading begin at code and
    end at code, and do not leave a bracket they did not open. (A first line
    that closes what came before, `} else {`, `} from 'x'`, is a start.)"""
    for r in region:
        first, last = view.lines[r.start - 1], view.lines[r.end - 1]
        if _CLOSING_ONLY_RE.match(first) or first.strip() in _COMMENT_CLOSERS:
            what = "blank" if not first.strip() else f"only `{first.strip()}`"
            return f"line {r.start}, where the citation starts, is {what}: its lines have probably moved"
        if not last.strip():
            return f"line {r.end}, where the citation ends, is blank: its lines have probably moved"
        if last.strip() in _COMMENT_OPENERS:
            return (
                f"line {r.end}, where the citation ends, only opens a comment: what the comment says, "
                "and the code it documents, are below the cited lines, so they have probably moved"
            )
        if r.start == r.end and not alnum(_OPENER_WORDS_RE.sub("", first)):
            return (
                f"line {r.start} is only `{first.strip()}`: a line with nothing of its own to cite, "
                "so the citation has probably moved"
            )
        opened = _comment_opened_inside(r, view.lines)
        if opened:
            return (
                f"the citation ends inside the comment that line {opened} opens, which goes on below it: "
                "a comment is cited whole or with the code it documents, so its lines have probably moved"
            )
        if view.prose:
            continue  # a Markdown paragraph's brackets are its prose's, not a structure's
        depth = 0
        for n in range(r.start, r.end + 1):
            if _is_comment(view.lines[n - 1]):
                continue  # "(a chunk, a\n * turn boundary)" in a comment opens and closes nothing
            code = _NOT_BRACKETS_RE.sub("", view.lines[n - 1])
            if n == r.start:
                code = code.lstrip().lstrip(")]}")
            for ch in code:
                depth += ch in "([{"
                depth -= ch in ")]}"
                if depth < 0:
                    return (
                        f"line {n} closes a bracket opened before the cited lines: they start inside "
                        "a construct and leave it, so they have probably moved"
                    )
    return None


# What a comment line says, without its marker; the end of a sentence or clause.
_COMMENT_TEXT_RE = re.compile(r"^\s*(?://+|/\*+|\*+(?!/)|#+)\s?")
_SENTENCE_END_CHARS = tuple(".:!?;)]}>`'\"")
_PROSE_BLOCK_RE = re.compile(r"^\s*(?:[-*+>|#]|\d+[.)]|```|~~~)")


def _continues_sentence(before: str, line: str, prose: bool) -> bool:
    """Whether `line` goes on with a sentence `before` leaves open: both comment
    lines (or, in prose, plain paragraph lines), `before` not ending a sentence
    or clause, and `line` going on in lower case."""
    if prose and (_PROSE_BLOCK_RE.match(line) or _PROSE_BLOCK_RE.match(before)):
        return False
    if not prose and (not (_COMMENT_LINE_RE.match(before) and _COMMENT_LINE_RE.match(line)) or "*/" in before):
        return False
    prev, text = _said(before, prose), _said(line, prose)
    return bool(prev) and not prev.endswith(_SENTENCE_END_CHARS) and text[:1].islower() and not prev.startswith("@")


def _said(line: str, prose: bool) -> str:
    """What a line says: a prose line as it is, a comment line without its marker."""
    return (line if prose else _COMMENT_TEXT_RE.sub("", line)).strip()


_CLAUSE_BREAK_RE = re.compile(r"[.;:!?]\s+\S")  # a sentence or clause that starts inside a line


def _is_comment(line: str) -> bool:
    return bool(_COMMENT_LINE_RE.match(line)) or line.strip() in _COMMENT_CLOSERS


def _comment_opened_inside(r: LineRange, lines: list[str]) -> int | None:
    """The line where a comment starts, when the cited part runs from code into
    that comment and stops before the comment ends (the comment is about code below)."""
    if r.start == r.end or r.end >= len(lines) or not _is_comment(lines[r.end - 1]):
        return None
    after = lines[r.end].strip()
    if not _is_comment(after) or after.startswith(("/**", "/*")):
        return None  # the comment ends with the citation, or another one starts below
    n = r.end
    while n > r.start and _is_comment(lines[n - 2]):
        n -= 1
    return n if n > r.start and lines[n - 2].strip() else None


def _enclosing(region: tuple[LineRange, ...], view: FileView) -> list[str]:
    """Names of the declarations whose span (with its doc comment) holds the whole region."""
    lo, hi = min(r.start for r in region), max(r.end for r in region)
    return [name for name, spans in view.declarations.items() if any(s.start <= lo and hi <= s.end for s in spans)]


def _where(name: str, region: tuple[LineRange, ...], view: FileView) -> str | None:
    """None when `name` is on the region; else where it is in the file ('' when nowhere)."""
    last = name.rsplit(".", 1)[-1].removesuffix("()")
    declared = view.declarations.get(name) or view.declarations.get(last) or ()
    lo, hi = min(r.start for r in region), max(r.end for r in region)
    if any(name == d or d.endswith("." + last) or d == last for d in _enclosing(region, view)):
        return None
    for r in region:
        for n in range(r.start, r.end + 1):
            line = view.lines[n - 1] if n - 1 < len(view.lines) else ""
            if squash(name) and squash(name) in squash(line):
                # A mention in a comment does not count when the name is declared elsewhere:
                # the citation points at a remark about the thing, not at the thing.
                if (
                    declared
                    and _COMMENT_LINE_RE.match(line)
                    and not any(s.start <= hi and lo <= s.end for s in declared)
                ):
                    continue
                return None
    words = name.split()
    if len(words) > 1 and all(
        any(w in view.lines[n - 1] for r in region for n in range(r.start, min(r.end, len(view.lines)) + 1))
        for w in words
    ):
        return None  # a command or phrase (`codex app-server --stdio`) the lines spell out word by word: `'codex', 'app-server'`
    if declared:
        return "declared at " + ", ".join(
            f"line {s.start}" if s.start == s.end else f"lines {s.start}-{s.end}" for s in declared[:3]
        )
    below = _block_below(view.lines, hi)
    if below and any(
        squash(part) in squash(view.lines[n - 1]) for n in range(below.start, below.end + 1) for part in {name, last}
    ):
        return None  # the cited line heads the block that holds it: `declare module 'x' {` for a member
    hits = view.find(name)
    if not hits or len(hits) > MAX_OTHER_PLACES:
        return ""  # nowhere, or so common in the file that its absence from the lines proves nothing
    if any(_opens_block_around(view.lines, h, lo, hi) for h in hits):
        return None  # a key, heading or block the cited lines sit inside: `devDependencies` for a dependency
    shown = ", ".join(str(h) for h in hits[:3]) + (f" and {len(hits) - 3} more" if len(hits) > 3 else "")
    return ("at line " if len(hits) == 1 else "at lines ") + shown


MAX_BLOCK_BELOW = 300


def _block_below(lines: list[str], k: int) -> LineRange | None:
    """The body of the block line `k` opens (`interface X {`, `declare module 'y' {`),
    when it closes within MAX_BLOCK_BELOW lines: a citation of a block's head speaks of its body."""
    code = _NOT_BRACKETS_RE.sub("", lines[k - 1]).rstrip()
    if not code.endswith(("{", "[", "(")):
        return None
    depth = 0
    for n in range(k, min(len(lines), k + MAX_BLOCK_BELOW) + 1):
        for ch in _NOT_BRACKETS_RE.sub("", lines[n - 1]):
            depth += ch in "([{"
            depth -= ch in ")]}"
        if depth <= 0:
            return LineRange(k + 1, n - 1) if n > k + 1 else None
    return None


def _opens_block_around(lines: list[str], k: int, lo: int, hi: int) -> bool:
    """Whether line `k` opens a block that holds lines lo..hi: a Markdown heading
    and its section, or an indented block (JSON, YAML, code) that goes on below it."""
    if not k < lo:
        return False
    head = lines[k - 1]
    heading = re.match(r"^(#{1,6})\s", head)
    if heading:
        level = len(heading.group(1))
        return not any(re.match(rf"^#{{1,{level}}}\s", ln) for ln in lines[k:hi])
    indent = len(head) - len(head.lstrip())
    for ln in lines[k:hi]:
        if ln.strip() and len(ln) - len(ln.lstrip()) <= indent and not ln.lstrip().startswith(("}", "]", ")")):
            return False
    return True


def _suspect_block(block: tuple[str, ...], region: tuple[LineRange, ...], view: FileView) -> str | None:
    cited = "".join(alnum(view.text(r)) for r in region)
    wanted = [alnum(ln) for ln in block if len(alnum(ln)) >= 6]
    if not wanted or any(w in cited for w in wanted):
        return None
    whole = alnum("\n".join(view.lines))
    moved = [ln for ln, w in zip([b for b in block if len(alnum(b)) >= 6], wanted) if w in whole]
    if not moved:
        return None
    line = next(
        (i + 1 for i, ln in enumerate(view.lines) if alnum(moved[0])[:12] and alnum(moved[0])[:12] in alnum(ln)), None
    )
    where = f" (it starts near line {line})" if line else ""
    return f"the block this citation heads is not on the cited lines: `{moved[0]}` is elsewhere in the file{where}"


# How far from the cited lines the words of a sentence are looked for, how much more the best
# place must hold (in summed word weights, see WordIndex.weight), and how little the cited lines
# may hold of it. Tuned on findings/ with its anchors taken out, shifted and not (METHOD.md).
WORD_REACH = 30
WORD_MIN_GAIN = 12.0
WORD_MAX_SHARE = 0.0
MAX_DOC_LINES = 15


def _with_comment_above(lines: list[str], r: LineRange) -> LineRange:
    """A part and the comment right above it: a declaration's doc comment says what it is."""
    start = r.start
    while start > max(1, r.start - MAX_DOC_LINES) and _is_comment(lines[start - 2]):
        start -= 1
    return LineRange(start, r.end)


def _enclosing_docs(region: tuple[LineRange, ...], view: FileView) -> list[LineRange]:
    """The doc comment of the innermost declaration that holds the cited lines:
    what it says is said of them too."""
    lo, hi = min(r.start for r in region), max(r.end for r in region)
    spans = [s for spans in view.declarations.values() for s in spans if s.start <= lo and hi <= s.end]
    if not spans:
        return []
    inner = min(spans, key=lambda s: s.end - s.start)
    end = inner.start
    while end < inner.end and _is_comment(view.lines[end - 1]):
        end += 1
    return [LineRange(inner.start, end - 1)] if end > inner.start else []


def _suspect_words(words: tuple[str, ...], region: tuple[LineRange, ...], view: FileView) -> str | None:
    """Whether the words of the citation's sentence stand on lines near the
    cited ones, and hardly on the cited ones: the lines moved under the text."""
    index = view.words
    assert index is not None
    stems: dict[str, str] = {}
    for w in words:
        if index.lines_of.get(_stem(w)):
            stems.setdefault(_stem(w), w)
    if not stems:
        return None
    lo, hi = min(r.start for r in region), max(r.end for r in region)

    def held(k: int) -> set[str]:
        parts = [_with_comment_above(view.lines, LineRange(r.start + k, r.end + k)) for r in region]
        return {w for w in stems if any(index.present(w, p.start, p.end) for p in parts)}

    def weigh(ws: set[str]) -> float:
        return sum(index.weight(w) for w in ws)

    below = _block_below(view.lines, hi)
    here = held(0) | {
        w
        for w in stems
        if any(index.present(w, d.start, d.end) for d in _enclosing_docs(region, view) + ([below] if below else []))
    }
    best: tuple[float, int, set[str]] | None = None
    for k in sorted(range(-WORD_REACH, WORD_REACH + 1), key=abs):
        if k == 0 or lo + k < 1 or hi + k > index.size:
            continue
        there = held(k)
        score = weigh(there)
        if best is None or score > best[0]:
            best = (score, k, there)
    if best is None:
        return None
    score, k, there = best
    gained = there - here
    if weigh(gained) < WORD_MIN_GAIN or weigh(here) > WORD_MAX_SHARE * score:
        return None
    shown = ", ".join(f"`{stems[w]}`" for w in sorted(gained, key=index.weight, reverse=True)[:4])
    moved = tuple(LineRange(r.start + k, r.end + k) for r in region)
    where = ", ".join(f"{r.start}" if r.start == r.end else f"{r.start}-{r.end}" for r in moved)
    return (
        f"the words of its sentence are not on the cited lines but {abs(k)} line{'s' if abs(k) != 1 else ''} "
        f"{'below' if k > 0 else 'above'}: {shown} at {'line' if '-' not in where and ',' not in where else 'lines'} {where}"
    )
