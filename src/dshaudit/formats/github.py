"""GitHub Actions workflow commands: one `::error` per failure, annotated on
the findings file's line, then a `::notice` with the summary.

    ::error file=findings/x.md,line=12,col=5,title=dshaudit%3A content_mismatch::path:12@pin: reason

Values are escaped the way the Actions runner unescapes them: `%`, CR and LF
everywhere, and `:` and `,` in properties too, so no finding can end a command
early or start another. Other control characters (ANSI escapes, bidi
overrides) become visible `\\xNN` text, as in the text format. Paths are made
relative to the audit repository's root when git knows it, as annotations need.
"""

from __future__ import annotations

from ..model import CheckResult
from ..textsafe import terminal_safe
from .common import audit_repository, base_dir, failures
from .text import summary_line


def escape_data(text: str) -> str:
    return terminal_safe(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def escape_property(text: str) -> str:
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def command(name: str, message: str, **props: object) -> str:
    inner = ",".join(f"{k}={escape_property(str(v))}" for k, v in props.items())
    return f"::{name}{' ' + inner if inner else ''}::{escape_data(message)}"


def render(result: CheckResult, context) -> str:
    root = base_dir(context)
    failing = failures(result, context.web_url)
    repo = audit_repository(root) if failing else None
    out = []
    for e in failing:
        file = repo.relative(root, e.source.file) if repo else e.source.file
        message = f"{e.target}: {e.message}"
        if e.places:
            message += f"\n{e.places[0]}: {e.places[0].url}"
        out.append(command(
            "error", message,
            file=file, line=e.source.line, col=e.source.column, title=f"dshaudit: {e.status}",
        ))
    out.append(command("notice", summary_line(result), title="dshaudit check"))
    return "\n".join(out) + "\n"
