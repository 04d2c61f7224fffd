"""The citations and claims of a Markdown document: `grammar` finds citations
inside the prose blocks (blocks.py) and the headers of fenced ones; positions
come from the raw lines."""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import replace

from dshaudit.core.model import Citation, Claim, SourceLocation
from dshaudit.documents.blocks import prose_chunks
from dshaudit.documents.claims import CLAIM_SPAN_RE, claims_in_text
from dshaudit.documents.grammar import (
    JOINED_RE,
    RawCitation,
    find_citations,
    hidden_in,
    holds_form_needs,
    may_hold_citation,
    without_hidden,
)
from dshaudit.documents.inference import Inferred, infer

# No candidate anchors: what a citation that needs none is given.
NOTHING_INFERRED = Inferred()
_FENCE_HEADER_RE = re.compile(r"^\s*(?://|#|--|;|/\*|<!--)\s*")


def _offset_to_line_col(starts: list[int], offset: int) -> tuple[int, int]:
    lo, hi = 0, len(starts) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if starts[mid] <= offset:
            lo = mid
        else:
            hi = mid - 1
    return lo, offset - starts[lo]


def claims_in_markdown(text: str, display_path: str, skip_lines: int = 0) -> list[Claim]:
    lines = text.split("\n")
    chunks, _ = prose_chunks(text, skip_lines)
    return [c for a, b in chunks for c in claims_in_text("\n".join(lines[a:b]), a, display_path)]


