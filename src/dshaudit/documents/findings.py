"""Findings files: front matter, and the citations their Markdown holds.

markdown-it-py tells the blocks apart (fenced and indented code, HTML, prose);
`grammar` finds citations inside the prose blocks. We let the library parse
Markdown because fences, tables, lists and block quotes have edge cases a
line-by-line scanner gets wrong; positions come from the raw lines, because
markdown-it only keeps line maps for blocks.
"""

from __future__ import annotations

import os
import re
from bisect import bisect_right
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml
from markdown_it import MarkdownIt

from dshaudit.core.errors import InputError
from dshaudit.core.model import Citation, Claim, SourceLocation
from dshaudit.documents.claims import CLAIM_SPAN_RE, claims_in_text
from dshaudit.documents.grammar import JOINED_RE, RawCitation, find_citations
from dshaudit.documents.inference import Inferred, infer
from dshaudit.platform.writing import ReadFile, read_regular

MAX_FINDINGS_BYTES = 20 * 1024 * 1024
MARKDOWN_ENDINGS = (".md", ".markdown", ".mdx")  # what a Markdown document is named (lowercased)

# Only the blocks are needed (their kinds and line maps): inline parsing is
# not run at all, which also keeps a file of pathological brackets (`![[[[…`,
# costly to markdown-it's link rules) linear.
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
    pin_line: int = 0  # the line of `pin: NAME` in the front matter (0: none)
    read: ReadFile | None = field(default=None, repr=False)  # the file as read: a writer checks it is still that


# Limits on what a findings file may make dshaudit do: beyond them a file is
# refused with its line (exit 2), never parsed at any cost (SECURITY.md).
MAX_FRONT_MATTER_BYTES = 64 * 1024
MAX_FRONT_MATTER_DEPTH = 16  # mappings and lists inside one another
MAX_FRONT_MATTER_NODES = 10_000
MAX_YAML_INT_DIGITS = 100


class _FrontMatterLoader(yaml.SafeLoader):
    """YAML's safe loader with limits, and without choices made silently: no
    aliases (a few lines of them expand to gigabytes), bounded nesting and
    size, and a key given twice is an error, not the last one winning."""

    def __init__(self, stream: str):
        super().__init__(stream)
        self._depth = 0
        self._nodes = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()
        mark: Any = event.start_mark
        if isinstance(event, yaml.AliasEvent):
            raise yaml.composer.ComposerError(None, None, "YAML aliases (*name) are not allowed in front matter", mark)
        self._nodes += 1
        if self._nodes > MAX_FRONT_MATTER_NODES:
            raise yaml.composer.ComposerError(
                None, None, f"more than {MAX_FRONT_MATTER_NODES} values in front matter", mark
            )
        collection = isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent))
        if collection:
            self._depth += 1
            if self._depth > MAX_FRONT_MATTER_DEPTH:
                raise yaml.composer.ComposerError(
                    None, None, f"nested more than {MAX_FRONT_MATTER_DEPTH} levels deep", mark
                )
        try:
            return super().compose_node(parent, index)
        finally:
            if collection:
                self._depth -= 1

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        seen: dict[object, int] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            try:
                first = seen.get(key)
            except TypeError:
                continue  # unhashable: the safe loader reports it
            if first is not None:
                raise yaml.constructor.ConstructorError(
                    None, None, f"key {key!r} is given twice (first on line {first + 2}); keep one", key_node.start_mark
                )
            seen[key] = key_node.start_mark.line
        return super().construct_mapping(node, deep)

    def construct_yaml_timestamp(self, node: Any) -> Any:
        try:
            return super().construct_yaml_timestamp(node)
        except ValueError as exc:  # 2026-13-45: a date that looks like one
            raise yaml.constructor.ConstructorError(None, None, str(exc), node.start_mark) from None

    def construct_yaml_int(self, node: Any) -> Any:
        digits = sum(ch.isdigit() for ch in str(node.value))
        if digits > MAX_YAML_INT_DIGITS:
            raise yaml.constructor.ConstructorError(
                None, None, f"a number of {digits} digits (at most {MAX_YAML_INT_DIGITS})", node.start_mark
            )
        return super().construct_yaml_int(node)


