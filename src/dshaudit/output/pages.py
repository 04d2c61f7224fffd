"""Pages: a command's result that reads as a document (`report`, `history`),
laid out by Jinja2 templates.

A `Page` is an `Outcome` like any other (its JSON is `head`, its text
`lines`, its exit code the command's), so it goes through the same `emit`;
HTML and Markdown lay out its `model` through the command's templates,
templates/COMMAND.html.j2 and templates/COMMAND.md.j2. Everything from DSH or
from findings is data to the templates: HTML autoescapes it, Markdown passes
it through the `md` and `code` filters, and no template ever evaluates it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from dshaudit.core.diagnostics import Outcome
from dshaudit.platform.textsafe import markdown_code, markdown_text, terminal_safe

if TYPE_CHECKING:
    import jinja2

# The templates of each markup a page is laid out in, by their file suffix.
SUFFIXES = {"html": "html.j2", "markdown": "md.j2"}


@dataclass(frozen=True)
class Page(Outcome):
    """An outcome whose HTML and Markdown are a page laid out from `model`
    (built when a format asks: text and JSON runs never build it)."""

    model_of: Callable[[], Mapping[str, Any]] | None = field(default=None, compare=False, repr=False)

    @cached_property
    def model(self) -> Mapping[str, Any]:
        return self.model_of() if self.model_of is not None else {}


def _md(value: object) -> str:
    """Text safe inside a Markdown table cell."""
    return markdown_text("" if value is None else str(value))


def _code(value: object) -> str:
    """Inline code that survives any backticks inside it, and is safe in a table cell."""
    return markdown_code("" if value is None else str(value))


def _environment(autoescape: bool) -> jinja2.Environment:
    # Imported here: only a page laid out in HTML or Markdown needs the template engine.
    import jinja2

    def load(name: str) -> str:
        from importlib import resources  # it imports tempfile: only a page renders a template

        return resources.files("dshaudit.templates").joinpath(name).read_text(encoding="utf-8")

    env = jinja2.Environment(
        loader=jinja2.FunctionLoader(load),
        autoescape=autoescape,
        # Control characters from DSH or findings (ANSI escapes, bells) become visible escapes.
        finalize=lambda value: terminal_safe(value) if isinstance(value, str) else value,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["md"] = _md
    env.filters["code"] = _code
    return env


def render_page(outcome: Outcome, markup: str) -> str:
    """The page of `outcome` in `markup` (html or markdown): the model is given to
    the command's template under the command's name (`report`, `history`)."""
    if not isinstance(outcome, Page):
        raise TypeError(f"`{outcome.command}` gives no page to lay out in {markup}")
    template = _environment(autoescape=markup == "html").get_template(f"{outcome.command}.{SUFFIXES[markup]}")
    return template.render({outcome.command: outcome.model})
