"""Findings files: front matter, and the citations their Markdown holds.

markdown-it-py tells the blocks apart (fenced and indented code, HTML, prose);
`grammar` finds citations inside the prose blocks. We let the library parse
Markdown because fences, tables, lists and block quotes have edge cases a
line-by-line scanner gets wrong; positions come from the raw lines, because
markdown-it only keeps line maps for blocks.
"""

from __future__ import annotations

import hashlib
import os
import re
from bisect import bisect_right
from dataclasses import dataclass, field, replace
from pathlib import Path

import yaml
from markdown_it import MarkdownIt

from .errors import InputError
from .claims import CLAIM_SPAN_RE, claims_in_text
from .grammar import RawCitation, find_citations
from .inference import Inferred, infer
from .model import Citation, Claim, SourceLocation

MAX_FINDINGS_BYTES = 20 * 1024 * 1024

# Only block tokens are read (which lines are code, HTML or prose): inline
# parsing, half of markdown-it's time, cannot change them, so it is not run
# (nor the joining of the text tokens it would make).
_md = MarkdownIt("commonmark").enable("table").disable(["inline", "text_join"])
_FENCE_HEADER_RE = re.compile(r"^\s*(?://|#|--|;|/\*|<!--)\s*")


class FrontMatterError(InputError):
    """The front matter cannot be read (lint reports it under its own code)."""


@dataclass(frozen=True)
class FindingsFile:
    path: str  # as shown in messages: relative to the working directory when possible
    front_matter: dict
    citations: tuple[Citation, ...]
    pin: str | None = field(default=None)
    claims: tuple[Claim, ...] = ()
    digest: str = ""  # sha256 of the bytes read: a writer checks the file is still what was read
    text: str = field(default="", repr=False)  # the decoded text, for the names and quoted code it holds
    written_at: str | None = None  # the pin a document was read from (treedocs.py): its citations describe that commit


def split_front_matter(text: str, where: str) -> tuple[dict, int]:
    """Parse a leading `---` YAML block; return it and the number of lines it spans."""
    lines = text.split("\n")
    if not lines or lines[0].rstrip() != "---":
        return {}, 0
    for i in range(1, len(lines)):
        if lines[i].rstrip() in ("---", "..."):
            try:
                data = yaml.safe_load("\n".join(lines[1:i])) or {}
            except yaml.YAMLError as exc:
                mark = getattr(exc, "problem_mark", None)
                problem = getattr(exc, "problem", None) or "invalid YAML"
                raise FrontMatterError(f"malformed front matter: {problem}", file=where,
                                       line=mark.line + 2 if mark is not None else None) from None
            if not isinstance(data, dict):
                raise FrontMatterError("front matter must be a YAML mapping", file=where, line=2)
            return data, i + 1
    raise FrontMatterError("front matter opened with '---' is never closed", file=where, line=1)


BLOCKS_VERSION = "2"  # bump when _blocks changes what it returns
BLOCKS_SHARD = "markdown-blocks"  # the cache shard they are kept in, by the text's digest
_CODE_HTML_RE = re.compile(r"\s*<(!--|pre\b|script\b|style\b|textarea\b|code\b)", re.IGNORECASE)


def prose_chunks(text: str, skip: int) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """Line ranges [a, b) of prose blocks, and of fenced blocks, below the front
    matter; remembered by the text's digest, since Markdown parsing is the
    slow part of reading findings."""
    from . import cache

    key = cache.digest(BLOCKS_VERSION, str(skip), text)
    shard = cache.current().shard(BLOCKS_SHARD, BLOCKS_VERSION)
    hit = shard.get(key)
    if hit is None:
        chunks, fences = _blocks(text, skip)
        hit = {"chunks": chunks, "fences": fences}
        shard.put(key, hit)
    return [tuple(c) for c in hit["chunks"]], [tuple(f) for f in hit["fences"]]


