"""Verify citations against snapshots: the one core loop of `dshaudit check`.

Each citation is checked at its strongest level, and the first failing level
decides its status: path, then range, then symbol anchor, then content anchor.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from functools import partial
from itertools import accumulate
from typing import TYPE_CHECKING

from dshaudit.checking.suspect import FileView, suspect
from dshaudit.core.diagnostics import Diagnostic, Outcome, Place, Summary, permalink, rules_of
from dshaudit.core.errors import DshauditError, InputError, RepoError
from dshaudit.core.model import (
    Citation,
    ClaimStatus,
    ClaimVerdict,
    LineRange,
    Pin,
    SourceLocation,
    Status,
    Verdict,
    format_lines,
)
from dshaudit.core.results import CheckResult
from dshaudit.core.status import DiagnosticStatus, Reach, Severity
from dshaudit.documents.findings import MARKDOWN_ENDINGS, FindingsFile
from dshaudit.documents.grammar import path_problem
from dshaudit.documents.inference import Inferred
from dshaudit.documents.matching import WordIndex, alnum, squash
from dshaudit.git.pins import PinResolver
from dshaudit.git.repository import DshRepository
from dshaudit.git.snapshot import Snapshot
from dshaudit.git.twin import in_background
from dshaudit.lang.symbols import SymbolTable, build_symbol_table
from dshaudit.platform import background
from dshaudit.platform.background import BackgroundJob, Placement

if TYPE_CHECKING:
    from dshaudit.core.references import Reference
    from dshaudit.documents.names import Name
    from dshaudit.facts.book import FactBook

BINARY_SNIFF_BYTES = 8000
# Files whose declarations tree-sitter reads (the TypeScript grammar).
SYMBOL_FILE_ENDINGS = frozenset({"ts", "tsx", "mts", "cts", "js", "jsx", "mjs", "cjs"})
PROSE_FILE_ENDINGS = MARKDOWN_ENDINGS + (".txt", ".rst")  # their brackets are the prose's


@dataclass
class FileText:
    """A blob decoded into lines, with a whitespace-free index for anchor search."""

    lines: list[str]
    _squashed: str | None = None
    _line_starts: list[int] | None = None
    _words: WordIndex | None = None

    def words(self) -> WordIndex:
        """Which lines hold each word (for citations without an anchor): built on first need."""
        if self._words is None:
            self._words = WordIndex(self.lines)
        return self._words

    @classmethod
    def from_bytes(cls, data: bytes) -> FileText:
        text = data.decode("utf-8", errors="replace")
        lines = text.split("\n")
        if lines and lines[-1] == "":
            lines.pop()  # a final newline ends the last line; it does not start another
        return cls([ln.removesuffix("\r") for ln in lines])

    def cited_text(self, ranges: tuple[LineRange, ...]) -> str:
        return "\n".join("\n".join(self.lines[r.start - 1 : r.end]) for r in ranges)

    def find(self, anchor: str) -> list[int]:
        """1-based lines where the whitespace-free anchor starts, anywhere in the file."""
        if self._squashed is None:
            parts = ["".join(ln.split()) for ln in self.lines]  # squash, inlined: files have thousands of lines
            self._squashed = "".join(parts)
            self._line_starts = list(accumulate(map(len, parts), initial=0))[:-1]
        needle = squash(anchor)
        if not needle or self._line_starts is None:
            return []
        hits: list[int] = []
        i = self._squashed.find(needle)
        while i != -1:
            line = bisect_right(self._line_starts, i)
            if not hits or hits[-1] != line:
                hits.append(line)
            i = self._squashed.find(needle, i + 1)
        return hits


def _describe_lines(lines: list[int], limit: int = 5) -> str:
    shown = ", ".join(str(n) for n in lines[:limit])
    more = f" and {len(lines) - limit} more" if len(lines) > limit else ""
    return ("line " if len(lines) == 1 else "lines ") + shown + more


def _region_words(region: tuple[LineRange, ...]) -> str:
    single = len(region) == 1 and region[0].start == region[0].end
    return ("line " if single else "lines ") + format_lines(region)


_ANYWHERE = SourceLocation("", 0, 0)


class Verifier:
    """Checks citations; caches decoded files and symbol tables by blob id.

    The repository is opened on first need (a citation that is malformed or
    names no pin needs none)."""

    def __init__(self, resolver: PinResolver, repository: Callable[[], DshRepository]):
        self.resolver = resolver
        self.repository = repository
        self._texts: dict[str, FileText | None] = {}
        self._symbols: dict[tuple[str, str], SymbolTable] = {}
        self._verdicts: dict[tuple[Citation, Pin | None, str | None], Verdict] = {}
        self._blobs: dict[str, bytes] = {}  # read ahead (`read_ahead`), by blob id

    def forget(self, blobs: set[str]) -> None:
        """Let go of what was read and parsed of these blobs (history drops the files each commit replaces)."""
        for blob in blobs:
            self._texts.pop(blob, None)
            self._blobs.pop(blob, None)
        self._symbols = {k: v for k, v in self._symbols.items() if k[0] not in blobs}

    def read_ahead(self, snap: Snapshot, paths: Iterable[str]) -> None:
        """Read the files at these paths in one batch: one git process for them
        all, not one round trip each, which costs most while other git work runs."""
        wanted = {e.blob_sha for p in paths if (e := snap.entry(p)) is not None and e.kind == "blob" and e.blob_sha}
        self._blobs.update(snap.read_many(sorted(wanted - self._blobs.keys())))

    def _read(self, snap: Snapshot, blob_sha: str) -> bytes:
        data = self._blobs.get(blob_sha)
        return data if data is not None else snap.read(blob_sha)

    def text(self, snap: Snapshot, path: str) -> FileText | None:
        """The file at `path` as lines; None for anything but a text file."""
        entry = snap.entry(path)
        if entry is None or entry.kind != "blob" or entry.blob_sha is None:
            return None
        return self._text(snap, entry.blob_sha)

    def _text(self, snap: Snapshot, blob_sha: str) -> FileText | None:
        if blob_sha not in self._texts:
            data = self._read(snap, blob_sha)
            self._texts[blob_sha] = None if b"\0" in data[:BINARY_SNIFF_BYTES] else FileText.from_bytes(data)
        return self._texts[blob_sha]

    def symbols(self, snap: Snapshot, path: str) -> SymbolTable:
        """The declarations of the file at `path` (which must be a file)."""
        entry = snap.entry(path)
        if entry is None or entry.blob_sha is None:
            raise ValueError(f"{path} is not a file at {snap.sha}")
        key = (entry.blob_sha, path.rsplit(".", 1)[-1])
        if key not in self._symbols:
            self._symbols[key] = build_symbol_table(path, self._read(snap, entry.blob_sha))
        return self._symbols[key]

    def verify(self, citation: Citation, pin: Pin | None, ref_text: str | None) -> Verdict:
        """The citation's verdict at `pin` (None: `ref_text`, the reference as
        written, named no pin; None too: nothing named one).

        A commit's content never changes, so a verdict is remembered by what
        was cited, wherever it was written: the language server checks a
        document again on each keystroke, and its citations are as they were."""
        key = (replace(citation, source=_ANYWHERE), pin, ref_text)
        known = self._verdicts.get(key)
        if known is None:
            known = self._verdicts[key] = self._verify(key[0], pin, ref_text)
        return replace(known, citation=citation)

    def _verify(self, citation: Citation, pin: Pin | None, ref_text: str | None) -> Verdict:
        def verdict(status: Status, message: str) -> Verdict:
            return Verdict(citation, pin, status, message)

        if citation.problem:
            return verdict(Status.INVALID_CITATION, citation.problem)
        problem = path_problem(citation.path)
        if problem:
            return verdict(Status.INVALID_CITATION, problem)
        if pin is None:
            return verdict(
                Status.UNKNOWN_PIN,
                self.resolver.unknown(ref_text)
                if ref_text
                else "no pin: the findings file names none in its front matter",
            )
        if citation.form == "permalink" and not self.repository().has_commit(pin.sha):
            return verdict(Status.UNKNOWN_PIN, f"the permalink's commit {pin.sha} is not in the DSH clone")
        snap = self.repository().snapshot(pin.sha, pin.name)
        path, how = self._resolve_path(citation, snap)
        if path is None:
            if how:
                return verdict(Status.AMBIGUOUS_PATH, how)
            close = snap.closest_paths(citation.path)
            hint = f"; closest existing path: {close[0]}" if close else ""
            return verdict(Status.MISSING_PATH, f"no such file at {pin.name}{hint}")
        status, message, resolved = self._check_file(citation, snap, path, pin)
        return Verdict(citation, pin, status, (how + "; " if how else "") + message, resolved, path)

    def _check_file(
        self, citation: Citation, snap: Snapshot, path: str, pin: Pin
    ) -> tuple[Status, str, tuple[LineRange, ...]]:
        """The levels after the path: a text file, lines in range, symbol, anchors, inferred anchors."""

        def failed(
            status: Status, message: str, resolved: tuple[LineRange, ...] = ()
        ) -> tuple[Status, str, tuple[LineRange, ...]]:
            return status, message, resolved

        entry = snap.entry(path)
        assert entry is not None
        if entry.kind != "blob" or entry.blob_sha is None:
            what = {"tree": "a directory", "submodule": "a submodule", "symlink": "a symbolic link"}[entry.kind]
            return failed(Status.NOT_A_FILE, f"{path} is {what} at {pin.name}, not a file")
        text = self._text(snap, entry.blob_sha)
        if text is None:
            return failed(Status.BINARY, f"{path} is binary at {pin.name}; cite text files only")
        n = len(text.lines)
        for r in citation.lines:
            if r.end > n:
                what = f"line {r.start} is" if r.start == r.end else f"range {r} ends"
                return failed(Status.OUT_OF_RANGE, f"{what} past the end of the file ({n} lines at {pin.name})")
        region = citation.lines
        if citation.symbol:
            table = self.symbols(snap, path)
            spans = table.resolve(citation.symbol)
            if not spans:
                return failed(Status.UNKNOWN_SYMBOL, self._unknown_symbol_message(citation.symbol, table))
            if citation.lines:
                outside = [r for r in citation.lines if not any(s.start <= r.start and r.end <= s.end for s in spans)]
                if outside:
                    return failed(
                        Status.OUTSIDE_SYMBOL,
                        f"lines {format_lines(tuple(outside))} are outside {citation.symbol} "
                        f"(declared at {format_lines(spans)})",
                        spans,
                    )
            else:
                region = spans
        missing = []
        if citation.anchors:
            # Each cited part is matched on its own: an anchor must stand within
            # one part, never in the join of two parts with uncited lines between.
            parts = [squash(text.cited_text((block,))) for block in contiguous(region)]
            missing = [a for a in citation.anchors if not any(squash(a) in part for part in parts)]
        if missing:
            return failed(Status.CONTENT_MISMATCH, self._mismatch_message(missing, region, text), region)
        if citation.declared:
            held = self._declaration_holding(snap, path, region, text)
            inside = squash(text.cited_text((held,)))
            absent = [d for d in citation.declared if squash(d) not in inside]
            if absent:
                hits = text.find(absent[0])
                now = f"; it is at {_describe_lines(hits)}" if hits else f"; it is nowhere in {path}"
                return failed(
                    Status.CONTENT_MISMATCH,
                    f"`{absent[0]}`, quoted beside the citation, is not in the declaration at "
                    f"{_region_words((held,))}{now}",
                    region,
                )
        if citation.expected_code:
            whole = alnum("\n".join(text.lines))
            absent = [code for code in citation.expected_code if alnum(code) not in whole]
            if absent:
                return failed(Status.CONTENT_MISMATCH, f"`{absent[0]}` is nowhere in {path} at {pin.name}")
        if region and not (citation.has_anchor or citation.expected_code):
            declarations = self.symbols(snap, path).spans if path.rsplit(".", 1)[-1] in SYMBOL_FILE_ENDINGS else {}
            reason = suspect(
                Inferred(citation.inferred, citation.block, citation.words),
                region,
                FileView(text.lines, declarations, text.words(), path.lower().endswith(PROSE_FILE_ENDINGS)),
            )
            if reason:
                return failed(Status.SUSPECT, reason, region)
        if pin.branch:
            return failed(
                Status.UNPINNED,
                f"holds at branch {pin.name} ({pin.sha[:12]}), but a branch moves: cite a commit",
                region,
            )
        return failed(Status.OK, "ok", region)

    def _declaration_holding(
        self, snap: Snapshot, path: str, region: tuple[LineRange, ...], text: FileText
    ) -> LineRange:
        """The smallest declaration (doc comment included) that holds the first cited line; the cited lines
        themselves when no declaration does, or the file is not one tree-sitter reads."""
        first = region[0].start
        if path.rsplit(".", 1)[-1] in SYMBOL_FILE_ENDINGS:
            spans = [s for spans in self.symbols(snap, path).spans.values() for s in spans if s.start <= first <= s.end]
            if spans:
                return min(spans, key=lambda s: s.end - s.start)
        return LineRange(first, max(r.end for r in region))

    def _resolve_path(self, citation: Citation, snap: Snapshot) -> tuple[str | None, str]:
        """The tree path a citation names, and how it was found ('' when as written).
        (None, why) when several paths could be meant; (None, '') when none."""
        path = citation.path
        if snap.entry(path) is not None:
            return path, ""
        if citation.context_dir:
            folder = citation.context_dir
            while folder:
                if snap.entry(f"{folder}/{path}") is not None:
                    return f"{folder}/{path}", f"`{path}` read as {folder}/{path} (after the path before it)"
                folder = folder.rpartition("/")[0]
        candidates = snap.paths_ending_with(path)
        if len(candidates) > 1 and citation.nearby:
            near = [
                c
                for c in candidates
                if any(c.startswith(d + "/") or d.startswith(c.rsplit("/", 1)[0]) for d in citation.nearby)
            ]
            if len(near) == 1:
                return near[0], f"`{path}` read as {near[0]} (the one under a folder this section cites)"
        if len(candidates) == 1:
            return candidates[0], f"`{path}` read as {candidates[0]} (the only file whose path ends so)"
        if candidates:
            shown = ", ".join(candidates[:5]) + (f" and {len(candidates) - 5} more" if len(candidates) > 5 else "")
            return None, f"`{path}` could be any of {len(candidates)} files: {shown}"
        return None, ""

    @staticmethod
    def _unknown_symbol_message(symbol: str, table: SymbolTable) -> str:
        import difflib

        close = difflib.get_close_matches(symbol, table.names(), n=1, cutoff=0.6)
        msg = f"no declaration named {symbol}"
        if close:
            msg += f"; closest: {close[0]} at line {table.spans[close[0]][0].start}"
        if table.first_error_line:
            msg += f" (tree-sitter could not parse the file at line {table.first_error_line})"
        return msg

    @staticmethod
    def _mismatch_message(missing: list[str], region: tuple[LineRange, ...], text: FileText) -> str:
        parts = []
        for anchor in missing:
            hits = text.find(anchor)
            where = f"now at {_describe_lines(hits)}" if hits else "not found anywhere in the file"
            parts.append(f"`{anchor}` is not on {_region_words(region)}; {where}")
        return "; ".join(parts)


def contiguous(ranges: tuple[LineRange, ...]) -> list[LineRange]:
    """Ranges that touch or overlap merged: lines 75 and 76 are one block of text, 75 and 77 are two."""
    blocks: list[LineRange] = []
    for r in sorted(ranges):
        if blocks and r.start <= blocks[-1].end + 1:
            blocks[-1] = LineRange(blocks[-1].start, max(blocks[-1].end, r.end))
        else:
            blocks.append(r)
    return blocks


def check(
    files: list[FindingsFile],
    resolver: PinResolver,
    repository: Callable[[], DshRepository],
    pin_override: str | None = None,
    *,
    citations: bool = True,
    claims: bool = True,
    references: bool = True,
    verifier: Verifier | None = None,
    book: FactBook | None = None,
    carry: Carry | None = None,
) -> CheckResult:
    """Verify every citation and evaluate every claim of every file. The
    repository is opened only when something needs it, so findings with only
    malformed citations need no clone. `citations=False` evaluates claims only,
    `claims=False` citations only. A caller that checks again and again (the
    language server) passes its own `verifier` and `book`, which keep what
    they read; without them each check reads afresh. `carry`: how citations of
    documents written at another pin are carried (moves/carry.py).
    A pin that names nothing is an input error for --pin and front matter, and
    an `unknown_pin` verdict for a citation's own `@` suffix."""
    _require_pins(files, resolver, pin_override)
    # The claims are measured, and the names and quoted code looked up, in the background
    # (platform/background.py) while the citations are checked here. The trees they all
    # read are listed before the first of those starts, once: the others begin with the
    # listings (DshRepository.twin).
    listed: list[DshRepository] = []

    def opened() -> DshRepository:
        if not listed:
            listed.append(repository())
            _list_trees(files, resolver, listed[0], pin_override)
        return listed[0]

    kept = book is not None or verifier is not None  # what is read stays in this process, for the next check
    claimed = _start_claims(files, resolver, opened, pin_override, book) if claims else BackgroundJob.done([])
    try:
        work = _reference_work(files, resolver, pin_override) if references else []
        looked = _start_references(work, resolver, repository, opened, kept)
        try:
            verdicts = (
                _check_citations(files, verifier or Verifier(resolver, repository), pin_override, carry)
                if citations
                else []
            )
            looked_up = looked.result()
        except BaseException:
            looked.stop()
            raise
        claim_verdicts = claimed.result()
    except BaseException:
        claimed.stop()
        raise
    return CheckResult(tuple(verdicts), tuple(claim_verdicts), tuple(looked_up))