def citations_in_markdown(
    text: str,
    display_path: str,
    skip_lines: int = 0,
    web_url: str | None = None,
    link_base: str | None = None,
    by_shape: bool = True,
) -> list[Citation]:
    """Every citation of a Markdown file's prose (and the headers of its fenced
    blocks), with what the text around each says it holds (inference.py).
    `link_base`: the document's folder in DSH's tree, when it is read from there
    (its relative links to lines are citations). `by_shape`: whether the shape of
    cited lines alone may make a citation suspect (Citation.by_shape)."""
    lines = text.split("\n")
    # A document without hidden characters has none in any chunk: they are not looked for again.
    plain = not hidden_in(text)
    if not _may_cite(text, lines, web_url, link_base, plain):
        return []
    chunks, fences = prose_chunks(text, skip_lines)
    headings = [i for i, ln in enumerate(lines) if i >= skip_lines and _HEADING_RE.match(ln)]
    pending: list[tuple[RawCitation, int, int, tuple[str, ...], Inferred, str | None]] = []

    def add(
        raw: RawCitation,
        line_index: int,
        column: int,
        extra_anchors: tuple[str, ...] = (),
        inferred: Inferred = NOTHING_INFERRED,
        context_dir: str | None = None,
    ) -> None:
        pending.append((raw, line_index, column, extra_anchors, inferred, context_dir))

    def build(
        raw: RawCitation,
        line_index: int,
        column: int,
        extra_anchors: tuple[str, ...],
        inferred: Inferred,
        context_dir: str | None,
        nearby: tuple[str, ...],
    ) -> Citation:
        anchored = bool(raw.anchors or extra_anchors or raw.symbol or raw.declared)
        return Citation(
            path=raw.path,
            lines=raw.lines,
            symbol=raw.symbol,
            pin_ref=raw.pin,
            anchors=raw.anchors + extra_anchors,
            source=SourceLocation(display_path, line_index + 1, column + 1),
            text=raw.text,
            problem=raw.problem,
            form=raw.form,
            expected_code=raw.expected_code,
            inferred=() if anchored else inferred.names,
            block=() if anchored else inferred.block,
            words=() if anchored else inferred.words,
            quoted=raw.marked_quoted,
            context_dir=context_dir,
            written=raw.written if raw.written != raw.text else "",
            declared=raw.declared,
            nearby=nearby,
            by_shape=by_shape,
        )

    for a, b in chunks:
        chunk = "\n".join(lines[a:b])
        starts = [0]
        for ln in lines[a : b - 1]:
            starts.append(starts[-1] + len(ln) + 1)
        claim_spans = [(m.start(), m.end()) for m in CLAIM_SPAN_RE.finditer(chunk)]
        # A claim's value may name `path:line` (a search's matched lines): it is a value, not a citation.
        raws = [
            r
            for r in find_citations(chunk, web_url, link_base, plain=plain)
            if not any(s <= r.start < e for s, e in claim_spans)
        ]
        skip = [(r.start, max(r.end, r.anchors_end)) for r in raws] + claim_spans
        # Only a citation without an anchor of its own needs one inferred.
        bare = [r for r in raws if not (r.anchors or r.symbol)]
        everything = [(r.start, max(r.end, r.anchors_end)) for r in raws]
        heading = lines[headings[bisect_right(headings, a) - 1]] if headings and headings[0] < a else ""
        inferred = dict(
            zip((id(r) for r in bare), infer(chunk, [(r.start, r.end) for r in bare], skip, everything, heading))
        )
        for i, raw in enumerate(raws):
            li, col = _offset_to_line_col(starts, raw.start)
            add(
                raw,
                a + li,
                col,
                inferred=inferred.get(id(raw), NOTHING_INFERRED),
                context_dir=_context_dir(chunk, raws[i - 1], raw) if i else None,
            )

    # A fenced block whose first line is a comment naming a citation:
    # the block's other non-blank lines are anchors for it.
    for a, b in fences:
        if a + 1 >= len(lines):
            continue
        header = lines[a + 1]
        m = _FENCE_HEADER_RE.match(header)
        if not m:
            continue
        found = find_citations(header[m.end() :], web_url, plain=plain)
        if not found or found[0].start != 0:
            continue
        close = b - 1 if b - 1 > a + 1 and lines[b - 1].strip().startswith(("```", "~~~")) else b
        body = tuple(ln.strip() for ln in lines[a + 2 : close] if ln.strip())
        add(found[0], a + 1, m.end(), body)
    pending = _source_fences(pending, lines, fences)
    pending.sort(key=lambda p: (p[1], p[2]))
    # The folders each section's citations name: an abbreviated path is read among them first.
    folders: dict[int, set[str]] = {}
    sections = [bisect_right(headings, p[1]) for p in pending]
    for p, section in zip(pending, sections):
        if "/" in p[0].path:
            folders.setdefault(section, set()).add(p[0].path.rsplit("/", 1)[0])
    out = []
    for p, section in zip(pending, sections):
        near = folders.get(section, set())
        own = p[0].path.rsplit("/", 1)[0]
        out.append(build(*p, tuple(sorted(near - {own})) if len(near) > 1 or own not in near else ()))
    return out


def _may_cite(
    text: str, lines: list[str], web_url: str | None, link_base: str | None, plain: bool | None = None
) -> bool:
    """Whether the document may hold a citation, known without parsing its Markdown
    (most of a tree's documents cite nothing, and parsing is the costly part): each
    run of non-blank lines holds every prose chunk within it, code lines aside, and
    a citation the grammar finds in a chunk it finds in the run around it too (no
    form reaches across a line break in a way the lines around can undo); a line
    that may head a fence is read as that header is. `plain`: whether the document holds
    no hidden character (`hidden_in`), when the caller knows."""
    if plain is None:
        plain = not hidden_in(text)
    if not holds_form_needs(text if plain else without_hidden(text), web_url):
        return False
    run: list[str] = []
    for line in [*lines, ""]:
        if line.strip():
            run.append(line)
            header = _FENCE_HEADER_RE.match(line)
            if header and _cites(line[header.end() :], web_url, None, plain):
                return True
            continue
        if run and _cites("\n".join(run), web_url, link_base, plain):
            return True
        run = []
    return False


