"""The one result type every command emits.

`check`, `lint` and `rebase` (and every command to come) turn what they found
into `Diagnostic`s, gather them in an `Outcome` with a summary computed once,
and hand that to the output layer (`formats/`), which renders any outcome in
any format. The status a diagnostic carries (status.py) knows its own
behaviour, so no formatter keeps a table of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any
from urllib.parse import quote

from dshaudit.core.model import LineRange, Pin, SourceLocation
from dshaudit.core.status import DiagnosticStatus, Severity


def permalink(web_url: str, sha: str, path: str, lines: LineRange | None) -> str:
    """The web page of `path` at `sha`, at `lines` when given (GitHub's `#L1-L2`)."""
    url = f"{web_url.rstrip('/')}/blob/{sha}/{quote(path, safe='/@')}"
    if lines is not None:
        url += f"#L{lines.start}" if lines.start == lines.end else f"#L{lines.start}-L{lines.end}"
    return url


@dataclass(frozen=True)
class Place:
    """A place in DSH: a path at a pin, with lines when known, and its permalink."""

    pin: Pin
    path: str
    lines: LineRange | None
    url: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.lines}" if self.lines else self.path
        return f"{where}@{self.pin.name}"


# Related places listed per diagnostic at most (a fact's evidence can run long).
MAX_PLACES = 20


@dataclass(frozen=True)
class Diagnostic:
    """One thing a command found, at one place in a findings file.

    `target` is what was checked, as written (`path:lines@pin`, `claim: EXPR @pin`;
    empty for a format problem). `identity` names it within its file without line
    numbers (for fingerprints). `payload` is its JSON object, built by the module
    that owns the concept; formats place it, they never assemble it. Places and
    payload are computed on first use, so a text run pays for neither."""

    kind: str  # "citation", "claim", "problem", "move", "claim_change", ...
    source: SourceLocation
    status: DiagnosticStatus
    message: str
    target: str = ""
    pin: Pin | None = None
    # The places in DSH it points at, computed only when a format asks (most
    # runs print text, and a fact's evidence can run to thousands of places).
    places_of: Callable[[], tuple[Place, ...]] | None = field(default=None, compare=False, repr=False)
    identity: tuple[str, ...] = ()
    # Its JSON object, built when the JSON format asks (a claim's lists its whole evidence).
    payload_of: Callable[[], Mapping[str, Any]] | None = field(default=None, compare=False, repr=False)
    # Where the producer knows better than the status (a prior audit's claim is
    # reported, never enforced): the severity to use instead of the status's own.
    severity_override: Severity | None = None

    @cached_property
    def payload(self) -> Mapping[str, Any]:
        return self.payload_of() if self.payload_of is not None else {}

    @cached_property
    def places(self) -> tuple[Place, ...]:
        return self.places_of()[:MAX_PLACES] if self.places_of is not None else ()

    @property
    def severity(self) -> Severity:
        return self.severity_override or self.status.severity

    def fails(self, strict: bool = False) -> bool:
        return self.severity.fails(strict)

    @property
    def rule_id(self) -> str:
        return self.status.rule_id

    @property
    def summary(self) -> str:
        """`target: status: message`, or `severity: status: message` without a target."""
        head = self.target or str(self.severity)
        return f"{head}: {self.status}: {self.message}"


@dataclass(frozen=True)
class Summary:
    """A command's totals, computed once: the text line, the JSON object and
    the Markdown bullets all come from here."""

    line: str
    counts: Mapping[str, Any]
    bullets: tuple[tuple[str, str], ...] = ()
    all_clear: str = "Nothing to report."


@dataclass(frozen=True)
class Outcome:
    """Everything a command has to say, ready for any format.

    Diagnostics at `show_at` or above are listed by the text, GitHub, SARIF and
    Markdown formats; JUnit and JSON list every one. The JSON document is
    `{**head, "summary": ..., section: [payloads]..., **tail}`. Commands whose
    text output is not a list of diagnostics (facts, bisect, show) give `lines`."""

    command: str
    diagnostics: tuple[Diagnostic, ...] = ()
    summary: Summary | None = None
    rules: tuple[DiagnosticStatus, ...] = ()
    show_at: Severity = Severity.WARNING
    strict: bool = False
    head: Mapping[str, Any] = field(default_factory=dict)
    sections: tuple[tuple[str, tuple[str, ...]], ...] = ()
    tail: Mapping[str, Any] = field(default_factory=dict)
    lines: tuple[str, ...] | None = None
    files: tuple[str, ...] = ()
    # A command whose result is not pass/fail (facts, show) may say so.
    exit_override: int | None = None

    @property
    def shown(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.severity.rank >= self.show_at.rank)

    @property
    def failing(self) -> tuple[Diagnostic, ...]:
        return tuple(d for d in self.diagnostics if d.fails(self.strict))

    @property
    def exit_code(self) -> int:
        if self.exit_override is not None:
            return self.exit_override
        return 1 if self.failing else 0

    def section(self, kinds: tuple[str, ...]) -> list[Mapping[str, Any]]:
        return [d.payload for d in self.diagnostics if d.kind in kinds]


def rules_of(*enums: type[DiagnosticStatus]) -> tuple[DiagnosticStatus, ...]:
    """The statuses of these enums that are rules, in declaration order."""
    return tuple(s for enum in enums for s in enum if s.is_rule)