def _require_pins(files: list[FindingsFile], resolver: PinResolver, pin_override: str | None) -> None:
    """An InputError unless --pin and every front matter's pin name a commit, and every
    citation without a pin of its own has one to be checked at."""
    if pin_override is not None:
        resolver.require(pin_override)
    for f in files:
        if f.pin is not None and resolver.resolve(f.pin) is None:
            raise InputError(f"front matter: {resolver.unknown(f.pin)}", file=f.path, line=f.pin_line or 2)
        if f.pin is None and pin_override is None and any(not c.pin_ref for c in f.citations):
            known = resolver.config.describe_pins()
            raise InputError(
                f"no pin: name one in the file's front matter (`pin: NAME`) or pass --pin "
                f"(a pin of dshaudit.toml: {known}; a tag; or a full SHA)",
                file=f.path,
            )


def _list_trees(
    files: list[FindingsFile], resolver: PinResolver, repository: DshRepository, pin_override: str | None
) -> None:
    """The tree of each pin the documents are checked at, listed (`Snapshot.index`, once
    per run): the citations read it here in any case. A pin the clone lacks is reported
    where the citations meet it."""
    refs = {pin_override} if pin_override else {f.pin for f in files if f.pin}
    try:
        for pin in sorted({p for ref in refs if ref and (p := resolver.resolve(ref)) is not None}, key=lambda p: p.sha):
            repository.snapshot(pin.sha, pin.name).index()
    except DshauditError:
        pass


