"""HTML: one self-contained page (no external assets) for the commands whose
result reads as a document, `report` and `history`, laid out by their
templates (output/pages.py). A list of diagnostics has no HTML form."""

from __future__ import annotations

from dshaudit.core.diagnostics import Outcome
from dshaudit.output.interface import RenderContext
from dshaudit.output.pages import render_page

NEEDS_REPOSITORY = False
RENDERS_DIAGNOSTICS = False


def render(outcome: Outcome, context: RenderContext) -> str:
    return render_page(outcome, "html")
