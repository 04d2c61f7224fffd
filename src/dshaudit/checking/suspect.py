"""Whether the cited lines hold what the text around an unanchored citation says.

A citation is `suspect` when none of its candidate anchors (documents/inference.py)
is on the cited lines, nor names the declaration that encloses them, while one of
them stands elsewhere in the file: the lines moved, or never held what the
sentence says. Without names, the shape of the lines (a start on a closing
bracket, an end on a blank line), a sentence they start in the middle of, or the
words of the citation's sentence standing a few lines away, say the same.
Precision comes first: no candidates, or candidates found nowhere in the file,
give no verdict at all.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from dshaudit.core.model import LineRange
from dshaudit.documents.inference import Inferred
from dshaudit.documents.matching import WordIndex, alnum, squash, word_stem, words_of

# A name on more lines of the file than this is a common word there, not evidence of where the code is.
MAX_OTHER_PLACES = 4
_COMMENT_LINE_RE = re.compile(r"^\s*(?://|/\*|\*|#|<!--)")


@dataclass(frozen=True)
class FileView:
    """What the suspect check needs of a cited file."""

    lines: list[str]
    declarations: Mapping[str, tuple[LineRange, ...]]  # dotted name -> spans, doc comments included
    words: WordIndex | None = None
    prose: bool = False  # Markdown or plain text
    relevance: WordIndex | None = None  # the words of its lines, import statements left out (relevance_index)
    structured: bool = False  # YAML or JSON: its keys name its blocks
    # The best place found for a description's words (_best_place), and the key it names
    # (_named_key), by words and cited lines: the suspect check and the lines it suggests ask in turn.
    places: dict = field(default_factory=dict, compare=False, repr=False)

    def text(self, r: LineRange) -> str:
        return "\n".join(self.lines[r.start - 1 : r.end])

    def find(self, needle: str) -> list[int]:
        """1-based lines holding the needle, whitespace ignored (one line at a time; enough for names)."""
        want = squash(needle)
        return [i + 1 for i, ln in enumerate(self.lines) if want and want in squash(ln)]


def suspect(inferred: Inferred, region: tuple[LineRange, ...], view: FileView, by_shape: bool = True) -> str | None:
    """Why the cited region does not hold what its candidates say, or None.
    None too when nothing can be said (no candidates, or none found anywhere).
    Without `by_shape` (a document not written for dshaudit), only evidence flags:
    the names or words of the text standing elsewhere, never the shape of the lines."""
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
    if not by_shape:
        keyed = _suspect_key(inferred.words, region, view) if view.structured else None
        return keyed or (_suspect_relevance(inferred.words, region, view) if view.relevance and view.words else None)
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
    if any(view.words.present(word_stem(w), p.start, p.end) for w in words for p in region):
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
    lo, hi = min(r.start for r in region), max(r.end for r in region)
    # The cited lines read first: a line of code that holds the name settles it without the
    # file's declarations, which a version of a file time travel tries would parse for nothing.
    in_comment = False
    squashed = squash(name)
    for r in region:
        for n in range(r.start, r.end + 1):
            line = view.lines[n - 1] if n - 1 < len(view.lines) else ""
            if squashed and squashed in squash(line):
                if not _COMMENT_LINE_RE.match(line):
                    return None
                in_comment = True
    declared = view.declarations.get(name) or view.declarations.get(last) or ()
    if any(name == d or d.endswith("." + last) or d == last for d in _enclosing(region, view)):
        return None
    # A mention in a comment does not count when the name is declared elsewhere:
    # the citation points at a remark about the thing, not at the thing.
    if in_comment and not (declared and not any(s.start <= hi and lo <= s.end for s in declared)):
        return None
    words = name.split()
    # A command or phrase (`codex app-server --stdio`) the lines spell out word by word: `'codex', 'app-server'`.
    if len(words) > 1 and all(
        any(w in view.lines[n - 1] for r in region for n in range(r.start, min(r.end, len(view.lines)) + 1))
        for w in words
    ):
        return None
    declared = declared or _member_declared(name, view)
    if any(lo <= d.start and d.end <= hi for d in declared):
        return None  # the cited lines hold the whole declaration
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
        if index.lines_of.get(word_stem(w)):
            stems.setdefault(word_stem(w), w)
    if not stems:
        return None
    lo, hi = min(r.start for r in region), max(r.end for r in region)

    def held(k: int) -> set[str]:
        parts = [_with_comment_above(view.lines, LineRange(r.start + k, r.end + k)) for r in region]
        return {w for w in stems if any(index.present(w, p.start, p.end) for p in parts)}

    def weigh(ws: set[str]) -> float:
        return sum(index.weight(w) for w in ws)

    # No window can score more than all the words together: cited lines that already hold more than
    # WORD_MAX_SHARE of that are kept whatever the windows hold, and none is scored.
    on_lines = held(0)
    if weigh(on_lines) > WORD_MAX_SHARE * weigh(set(stems)):
        return None
    below = _block_below(view.lines, hi)
    here = on_lines | {
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
    lines = "line" if "-" not in where and "," not in where else "lines"
    return (
        f"the words of its sentence are not on the cited lines but {abs(k)} line{'s' if abs(k) != 1 else ''} "
        f"{'below' if k > 0 else 'above'}: {shown} at {lines} {where}"
    )


def _member_declared(name: str, view: FileView) -> tuple[LineRange, ...]:
    """Where the file declares the member a dotted name calls (`session.cancel`): a declaration
    whose own name is its last part, inside one named like the part before it (`sessions`)."""
    parts = [p for p in name.removesuffix("()").split(".") if p]
    if len(parts) < 2:
        return ()
    owner, last = word_stem(parts[-2].lower()), parts[-1]
    found = [
        span
        for dotted, spans in view.declarations.items()
        if (names := dotted.split("."))[-1] == last and len(names) > 1 and word_stem(names[-2].lower()) == owner
        for span in spans
    ]
    return tuple(sorted(found, key=lambda r: r.start))


# An import statement names what a file uses, not what it does: its lines are no place a text describes.
_IMPORT_START_RE = re.compile(r"^\s*(?:import\b|export\s*(?:\*|\{[^}]*$|\{.*\}\s*from\b))")
_IMPORT_END_RE = re.compile(r"\bfrom\s*['\"]|^\s*import\s*['\"]|;\s*$")


def relevance_index(lines: list[str], words: WordIndex) -> WordIndex:
    """The words of a file's lines (`words`, their index), for relevance: those of its import
    statements left out, and of the comment that opens the file (it speaks of the whole file,
    not of a place in it)."""
    left_out: set[int] = set()
    n = 0
    while n < len(lines) and (_is_comment(lines[n]) or not lines[n].strip()):
        left_out.add(n + 1)
        n += 1
    inside = False
    for i, line in enumerate(lines):
        if inside or _IMPORT_START_RE.match(line):
            left_out.add(i + 1)
            inside = not _IMPORT_END_RE.search(line)
    return words.without(left_out)


# How much the best place must hold (summed word weights, WordIndex.weight), and how much of
# that the cited lines may hold at most, for a citation in a document not written for dshaudit
# to be flagged by its words alone. Tuned on the handbook's line citations (METHOD.md).
RELEVANCE_MIN = 6.0
RELEVANCE_SHARE = 0.25


def _suspect_relevance(words: tuple[str, ...], region: tuple[LineRange, ...], view: FileView) -> str | None:
    """Whether the words of the citation's description (its link text, sentence or row) stand
    on other lines of the file clearly better than on the cited ones: scored over every stretch
    of the file as long as the citation, words weighed by how rare they are in the file."""
    found = _best_place(words, region, view)
    if found is None:
        return None
    place, there = found
    shown = ", ".join(_spelled(view.lines, place, there)[:3])
    cited = ", ".join(f"{r.start}" if r.start == r.end else f"{r.start}-{r.end}" for r in region)
    return (
        f"its description's words match lines {place.start}-{place.end}{f' ({shown})' if shown else ''} "
        f"better than the cited {cited}"
    )


def described_place(inferred: Inferred, region: tuple[LineRange, ...], view: FileView) -> LineRange | None:
    """Where the file holds what the text describes, when the cited lines do not: the declaration
    of a name the text gives them, else the block of a key its description names, else the
    stretch its description's words match clearly better."""
    for name in inferred.names:
        last = name.rsplit(".", 1)[-1].removesuffix("()")
        declared = view.declarations.get(name) or view.declarations.get(last) or _member_declared(name, view)
        if declared and _where(name, region, view):
            return declared[0]
    if view.structured and (named := _named_key(inferred.words, region, view)):
        lo = min(r.start for r in region)
        return min(named[1], key=lambda b: abs(b.start - lo))  # the nearest of the key's blocks
    found = _best_place(inferred.words, region, view) if view.relevance is not None and view.words else None
    return found[0] if found else None