def _start_claims(
    files: list[FindingsFile],
    resolver: PinResolver,
    repository: Callable[[], DshRepository],
    pin_override: str | None,
    book: FactBook | None,
) -> BackgroundJob[list[ClaimVerdict]]:
    """The claims' verdicts, measured in the background when there are facts to
    measure; a caller with its own `book` (the language server) has them measured
    here when it asks, into that book."""
    if book is not None or not _measures(files):
        return BackgroundJob.inline(partial(_check_claims, files, resolver, repository, pin_override, book))
    return in_background(
        repository(),
        lambda clone: _check_claims(files, PinResolver(resolver.config, lambda: clone), lambda: clone, pin_override),
    )


def _measures(files: list[FindingsFile]) -> bool:
    """Whether any claim of these documents has a fact to measure."""
    return any(not c.problem for f in files for c in f.claims)


def _start_references(
    work: list[_Work],
    resolver: PinResolver,
    repository: Callable[[], DshRepository],
    opened: Callable[[], DshRepository],
    kept: bool,
) -> BackgroundJob[list[tuple[Pin, Reference]]]:
    """The names and quoted code of the documents, looked up in the background; here
    when what is read is `kept` (the language server keeps its name indexes), or the
    run has one job: then the indexes' git processes start now, beside the citations,
    and are read when the answer is asked for."""
    if not work:
        return BackgroundJob.done([])
    if kept or background.placement() is Placement.INLINE:
        _prefetch_references(work, repository)
        return BackgroundJob.inline(
            partial(_check_references, work, resolver, repository), stop=partial(_stop_references, work, repository)
        )
    return in_background(opened(), lambda clone: _look_up_references(work, resolver, lambda: clone))


