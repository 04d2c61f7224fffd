"""Output formats. Each is a module with `render(result, context) -> str`,
fed by the same verdicts; adding a format means adding a module here and a
line in FORMATS."""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module

from ..model import CheckResult

FORMATS = {"text": "text", "json": "json"}


@dataclass(frozen=True)
class RenderContext:
    web_url: str  # for permalinks


def render(fmt: str, result: CheckResult, context: RenderContext) -> str:
    return import_module(f".{FORMATS[fmt]}", __name__).render(result, context)
