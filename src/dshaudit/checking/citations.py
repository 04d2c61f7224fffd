"""Verify citations against snapshots: the one core loop of `dshaudit check`.

Each citation is checked at its strongest level, and the first failing level
decides its status: path, then range, then symbol anchor, then content anchor.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from functools import partial
from itertools import accumulate

from dshaudit.checking.suspect import FileView, described_place, relevance_index, suspect
from dshaudit.core.errors import RepoError
from dshaudit.core.model import Citation, LineRange, Pin, SourceLocation, Status, Verdict, format_lines, replaced
from dshaudit.documents.findings import MARKDOWN_ENDINGS
from dshaudit.documents.inference import Inferred
from dshaudit.documents.matching import WordIndex, WordIndexLater, alnum, squash, words_of
from dshaudit.documents.paths import path_problem
from dshaudit.git.pins import PinResolver
from dshaudit.git.repository import DshRepository
from dshaudit.git.snapshot import Snapshot
from dshaudit.index import declarations
from dshaudit.lang.symbols import SymbolTable

BINARY_SNIFF_BYTES = 8000


# Files whose declarations tree-sitter reads (the TypeScript grammar).
SYMBOL_FILE_ENDINGS = frozenset({"ts", "tsx", "mts", "cts", "js", "jsx", "mjs", "cjs"})


PROSE_FILE_ENDINGS = MARKDOWN_ENDINGS + (".txt", ".rst")  # their brackets are the prose's
STRUCTURED_FILE_ENDINGS = (".yml", ".yaml", ".json", ".jsonc", ".json5")  # keys name their blocks


@dataclass
class FileText:
    """A blob decoded into lines, with a whitespace-free index for anchor search."""

    lines: list[str]
    _squashed: str | None = None
    _line_starts: list[int] | None = None
    _words: WordIndex | None = None
    _relevance: WordIndex | None = None

    def relevance(self) -> WordIndex:
        """Which lines hold each word, import statements left out: built on first need."""
        if self._relevance is None:
            self._relevance = relevance_index(self.lines, self.words())
        return self._relevance

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
        # A file of Windows line ends keeps no `\r` on its lines; most files have none to strip
        # (history decodes each version of a cited file, some of thousands of lines).
        return cls([ln.removesuffix("\r") for ln in lines] if "\r" in text else lines)

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


# How far from a citation's commit its numbers are looked for (first-parent commits, each way).
TIME_TRAVEL_REACH = 200


def _commit_words(sha: str, subject: str) -> str:
    """A commit as a message names it: its short id, and the pull request its subject names."""
    from dshaudit.git.log import pull_request

    pr = pull_request(subject)
    return f"{sha[:12]}" + (f" (#{pr})" if pr else "")


def _may_hold(inferred: Inferred, region: tuple[LineRange, ...], text: FileText) -> bool:
    """Whether the cited lines hold a name or a word of the text at all: read before a version of
    the file is indexed whole to learn whether they hold what the text describes."""
    cited = text.cited_text(region)
    squashed = squash(cited)
    if any(squash(name.rsplit(".", 1)[-1].removesuffix("()")) in squashed for name in inferred.names):
        return True
    return bool(set(inferred.words) & set(words_of(cited)))


def _commits(distance: int) -> str:
    return f"{abs(distance)} first-parent commit{'s' if abs(distance) != 1 else ''}"


def _describe_lines(lines: list[int], limit: int = 5) -> str:
    shown = ", ".join(str(n) for n in lines[:limit])
    more = f" and {len(lines) - limit} more" if len(lines) > limit else ""
    return ("line " if len(lines) == 1 else "lines ") + shown + more


def _region_words(region: tuple[LineRange, ...]) -> str:
    single = len(region) == 1 and region[0].start == region[0].end
    return ("line " if single else "lines ") + format_lines(region)


_ANYWHERE = SourceLocation("", 0, 0)


class _Declarations(Mapping[str, tuple[LineRange, ...]]):
    """A cited file's declarations, parsed when a rule first asks for them: the rules of most
    citations ask for none (a text that gives no name), and parsing is the costly part."""

    def __init__(self, build: Callable[[], Mapping[str, tuple[LineRange, ...]]]):
        self._build = build
        self._spans: Mapping[str, tuple[LineRange, ...]] | None = None

    @property
    def _all(self) -> Mapping[str, tuple[LineRange, ...]]:
        if self._spans is None:
            self._spans = self._build()
        return self._spans

    def __getitem__(self, name: str) -> tuple[LineRange, ...]:
        return self._all[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._all)

    def __len__(self) -> int:
        return len(self._all)


class Verifier:
    """Checks citations; caches decoded files and symbol tables by blob id.

    The repository is opened on first need (a citation that is malformed or
    names no pin needs none)."""

    def __init__(self, resolver: PinResolver, repository: Callable[[], DshRepository]):
        self.resolver = resolver
        self.repository = repository
        self._texts: dict[str, FileText | None] = {}
        self._verdicts: dict[tuple[Citation, Pin | None, str | None], Verdict] = {}
        self._statuses: dict[tuple[Citation, Pin | None, str | None], Verdict] = {}  # `status_at`'s
        self._blobs: dict[str, bytes] = {}  # read ahead (`read_ahead`), by blob id

    def forget(self, blobs: set[str]) -> None:
        """Let go of what was read and parsed of these blobs (history drops the files each commit replaces)."""
        for blob in blobs:
            self._texts.pop(blob, None)
            self._blobs.pop(blob, None)
        declarations.forget(blobs)

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
        blob = entry.blob_sha
        return declarations.symbol_table(path, blob, lambda: self._read(snap, blob))

    def verify(self, citation: Citation, pin: Pin | None, ref_text: str | None) -> Verdict:
        """The citation's verdict at `pin` (None: `ref_text`, the reference as
        written, named no pin; None too: nothing named one).

        A commit's content never changes, so a verdict is remembered by what
        was cited, wherever it was written: the language server checks a
        document again on each keystroke, and its citations are as they were."""
        key = _written_anywhere(citation, pin, ref_text)
        known = self._verdicts.get(key)
        if known is None:
            known = self._verdicts[key] = self._verify(key[0], pin, ref_text)
        return replaced(known, citation=citation)

    def status_at(self, citation: Citation, pin: Pin) -> Verdict:
        """The citation's verdict at `pin`, for a caller that reads its status and path
        alone (history's walk, at each commit that touches a cited file): what only its
        message says is not looked for (where a missing anchor stands now, which other
        version the numbers fit), and it is not remembered for `verify`. Its citation is
        the one verified, wherever it was written."""
        key = _written_anywhere(citation, pin, pin.name)
        known = self._verdicts.get(key) or self._statuses.get(key)
        if known is None:
            known = self._statuses[key] = self._verify(key[0], pin, pin.name, messages=False)
        return known

    def _verify(self, citation: Citation, pin: Pin | None, ref_text: str | None, messages: bool = True) -> Verdict:
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
        if citation.is_permalink and not self.repository().has_commit(pin.sha):
            return verdict(Status.UNKNOWN_PIN, f"the permalink's commit {pin.sha} is not in the DSH clone")
        snap = self.repository().snapshot(pin.sha, pin.name)
        if citation.form == "tree-permalink":
            return self._folder(citation, snap, pin)
        path, how = self._resolve_path(citation, snap)
        if path is None:
            if how:
                return verdict(Status.AMBIGUOUS_PATH, how)
            close = snap.closest_paths(citation.path)
            hint = f"; closest existing path: {close[0]}" if close else ""
            return verdict(Status.MISSING_PATH, f"no such file at {pin.name}{hint}")
        status, message, resolved, suggested = self._check_file(citation, snap, path, pin, messages)
        return Verdict(citation, pin, status, (how + "; " if how else "") + message, resolved, path, suggested)

    @staticmethod
    def _folder(citation: Citation, snap: Snapshot, pin: Pin) -> Verdict:
        """A permalink to a folder holds when the folder is there at its ref."""
        entry = snap.entry(citation.path)
        if entry is None or entry.kind != "tree":
            what = "no such folder" if entry is None else f"{citation.path} is not a folder"
            return Verdict(citation, pin, Status.MISSING_PATH, f"{what} at {pin.name}")
        if pin.branch:
            return Verdict(citation, pin, Status.UNPINNED, _unpinned(pin), (), citation.path)
        return Verdict(citation, pin, Status.OK, "ok", (), citation.path)

    def _check_file(
        self, citation: Citation, snap: Snapshot, path: str, pin: Pin, messages: bool = True
    ) -> tuple[Status, str, tuple[LineRange, ...], tuple[LineRange, ...]]:
        """The levels after the path: a text file, lines in range, symbol, anchors, inferred anchors;
        with the verdict, the lines looked at and the lines suggested instead (Verdict.suggested).
        Without `messages`, a message is not completed where that means searching the file or its
        history."""

        def failed(
            status: Status,
            message: str,
            resolved: tuple[LineRange, ...] = (),
            suggested: tuple[LineRange, ...] = (),
        ) -> tuple[Status, str, tuple[LineRange, ...], tuple[LineRange, ...]]:
            return status, message, resolved, suggested

        entry = snap.entry(path)
        assert entry is not None
        if entry.kind != "blob" or entry.blob_sha is None:
            what = {"tree": "a directory", "submodule": "a submodule", "symlink": "a symbolic link"}[entry.kind]
            return failed(Status.NOT_A_FILE, f"{path} is {what} at {pin.name}, not a file")
        if citation.is_permalink and not (citation.lines or citation.symbol):
            # A link to a whole file, binary or not: that the file is there is all it says.
            return failed(Status.UNPINNED, _unpinned(pin)) if pin.branch else failed(Status.OK, "ok")
        text = self._text(snap, entry.blob_sha)
        if text is None:
            return failed(Status.BINARY, f"{path} is binary at {pin.name}; cite text files only")
        n = len(text.lines)
        for r in citation.lines:
            if r.end > n:
                what = f"line {r.start} is" if r.start == r.end else f"range {r} ends"
                said = f"{what} past the end of the file ({n} lines at {pin.name})"
                if messages and not citation.by_shape and citation.is_permalink:
                    # Numbers read from a longer version of the file, as a suspect citation's may be.
                    said += self._time_travel(citation, snap, path, citation.lines)
                return failed(Status.OUT_OF_RANGE, said)
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
            said = self._mismatch_message(missing, region, text) if messages else ""
            return failed(Status.CONTENT_MISMATCH, said, region)
        # Code that stands on the first cited line stands in the declaration holding that line,
        # whichever it is: only code that does not needs the file's declarations parsed.
        first = squash(text.lines[region[0].start - 1]) if citation.declared else ""
        if citation.declared and not all(squash(d) in first for d in citation.declared):
            held = self._declaration_holding(snap, path, region, text)
            inside = squash(text.cited_text((held,)))
            absent = [d for d in citation.declared if squash(d) not in inside]
            if absent:
                said = ""
                if messages:
                    hits = text.find(absent[0])
                    now = f"; it is at {_describe_lines(hits)}" if hits else f"; it is nowhere in {path}"
                    said = (
                        f"`{absent[0]}`, quoted beside the citation, is not in the declaration at "
                        f"{_region_words((held,))}{now}"
                    )
                return failed(Status.CONTENT_MISMATCH, said, region)
        if citation.expected_code:
            whole = alnum("\n".join(text.lines))
            absent = [code for code in citation.expected_code if alnum(code) not in whole]
            if absent:
                return failed(Status.CONTENT_MISMATCH, f"`{absent[0]}` is nowhere in {path} at {pin.name}")
        if region and not (citation.has_anchor or citation.expected_code):
            inferred = Inferred(citation.inferred, citation.block, citation.words)
            view = self._view(snap, path, entry.blob_sha, text, relevance=not citation.by_shape)
            reason = suspect(inferred, region, view, by_shape=citation.by_shape)
            if reason:
                if citation.by_shape:
                    return failed(Status.SUSPECT, reason, region)
                place = described_place(inferred, region, view)
                if messages:
                    reason += self._time_travel(citation, snap, path, region)
                return failed(Status.SUSPECT, reason, region, (place,) if place else ())
        if pin.branch:
            return failed(Status.UNPINNED, _unpinned(pin), region)
        return failed(Status.OK, "ok", region)

    def _view(self, snap: Snapshot, path: str, blob: str, text: FileText, relevance: bool) -> FileView:
        """What the suspect rules read of one version of a cited file: its lines, its declarations
        (of a file tree-sitter reads), its words, and with `relevance` its words outside the imports."""
        code = path.rsplit(".", 1)[-1] in SYMBOL_FILE_ENDINGS
        table = partial(declarations.symbol_table, path, blob, partial(self._read, snap, blob))
        spans = _Declarations(lambda: table().spans) if code else {}
        prose = path.lower().endswith(PROSE_FILE_ENDINGS)
        structured = path.lower().endswith(STRUCTURED_FILE_ENDINGS)
        words, relevant = WordIndexLater(text.words), WordIndexLater(text.relevance) if relevance else None
        return FileView(text.lines, spans, words, prose, relevant, structured)

    def _time_travel(self, citation: Citation, snap: Snapshot, path: str, region: tuple[LineRange, ...]) -> str:
        """Where the numbers of a citation that does not hold were right: the nearest version of its
        file, within TIME_TRAVEL_REACH first-parent commits before or after, whose cited lines hold
        what the text describes (its author read the numbers there). '' when none does."""
        from dshaudit.checking.suspect import holds_described
        from dshaudit.git.log import nearby_versions

        entry = snap.entry(path)
        repository = self.repository()
        try:
            versions = nearby_versions(repository, snap.sha, path, TIME_TRAVEL_REACH)
        except RepoError:
            return ""
        inferred = Inferred(citation.inferred, citation.block, citation.words)
        seen = {entry.blob_sha if entry else ""}
        for version in versions:
            if version.blob in seen:
                continue
            seen.add(version.blob)
            text = self._text(snap, version.blob)
            if text is None or any(r.end > len(text.lines) for r in region) or not _may_hold(inferred, region, text):
                continue
            view = self._view(snap, path, version.blob, text, relevance=True)
            if suspect(inferred, region, view, by_shape=False) is None and holds_described(inferred, region, view):
                made = _commit_words(version.commit.sha, version.commit.subject)
                if version.distance > 0:
                    return (
                        f"; these numbers match the file from {made}, "
                        f"{version.distance} first-parent commits after {snap.sha[:12]}"
                    )
                # Before the citation's commit: the file kept this version until the next one toward it.
                nxt = min((v for v in versions if version.distance < v.distance <= 0), key=lambda v: v.distance)
                when = f"{_commits(nxt.distance)} before {snap.sha[:12]}" if nxt.distance else "the commit cited"
                return (
                    f"; these numbers match the file from {made} until "
                    f"{_commit_words(nxt.commit.sha, nxt.commit.subject)}, {when}"
                )
        return ""

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


def _written_anywhere(
    citation: Citation, pin: Pin | None, ref_text: str | None
) -> tuple[Citation, Pin | None, str | None]:
    """What a verdict is remembered by: the citation wherever it was written, its pin and ref."""
    return replaced(citation, source=_ANYWHERE), pin, ref_text


def _unpinned(pin: Pin) -> str:
    return f"holds at branch {pin.name} ({pin.sha[:12]}), but a branch moves: cite a commit"


def contiguous(ranges: tuple[LineRange, ...]) -> list[LineRange]:
    """Ranges that touch or overlap merged: lines 75 and 76 are one block of text, 75 and 77 are two."""
    blocks: list[LineRange] = []
    for r in sorted(ranges):
        if blocks and r.start <= blocks[-1].end + 1:
            blocks[-1] = LineRange(blocks[-1].start, max(blocks[-1].end, r.end))
        else:
            blocks.append(r)
    return blocks
