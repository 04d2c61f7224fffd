"""One line per failure, compiler style, then a one-line summary."""

from __future__ import annotations

from ..model import CheckResult, ClaimVerdict, Verdict
from ..textsafe import terminal_safe


def target(v: Verdict) -> str:
    c = v.citation
    pin = v.pin.name if v.pin else (c.pin_ref or "?")
    return f"{c.target_text}@{pin}"


def claim_line(v: ClaimVerdict) -> str:
    pin = v.pin.name if v.pin else "?"
    return f"{v.claim.source}: {v.claim.kind} {v.claim.text} @{pin}: {v.status}: {v.message}"


def summary_line(result: CheckResult) -> str:
    total, failed = len(result.verdicts), len(result.failed)
    files = len({v.citation.source.file for v in result.verdicts} | {c.claim.source.file for c in result.claims})
    line = f"{total} citations in {files} files: {total - failed} ok, {failed} failed"
    if result.claims:
        counts: dict[str, int] = {}
        for c in result.claims:
            counts[str(c.status)] = counts.get(str(c.status), 0) + 1
        parts = ", ".join(f"{n} {status}" for status, n in sorted(counts.items()))
        line += f"; {len(result.claims)} claims: {parts}; {len(result.failed_claims)} failed"
    return line


def render(result: CheckResult, context) -> str:
    out = [terminal_safe(f"{v.citation.source}: {target(v)}: {v.status}: {v.message}") for v in result.failed]
    out += [terminal_safe(claim_line(v)) for v in result.failed_claims]
    out.append(summary_line(result))
    return "\n".join(out) + "\n"
