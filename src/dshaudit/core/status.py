"""Statuses that know their own behaviour.

Every status a command can give (a citation's, a claim's, a format problem's,
a rebase move's) is a member of an enum derived from `DiagnosticStatus`: it
carries its severity, whether it points at a place in DSH, its rule id and the
help text that says what to do about it. Formats ask the status; none keeps a
table of its own.
"""

from __future__ import annotations

from enum import Enum

RULE_PREFIX = "dshaudit/"


class Severity(str, Enum):
    """How much a diagnostic matters. ERROR fails the command, WARNING fails it
    under --strict, NOTE is reported and never fails, NONE is a pass."""

    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"
    NONE = "none"

    @property
    def rank(self) -> int:
        return {"error": 3, "warning": 2, "note": 1, "none": 0}[self.value]

    def fails(self, strict: bool = False) -> bool:
        return self is Severity.ERROR or (strict and self is Severity.WARNING)

    def __str__(self) -> str:
        return self.value


class Reach(str, Enum):
    """What a status lets a diagnostic point at in DSH."""

    NOWHERE = "nowhere"  # no pin, a path that cannot be one, no such file
    FILE = "file"  # the file is there, its cited lines are not (or mean nothing)
    LINES = "lines"  # the cited (or resolved) lines


class DiagnosticStatus(str, Enum):
    """Base of every status enum. Members are declared as
    `NAME = (value, severity, short, help, reach)`; the value is what JSON shows."""

    severity: Severity
    short: str
    help: str
    reach: Reach

    def __new__(
        cls,
        value: str,
        severity: Severity = Severity.ERROR,
        short: str = "",
        help: str = "",
        reach: Reach = Reach.LINES,
    ) -> DiagnosticStatus:
        member = str.__new__(cls, value)
        member._value_ = value
        member.severity = severity
        member.short = short
        member.help = help
        member.reach = reach
        return member

    def __str__(self) -> str:
        return str(self.value)

    @property
    def rule_id(self) -> str:
        return RULE_PREFIX + str(self.value)

    @property
    def family(self) -> str:
        """What kind of thing has this status (`citation`, `claim`, ...): a tag for CI tools."""
        return "diagnostic"

    @property
    def is_rule(self) -> bool:
        """A status worth a rule (SARIF) is one that says something went wrong."""
        return bool(self.short)

    def fails(self, strict: bool = False) -> bool:
        return self.severity.fails(strict)