_Work = tuple[FindingsFile, Pin, list[tuple["Name", SourceLocation]], list[tuple[str, SourceLocation]]]


def _reference_work(files: list[FindingsFile], resolver: PinResolver, pin_override: str | None) -> list[_Work]:
    """Each document's names and absence claims, at its pin."""
    from dshaudit.checking.references import absent_claims, document_names
    from dshaudit.documents.names import MAX_NAME_CHARS

    work: list[_Work] = []
    for f in files:
        ref = pin_override or f.pin
        pin = resolver.resolve(ref) if ref else None
        if pin is None or not f.text:
            continue
        items = [(n, SourceLocation(f.path, line, col)) for n, line, col in document_names(f.text)]
        absent = [(t, SourceLocation(f.path, line, col)) for t, line, col in absent_claims(f.text)]
        for text, where in absent:
            if len(text) > MAX_NAME_CHARS:  # a name, not a page: and it is looked up through git's command line
                raise InputError(
                    f"`absent:` names {len(text)} characters; a name is at most {MAX_NAME_CHARS}",
                    file=f.path,
                    line=where.line,
                )
        if items or absent:
            work.append((f, pin, items, absent))
    return work


def _prefetch_references(work: list[_Work], repository: Callable[[], DshRepository]) -> None:
    """Every document's names at a pin looked up in one pass over the tree, started in the background."""
    from dshaudit.checking.references import prefetch_references

    try:
        for pin in sorted({pin for _, pin, _, _ in work}, key=lambda p: p.sha):
            prefetch_references(
                [i for _, p, items, _ in work if p == pin for i in items],
                repository().snapshot(pin.sha, pin.name),
                [t for _, p, _, absent in work if p == pin for t, _ in absent],
            )
    except RepoError:
        pass  # a commit the clone lacks: reported where the citations and references meet it


