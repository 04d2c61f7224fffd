"""Output formats. Each is a module with `render(result, context) -> str`,
fed by the same verdicts; adding a format means adding a module here and a
line in FORMATS.

text and json are for people and scripts; sarif (code scanning), junit (test
reports), github (workflow annotations) and markdown ($GITHUB_STEP_SUMMARY)
are for CI and share formats/common.py, so they report the same failures."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from pathlib import Path

from ..model import CheckResult

FORMATS = {
    "text": "text",
    "json": "json",
    "sarif": "sarif",
    "junit": "junit",
    "github": "github",
    "markdown": "markdown",
}


@dataclass(frozen=True)
class RenderContext:
    web_url: str  # for permalinks
    # The folder findings paths are relative to, and where the audit's own git
    # repository is looked for (sarif, github). None: the working directory.
    root: Path | None = None


def render(fmt: str, result: CheckResult, context: RenderContext) -> str:
    return import_module(f".{FORMATS[fmt]}", __name__).render(result, context)
