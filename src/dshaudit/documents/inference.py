"""Inferred anchors: what a citation without an anchor says its lines hold.

People who do not write for dshaudit cite `path:line` and name the thing in
the sentence around it ("filled through AgentRegistry.setFactory
(packages/core/agent/src/index.ts:176-181)"), or head a quoted block with the
citation (`// vendor/cordis/src/context.ts:77-81` and the code below it). The
code-like names of that sentence, list item or table cell (names.py), and
the lines of that block, are the citation's candidate anchors. A name right
before the citation (`X (path:12)`, `X at path:12`) is its subject, and then
it is the only candidate. At check time they judge whether the cited lines
hold what the text says (checking/suspect.py).
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from dshaudit.documents.matching import words_of
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


def sentence_scopes(chunk: str) -> _Scopes:
    """The sentences, list items and table cells of a prose block (`scope(start, end)`)."""
    return _Scopes(chunk)


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
# The words that say what follows them is not there (`no`, `without`), and the article after one.
NEGATION = r"\b(?:no|not|without|nor|never|neither|lacks?)"
NEGATION_ARTICLE = r"(?:an?\s+|the\s+|any\s+)?"
_NEGATED_RE = re.compile(
    rf"(?:{NEGATION}\s+{NEGATION_ARTICLE}|(?:没有|无|不含|并无)\s*)[`'\"“]?$",
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
