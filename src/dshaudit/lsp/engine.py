"""What the language server keeps, and a document checked as `check` checks it.

The engine outlives every request: per configuration it keeps one session
(the DSH clone, opened once, and the pin resolver), one Verifier (decoded
files, symbol tables, verdicts) and one FactBook (measured facts), so that a
document checked again after a keystroke costs only what changed. A document
is parsed by findings.py from the editor's buffer and checked by
`verify.check`; its diagnostics are those of `verify.check_outcome`, placed
on the citation, claim or name they are about. Nothing here knows JSON-RPC:
server.py calls the engine from one worker thread, so the engine needs no lock.

Positions: dshaudit counts columns in code points; the client counts them in
the position encoding agreed at initialisation (UTF-16 code units unless it
offers another). `Lines` converts, on lines split at "\\n" only, as findings.py splits them.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote, urlparse

from lsprotocol import types

from dshaudit.app.commands import LazyRepository, Session
from dshaudit.checking.citations import FileText, Verifier
from dshaudit.checking.outcome import check_outcome
from dshaudit.checking.verify import check
from dshaudit.core.diagnostics import Diagnostic
from dshaudit.core.errors import DshauditError, InputError, RepoError
from dshaudit.core.model import SHA_RE, Citation, Claim, ClaimVerdict, Pin, Verdict
from dshaudit.core.results import CheckResult
from dshaudit.core.status import Severity
from dshaudit.documents.blocks import BLOCKS_SHARD
from dshaudit.documents.claims import CLAIM_SPAN_RE
from dshaudit.documents.findings import MAX_FINDINGS_BYTES, FindingsFile, parse_findings
from dshaudit.facts.book import FactBook
from dshaudit.git.pins import PinResolver
from dshaudit.platform import cache
from dshaudit.platform.config import Config, load_config

if TYPE_CHECKING:
    from dshaudit.git.snapshot import Snapshot
    from dshaudit.moves.rebaser import Rebaser

SCHEME = "dshaudit"
SOURCE = "dshaudit"
SEVERITIES = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.NOTE: types.DiagnosticSeverity.Information,
}
# Write the cache to disk at most this often (and when the server stops): a
# shard is rewritten whole, and typing adds names to look up on most pauses.
FLUSH_SECONDS = 30.0


class RecentShard(cache.Shard):
    """A shard in memory that keeps only its last `limit` entries."""

    def __init__(self, limit: int = 16):
        super().__init__(None)
        self.limit = limit

    def put(self, key: str, value: object) -> None:
        super().put(key, value)
        while len(self.entries) > self.limit:
            del self.entries[next(iter(self.entries))]
        self.added.clear()


class EditorCache(cache.Cache):
    """The cache of a server that runs as long as the editor. Everything keyed
    by blobs and commits is kept on disk as in a command's run; a document's
    Markdown blocks, keyed by its whole text, are kept in memory for its last
    few versions only: each keystroke makes a new text, and on disk they would pile up."""

    def __init__(self, root: Path | None):
        super().__init__(root)
        self._recent: dict[str, RecentShard] = {}

    def shard(self, kind: str, version: str, shape: Callable[[Any], bool] | None = None) -> cache.Shard:
        if kind == BLOCKS_SHARD:
            return self._recent.setdefault(version, RecentShard())
        return super().shard(kind, version, shape)


class Lines:
    """A text's lines (split at "\\n"), and columns as the client counts them."""

    def __init__(self, lines: list[str], encoding: str = types.PositionEncodingKind.Utf16):
        self.lines = lines
        self.encoding = encoding

    @classmethod
    def of(cls, text: str, encoding: str = types.PositionEncodingKind.Utf16) -> Lines:
        return cls(text.split("\n"), encoding)

    def line(self, n: int) -> str:
        """Line `n` (0-based), without a carriage return; "" past the end."""
        return self.lines[n].removesuffix("\r") if 0 <= n < len(self.lines) else ""

    def _units(self, text: str) -> int:
        if self.encoding == types.PositionEncodingKind.Utf8:
            return len(text.encode("utf-8"))
        if self.encoding == types.PositionEncodingKind.Utf32:
            return len(text)
        return len(text.encode("utf-16-le")) // 2

    def position(self, line: int, column: int) -> types.Position:
        """The client's position of code point `column` of 0-based `line`."""
        return types.Position(line, self._units(self.line(line)[:column]))

    def range(self, line: int, start: int, end: int) -> types.Range:
        return types.Range(self.position(line, start), self.position(line, end))

    def column(self, position: types.Position) -> int:
        """The code point at the client's `position` (clamped to its line)."""
        text = self.line(position.line)
        if self.encoding == types.PositionEncodingKind.Utf32:
            return min(position.character, len(text))
        units = 0
        for i, ch in enumerate(text):
            if units >= position.character:
                return i
            units += self._units(ch)
        return len(text)

    def whole_line(self, line: int) -> types.Range:
        return self.range(line, 0, len(self.line(line)))