_FrontMatterLoader.add_constructor("tag:yaml.org,2002:int", _FrontMatterLoader.construct_yaml_int)
_FrontMatterLoader.add_constructor("tag:yaml.org,2002:timestamp", _FrontMatterLoader.construct_yaml_timestamp)


@dataclass(frozen=True)
class FrontMatter:
    data: dict
    skip: int  # lines it spans, both `---` included (0: none)
    key_lines: dict[str, int] = field(default_factory=dict)  # top-level key -> line of the file (1-based)


def read_front_matter(text: str, where: str) -> FrontMatter:
    """A leading `---` YAML block, parsed within limits, with the line of each top-level key."""
    lines = text.split("\n")
    if not lines or lines[0].rstrip() != "---":
        return FrontMatter({}, 0)
    size = 0
    for i in range(1, len(lines)):
        if lines[i].rstrip() in ("---", "..."):
            break
        size += len(lines[i]) + 1
        if size > MAX_FRONT_MATTER_BYTES:
            raise FrontMatterError(
                f"front matter is longer than the {MAX_FRONT_MATTER_BYTES} characters dshaudit reads",
                file=where,
                line=i + 1,
            )
    else:
        raise FrontMatterError("front matter opened with '---' is never closed", file=where, line=1)
    loader = None
    try:
        loader = _FrontMatterLoader("\n".join(lines[1:i]))
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise FrontMatterError(
            f"malformed front matter: {problem}", file=where, line=mark.line + 2 if mark is not None else None
        ) from None
    except (ValueError, TypeError, OverflowError, RecursionError) as exc:  # what a constructor raises on odd input
        raise FrontMatterError(f"malformed front matter: {exc}", file=where, line=2) from None
    finally:
        if loader is not None:
            loader.dispose()
    data = data or {}
    if not isinstance(data, dict):
        raise FrontMatterError("front matter must be a YAML mapping", file=where, line=2)
    key_lines: dict[str, int] = {}
    if isinstance(node, yaml.MappingNode):
        for key_node, _ in node.value:
            if isinstance(key_node, yaml.ScalarNode):
                key_lines.setdefault(str(key_node.value), key_node.start_mark.line + 2)
    return FrontMatter(data, i + 1, key_lines)


def split_front_matter(text: str, where: str) -> tuple[dict, int]:
    """Parse a leading `---` YAML block; return it and the number of lines it spans."""
    front = read_front_matter(text, where)
    return front.data, front.skip


# The one form of the front matter's pin that is read and rewritten: `pin: NAME`,
# quoted or not, with a comment or not. Another (a quoted key, a tag, a block)
# is refused when read, so `rebase --write` never moves citations but not the pin.
_PIN_LINE_RE = re.compile(
    r"""(?P<key>pin[ \t]*:[ \t]*)"""
    r"""(?:"(?P<dq>[^"\\]*)"|'(?P<sq>[^']*)'|(?P<plain>[^'"\s#][^\s]*(?:[ \t]+[^\s#][^\s]*)*))"""
    r"""(?P<tail>[ \t]*(?:#.*)?)"""
)


@dataclass(frozen=True)
class PinLine:
    """`pin: NAME` as written: the key and what follows it, the quote, the value, the comment."""

    key: str
    quote: str
    value: str
    tail: str

    def with_value(self, value: str) -> str:
        return f"{self.key}{self.quote}{value}{self.quote}{self.tail}"


def parse_pin_line(line: str) -> PinLine | None:
    m = _PIN_LINE_RE.fullmatch(line)
    if m is None:
        return None
    for quote, group in (('"', "dq"), ("'", "sq"), ("", "plain")):
        if m.group(group) is not None:
            return PinLine(m.group("key"), quote, m.group(group), m.group("tail"))
    return None


def normalise_text(text: str) -> str:
    """A findings file's text as every reader sees it: a leading byte order
    mark dropped, and CRLF and a lone CR read as line ends, as CommonMark (and
    markdown-it) read them, so lines are counted the same everywhere."""
    return text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


def raw_lines(text: str) -> tuple[str, list[tuple[str, str]]]:
    """A file's decoded text as (byte order mark, [(line, its line end)]),
    lines numbered as `normalise_text` numbers them, so a writer can change
    a line and put every other byte back as it was."""
    bom = text[: len(text) - len(text.lstrip("\ufeff"))]
    parts = re.split(r"(\r\n|\r|\n)", text[len(bom) :])
    return bom, [(parts[i], parts[i + 1] if i + 1 < len(parts) else "") for i in range(0, len(parts), 2)]