def _blocks(text: str, skip: int) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    lines = text.split("\n")
    masked = "\n" * skip + "\n".join(lines[skip:])
    excluded = [False] * len(lines)
    fences = []
    for tok in _md.parse(masked):
        # HTML blocks are prose (a citation in a <details> or an HTML table is
        # checked like any other), except comments and blocks holding code.
        hidden_html = tok.type == "html_block" and _CODE_HTML_RE.match(tok.content)
        if tok.map is not None and (tok.type in ("fence", "code_block") or hidden_html):
            a, b = tok.map
            for i in range(a, min(b, len(lines))):
                excluded[i] = True
            if tok.type == "fence":
                fences.append((a, b))
    for i in range(skip):
        excluded[i] = True
    chunks = []
    i = 0
    while i < len(lines):
        if excluded[i] or not lines[i].strip():
            i += 1
            continue
        j = i
        while j < len(lines) and not excluded[j] and lines[j].strip():
            j += 1
        chunks.append((i, j))
        i = j
    return chunks, fences


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


def citations_in_markdown(text: str, display_path: str, skip_lines: int = 0, web_url: str | None = None,
                          link_base: str | None = None) -> list[Citation]:
    """Every citation of a Markdown file's prose (and the headers of its fenced
    blocks), with what the text around each says it holds (inference.py).
    `link_base`: the document's folder in DSH's tree, when it is read from there
    (its relative links to lines are citations)."""
    lines = text.split("\n")
    chunks, fences = prose_chunks(text, skip_lines)
    headings = [i for i, ln in enumerate(lines) if i >= skip_lines and _HEADING_RE.match(ln)]
    pending: list[tuple[RawCitation, int, int, tuple[str, ...], Inferred, str | None]] = []

    def add(raw: RawCitation, line_index: int, column: int, extra_anchors: tuple[str, ...] = (),
            inferred: Inferred = Inferred(), context_dir: str | None = None) -> None:
        pending.append((raw, line_index, column, extra_anchors, inferred, context_dir))

    def build(raw: RawCitation, line_index: int, column: int, extra_anchors: tuple[str, ...],
              inferred: Inferred, context_dir: str | None, nearby: tuple[str, ...]) -> Citation:
        anchored = bool(raw.anchors or extra_anchors or raw.symbol or raw.declared)
        return (
            Citation(
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
            )
        )

    for a, b in chunks:
        chunk = "\n".join(lines[a:b])
        starts = [0]
        for ln in lines[a:b - 1]:
            starts.append(starts[-1] + len(ln) + 1)
        claim_spans = [(m.start(), m.end()) for m in CLAIM_SPAN_RE.finditer(chunk)]
        # A claim's value may name `path:line` (a search's matched lines): it is a value, not a citation.
        raws = [r for r in find_citations(chunk, web_url, link_base) if not any(s <= r.start < e for s, e in claim_spans)]
        skip = [(r.start, max(r.end, r.anchors_end)) for r in raws] + claim_spans
        # Only a citation without an anchor of its own needs one inferred.
        bare = [r for r in raws if not (r.anchors or r.symbol)]
        everything = [(r.start, max(r.end, r.anchors_end)) for r in raws]
        heading = lines[headings[bisect_right(headings, a) - 1]] if headings and headings[0] < a else ""
        inferred = dict(zip((id(r) for r in bare),
                            infer(chunk, [(r.start, r.end) for r in bare], skip, everything, heading)))
        for i, raw in enumerate(raws):
            li, col = _offset_to_line_col(starts, raw.start)
            add(raw, a + li, col, inferred=inferred.get(id(raw), Inferred()),
                context_dir=_context_dir(chunk, raws[i - 1], raw) if i else None)

    # A fenced block whose first line is a comment naming a citation:
    # the block's other non-blank lines are anchors for it.
    for a, b in fences:
        if a + 1 >= len(lines):
            continue
        header = lines[a + 1]
        m = _FENCE_HEADER_RE.match(header)
        if not m:
            continue
        found = find_citations(header[m.end():], web_url)
        if not found or found[0].start != 0:
            continue
        close = b - 1 if b - 1 > a + 1 and lines[b - 1].strip().startswith(("```", "~~~")) else b
        body = tuple(ln.strip() for ln in lines[a + 2:close] if ln.strip())
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
        code = [ln.strip() for ln in lines[a + 1:close] if ln.strip() and not _DOC_COMMENT_LINE_RE.match(ln)]
        if code:
            raw, li, col, extra, inferred, context_dir = out[ks[0]]
            out[ks[0]] = (replace(raw, declared=(code[0],)), li, col, extra, inferred, context_dir)
    return out