def blob_uri(sha: str, path: str) -> str:
    """The read-only document of `path` at commit `sha`, as the server serves it:
    `dshaudit://SHA/PATH` (with `//`, so that editors such as Vim take it for a
    URL and not for a relative file name)."""
    return f"{SCHEME}://{sha}/{quote(path, safe='/@+')}"


def parse_blob_uri(uri: str) -> tuple[str, str] | None:
    """(sha, path) of a `dshaudit:` document; None for any other URI."""
    parsed = urlparse(uri)
    if parsed.scheme != SCHEME:
        return None
    sha, path = parsed.netloc, unquote(parsed.path).lstrip("/")
    return (sha, path) if SHA_RE.match(sha) and path else None


def fs_path(uri: str) -> Path | None:
    """The file a `file:` URI names; None for an unsaved or virtual document."""
    from pygls.uris import to_fs_path

    path = to_fs_path(uri) if urlparse(uri).scheme == "file" else None
    return Path(path) if path else None


@dataclass
class Scope:
    """What the documents of one configuration share: its session (the clone,
    opened once, and the pin resolver), and the Verifier and FactBook that keep
    what they read for as long as the server runs."""

    session: Session
    verifier: Verifier
    book: FactBook
    rebasers: dict[tuple[str, str], Rebaser] = field(default_factory=dict)

    @property
    def config(self) -> Config:
        return self.session.config

    def snapshot(self, pin: Pin) -> Snapshot:
        return self.session.repository().snapshot(pin.sha, pin.name)

    def text(self, pin: Pin, path: str) -> FileText | None:
        return self.verifier.text(self.snapshot(pin), path)

    def rebaser(self, old: Pin, new: Pin) -> Rebaser:
        """The one Rebaser between two pins (it keeps the diff it read)."""
        from dshaudit.moves.rebaser import Rebaser

        key = (old.sha, new.sha)
        if key not in self.rebasers:
            self.rebasers[key] = Rebaser(self.session.pins, self.session.repository, old, new, self.verifier)
        return self.rebasers[key]


@dataclass
class Analysis:
    """One version of a document, checked: its findings, their verdicts and the
    diagnostics to publish. `scope` is None when no configuration could be read;
    `file` None when the document could not be parsed (its diagnostics say why)."""

    uri: str
    version: int | None
    lines: Lines
    scope: Scope | None
    file: FindingsFile | None = None
    result: CheckResult | None = None
    diagnostics: list[types.Diagnostic] = field(default_factory=list)
    text: str = ""  # the text analysed: a client may send two texts under one version number

    def verdict(self, citation: Citation) -> Verdict | None:
        for v in self.result.verdicts if self.result else ():
            if v.citation.source == citation.source:
                return v
        return None

    def claim_verdict(self, claim: Claim) -> ClaimVerdict | None:
        for v in self.result.claims if self.result else ():
            if v.claim.source == claim.source:
                return v
        return None

    def pin(self) -> Pin | None:
        """The document's pin: its front matter's, else the configuration's default."""
        if self.scope is None:
            return None
        ref = (self.file.pin if self.file else None) or self.scope.config.default_pin
        return self.scope.session.pins.resolve(ref) if ref else None


