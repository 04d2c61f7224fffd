"""The options several commands share, with their help texts: each is
defined once here, so a command's --help and another's say the same thing."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from dshaudit.output.formats import DIAGNOSTIC_FORMATS

F = TypeVar("F", bound=Callable[..., Any])

TREE_DOCS_HELP = (
    "Also take DSH's own Markdown under DIR (default docs; a folder or a glob such as "
    "'packages/**/README.md'), read from its tree at PIN and written at PIN: at another --pin, "
    "citations whose text moved or changed since PIN fail. Repeatable; without PATHS, only "
    "these documents."
)
REPO_HELP = (
    "DSH clone: a path (bare or not) or a URL. Default: $DSH_REPO, else a clone of the "
    "upstream URL in the user cache directory, made on first use."
)
OUTPUT_HELP = (
    "Also write FORMAT to PATH (atomically), from the same run: repeatable, e.g. "
    "`--output sarif=results.sarif --output markdown=$GITHUB_STEP_SUMMARY`. "
    f"Formats: {', '.join(DIAGNOSTIC_FORMATS)}."
)
FORMAT_HELP = (
    "Output format on stdout: text, json, or for CI sarif (code scanning), junit, "
    "github (workflow annotations), markdown ($GITHUB_STEP_SUMMARY)."
)
PAGE_OUTPUT_HELP = (
    "Write the page to FILE (atomically) instead of stdout; or, as FORMAT=PATH, write it in FORMAT to PATH "
    "(repeatable, e.g. `--output html=report.html --output markdown=report.md`): the files are written all or "
    "none, and nothing goes to stdout unless --format is given."
)
CONFIG_HELP = "Configuration file (default: dshaudit.toml here or above)."
PIN_HELP = "A pin name of dshaudit.toml, a full SHA, or a tag of the DSH clone."


def _refuse_blank(
    kind: click.ParamType, hint: str, value: Any, param: click.Parameter | None, ctx: click.Context | None
) -> Any:
    """`value` as given, unless it is blank: then a usage error that says what to name (`hint`)."""
    if isinstance(value, str) and not value.strip():
        kind.fail(f"is empty; {hint}", param, ctx)
    return value


class Filled(click.ParamType):
    """A value that may not be blank. A shell makes a blank of an unset variable
    (`--pin "$NEW_PIN"`), which would otherwise read as the option not given at all:
    the run would go on at its defaults and say nothing of the value meant."""

    def __init__(self, name: str, hint: str):
        self.name, self.hint = name, hint

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        return _refuse_blank(self, self.hint, value, param, ctx)


class FilledPath(click.Path):
    """A path that may not be blank: `check "$DOC"` with the variable unset would otherwise
    read the current folder, every Markdown file below it. `hint` says what to name instead."""

    def __init__(self, hint: str = "name a file or a folder", **kwargs: Any):
        super().__init__(**kwargs)
        self.hint = hint

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        return super().convert(_refuse_blank(self, self.hint, value, param, ctx), param, ctx)


PIN = Filled("pin", "name a pin of dshaudit.toml, a full SHA or a tag of the DSH clone")

# The formats of each page, the default first.
REPORT_FORMATS = ("html", "markdown", "json")
HISTORY_FORMATS = ("text", "json", "html", "markdown")

paths_argument = click.argument("paths", nargs=-1, type=FilledPath(path_type=Path))
repo_option = click.option(
    "--repo", metavar="PATH_OR_URL", type=Filled("repo", "name a DSH clone's path or URL"), help=REPO_HELP
)
config_option = click.option(
    "--config", "config_path", type=FilledPath("name a configuration file", dir_okay=False), help=CONFIG_HELP
)
outputs_option = click.option("--output", "outputs", multiple=True, metavar="FORMAT=PATH", help=OUTPUT_HELP)
tree_docs_option = click.option("--tree-docs", "tree_docs", multiple=True, metavar="PIN[:DIR]", help=TREE_DOCS_HELP)


def format_option(formats: tuple[str, ...] = DIAGNOSTIC_FORMATS, help: str = FORMAT_HELP) -> Callable[[F], F]:
    """`--format` on stdout, text by default."""
    return click.option("--format", "fmt", type=click.Choice(formats), default="text", show_default=True, help=help)


def page_options(formats: tuple[str, ...]) -> Callable[[F], F]:
    """`--format` and `--output` of a page (report, history): its formats, the default first."""
    fmt = click.option(
        "--format",
        "fmt",
        type=click.Choice(formats),
        help=f"Output format, on stdout or in --output FILE (default: {formats[0]}).",
    )
    output = click.option(
        "--output",
        "-o",
        "outputs",
        multiple=True,
        type=click.Path(dir_okay=False),
        metavar="FILE|FORMAT=PATH",
        help=PAGE_OUTPUT_HELP,
    )
    return lambda command: fmt(output(command))