def _fence_beside(line_index: int, lines: list[str], fences: list[tuple[int, int]]) -> tuple[int, int] | None:
    """The fence that ends just above the line (a few plain lines may stand between), or starts just below it."""
    for a, b in fences:
        between = lines[b:line_index] if b <= line_index else lines[line_index + 1:a] if a > line_index else None
        if between is None:
            continue
        words = [ln for ln in between if ln.strip()]
        if b > line_index and words:
            continue  # below: only blank lines between
        if len(between) <= MAX_LINES_BETWEEN + 2 and len(words) <= MAX_LINES_BETWEEN and not any(
                _HEADING_RE.match(ln) or _SOURCE_LINE_RE.match(ln) or ln.lstrip().startswith(("```", "~~~"))
                for ln in words):
            return a, b
    return None
# `packages/x/src/index.ts and src/other.ts`: the second path may be relative to the first's package.
_JOINED_RE = re.compile(r"^[\s`]*(?:,|and|与|和|及|、|&)[\s`]*$")


def _context_dir(chunk: str, before: RawCitation, raw: RawCitation) -> str | None:
    if "/" not in before.path or raw.path.startswith(before.path.split("/", 1)[0] + "/"):
        return None
    if not _JOINED_RE.match(chunk[max(before.end, before.anchors_end):raw.start]):
        return None
    return before.path.rsplit("/", 1)[0]


def display_path(path: Path) -> str:
    """The path as the user sees it: relative to the working directory when
    inside it (without following a symbolic link's target)."""
    try:
        return Path(os.path.abspath(path)).relative_to(Path(os.path.abspath(Path.cwd()))).as_posix()
    except ValueError:
        return path.as_posix()


def load_findings_file(path: Path, web_url: str | None = None) -> FindingsFile:
    """A findings file, parsed; with `web_url` (DSH's web address), permalinks into it are citations."""
    shown = display_path(path)
    try:
        if path.is_symlink() and not path.resolve().is_relative_to(Path.cwd().resolve()):
            raise InputError("is a symbolic link out of the working directory; refusing to read it", file=shown)
        size = path.stat().st_size
        if size > MAX_FINDINGS_BYTES:
            raise InputError(f"{size} bytes is larger than the {MAX_FINDINGS_BYTES} a findings file may be", file=shown)
        data = path.read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", file=shown) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError(f"not UTF-8 (byte 0x{data[exc.start]:02x}); findings must be UTF-8", file=shown, line=line) from None
    return parse_findings(text, shown, web_url, hashlib.sha256(data).hexdigest())


def parse_findings(text: str, shown: str, web_url: str | None = None, digest: str = "") -> FindingsFile:
    """A findings file from its text: read from disk by `load_findings_file`, or
    an editor's buffer (the language server); `shown` names it in messages."""
    text = text.replace("\r\n", "\n").lstrip("\ufeff")
    front, skip = split_front_matter(text, shown)
    pin = front.get("pin")
    if pin is not None and not isinstance(pin, str):
        raise FrontMatterError(f"front matter 'pin' must be a pin name or a full SHA, not {pin!r}", file=shown, line=2)
    return FindingsFile(
        path=shown,
        front_matter=front,
        citations=tuple(citations_in_markdown(text, shown, skip, web_url)),
        pin=pin,
        claims=tuple(claims_in_markdown(text, shown, skip)),
        digest=digest,
        text=text,
    )


def collect_markdown(paths: list[Path]) -> list[Path]:
    """Expand directories to the Markdown files below them, sorted, for a stable order."""
    files: list[Path] = []
    for p in paths:
        if p.is_dir():
            files.extend(sorted(q for q in p.rglob("*.md") if q.is_file() or q.is_symlink()))
        elif p.exists() or p.is_symlink():
            files.append(p)
        else:
            raise InputError(f"{p}: no such file or directory")
    seen = set()
    unique = []
    for f in files:
        key = f.resolve() if not f.is_symlink() else f.absolute()
        if key not in seen:
            seen.add(key)
            unique.append(f)
    return unique
