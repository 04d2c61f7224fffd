"""Markdown for `$GITHUB_STEP_SUMMARY`: the totals, then one table row per
failure (findings file:line, target, status, message).

Cells are plain text with every character Markdown or HTML could act on
backslash-escaped (`|` cannot split a row, a backtick cannot open code, `<`
cannot open a tag, `[` cannot open a link), line breaks become spaces and
other control characters visible `\\xNN` text. Step summaries are capped at
1 MiB, so rows stop at MAX_ROWS and long messages are shortened; the full
list is in every other format.
"""

from __future__ import annotations

import re

from ..model import CheckResult, ClaimStatus
from ..textsafe import terminal_safe
from .common import entries

MAX_ROWS = 500
MAX_CELL = 400

# ASCII punctuation that means something inline in GitHub Markdown or HTML.
_ACTIVE_RE = re.compile(r"([\\`*_\[\]<>|~&!#])")


def cell(text: str, limit: int = MAX_CELL) -> str:
    text = " ".join(text.replace("\r\n", "\n").replace("\r", "\n").split("\n"))
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return _ACTIVE_RE.sub(r"\\\1", terminal_safe(text))


def render(result: CheckResult, context) -> str:
    items = entries(result, context.web_url)
    citations = [e for e in items if e.kind == "citation"]
    claims = [e for e in items if e.kind == "claim"]
    failing = [e for e in items if not e.ok]
    files = {e.source.file for e in items}
    out = ["## dshaudit check", ""]
    failed_citations = sum(1 for e in citations if not e.ok)
    out.append(
        f"- **Citations:** {len(citations)} in {len(files)} files: "
        f"{len(citations) - failed_citations} ok, {failed_citations} failed"
    )
    if claims:
        counts = ", ".join(
            f"{n} {s.value}" for s in ClaimStatus if (n := sum(1 for e in claims if e.status == s.value))
        )
        out.append(f"- **Claims:** {len(claims)}: {counts}; {sum(1 for e in claims if not e.ok)} failed")
    out.append("")
    if not failing:
        out.append("Every citation and claim holds.")
        return "\n".join(out) + "\n"
    out += ["| Where | Target | Status | Message |", "|---|---|---|---|"]
    for e in failing[:MAX_ROWS]:
        target = cell(e.target)
        if e.places:  # a link to the cited DSH lines; the URL is percent-encoded, the text escaped
            url = e.places[0].url.replace("(", "%28").replace(")", "%29").replace("|", "%7C")
            target = f"[{target}]({url})"
        out.append(f"| {cell(f'{e.source.file}:{e.source.line}')} | {target} | `{e.status}` | {cell(e.message)} |")
    if len(failing) > MAX_ROWS:
        out += ["", f"… and {len(failing) - MAX_ROWS} more failures: run `dshaudit check` for all of them."]
    return "\n".join(out) + "\n"