def _look_up_references(
    work: list[_Work], resolver: PinResolver, repository: Callable[[], DshRepository]
) -> list[tuple[Pin, Reference]]:
    _prefetch_references(work, repository)
    return _check_references(work, resolver, repository)


def _stop_references(work: list[_Work], repository: Callable[[], DshRepository]) -> None:
    from dshaudit.index.nameindex import index_for

    for pin in {pin for _, pin, _, _ in work}:
        try:
            index_for(repository().snapshot(pin.sha, pin.name)).stop()
        except RepoError:
            pass


def _check_references(
    work: list[_Work], resolver: PinResolver, repository: Callable[[], DshRepository]
) -> list[tuple[Pin, Reference]]:
    """The names and quoted code of each document, looked up at its pin."""
    from dshaudit.checking.references import check_references, compare_fragments, document_exemptions

    for pin in sorted({pin for _, pin, _, _ in work}, key=lambda p: p.sha):
        compare_fragments(
            [i for _, p, items, _ in work if p == pin for i in items], repository().snapshot(pin.sha, pin.name)
        )
    out: list[tuple[Pin, Reference]] = []
    for f, pin, items, absent in work:
        # Pin names in prose (`rc7`) name pins, not code.
        exempt = document_exemptions(f.text) | set(resolver.config.pins)
        snapshot = repository().snapshot(pin.sha, pin.name)
        out += [(pin, r) for r in check_references(items, snapshot, exempt=exempt, absent=absent)]
    return out


