"""An `Outcome` as plain JSON data, and back, for a command whose outcome is kept
between runs (app/memo.py).

A record holds what every format reads: each diagnostic's places and payload are
computed once when the record is made, so a format given the outcome read back
renders the same bytes as one given the outcome first made. A status is written
as its enum's name and its value; a record naming a status outside the enums its
reader expects reads back as None, and is computed afresh.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from dshaudit.core.diagnostics import Diagnostic, Outcome, Place, Summary
from dshaudit.core.model import LineRange, Pin, SourceLocation
from dshaudit.core.status import DiagnosticStatus, Severity


def to_record(outcome: Outcome) -> dict[str, Any]:
    """The outcome as data `json.dumps` takes."""
    summary = outcome.summary
    return {
        "command": outcome.command,
        "diagnostics": [_diagnostic(d) for d in outcome.diagnostics],
        "summary": None
        if summary is None
        else [summary.line, dict(summary.counts), [list(b) for b in summary.bullets], summary.all_clear],
        "rules": [_status(s) for s in outcome.rules],
        "show_at": outcome.show_at.value,
        "strict": outcome.strict,
        "head": dict(outcome.head),
        "sections": [[name, list(kinds)] for name, kinds in outcome.sections],
        "tail": dict(outcome.tail),
        "lines": None if outcome.lines is None else list(outcome.lines),
        "files": list(outcome.files),
        "exit_override": outcome.exit_override,
    }


def from_record(record: dict[str, Any], enums: Iterable[type[DiagnosticStatus]]) -> Outcome | None:
    """The outcome a record holds; None when it names a status of none of `enums`,
    or is not a record at all."""
    statuses = {(enum.__name__, member.value): member for enum in enums for member in enum}
    try:
        summary = record["summary"]
        return Outcome(
            command=record["command"],
            diagnostics=tuple(_read_diagnostic(d, statuses) for d in record["diagnostics"]),
            summary=None
            if summary is None
            else Summary(summary[0], summary[1], tuple((a, b) for a, b in summary[2]), summary[3]),
            rules=tuple(statuses[tuple(s)] for s in record["rules"]),
            show_at=Severity(record["show_at"]),
            strict=bool(record["strict"]),
            head=record["head"],
            sections=tuple((name, tuple(kinds)) for name, kinds in record["sections"]),
            tail=record["tail"],
            lines=None if record["lines"] is None else tuple(record["lines"]),
            files=tuple(record["files"]),
            exit_override=record["exit_override"],
        )
    except (KeyError, TypeError, ValueError, IndexError):
        return None


def _status(status: DiagnosticStatus) -> list[str]:
    return [type(status).__name__, status.value]


def _pin(pin: Pin | None) -> list[Any] | None:
    return None if pin is None else [pin.name, pin.sha, pin.named, pin.branch]


def _read_pin(data: list[Any] | None) -> Pin | None:
    return None if data is None else Pin(str(data[0]), str(data[1]), bool(data[2]), bool(data[3]))


def _diagnostic(d: Diagnostic) -> dict[str, Any]:
    return {
        "kind": d.kind,
        "source": [d.source.file, d.source.line, d.source.column],
        "status": _status(d.status),
        "message": d.message,
        "target": d.target,
        "pin": _pin(d.pin),
        "places": [
            [_pin(p.pin), p.path, None if p.lines is None else [p.lines.start, p.lines.end], p.url] for p in d.places
        ],
        "identity": list(d.identity),
        "payload": dict(d.payload),
        "severity": None if d.severity_override is None else d.severity_override.value,
    }


def _read_diagnostic(data: dict[str, Any], statuses: dict[tuple[str, str], DiagnosticStatus]) -> Diagnostic:
    places = tuple(
        Place(pin, path, None if lines is None else LineRange(lines[0], lines[1]), url)
        for pin_data, path, lines, url in data["places"]
        if (pin := _read_pin(pin_data)) is not None
    )
    payload = data["payload"]
    file, line, column = data["source"]
    return Diagnostic(
        kind=data["kind"],
        source=SourceLocation(file, line, column),
        status=statuses[tuple(data["status"])],
        message=data["message"],
        target=data["target"],
        pin=_read_pin(data["pin"]),
        places_of=lambda: places,
        identity=tuple(data["identity"]),
        payload_of=lambda: payload,
        severity_override=None if data["severity"] is None else Severity(data["severity"]),
    )
