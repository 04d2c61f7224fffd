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

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass

from .model import LineRange
from .names import CODE, PACKAGE, STRING, Name, code_names

# Between a name and the citation it is the subject of: brackets, backticks, a word like "at".
_SUBJECT_GAP_RE = re.compile(r"^[\s`'\"]*(?:[(（\[]|\b(?:at|in|see|from)\b|见|在|于)?[\s`]*$", re.IGNORECASE)
# Sentence ends: CJK full stops anywhere, a Latin stop followed by space and a capital or CJK.
_SENTENCE_END_RE = re.compile(r"[。！？]|[.!?](?=\s+[A-Z\u4e00-\u9fff(（\"“])|;\s|；")
_LIST_ITEM_RE = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
# A prose line that heads a quoted block: `// path:12-18` (the code follows on the next lines).
_HEADING_COMMENT_RE = re.compile(r"^\s*(?://|<!--|--)\s*")
MAX_BLOCK_LINES = 12
# A name on more lines of the file than this is a common word there, not evidence of where the code is.
MAX_OTHER_PLACES = 3


@dataclass(frozen=True)
class Inferred:
    """The candidate anchors of one citation."""

    names: tuple[str, ...] = ()
    block: tuple[str, ...] = ()  # lines of a block the citation heads


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
        a = max(lo, self.stops[j][1]) if j >= 0 else lo
        n = bisect_left(self.stop_starts, end)
        b = min(hi, self.stops[n][1]) if n < len(self.stops) else hi
        return a, b


def infer(chunk: str, spans: list[tuple[int, int]], skip: list[tuple[int, int]],
          citations: list[tuple[int, int]] | None = None, heading: str = "") -> list[Inferred]:
    """Candidate anchors for each citation at `spans` (start, end) in `chunk`.
    `skip` lists every span that is not prose (citations, their anchors, claims).
    `citations` are all the citations of the chunk (with their anchors): in a
    sentence that holds several, a citation's own clause is the text between
    its neighbours, and only a sentence of at most two falls back to the whole.
    A citation whose own text names nothing (a bare list item) takes the names
    of the item or line that leads into it, else of its section's `heading`."""
    scopes = _Scopes(chunk) if spans else None
    skip = sorted(skip)
    skip_starts = [s for s, _ in skip]
    out: list[Inferred] = []
    for start, end in spans:
        assert scopes is not None
        a, b = scopes.scope(start, end)
        others = sorted((s, e) for s, e in (citations or []) if a <= s < b and not (s <= start < e))
        before = [e for s, e in others if e <= start]
        after = [s for s, e in others if s >= end]
        clause = (max(before, default=a), min(after, default=b))
        if others and (_has_names(chunk, clause, skip) or len(others) > 1):
            a, b = clause
        lo = max(0, bisect_left(skip_starts, a) - 1)
        hi = bisect_left(skip_starts, b)
        local_skip = [(s - a, e - a) for s, e in skip[lo:hi] if s < b and e > a]
        names = [Name(n.text, n.kind, n.start + a, n.end + a) for n in code_names(chunk[a:b], local_skip)]
        names = [n for n in names if _distinctive(n)]
        subject = [n for n in names if n.end <= start and _SUBJECT_GAP_RE.match(chunk[n.end:start])]
        chosen = [_anchor_text(n) for n in subject[-1:] or names]
        if not chosen:
            chosen = _lead_in_names(chunk, start, skip)
        out.append(Inferred(tuple(dict.fromkeys(chosen)), _block(chunk, start, end)))
    return out


# Plain and kebab-case words (package and folder names), numbers and versions, file names, paths.
_PLAIN_WORD_RE = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*|[A-Z][a-z]+|\d[\w.+-]*|[\w.-]+\.[a-z]{1,5}|\S*/\S*")
_KEYWORDS = frozenset("if else for while return true false null undefined void new this const let var function class "
                      "import export default async await type interface enum extends".split())


def _distinctive(name: Name) -> bool:
    """Whether a name could tell one place from another: not a plain word, a
    keyword, a number or version, a file name or a path (those are mentions of
    files, which the citation itself already names)."""
    if name.kind == CODE and (_PLAIN_WORD_RE.fullmatch(name.text) or name.text in _KEYWORDS):
        return False
    return not (name.kind == STRING and name.text in _KEYWORDS)


def _lead_in_names(chunk: str, start: int, skip: list[tuple[int, int]]) -> list[str]:
    """The names of the nearest line above that is less indented (a parent list
    item, or the sentence ending in `:` that a list continues)."""
    line_start = chunk.rfind("\n", 0, start) + 1
    line = chunk[line_start:chunk.find("\n", line_start) if "\n" in chunk[line_start:] else len(chunk)]
    indent = len(line) - len(line.lstrip())
    if not _LIST_ITEM_RE.match(line):
        return []
    pos = line_start - 1
    while pos > 0:
        prev_start = chunk.rfind("\n", 0, pos) + 1
        prev = chunk[prev_start:pos]
        if prev.strip() and len(prev) - len(prev.lstrip()) < indent or (prev.strip() and not _LIST_ITEM_RE.match(prev)
                                                                         and prev.rstrip().endswith(":")):
            local = [(s - prev_start, e - prev_start) for s, e in skip if s < pos and e > prev_start]
            return [_anchor_text(n) for n in code_names(prev, local) if _distinctive(n)]
        pos = prev_start - 1
    return []


def _has_names(chunk: str, span: tuple[int, int], skip: list[tuple[int, int]]) -> bool:
    a, b = span
    return bool(code_names(chunk[a:b], [(s - a, e - a) for s, e in skip if s < b and e > a]))


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
    body = [ln.strip() for ln in chunk[line_end + 1:].split("\n")[:MAX_BLOCK_LINES]]
    return tuple(ln for ln in body if ln)


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

    def text(self, r: LineRange) -> str:
        return "\n".join(self.lines[r.start - 1:r.end])

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
    if not inferred.names:
        return None
    elsewhere: list[tuple[str, str]] = []
    for name in inferred.names:
        where = _where(name, region, view)
        if where is None:
            return None  # on the cited lines, or the declaration that holds them
        if where:
            elsewhere.append((name, where))
    if not elsewhere:
        return None
    said = "; ".join(f"`{name}` is {where}" for name, where in elsewhere[:3])
    return f"the lines cited hold none of the names the text gives them: {said}"


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
                if declared and _COMMENT_LINE_RE.match(line) and not any(s.start <= hi and lo <= s.end for s in declared):
                    continue
                return None
    if declared:
        return "declared at " + ", ".join(f"line {s.start}" if s.start == s.end else f"lines {s.start}-{s.end}"
                                          for s in declared[:3])
    hits = view.find(name)
    if not hits or len(hits) > MAX_OTHER_PLACES:
        return ""  # nowhere, or so common in the file that its absence from the lines proves nothing
    if any(_opens_block_around(view.lines, h, lo, hi) for h in hits):
        return None  # a key, heading or block the cited lines sit inside: `devDependencies` for a dependency
    shown = ", ".join(str(h) for h in hits[:3]) + (f" and {len(hits) - 3} more" if len(hits) > 3 else "")
    return ("at line " if len(hits) == 1 else "at lines ") + shown


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
    line = next((i + 1 for i, ln in enumerate(view.lines)
                 if alnum(moved[0])[:12] and alnum(moved[0])[:12] in alnum(ln)), None)
    where = f" (it starts near line {line})" if line else ""
    return f"the block this citation heads is not on the cited lines: `{moved[0]}` is elsewhere in the file{where}"

