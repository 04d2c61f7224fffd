"""Machine-readable output: the command's head keys, its summary, then its
diagnostics' JSON objects by section, in the order the command gave them.
Stable key order and sort, so the same input gives byte-identical output."""

from __future__ import annotations

import json
from typing import Any

from dshaudit.core.diagnostics import Outcome
from dshaudit.output.interface import RenderContext

NEEDS_REPOSITORY = False
RENDERS_DIAGNOSTICS = True


def dumps(doc: object) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def document(outcome: Outcome) -> dict[str, Any]:
    doc: dict[str, Any] = dict(outcome.head)
    if outcome.summary is not None:
        doc["summary"] = dict(outcome.summary.counts)
    for name, kinds in outcome.sections:
        doc[name] = outcome.section(kinds)
    doc.update(outcome.tail)
    return doc


def render(outcome: Outcome, context: RenderContext) -> str:
    return dumps(document(outcome))