def _best_place(
    words: tuple[str, ...], region: tuple[LineRange, ...], view: FileView
) -> tuple[LineRange, list[str]] | None:
    """The stretch of the file, as long as the cited one and apart from it, that the description's
    words match clearly better (RELEVANCE_MIN, RELEVANCE_SHARE), and the words it holds; or None."""
    key = (words, region)
    if key not in view.places:
        view.places[key] = _find_best_place(words, region, view)
    return view.places[key]


def _weight_on(stems: list[str], region: tuple[LineRange, ...], whole: WordIndex) -> float:
    """What the cited lines hold of the words, read whole, each weighed by its rarity in the file."""
    return sum(whole.weight(w) for w in stems if any(whole.present(w, r.start, r.end) for r in region))


def _window_starts(stems: list[str], index: WordIndex, size: int) -> Iterator[int]:
    """In order, the first lines of the windows of `size` + 1 lines that hold one of the words:
    a window that holds none scores nothing and is never the best, so the lines of a long
    file far from every word are not tried one by one."""
    last = index.size - size
    if last < 1:
        return
    spans = sorted((max(1, n - size), min(n, last)) for w in stems for n in index.lines_of.get(w, ()))
    merged: list[list[int]] = []
    for a, b in spans:
        if a > b:
            continue
        if merged and a <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    for a, b in merged:
        yield from range(a, b + 1)


