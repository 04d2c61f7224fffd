"""Find the first commit where a citation stops holding or a fact's value changes.

The walk is git's first-parent path from GOOD to BAD (the commits that landed
on the main line), searched by halving: about log2(N) snapshots are read, not N.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from dshaudit.core.errors import InputError
from dshaudit.core.model import Citation, Pin, SourceLocation
from dshaudit.documents.findings import load_findings_file
from dshaudit.documents.grammar import find_citations
from dshaudit.git.log import Commit, describe, first_parent_path
from dshaudit.git.repository import DshRepository

_FINDINGS_LOCATION_RE = re.compile(r"^(.+\.md):(\d+)(?::(\d+))?$")


@dataclass(frozen=True)
class Target:
    """What bisect watches: a citation (read at whatever pin it is checked at), or a fact's value."""

    text: str
    citation: Citation | None = None
    fact_id: str | None = None
    field: str | None = None


def parse_target(target: str, anchors: tuple[str, ...], known_facts: set[str]) -> Target:
    """`findings/x.md:LINE[:COL]` (a citation of a findings file), a fact id
    with an optional field, or a bare citation with --anchor texts."""
    from dshaudit.documents.claims import split_ref

    m = _FINDINGS_LOCATION_RE.match(target)
    if m and Path(m.group(1)).is_file():
        f = load_findings_file(Path(m.group(1)))
        lines = f.text.count("\n") + (0 if f.text.endswith("\n") else 1)
        # Checked as text before any int(): thousands of digits are refused, not converted.
        for what, digits in (("line", m.group(2)), ("column", m.group(3))):
            if digits is not None and (len(digits.lstrip("0")) > 9 or int(digits) == 0):
                shown = digits[:20] + ("…" if len(digits) > 20 else "")
                raise InputError(f"{target[:80]}: {what} {shown} is not a {what} of {f.path} ({lines} lines)")
        line, col = int(m.group(2)), int(m.group(3)) if m.group(3) else None
        if line > lines:
            raise InputError(f"{target}: line {line} is past the end of {f.path} ({lines} lines)")
        here = [c for c in f.citations if c.source.line == line and (col is None or c.source.column == col)]
        if len(here) != 1:
            what = (
                "no citation"
                if not here
                else f"{len(here)} citations (add :COLUMN: {', '.join(str(c.source.column) for c in here)})"
            )
            raise InputError(f"{target}: {what} on that line")
        return Target(target, citation=replace(here[0], pin_ref=None))
    fact_id, field = split_ref(target, known_facts)
    if fact_id:
        return Target(target, fact_id=fact_id, field=field)
    found = find_citations(target)
    if len(found) != 1 or found[0].text != target.strip():
        raise InputError(f"{target!r}: neither a findings location (FILE.md:LINE), a citation, nor a fact id")
    raw = found[0]
    citation = Citation(
        raw.path, raw.lines, raw.symbol, None, anchors, SourceLocation("<command line>", 1, 1), raw.text, raw.problem
    )
    return Target(target, citation=citation)


@dataclass(frozen=True)
class BisectResult:
    target: str
    good: Pin
    bad: Pin
    commits: int  # on the first-parent path, BAD included
    probes: int
    first: Commit | None  # None: nothing changed between GOOD and BAD
    before: str  # the observation at GOOD
    after: str  # the observation at the first changed commit

    def as_dict(self) -> dict[str, object]:
        first = self.first
        return {
            "target": self.target,
            "good": self.good.sha,
            "bad": self.bad.sha,
            "commits": self.commits,
            "probes": self.probes,
            "before": self.before,
            "after": self.after,
            "first": None if first is None else {"sha": first.sha, "date": first.date, "subject": first.subject},
        }

    def lines(self) -> tuple[str, ...]:
        if self.first is None:
            return (f"{self.target}: the same at {self.good.name} and {self.bad.name} ({self.before})",)
        return (
            f"{self.first.sha} {self.first.date} {self.first.subject}",
            f"{self.target}: {self.before} -> {self.after}, first at this commit "
            f"({self.commits} first-parent commits, {self.probes} checked)",
        )


def bisect(repository: DshRepository, target: str, good: Pin, bad: Pin, observe: Callable[[Pin], str]) -> BisectResult:
    """`observe(pin)` returns what is watched at a commit (a status, a value);
    the answer is the first commit on the path whose observation differs from GOOD's."""
    path = first_parent_path(repository, good.sha, bad.sha)
    probes = 0

    def at(sha: str) -> str:
        nonlocal probes
        probes += 1
        return observe(Pin(sha[:12], sha))

    before = observe(good)
    after_bad = observe(bad)
    probes += 2
    if after_bad == before:
        return BisectResult(target, good, bad, len(path), probes, None, before, after_bad)
    lo, hi = -1, len(path) - 1  # path[hi] differs; path[lo] (or GOOD) is the same
    seen = {hi: after_bad}
    while hi - lo > 1:
        mid = (lo + hi) // 2
        seen[mid] = at(path[mid])
        if seen[mid] == before:
            lo = mid
        else:
            hi = mid
    return BisectResult(target, good, bad, len(path), probes, describe(repository, path[hi]), before, seen[hi])
