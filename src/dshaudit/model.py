"""The data that flows through dshaudit, one way:

findings file -> Citation -> Verdict -> CheckResult -> a format.

Everything here is a frozen dataclass so that results can be sorted, hashed
and rendered deterministically.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum


@dataclass(frozen=True, order=True)
class SourceLocation:
    """Where a citation stands in a findings file (1-based line and column)."""

    file: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"

    def to_dict(self) -> dict:
        return {"file": self.file, "line": self.line, "column": self.column}


@dataclass(frozen=True, order=True)
class LineRange:
    """An inclusive range of 1-based lines; a single line has start == end."""

    start: int
    end: int

    def __str__(self) -> str:
        return str(self.start) if self.start == self.end else f"{self.start}-{self.end}"


def format_lines(ranges: tuple[LineRange, ...]) -> str:
    return ",".join(str(r) for r in ranges)


@dataclass(frozen=True)
class Citation:
    """One `PATH[:LINES][#SYMBOL][@PIN]` reference, with the anchors attached to it."""

    path: str
    lines: tuple[LineRange, ...]
    symbol: str | None
    pin_ref: str | None  # the @ suffix as written, if any
    anchors: tuple[str, ...]  # content anchors: text expected on the cited lines
    source: SourceLocation
    text: str  # the citation exactly as written (without its anchors)
    problem: str | None = None  # why the citation is malformed (`path:0`, `path:5-3`), if it is

    @property
    def has_anchor(self) -> bool:
        return bool(self.symbol or self.anchors)

    @property
    def target_text(self) -> str:
        """The citation as `path:lines#symbol`, without a pin."""
        out = self.path
        if self.lines:
            out += ":" + format_lines(self.lines)
        if self.symbol:
            out += "#" + self.symbol
        return out


@dataclass(frozen=True)
class Pin:
    name: str
    sha: str


class Status(str, Enum):
    """What verification found for one citation. Values appear in JSON output."""

    OK = "ok"
    INVALID_CITATION = "invalid_citation"  # path:0, reversed range, absolute or '..' path
    UNKNOWN_PIN = "unknown_pin"  # @suffix names no pin and is not a full SHA
    MISSING_PATH = "missing_path"  # no such file at that SHA
    NOT_A_FILE = "not_a_file"  # a directory, a submodule or a symlink
    BINARY = "binary"  # the blob is not text
    OUT_OF_RANGE = "out_of_range"  # a cited line is past the end of the file
    UNKNOWN_SYMBOL = "unknown_symbol"  # #Symbol resolves to no declaration
    OUTSIDE_SYMBOL = "outside_symbol"  # cited lines are not inside the #Symbol's span
    CONTENT_MISMATCH = "content_mismatch"  # an anchor is not on the cited lines

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Verdict:
    citation: Citation
    pin: Pin | None
    status: Status
    message: str
    # Where the verdict looked: the symbol's span when one resolved, else the cited lines.
    resolved_lines: tuple[LineRange, ...] = field(default=())

    @property
    def ok(self) -> bool:
        return self.status is Status.OK




# -- facts and claims ------------------------------------------------------------


@dataclass(frozen=True, order=True)
class Evidence:
    """A place in DSH that a measured fact rests on."""

    path: str
    lines: LineRange

    def __str__(self) -> str:
        return f"{self.path}:{self.lines}"


class FactStatus(str, Enum):
    OK = "ok"
    CANNOT_EVALUATE = "cannot_evaluate"  # a parse error or a missing file stands in the evidence region

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Fact:
    """One named structural fact, measured at one pin."""

    id: str
    definition: str  # the counting rule, in words
    pin: Pin
    status: FactStatus
    value: object  # JSON-able: the fact's primary value
    fields: dict  # named derived values, addressable as `id.field` in claims
    evidence: tuple[Evidence, ...]
    message: str = ""


@dataclass(frozen=True)
class Claim:
    """`claim: FACT[.FIELD] OP VALUE` (must hold) or `prior: ...` (the prior audit's word, reported)."""

    kind: str  # "claim" or "prior"
    text: str  # the expression as written
    ref: str  # FACT[.FIELD]
    op: str
    expected: object
    source: SourceLocation
    problem: str | None = None  # why the expression cannot be read, if it can't


class ClaimStatus(str, Enum):
    CONFIRMED = "confirmed"
    CONTRADICTED = "contradicted"
    UNKNOWN_FACT = "unknown_fact"
    CANNOT_EVALUATE = "cannot_evaluate"
    INVALID_CLAIM = "invalid_claim"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class ClaimVerdict:
    claim: Claim
    pin: Pin | None
    status: ClaimStatus
    measured: object
    message: str
    fact: Fact | None = None

    @property
    def ok(self) -> bool:
        # A prior audit's claim is reported, not enforced: settling it either way is the point.
        if self.claim.kind == "prior":
            return self.status in (ClaimStatus.CONFIRMED, ClaimStatus.CONTRADICTED)
        return self.status is ClaimStatus.CONFIRMED


@dataclass(frozen=True)
class CheckResult:
    verdicts: tuple[Verdict, ...]
    claims: tuple[ClaimVerdict, ...] = ()

    @property
    def failed(self) -> tuple[Verdict, ...]:
        return tuple(v for v in self.verdicts if not v.ok)

    @property
    def failed_claims(self) -> tuple[ClaimVerdict, ...]:
        return tuple(c for c in self.claims if not c.ok)

    @property
    def ok(self) -> bool:
        return not self.failed and not self.failed_claims