def _find_best_place(
    words: tuple[str, ...], region: tuple[LineRange, ...], view: FileView
) -> tuple[LineRange, list[str]] | None:
    index, whole = view.relevance, view.words
    assert index is not None and whole is not None
    stems = [w for w in dict.fromkeys(words) if whole.lines_of.get(w)]  # weighed by their rarity in the whole file
    if not stems:
        return None
    lo, hi = min(r.start for r in region), max(r.end for r in region)
    size = hi - lo

    def held(a: int, b: int) -> list[str]:
        return [w for w in stems if index.present(w, a, b)]

    def often(a: int, b: int, there: list[str]) -> int:
        return sum(bisect_right(index.lines_of[w], b) - bisect_left(index.lines_of[w], a) for w in there)

    # What the cited lines hold, read whole: a citation of the imports or the opening comment holds their words.
    here = _weight_on(stems, region, whole)
    best: tuple[float, int, int, list[str]] = (0.0, 0, 0, [])
    for start in _window_starts(stems, index, size):
        if start <= hi and start + size >= lo:
            continue  # overlapping the cited lines: not another place
        there = held(start, start + size)
        score = sum(whole.weight(w) for w in there)
        if score > best[0] + 1e-9 or (
            score > 0 and abs(score - best[0]) <= 1e-9 and often(start, start + size, there) > best[2]
        ):
            best = (score, start, often(start, start + size, there), there)
    score, start, _, there = best
    if score < RELEVANCE_MIN or here > RELEVANCE_SHARE * score:
        return None
    first = min(n for w in there for n in index.lines_of[w] if start <= n <= start + size)
    return LineRange(first, min(first + size, index.size)), there


# A key of a YAML or JSON file that opens a block: nothing after its colon but a bracket or a comment.
_BLOCK_KEY_RE = re.compile(r"""^(\s*)(?:-\s+)?["']?([A-Za-z_][\w-]*)["']?\s*:\s*[{\[]?\s*(?:#.*)?$""")