# How citations of a document written at another pin are carried to the pin they are
# checked at (moves/carry.py): given by the caller, from the layer above.
Carry = Callable[[list[tuple[Citation, Pin, Pin]], Verifier], list[Verdict]]


def _check_citations(
    files: list[FindingsFile], verifier: Verifier, pin_override: str | None, carry: Carry | None
) -> list[Verdict]:
    resolver, repository = verifier.resolver, verifier.repository
    work: list[tuple[Citation, Pin | None, str | None]] = []
    carried: list[tuple[Citation, Pin, Pin]] = []
    for f in files:
        written = resolver.resolve(f.written_at) if f.written_at else None
        for c in f.citations:
            pin, ref = citation_pin(c, f, resolver, pin_override)
            if written and pin and pin.sha != written.sha and not c.pin_ref and not c.problem:
                carried.append((c, written, pin))
            else:
                work.append((c, pin, ref))
    for pin in sorted({pin for c, pin, _ in work if pin is not None and not c.problem}, key=lambda p: p.sha):
        if repository().has_commit(pin.sha):
            verifier.read_ahead(
                repository().snapshot(pin.sha, pin.name), {c.path for c, p, _ in work if p == pin and not c.problem}
            )
    verdicts = [verifier.verify(c, pin, ref) for c, pin, ref in work]
    if carried:
        if carry is None:
            raise RuntimeError("documents written at another pin need check(carry=...)")
        verdicts += carry(carried, verifier)
    verdicts.sort(key=lambda v: (v.citation.source.file, v.citation.source.line, v.citation.source.column))
    return verdicts


