"""The statuses and outcomes of core: every failing status is a rule with texts of its
own, and an outcome fails by the severity of its diagnostics."""

from __future__ import annotations

from dshaudit.core.diagnostics import Outcome
from dshaudit.core.model import ClaimStatus, Status
from dshaudit.core.status import DiagnosticStatus, Severity


def test_every_failing_status_is_a_rule_with_its_own_texts():
    from dshaudit.checking.lint import LintCode
    from dshaudit.moves.rebase import ClaimChange
    from dshaudit.moves.rebaser import MoveStatus

    enums: list[type[DiagnosticStatus]] = [Status, ClaimStatus, LintCode, MoveStatus, ClaimChange]
    for enum in enums:
        for s in enum:
            assert s.is_rule == (s.severity is not Severity.NONE), s
            if s.is_rule:
                assert s.short.endswith(".") and s.help and s.rule_id == f"dshaudit/{s.value}"
    # One value, one rule: a value two enums share must mean the same thing in both.
    shared = {s.value for s in Status} & {s.value for s in ClaimStatus}
    assert shared == set()


def test_an_outcome_fails_by_its_diagnostics_severity():
    from dshaudit.checking.lint import LintCode
    from dshaudit.core.diagnostics import Diagnostic
    from dshaudit.core.model import SourceLocation

    warn = Diagnostic("problem", SourceLocation("f.md", 1, 1), LintCode.UNANCHORED, "m")
    note = Diagnostic(
        "claim", SourceLocation("f.md", 2, 1), ClaimStatus.CONTRADICTED, "m", severity_override=Severity.NOTE
    )
    assert Outcome("x", (warn, note)).exit_code == 0
    assert Outcome("x", (warn, note), strict=True).exit_code == 1
    assert Outcome("x", (warn, note)).shown == (warn,)