def _suspect_key(words: tuple[str, ...], region: tuple[LineRange, ...], view: FileView) -> str | None:
    """Whether the description names a key of the structured file whose blocks all stand apart
    from the cited lines (`_named_key`)."""
    named = _named_key(words, region, view)
    if named is None:
        return None
    key, blocks = named
    shown = ", ".join(f"{b.start}-{b.end}" for b in blocks[:3])
    return f"its description names `{key}`, the key of lines {shown}, none of them cited"


def _named_key(
    words: tuple[str, ...], region: tuple[LineRange, ...], view: FileView
) -> tuple[str, list[LineRange]] | None:
    """`_find_named_key`, found once for the suspect check and the lines it suggests."""
    key = ("key", words, region)
    if key not in view.places:
        view.places[key] = _find_named_key(words, region, view)
    return view.places[key]


def _find_named_key(
    words: tuple[str, ...], region: tuple[LineRange, ...], view: FileView
) -> tuple[str, list[LineRange]] | None:
    """A key of a structured file that the description names by a word of its own (`matrix` in
    "compatibility matrix"), whose blocks (a few at most: a key in many places is a common word of
    the file) all stand apart from the cited lines; with those blocks. None when each key the
    description names has a block the cited lines reach into, or it names none: the lines then
    hold at least part of what it describes."""
    wanted = {word_stem(w) for w in words}  # written as they are; a key is compared by its stem
    heads: dict[str, list[tuple[int, int]]] = {}  # key -> (line, indent) of each place it opens a block
    for k, line in enumerate(view.lines, start=1):
        m = _BLOCK_KEY_RE.match(line)
        if m and len(m.group(2)) >= 3 and word_stem(m.group(2).lower()) in wanted:
            heads.setdefault(m.group(2), []).append((k, len(m.group(1))))
    # Blocks are measured for the keys in few places only: a lockfile repeats a key thousands of times.
    named = {
        key: [_key_block(view.lines, k, indent) for k, indent in places]
        for key, places in heads.items()
        if len(places) <= MAX_OTHER_PLACES
    }
    if not named:
        return None
    if any(b.start <= r.end and r.start <= b.end for spans in named.values() for b in spans for r in region):
        return None
    key = min(named, key=lambda k: (len(named[k]), named[k][0].start))
    return key, named[key]


def _key_block(lines: list[str], k: int, indent: int) -> LineRange:
    """The key on line `k` and the lines below it indented deeper (a JSON block's closing bracket too)."""
    end = k
    for n in range(k + 1, len(lines) + 1):
        line = lines[n - 1]
        if not line.strip():
            continue
        if len(line) - len(line.lstrip()) <= indent:
            if line.lstrip().startswith(("}", "]")) and len(line) - len(line.lstrip()) == indent:
                end = n
            break
        end = n
    return LineRange(k, end)


_IDENTIFIER_RE = re.compile(r"[A-Za-z_$][\w$]*")


def _spelled(lines: list[str], place: LineRange, stems: list[str]) -> list[str]:
    """The identifiers (else words) on those lines that hold the description's words, as the code spells them."""
    wanted = set(stems)
    out: list[str] = []
    for n in range(place.start, place.end + 1):
        for ident in _IDENTIFIER_RE.findall(lines[n - 1]):
            if ident not in out and wanted & set(words_of(ident)):
                out.append(ident)
    return sorted(out, key=lambda i: (not any(c.isupper() or c == "_" for c in i[1:]), out.index(i)))


def holds_described(inferred: Inferred, region: tuple[LineRange, ...], view: FileView) -> bool:
    """Whether the cited lines hold what the text describes, by positive evidence: a name the
    text gives them stands on them, or the words of its description weigh at least RELEVANCE_MIN there."""
    if any(_where(name, region, view) is None for name in inferred.names):
        return True
    whole = view.words
    if whole is None:
        return False
    stems = [w for w in dict.fromkeys(inferred.words) if whole.lines_of.get(w)]
    return _weight_on(stems, region, whole) >= RELEVANCE_MIN
