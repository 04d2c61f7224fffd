"""An outcome as a record and back: every format renders the same bytes, and a
record naming a status its reader does not expect is no outcome."""

from __future__ import annotations

import json

import pytest

from dshaudit.core.diagnostics import Diagnostic, Outcome, Place, Summary
from dshaudit.core.model import ClaimStatus, LineRange, Pin, SourceLocation, Status
from dshaudit.core.outcome_record import from_record, to_record
from dshaudit.core.status import Severity
from dshaudit.output.emit import context_for
from dshaudit.output.formats import DIAGNOSTIC_FORMATS, FORMATS

PIN = Pin("v1", "a" * 40)


def outcome() -> Outcome:
    place = Place(PIN, "src/a.ts", LineRange(3, 4), "https://example.invalid/blob/x/src/a.ts#L3-L4")
    failed = Diagnostic(
        "citation",
        SourceLocation("f.md", 2, 5),
        Status.CONTENT_MISMATCH,
        "not on the lines",
        target="src/a.ts:3-4@v1",
        pin=PIN,
        places_of=lambda: (place, Place(PIN, "src/b.ts", None, "https://example.invalid/b")),
        identity=("citation", "src/a.ts:3-4"),
        payload_of=lambda: {"status": "content_mismatch", "lines": (3, 4), "nested": {"k": [1, 2]}},
    )
    noted = Diagnostic(
        "claim", SourceLocation("f.md", 7, 1), ClaimStatus.CONTRADICTED, "m", severity_override=Severity.NOTE
    )
    return Outcome(
        "check",
        (failed, noted),
        Summary("2 things", {"total": 2}, (("Citations", "1 failed"),), "All clear."),
        rules=(Status.CONTENT_MISMATCH, ClaimStatus.CONTRADICTED),
        strict=True,
        sections=(("citations", ("citation",)), ("claims", ("claim",))),
        files=("f.md",),
    )


@pytest.mark.parametrize("fmt", DIAGNOSTIC_FORMATS)
def test_every_format_renders_the_record_as_the_outcome(fmt):
    first = outcome()
    back = from_record(json.loads(json.dumps(to_record(first))), (Status, ClaimStatus))
    assert back is not None and back.exit_code == first.exit_code == 1
    context = context_for([fmt], "https://example.invalid")
    assert FORMATS[fmt].render(back, context) == FORMATS[fmt].render(first, context)


def test_a_status_the_reader_does_not_expect_is_no_outcome():
    record = json.loads(json.dumps(to_record(outcome())))
    assert from_record(record, (Status,)) is None  # the claim's status is not among them
    assert from_record({"command": "check"}, (Status, ClaimStatus)) is None
