"""One line per failure, compiler style, then a one-line summary."""

from __future__ import annotations

from ..model import CheckResult, Verdict, format_lines
from ..textsafe import terminal_safe


def target(v: Verdict) -> str:
    c = v.citation
    pin = v.pin.name if v.pin else (c.pin_ref or "?")
    return f"{c.target_text}@{pin}"


def render(result: CheckResult, context) -> str:
    out = []
    for v in result.failed:
        out.append(terminal_safe(f"{v.citation.source}: {target(v)}: {v.status}: {v.message}"))
    total, failed = len(result.verdicts), len(result.failed)
    files = len({v.citation.source.file for v in result.verdicts})
    out.append(f"{total} citations in {files} files: {total - failed} ok, {failed} failed")
    return "\n".join(out) + "\n"