def citation_pin(
    c: Citation, f: FindingsFile, resolver: PinResolver, pin_override: str | None
) -> tuple[Pin | None, str | None]:
    """The pin a citation is checked at, and the reference that named it: its own
    `@` suffix, else --pin, else its file's front matter."""
    ref = c.pin_ref or pin_override or f.pin
    if c.form == "permalink" and c.pin_ref:
        return resolver.resolve_link(c.pin_ref), ref
    return (resolver.resolve(ref) if ref else None), ref


def _check_claims(
    files: list[FindingsFile],
    resolver: PinResolver,
    repository: Callable[[], DshRepository],
    pin_override: str | None,
    own_book: FactBook | None = None,
) -> list[ClaimVerdict]:
    from dshaudit.documents.claims import evaluate, split_ref
    from dshaudit.facts.book import FactBook, registry

    known = set(registry())
    book = own_book or FactBook(repository, resolver=resolver)
    pins = {f.path: resolver.resolve(ref) if (ref := pin_override or f.pin) else None for f in files}
    wanted: dict[Pin, set[str]] = {}
    for f in files:
        pin = pins[f.path]
        for claim in f.claims:
            fact_id, _ = split_ref(claim.ref, known)
            if fact_id and pin and not claim.problem:
                wanted.setdefault(pin, set()).add(fact_id)
    try:
        for pin, ids in sorted(wanted.items(), key=lambda kv: kv[0].sha):
            book.many(sorted(ids), pin)  # their per-file work together, in parallel when large
        claim_verdicts = []
        for f in files:
            pin = pins[f.path]
            for claim in f.claims:
                fact_id, _ = split_ref(claim.ref, known)
                fact = book.get(fact_id, pin) if fact_id and pin and not claim.problem else None
                claim_verdicts.append(evaluate(claim, pin, fact, known))
    finally:
        if own_book is None:
            book.close()
    claim_verdicts.sort(key=lambda v: (v.claim.source.file, v.claim.source.line, v.claim.source.column))
    return claim_verdicts


# -- diagnostics ---------------------------------------------------------------


def citation_places(v: Verdict, web_url: str) -> tuple[Place, ...]:
    """The cited lines at the pin (the file only, when its lines mean nothing; nothing without a file)."""
    c, pin = v.citation, v.pin
    if pin is None or v.status.reach is Reach.NOWHERE:
        return ()
    ranges: tuple[LineRange | None, ...] = ()
    if v.status.reach is Reach.LINES:
        ranges = v.resolved_lines or c.lines
    return tuple(Place(pin, v.path, r, permalink(web_url, pin.sha, v.path, r)) for r in ranges or (None,))


def citation_diagnostic(v: Verdict, web_url: str) -> Diagnostic:
    c = v.citation
    pin_name = v.pin.name if v.pin else (c.pin_ref or "?")
    return Diagnostic(
        kind="citation",
        source=c.source,
        status=v.status,
        message=v.message,
        target=f"{c.target_text}@{pin_name}",
        pin=v.pin,
        places_of=lambda: citation_places(v, web_url),
        identity=("citation", c.text, *c.anchors),
        payload_of=v.as_dict,
        # Another document's citation, quoted to be corrected: reported as it stands, never a failure here.
        severity_override=Severity.NOTE if c.quoted and not v.ok else None,
    )