class Engine:
    """The server's state: scopes by configuration, clones by where they come
    from, and the last analysis of each open document."""

    def __init__(self, repo: str | None = None, config_path: str | None = None):
        self.repo = repo  # --repo; else $DSH_REPO, else the configuration's upstream, cloned
        self.config_path = config_path
        self.encoding: str = types.PositionEncodingKind.Utf16
        self._configs: dict[Path | None, Config] = {}
        self._scopes: dict[Path | None, Scope] = {}
        self._repositories: dict[str, LazyRepository] = {}
        self._analyses: dict[str, Analysis] = {}
        self._children: dict[str, dict[str, list[tuple[str, bool]]]] = {}
        self._flushed = time.monotonic()
        # The workspace's folders, as the editor named them: a document outside them is
        # given the configuration of the server's own folder, not one found above it.
        self.roots: list[Path] = []

    # -- scopes ------------------------------------------------------------------

    def scope_for(self, uri: str) -> Scope:
        """The scope of a document: its configuration is --config, else
        dshaudit.toml in its folder or above (within the workspace), else the
        packaged default."""
        path = fs_path(uri)
        folder = path.parent if path else None
        if folder not in self._configs:
            explicit = Path(self.config_path) if self.config_path else None
            documents = [path] if path and self._in_workspace(path) else []
            self._configs[folder] = load_config(explicit, documents)
        config = self._configs[folder]
        if config.path not in self._scopes:
            repository = self._repository(config.upstream_url)
            session = Session(config, repository, PinResolver(config, repository))
            self._scopes[config.path] = Scope(session, Verifier(session.pins, repository), FactBook(repository))
        return self._scopes[config.path]

    def _in_workspace(self, path: Path) -> bool:
        """Whether a document lies in a folder of the workspace (any, when none was named)."""
        if not self.roots:
            return True
        real = Path(os.path.realpath(path))
        return any(real.is_relative_to(root) for root in self.roots)

    def _repository(self, upstream_url: str) -> LazyRepository:
        if upstream_url not in self._repositories:
            self._repositories[upstream_url] = LazyRepository(self.repo, upstream_url)
        return self._repositories[upstream_url]

    def needs_opening(self, uri: str) -> bool:
        """Whether checking this document would first open (or clone) DSH."""
        try:
            return not self.scope_for(uri).session.repository.is_open
        except DshauditError:
            return False

    def open_repository(self, uri: str) -> None:
        """Open the document's DSH clone, making it on first use (minutes, for a clone)."""
        self.scope_for(uri).session.repository()

    # -- documents ---------------------------------------------------------------

    def analyse(self, uri: str, text: str, version: int | None) -> Analysis:
        """Check one version of a document, as `check` would check the file (one
        larger than `check` reads is refused alike, with one diagnostic)."""
        lines = Lines.of(text, self.encoding)
        size = len(text.encode("utf-8", "surrogatepass"))
        if size > MAX_FINDINGS_BYTES:
            too_big = InputError(f"{size} bytes is larger than the {MAX_FINDINGS_BYTES} dshaudit reads")
            return self._remember(Analysis(uri, version, lines, None, diagnostics=[problem(too_big, lines)], text=text))
        try:
            scope = self.scope_for(uri)
        except DshauditError as exc:
            return self._remember(Analysis(uri, version, lines, None, diagnostics=[problem(exc, lines)], text=text))
        analysis = Analysis(uri, version, lines, scope, text=text)
        path = fs_path(uri)
        shown = path.as_posix() if path else uri
        try:
            analysis.file = parse_findings(text, shown, scope.config.web_url)
            analysis.result = check(
                [analysis.file], scope.session.pins, scope.session.repository, verifier=scope.verifier, book=scope.book
            )
        except DshauditError as exc:
            analysis.diagnostics = [problem(exc, lines)]
            return self._remember(analysis)
        outcome = check_outcome(analysis.result, scope.config.web_url)
        ends = extents(analysis.file, lines)
        analysis.diagnostics = [lsp_diagnostic(d, lines, ends) for d in outcome.diagnostics if d.severity in SEVERITIES]
        self._flush_now_and_then()
        return self._remember(analysis)

    def analysis(self, uri: str, text: str, version: int | None) -> Analysis:
        """The analysis of this version: the last one if it is of this version, else a new one."""
        known = self._analyses.get(uri)
        if known is not None and known.version == version and version is not None and known.text == text:
            return known
        return self.analyse(uri, text, version)

    def _remember(self, analysis: Analysis) -> Analysis:
        self._analyses[analysis.uri] = analysis
        return analysis

    def forget(self, uri: str) -> None:
        self._analyses.pop(uri, None)

    # -- DSH ---------------------------------------------------------------------

    def children(self, snapshot: Snapshot) -> dict[str, list[tuple[str, bool]]]:
        """Each folder of a commit's tree ("" for the root): its entries, (name, is a folder), sorted."""
        if snapshot.sha not in self._children:
            tree: dict[str, list[tuple[str, bool]]] = {}
            for path, (_, kind, _) in sorted(snapshot.index().items()):
                folder, _, name = path.rpartition("/")
                tree.setdefault(folder, []).append((name, kind == "tree"))
            self._children[snapshot.sha] = tree
        return self._children[snapshot.sha]

    def blob(self, uri: str) -> str | None:
        """The text of a `dshaudit:` document (a file at a commit), from the clone
        that holds the commit; None when no open clone does."""
        parsed = parse_blob_uri(uri)
        if parsed is None:
            return None
        sha, path = parsed
        for repository in self._repositories.values():
            opened = repository()
            if not opened.has_commit(sha):
                continue
            entry = opened.snapshot(sha).entry(path)
            if entry is None or entry.kind != "blob" or entry.blob_sha is None:
                return None
            return opened.snapshot(sha).read(entry.blob_sha).decode("utf-8", errors="replace")
        return None

    def _flush_now_and_then(self) -> None:
        if time.monotonic() - self._flushed >= FLUSH_SECONDS:
            self.flush()

    def flush(self) -> None:
        cache.current().flush()
        self._flushed = time.monotonic()

    def close(self) -> None:
        """Write the cache and stop the fact workers (the server is shutting down)."""
        for scope in self._scopes.values():
            scope.book.close()
        self.flush()