def join_raw_lines(bom: str, lines: list[tuple[str, str]]) -> str:
    return bom + "".join(line + end for line, end in lines)


BLOCKS_VERSION = "2"  # bump when _blocks changes what it returns
BLOCKS_SHARD = "markdown-blocks"  # the cache shard they are kept in, by the text's digest
_CODE_HTML_RE = re.compile(r"\s*<(!--|pre\b|script\b|style\b|textarea\b|code\b)", re.IGNORECASE)


def prose_chunks(text: str, skip: int) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """Line ranges [a, b) of prose blocks, and of fenced blocks, below the front
    matter; remembered by the text's digest, since Markdown parsing is the
    slow part of reading findings."""
    from dshaudit.platform import cache

    key = cache.digest(BLOCKS_VERSION, str(skip), text)
    shard = cache.current().shard(BLOCKS_SHARD, BLOCKS_VERSION, _BLOCKS_SHAPE)
    hit = shard.get(key)
    if hit is None:
        chunks, fences = _blocks(text, skip)
        hit = {"chunks": chunks, "fences": fences}
        shard.put(key, hit)
    return [tuple(c) for c in hit["chunks"]], [tuple(f) for f in hit["fences"]]


def _blocks_shape(value: object) -> bool:
    from dshaudit.platform.cache import shaped

    pairs = [[int, int]]
    return shaped({"chunks": pairs, "fences": pairs})(value)


_BLOCKS_SHAPE = _blocks_shape


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


