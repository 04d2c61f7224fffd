"""The data that flows through dshaudit, one way:

findings file -> Citation -> Verdict -> CheckResult -> a format.

Everything here is a frozen dataclass so that results can be sorted, hashed
and rendered deterministically.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, TypeVar

from dshaudit.core.status import DiagnosticStatus, Reach, Severity

T = TypeVar("T")


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


def replaced(obj: T, **changes: Any) -> T:
    """`dataclasses.replace` for the frozen dataclasses of this module, none of which has a
    `__post_init__`, slots or a cached property (whose value, kept in the instance's
    `__dict__`, would be copied past the changes): their fields copied as they are, with
    `changes` over them.
    The language server re-checks a document at every keystroke and moves each citation's
    remembered verdict over to it, twice a citation (checking/citations.py); `replace`
    builds every field anew through its constructor, several times the cost of this copy."""
    fields = obj.__dataclass_fields__  # type: ignore[attr-defined]
    unknown = [name for name in changes if name not in fields]
    if unknown:
        raise TypeError(f"{type(obj).__name__} has no field {unknown[0]!r}")
    new = object.__new__(type(obj))
    new.__dict__.update(obj.__dict__, **changes)
    return new


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
    form: str = "canonical"  # how it was written (grammar.py lists the forms)
    expected_code: tuple[str, ...] = ()  # quoted-code form: text the file must hold
    inferred: tuple[str, ...] = ()  # candidate anchors from the sentence around it (inference.py)
    block: tuple[str, ...] = ()  # lines of a block the citation heads, for an unanchored citation
    words: tuple[str, ...] = ()  # content words of its sentence, for an unanchored citation (inference.py)
    quoted: bool = False  # `quoted: path:12`: another document's citation, reported, never enforced
    nearby: tuple[str, ...] = ()  # folders other citations of its section name, to pick among abbreviations
    context_dir: str | None = None  # `a/b/src/x.ts and src/y.ts`: the folder a bare relative path may be in
    written: str = ""  # the whole citation as written (a line phrase or quoted code included); `text` if empty
    declared: tuple[str, ...] = ()  # generated docs: code a fence beside it quotes, expected in the cited declaration
    # Whether the shape of its lines alone (a blank edge, a lone `}`, a cut block) may make it
    # suspect: in a document written for dshaudit (one with a pin of its own), it may.
    by_shape: bool = True

    @property
    def is_permalink(self) -> bool:
        """Written as a web link into DSH at a ref of its own, to lines, a file or a folder."""
        return self.form in ("permalink", "tree-permalink")

    @property
    def has_anchor(self) -> bool:
        return bool(self.symbol or self.anchors or self.declared)

    @property
    def target_text(self) -> str:
        """The citation as `path:lines#symbol`, without a pin."""
        out = self.path
        if self.lines:
            out += ":" + format_lines(self.lines)
        if self.symbol:
            out += "#" + self.symbol
        return out


SHA_RE = re.compile(r"^[0-9a-f]{40}$")  # a full commit id, as git writes it


@dataclass(frozen=True)
class Pin:
    """A commit of DSH, by the name it was given. `named` is true when the name
    is one of dshaudit.toml's pins; a tag or a bare SHA is not, since a tag can
    move and `check` reads only configured names and SHAs from front matter."""

    name: str
    sha: str
    named: bool = True
    branch: bool = False  # a branch's head when it was resolved: holds today, moves tomorrow

    @property
    def ref(self) -> str:
        """How to write this pin where `check` will read it: its name if configured, else its SHA."""
        return self.name if self.named else self.sha


E, N = Severity.ERROR, Severity.NONE


class Status(DiagnosticStatus):
    """What verification found for one citation. Values appear in JSON output;
    each failing status carries one sentence saying what went wrong and one
    saying what to do about it."""

    @property
    def family(self) -> str:
        return "citation"

    OK = ("ok", N)
    INVALID_CITATION = (
        "invalid_citation",
        E,
        "The citation is malformed.",
        "It names line 0, a range that runs backwards, or an absolute or `..` path. "
        "Line numbers start at 1, ranges run forwards, and paths are relative to the DSH repository root.",
        Reach.NOWHERE,
    )
    UNKNOWN_PIN = (
        "unknown_pin",
        E,
        "The citation names no known pin.",
        "The `@` suffix or the findings file's front matter names no pin of dshaudit.toml, no tag of the "
        "DSH clone, and is not a full 40-hex SHA. Add the pin to dshaudit.toml, fix its name, or cite a full SHA.",
        Reach.NOWHERE,
    )
    MISSING_PATH = (
        "missing_path",
        E,
        "The cited file does not exist at the pin.",
        "The file was renamed, moved or deleted at the pinned commit. The message names the closest "
        "existing path; `dshaudit show` it, or carry the findings over with `dshaudit rebase`.",
        Reach.NOWHERE,
    )
    NOT_A_FILE = (
        "not_a_file",
        E,
        "The cited path is not a regular file.",
        "At the pin the path is a directory, a symbolic link or a submodule. Cite the file it leads to.",
        Reach.FILE,
    )
    BINARY = (
        "binary",
        E,
        "The cited file is binary.",
        "Only text files can be cited by line. Cite a text file instead.",
        Reach.FILE,
    )
    OUT_OF_RANGE = (
        "out_of_range",
        E,
        "The cited lines run past the end of the file.",
        "The file is shorter at the pin than the citation says. Read it with `dshaudit show` and fix the line numbers.",
        Reach.FILE,
    )
    UNKNOWN_SYMBOL = (
        "unknown_symbol",
        E,
        "The cited #Symbol resolves to no declaration.",
        "No declaration with that dotted name exists in the file at the pin. The message names the "
        "closest declaration; check the spelling or whether the code moved.",
    )
    OUTSIDE_SYMBOL = (
        "outside_symbol",
        E,
        "The cited lines lie outside the cited #Symbol.",
        "The symbol resolved, but its span does not hold the cited lines. Fix the lines, or drop them "
        "and let the symbol stand alone.",
    )
    CONTENT_MISMATCH = (
        "content_mismatch",
        E,
        "An anchor is not on the cited lines.",
        "The cited lines now hold other code. The message says where the anchor text is now, if it is "
        "anywhere in the file; fix the line numbers (`dshaudit rebase` does it) or the anchor.",
    )
    AMBIGUOUS_PATH = (
        "ambiguous_path",
        E,
        "The cited path could name several files.",
        "It is not a path of the tree as written, and several tracked files end with it. The message lists "
        "them; write the path in full.",
        Reach.NOWHERE,
    )
    SUSPECT = (
        "suspect",
        Severity.WARNING,
        "The cited lines do not hold what the text around the citation names.",
        "The citation has no anchor, so the names in its sentence (or the block it heads) stand in for one: "
        "none of them is on the cited lines, and one is elsewhere in the file. The message says where; fix the "
        "lines, and add an anchor (`dshaudit anchor` proposes one).",
    )
    MOVED_SINCE = (
        "moved_since",
        E,
        "The cited text stands on other lines at the pin checked.",
        "The document was written at another commit; between it and the pin checked, the lines it cites moved "
        "(or their file was renamed), so its numbers now point at other code. The message says where the text is.",
    )
    CHANGED_SINCE = (
        "changed_since",
        E,
        "The cited lines were edited or removed since the document's own commit.",
        "Between the commit the document was written at and the pin checked, the diff touched the cited lines: "
        "re-read them, and cite what is there now.",
    )
    GONE_SINCE = (
        "gone_since",
        E,
        "The cited text left its file since the document's own commit.",
        "Between the commit the document was written at and the pin checked, the text of the cited lines "
        "left the file; the message names the file and lines where it is at the pin. Cite those.",
    )
    UNPINNED = (
        "unpinned",
        Severity.WARNING,
        "The citation names a branch, not a commit.",
        "It holds at the branch's head today, but a branch moves. Cite a commit (a full SHA, a tag or a pin).",
    )


@dataclass(frozen=True)
class Verdict:
    citation: Citation
    pin: Pin | None
    status: Status
    message: str
    # Where the verdict looked: the symbol's span when one resolved, else the cited lines.
    resolved_lines: tuple[LineRange, ...] = field(default=())
    # The tree path the citation was read at (an abbreviated path resolved); None: as written, or not found.
    resolved_path: str | None = None
    # Of a suspect citation: the lines of the file where what its text describes stands (checking/suspect.py).
    suggested: tuple[LineRange, ...] = field(default=())

    @property
    def path(self) -> str:
        """The path in DSH the verdict is about."""
        return self.resolved_path or self.citation.path

    @property
    def ok(self) -> bool:
        return self.status is Status.OK

    def as_dict(self) -> dict[str, Any]:
        c = self.citation
        anchor = (
            {"symbol": c.symbol, "content": list(c.anchors), "declared": list(c.declared)} if c.has_anchor else None
        )
        return {
            "source": c.source.to_dict(),
            "target": {
                "pin": self.pin.name if self.pin else c.pin_ref,
                "sha": self.pin.sha if self.pin else None,
                "path": c.path,
                "lines": format_lines(c.lines) or None,
                "symbol": c.symbol,
            },
            "anchor": anchor,
            "form": c.form,
            "quoted": c.quoted,
            "resolved": {"path": self.path, "pin": self.pin.name, "sha": self.pin.sha}
            if self.pin is not None and self.status.reach is not Reach.NOWHERE
            else None,
            "status": self.status.value,
            "message": self.message,
        } | ({"suggested": format_lines(self.suggested)} if self.suggested else {})


def jsonable(value: object) -> object:
    """A measured value as JSON: sets sorted, tuples as lists."""
    if isinstance(value, frozenset):
        return sorted((jsonable(v) for v in value), key=lambda v: json.dumps(v, sort_keys=True))
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    return value


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

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "pin": self.pin.name,
            "sha": self.pin.sha,
            "status": self.status.value,
            "value": jsonable(self.value),
            "fields": jsonable(self.fields),
            "definition": self.definition,
            "evidence": [str(e) for e in self.evidence],
            "message": self.message,
        }


def merge_evidence(evidence: tuple[Evidence, ...] | list[Evidence]) -> list[Evidence]:
    """Adjacent or overlapping places in one file become one range, for reading."""
    merged: list[Evidence] = []
    for ev in sorted(evidence):
        last = merged[-1] if merged else None
        if last and last.path == ev.path and ev.lines.start <= last.lines.end + 1:
            merged[-1] = Evidence(ev.path, LineRange(last.lines.start, max(last.lines.end, ev.lines.end)))
        else:
            merged.append(ev)
    return merged


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


class ClaimStatus(DiagnosticStatus):
    """What evaluating one claim found. No value is shared with `Status`, so a
    value names one rule."""

    @property
    def family(self) -> str:
        return "claim"

    CONFIRMED = ("confirmed", N)
    CONTRADICTED = (
        "contradicted",
        E,
        "The measured fact contradicts the claim.",
        "The fact measured from the syntax trees at the pin does not satisfy the claim. "
        "`dshaudit facts FACT` shows the value, its counting rule and its evidence; correct the claim.",
    )
    UNKNOWN_FACT = (
        "unknown_fact",
        E,
        "The claim names an unknown fact or field.",
        "`dshaudit facts` lists every fact and its fields; fix the name.",
    )
    CANNOT_EVALUATE = (
        "cannot_evaluate",
        E,
        "The fact cannot be measured at the pin.",
        "A parse error or a missing file stands where the fact's evidence would be, so dshaudit refuses "
        "to give a count it cannot trust. The message says where.",
    )
    INVALID_CLAIM = (
        "invalid_claim",
        E,
        "The claim cannot be read or compared.",
        "A claim is `FACT[.FIELD] OP VALUE` with OP one of == != < <= > >= contains excludes, and the "
        "value must be of a kind the operator compares. METHOD.md gives the grammar.",
    )


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

    def as_dict(self) -> dict[str, Any]:
        c = self.claim
        return {
            "source": c.source.to_dict(),
            "kind": c.kind,
            "claim": c.text,
            "ref": c.ref,
            "op": c.op,
            "expected": jsonable(c.expected),
            "pin": self.pin.name if self.pin else None,
            "sha": self.pin.sha if self.pin else None,
            "status": self.status.value,
            "measured": jsonable(self.measured),
            "message": self.message,
            "evidence": [str(e) for e in self.fact.evidence] if self.fact else [],
        }
