"""GitHub Actions workflow commands: one `::error` (or `::warning`, `::notice`,
by severity) per diagnostic worth showing, annotated on the findings file's
line, then a `::notice` with the summary.

    ::error file=findings/x.md,line=12,col=5,title=dshaudit%3A content_mismatch::path:12@pin: reason

Values are escaped the way the Actions runner unescapes them: `%`, CR and LF
everywhere, and `:` and `,` in properties too, so no finding can end a command
early or start another. Other control characters (ANSI escapes, bidi
overrides) become visible `\\xNN` text, as in the text format. Paths are made
relative to the audit repository's root when git knows it, as annotations need.
"""

from __future__ import annotations

from typing import Any

from dshaudit.core.diagnostics import Outcome
from dshaudit.core.status import Severity
from dshaudit.output.interface import RenderContext
from dshaudit.platform.textsafe import terminal_safe

NEEDS_REPOSITORY = True
RENDERS_DIAGNOSTICS = True

COMMANDS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTE: "notice", Severity.NONE: "notice"}


def escape_data(text: str) -> str:
    return terminal_safe(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(name: str, message: str, **props: Any) -> str:
    inner = ",".join(f"{k}={escape_property(str(v))}" for k, v in props.items())
    return f"::{name}{' ' + inner if inner else ''}::{escape_data(message)}"


def render(outcome: Outcome, context: RenderContext) -> str:
    root, repo = context.base, context.repository
    out = []
    for e in outcome.shown:
        file = repo.relative(root, e.source.file) if repo else e.source.file
        message = f"{e.target}: {e.message}" if e.target else e.message
        if e.places:
            message += f"\n{e.places[0]}: {e.places[0].url}"
        name = "error" if e.fails(outcome.strict) else COMMANDS[e.severity]
        out.append(
            command(
                name,
                message,
                file=file,
                line=e.source.line,
                col=e.source.column,
                title=f"dshaudit: {e.status}",
            )
        )
    if outcome.summary is not None:
        out.append(command("notice", outcome.summary.line, title=f"dshaudit {outcome.command}"))
    return "".join(line + "\n" for line in out)