class Coverage(DiagnosticStatus):
    """What a check read: a run that checked nothing says so, never exits 0 in silence."""

    @property
    def family(self) -> str:
        return "coverage"

    NO_CITATIONS = (
        "no_citations",
        Severity.WARNING,
        "A file holds citation-shaped text but no citation was found.",
        "Text such as `path:12` stands in a code block or comment, is written in a form dshaudit does not "
        "read, or is broken by a character it cannot see. Write it as METHOD.md says; under --strict this fails.",
        Reach.NOWHERE,
    )
    NOTHING_CHECKED = (
        "nothing_checked",
        Severity.WARNING,
        "The PATHS given hold no citation.",
        "Nothing was checked against DSH: the files hold no citation dshaudit reads (or there are no Markdown "
        "files). Check the paths; under --strict this fails.",
        Reach.NOWHERE,
    )


def coverage(files: list[FindingsFile], result: CheckResult, paths: tuple[str, ...]) -> tuple[Diagnostic, ...]:
    """Warnings for what was not checked: a file with citation-shaped text and
    no citation; no citation at all in PATHS the user named."""
    from dshaudit.documents.findings import citation_shaped, no_citations_message, split_front_matter

    def warning(status: Coverage, where: SourceLocation, message: str) -> Diagnostic:
        return Diagnostic(
            "coverage",
            where,
            status,
            message,
            identity=("coverage", str(status)),
            payload_of=lambda: {"source": where.to_dict(), "status": status.value, "message": message},
        )

    out = []
    for f in files:
        if f.citations:
            continue
        shaped = citation_shaped(f.text, split_front_matter(f.text, f.path)[1])
        if shaped is not None:
            out.append(
                warning(Coverage.NO_CITATIONS, SourceLocation(f.path, shaped[0], 1), no_citations_message(*shaped))
            )
    # A document with names or claims but no citation was checked all the same: only nothing at all is said.
    if paths and not (result.verdicts or result.references or result.claims):
        where = SourceLocation(files[0].path if files else paths[0], 1, 1)
        named = ", ".join(paths)
        what = (
            f"its {len(files)} Markdown file{'s hold' if len(files) > 1 else ' holds'} no citation, name or claim "
            "dshaudit reads"
            if files
            else "it holds no Markdown file"
        )
        out.append(warning(Coverage.NOTHING_CHECKED, where, f"nothing checked in {named}: {what}"))
    return tuple(out)


def check_outcome(
    result: CheckResult,
    web_url: str,
    strict: bool = False,
    command: str = "check",
    coverage: tuple[Diagnostic, ...] = (),
) -> Outcome:
    """A check's verdicts as diagnostics: citations, then claims, each in file
    order; then what was not checked (`coverage`)."""
    from dshaudit.core.references import ReferenceStatus
    from dshaudit.documents.claims import claim_diagnostic

    s = result.summary()
    bullets = [("Citations", s.citations_line)]
    if s.claims:
        counts = ", ".join(f"{n} {status}" for status, n in s.claim_statuses.items() if n)
        bullets.append(("Claims", f"{s.claims}: {counts}; {s.claims_failed} failed"))
    if s.references:
        bullets.append(("Names", s.references_line))
    diagnostics = [citation_diagnostic(v, web_url) for v in result.verdicts]
    diagnostics += [claim_diagnostic(v, web_url) for v in result.claims]
    diagnostics += [r.diagnostic(pin, web_url) for pin, r in result.references]
    diagnostics += coverage
    sections = (("citations", ("citation",)), ("claims", ("claim",)), ("references", ("reference",)))
    return Outcome(
        command=command,
        diagnostics=tuple(diagnostics),
        summary=Summary(s.line, s.as_dict(), tuple(bullets), "Every citation and claim holds."),
        rules=rules_of(Status, ClaimStatus, ReferenceStatus, Coverage),
        strict=strict,
        sections=sections + ((("coverage", ("coverage",)),) if coverage else ()),
        files=tuple(sorted({d.source.file for d in diagnostics})),
    )