def _cites(text: str, web_url: str | None, link_base: str | None, plain: bool) -> bool:
    """Whether the grammar finds a citation in `text`, asked only of text the cheap screen passes
    (`plain`: whether the document holds no hidden character; where it holds some, the screen
    reads through them)."""
    screened = holds_form_needs(text, web_url) if plain else may_hold_citation(text, web_url)
    return screened and bool(find_citations(text, web_url, link_base, plain=plain))


_HEADING_RE = re.compile(r"^ {0,3}#{1,6}\s")
# Generated documentation: a fence with a declaration, then `Source: [path:line](...)` (or the reverse).
_SOURCE_LINE_RE = re.compile(r"^\s*(?:[-*]\s+)?(?:\*\*|_)?(?:Source|Sources|来源)(?:\*\*|_)?\s*[:：]")
_DOC_COMMENT_LINE_RE = re.compile(r"^\s*(?:/\*\*?|\*/?|//|#(?!\[))")
MAX_LINES_BETWEEN = 3  # `Depends on: ...` and blank lines may stand between a fence and its Source line


def _source_fences(pending: list, lines: list[str], fences: list[tuple[int, int]]) -> list:
    """A fence right before or after a `Source:` line quotes the declaration its
    one citation cites: the fence's first line of code (doc comments skipped)
    must stand in the declaration that holds the cited line (verify.py). That
    covers a quoted declaration (`export interface X {` on the cited line) and a
    quoted surface (a class cited at its first line, the fence listing members)."""
    by_line: dict[int, list[int]] = {}
    for k, p in enumerate(pending):
        if p[0].lines and not (p[0].anchors or p[3] or p[0].symbol):
            by_line.setdefault(p[1], []).append(k)
    out = list(pending)
    for line_index, ks in by_line.items():
        if len(ks) != 1 or not _SOURCE_LINE_RE.match(lines[line_index]):
            continue
        fence = _fence_beside(line_index, lines, fences)
        if fence is None:
            continue
        a, b = fence
        close = b - 1 if lines[b - 1].strip().startswith(("```", "~~~")) else b
        code = [ln.strip() for ln in lines[a + 1 : close] if ln.strip() and not _DOC_COMMENT_LINE_RE.match(ln)]
        if code:
            raw, li, col, extra, inferred, context_dir = out[ks[0]]
            out[ks[0]] = (replace(raw, declared=(code[0],)), li, col, extra, inferred, context_dir)
    return out


def _fence_beside(line_index: int, lines: list[str], fences: list[tuple[int, int]]) -> tuple[int, int] | None:
    """The fence that ends just above the line (a few plain lines may stand between), or starts just below it."""
    for a, b in fences:
        # Only a fence a few lines away can qualify: the far ones are skipped before their lines are read.
        if not (0 <= line_index - b <= MAX_LINES_BETWEEN + 2 or 0 <= a - line_index - 1 <= MAX_LINES_BETWEEN + 2):
            continue
        between = lines[b:line_index] if b <= line_index else lines[line_index + 1 : a] if a > line_index else None
        if between is None:
            continue
        words = [ln for ln in between if ln.strip()]
        if b > line_index and words:
            continue  # below: only blank lines between
        if (
            len(between) <= MAX_LINES_BETWEEN + 2
            and len(words) <= MAX_LINES_BETWEEN
            and not any(
                _HEADING_RE.match(ln) or _SOURCE_LINE_RE.match(ln) or ln.lstrip().startswith(("```", "~~~"))
                for ln in words
            )
        ):
            return a, b
    return None


def _context_dir(chunk: str, before: RawCitation, raw: RawCitation) -> str | None:
    if "/" not in before.path or raw.path.startswith(before.path.split("/", 1)[0] + "/"):
        return None
    if not JOINED_RE.fullmatch(chunk[max(before.end, before.anchors_end) : raw.start]):
        return None
    return before.path.rsplit("/", 1)[0]
