"""For people at a terminal: one line per diagnostic worth showing, compiler
style (`findings/x.md:LINE:COL: target: status: message`), then the summary."""

from __future__ import annotations

from dshaudit.core.diagnostics import Outcome
from dshaudit.output.interface import RenderContext
from dshaudit.platform.textsafe import terminal_safe

NEEDS_REPOSITORY = False
RENDERS_DIAGNOSTICS = True


def render(outcome: Outcome, context: RenderContext) -> str:
    if outcome.lines is not None:
        out = [terminal_safe(line) for line in outcome.lines]
    else:
        out = [terminal_safe(f"{d.source}: {d.summary}") for d in outcome.shown]
        if outcome.summary is not None:
            out.append(terminal_safe(outcome.summary.line))
    return "".join(line + "\n" for line in out)