# -- diagnostics ---------------------------------------------------------------


def problem(exc: DshauditError, lines: Lines) -> types.Diagnostic:
    """A document that cannot be checked (no pin, an unknown one, malformed front
    matter, an unusable clone): one diagnostic, on the line the error names."""
    line = max((exc.line or 1) - 1, 0)
    return types.Diagnostic(
        range=lines.whole_line(line),
        message=exc.what,
        severity=types.DiagnosticSeverity.Error,
        code="repository" if isinstance(exc, RepoError) else "input",
        source=SOURCE,
    )


def extents(f: FindingsFile, lines: Lines) -> dict[tuple[int, int], int]:
    """Where each citation and claim ends (a code point of its line), by where it starts (1-based)."""
    out = {}
    for c in f.citations:
        out[(c.source.line, c.source.column)] = c.source.column - 1 + len(c.written or c.text)
    for claim in f.claims:
        m = CLAIM_SPAN_RE.match(lines.line(claim.source.line - 1), claim.source.column - 1)
        if m:
            out[(claim.source.line, claim.source.column)] = m.end()
    return out


_SPAN_RE = re.compile(r"(`+).+?\1")
_TOKEN_RE = re.compile(r"\S+?(?=[.,;:!?)\]]*(?:\s|$))")


def token_end(line: str, start: int) -> int:
    """The end of what stands at `start`: the code span it opens, else its word."""
    m = _SPAN_RE.match(line, start) if line[start : start + 1] == "`" else _TOKEN_RE.match(line, start)
    return m.end() if m else len(line)


def lsp_diagnostic(d: Diagnostic, lines: Lines, ends: dict[tuple[int, int], int]) -> types.Diagnostic:
    """A diagnostic of `check` on the text it is about: its status is the code, its message the message."""
    line, start = d.source.line - 1, d.source.column - 1
    end = ends.get((d.source.line, d.source.column)) or token_end(lines.line(line), start)
    return types.Diagnostic(
        range=lines.range(line, start, end),
        message=d.message,
        severity=SEVERITIES[d.severity],
        code=str(d.status),
        source=SOURCE,
    )
