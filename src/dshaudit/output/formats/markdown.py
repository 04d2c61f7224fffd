"""Markdown for `$GITHUB_STEP_SUMMARY`: the totals, then one table row per
diagnostic worth showing (findings file:line, target, status, message).

Cells are plain text with every character Markdown or HTML could act on
backslash-escaped (`|` cannot split a row, a backtick cannot open code, `<`
cannot open a tag, `[` cannot open a link), line breaks become spaces and
other control characters visible `\\xNN` text. Step summaries are capped at
1 MiB, so rows stop at MAX_ROWS and long messages are shortened; the full
list is in every other format.
"""

from __future__ import annotations

import re

from dshaudit.core.diagnostics import Outcome
from dshaudit.core.status import Severity
from dshaudit.output.interface import RenderContext
from dshaudit.output.pages import Page, render_page
from dshaudit.platform.textsafe import markdown_text, terminal_safe

NEEDS_REPOSITORY = False
RENDERS_DIAGNOSTICS = True

MAX_ROWS = 500
MAX_CELL = 400


def cell(text: str, limit: int = MAX_CELL) -> str:
    return markdown_text(text, limit)


def render(outcome: Outcome, context: RenderContext) -> str:
    if isinstance(outcome, Page):
        return render_page(outcome, "markdown")
    out = [f"## dshaudit {outcome.command}", ""]
    if outcome.lines is not None:
        fence = "`" * max([3, *(len(run) + 1 for line in outcome.lines for run in re.findall(r"`+", line))])
        out += [fence + "text", *(terminal_safe(line) for line in outcome.lines), fence]
        return "\n".join(out) + "\n"
    summary = outcome.summary
    if summary is not None:
        out += [f"- **{label}:** {text}" for label, text in summary.bullets] or [f"- {cell(summary.line)}"]
        out.append("")
    shown = outcome.shown
    if not shown:
        out.append(summary.all_clear if summary is not None else "Nothing to report.")
        return "\n".join(out) + "\n"
    out += ["| Where | Target | Status | Message |", "|---|---|---|---|"]
    for e in shown[:MAX_ROWS]:
        target = cell(e.target)
        if e.places:  # a link to the cited DSH lines; the URL is percent-encoded, the text escaped
            url = e.places[0].url.replace("(", "%28").replace(")", "%29").replace("|", "%7C")
            target = f"[{target}]({url})"
        status = f"`{e.status}`" + ("" if e.severity is Severity.ERROR else f" ({e.severity})")
        out.append(f"| {cell(f'{e.source.file}:{e.source.line}')} | {target} | {status} | {cell(e.message)} |")
    if len(shown) > MAX_ROWS:
        out += ["", f"… and {len(shown) - MAX_ROWS} more: run `dshaudit {outcome.command}` for all of them."]
    return "\n".join(out) + "\n"