def citations_in_markdown(
    text: str, display_path: str, skip_lines: int = 0, web_url: str | None = None, link_base: str | None = None
) -> list[Citation]:
    """Every citation of a Markdown file's prose (and the headers of its fenced
    blocks), with what the text around each says it holds (inference.py).
    `link_base`: the document's folder in DSH's tree, when it is read from there
    (its relative links to lines are citations)."""
    lines = text.split("\n")
    chunks, fences = prose_chunks(text, skip_lines)
    headings = [i for i, ln in enumerate(lines) if i >= skip_lines and _HEADING_RE.match(ln)]
    pending: list[tuple[RawCitation, int, int, tuple[str, ...], Inferred, str | None]] = []

    def add(
        raw: RawCitation,
        line_index: int,
        column: int,
        extra_anchors: tuple[str, ...] = (),
        inferred: Inferred = Inferred(),
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
        )

    for a, b in chunks:
        chunk = "\n".join(lines[a:b])
        starts = [0]
        for ln in lines[a : b - 1]:
            starts.append(starts[-1] + len(ln) + 1)
        claim_spans = [(m.start(), m.end()) for m in CLAIM_SPAN_RE.finditer(chunk)]
        # A claim's value may name `path:line` (a search's matched lines): it is a value, not a citation.
        raws = [
            r for r in find_citations(chunk, web_url, link_base) if not any(s <= r.start < e for s, e in claim_spans)
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
                inferred=inferred.get(id(raw), Inferred()),
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
        found = find_citations(header[m.end() :], web_url)
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


# Text that looks like a citation, whether or not the grammar reads it: a file
# ending followed by a line (`x.ts:12`, `x.ts#L12`, `x.ts (line 12)`, `x.ts, lines
# 1-2`, `x.ts L12`, `x.ts（第 12 行）`), however it is spaced. Each match starts
# at a `.` and looks a bounded way ahead: linear in the text.
_CITATION_SHAPED_RE = re.compile(
    r"(?<=\w)\.[A-Za-z][A-Za-z0-9]{0,5}"
    r"(?=[:#]L?\d|`?[\s\u00a0]{0,3}[(（][\s\u00a0]{0,3}(?:lines?|L|第)[\s\u00a0]{0,3}\d"
    r"|`?,[\s\u00a0]{0,3}lines?[\s\u00a0]{1,3}\d|`?[\s\u00a0]{1,3}L\d)"
)


def citation_shaped(text: str, skip_lines: int = 0) -> tuple[int, str] | None:
    """The first line below the front matter holding text shaped like a
    citation (anywhere: prose, code blocks, comments), and that text; None
    when there is none. A file with such text and no citation found was not
    checked as its author meant it to be."""
    start = 0
    for _ in range(skip_lines):
        start = text.find("\n", start) + 1
        if start == 0:
            return None
    m = _CITATION_SHAPED_RE.search(text, start)
    if m is None:
        return None
    line_start = text.rfind("\n", 0, m.start()) + 1
    line_end = text.find("\n", m.end())
    line = text[line_start : line_end if line_end != -1 else len(text)]
    column = m.start() - line_start
    lo = max((line.rfind(ch, 0, column) for ch in " \t`("), default=-1) + 1
    word = line[max(lo, column - 60) : column + 16].split()[0] if line[lo : column + 16].strip() else ""
    return text.count("\n", 0, m.start()) + 1, word.strip("`")


def no_citations_message(line: int, word: str) -> str:
    """What `check` and `lint` say of a file with citation-shaped text and no citation."""
    return (
        f"no citation found in the file, though line {line} holds citation-shaped text `{word}` "
        "(in a code block or comment, or in a form dshaudit does not read)"
    )


def display_path(path: Path) -> str:
    """The path as the user sees it: relative to the working directory when
    inside it (without following a symbolic link's target)."""
    try:
        return Path(os.path.abspath(path)).relative_to(Path(os.path.abspath(Path.cwd()))).as_posix()
    except ValueError:
        return path.as_posix()


def load_findings_file(path: Path, web_url: str | None = None, citations: bool = True) -> FindingsFile:
    """A findings file, parsed; with `web_url` (DSH's web address), permalinks into it
    are citations; `citations=False` reads its claims and pin only (no citations)."""
    shown = display_path(path)
    try:
        if path.is_symlink() and not path.resolve().is_relative_to(Path.cwd().resolve()):
            raise InputError("is a symbolic link out of the working directory; refusing to read it", file=shown)
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", file=shown) from None
    read = read_regular(path, shown, MAX_FINDINGS_BYTES)
    data = read.data
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = len(re.split(rb"\r\n|\r|\n", data[: exc.start].removeprefix(b"\xef\xbb\xbf")))
        raise InputError(
            f"not UTF-8 (byte 0x{data[exc.start]:02x}); findings must be UTF-8", file=shown, line=line
        ) from None
    return parse_findings(text, shown, web_url, read, citations)


def parse_findings(
    text: str, shown: str, web_url: str | None = None, read: ReadFile | None = None, citations: bool = True
) -> FindingsFile:
    """A findings file from its text: read from disk by `load_findings_file` (`read`
    is the file as read, for a writer to check), or an editor's buffer (the
    language server); `shown` names it in messages."""
    text = normalise_text(text)
    front = read_front_matter(text, shown)
    pin = front.data.get("pin")
    pin_line = front.key_lines.get("pin", 2)
    if pin is not None and not isinstance(pin, str):
        raise FrontMatterError(
            f"front matter 'pin' must be a pin name or a full SHA, not {pin!r}", file=shown, line=pin_line
        )
    if pin is not None:
        written = parse_pin_line(text.split("\n", pin_line)[pin_line - 1])
        if written is None or written.value != pin:
            raise FrontMatterError(
                "front matter: write the pin on a line of its own as `pin: NAME` (quotes "
                "and a comment allowed), the one form `rebase --write` rewrites",
                file=shown,
                line=pin_line,
            )
    skip = front.skip
    return FindingsFile(
        path=shown,
        front_matter=front.data,
        citations=tuple(citations_in_markdown(text, shown, skip, web_url)) if citations else (),
        pin=pin,
        claims=tuple(claims_in_markdown(text, shown, skip)),
        digest=read.digest if read is not None else "",
        text=text,
        pin_line=pin_line if pin is not None else 0,
        read=read,
    )


def with_citations(early: FindingsFile, web_url: str | None = None) -> FindingsFile:
    """A findings file read without its citations (`citations=False`), completed with
    them from the same text: what `load_findings_file` gives, the file read once."""
    skip = read_front_matter(early.text, early.path).skip
    return replace(early, citations=tuple(citations_in_markdown(early.text, early.path, skip, web_url)))


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
