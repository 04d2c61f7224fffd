"""The formats, one module each, every one a `Format` (interface.py).

text and json are for people and scripts; sarif (code scanning), junit (test
reports), github (workflow annotations) and markdown ($GITHUB_STEP_SUMMARY)
are for CI; html lays out the pages of `report` and `history`. Adding a
format means adding its module and its line below.
"""

from __future__ import annotations

from dshaudit.output.formats import github, html, json, junit, markdown, sarif, text
from dshaudit.output.interface import Format

FORMATS: dict[str, Format] = {
    "text": text,
    "json": json,
    "sarif": sarif,
    "junit": junit,
    "github": github,
    "markdown": markdown,
    "html": html,
}
# The formats any command's outcome renders in (check, lint, rebase, anchor offer each of them).
DIAGNOSTIC_FORMATS = tuple(sorted(name for name, module in FORMATS.items() if module.RENDERS_DIAGNOSTICS))
