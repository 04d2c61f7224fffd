"""The commands that check findings: `check` against DSH, `lint` without it,
and `facts`, which measures what claims state."""

from __future__ import annotations

from pathlib import Path

import click

from dshaudit.cli.exits import finish, handle_errors
from dshaudit.cli.options import (
    PIN,
    PIN_HELP,
    config_option,
    format_option,
    outputs_option,
    paths_argument,
    repo_option,
    tree_docs_option,
)


@click.command()
@paths_argument
@repo_option
@click.option(
    "--pin",
    metavar="PIN",
    type=PIN,
    help=(
        "Check every citation at this pin instead of the file's own; @suffixes still win, and a "
        f"permalink is read at its own commit, then carried to this pin through the diff. {PIN_HELP}"
    ),
)
@format_option()
@outputs_option
@click.option("--strict", is_flag=True, help="Warnings fail too.")
@tree_docs_option
@config_option
@handle_errors
def check(
    paths: tuple[Path, ...],
    repo: str | None,
    pin: str | None,
    fmt: str,
    outputs: tuple[str, ...],
    strict: bool,
    tree_docs: tuple[str, ...],
    config_path: str | None,
) -> None:
    """Verify every citation in PATHS (default: findings/).

    PATHS may be any Markdown document about DSH, anywhere: its configuration
    is --config, else dshaudit.toml in its folder or above, else the packaged
    default (DSH's upstream and the pins rc7, rc2); its pin is its front
    matter's `pin:`, else --pin.

    Each citation is checked at its strongest level: the file exists at the
    pinned SHA, the cited lines exist, a #Symbol resolves to a declaration that
    holds the lines, and every anchor text is on the cited lines (whitespace is
    ignored; each cited part on its own). Text output prints one line per
    failure, `findings/x.md:LINE:COL: path:lines@pin: status: reason`, then a
    summary. One run can write several formats: `--format` to stdout, and
    `--output FORMAT=PATH` for each file.
    """
    from dshaudit.app import commands

    session = commands.Session.open(config_path, repo, paths)
    finish(commands.check(session, paths, pin, strict, tree_docs), fmt, outputs, session.config.web_url)


@click.command("lint")
@paths_argument
@click.option(
    "--strict",
    is_flag=True,
    help="Warnings fail too (unanchored citations, compiler-style locations, duplicate claims).",
)
@format_option()
@outputs_option
@config_option
@handle_errors
def lint_command(
    paths: tuple[Path, ...], strict: bool, fmt: str, outputs: tuple[str, ...], config_path: str | None
) -> None:
    """Check the format of the findings in PATHS (default: findings/), without DSH.

    No repository is opened: lint reads the findings and dshaudit.toml only.
    Errors: missing or malformed front matter, a missing or unknown pin (also
    in an @suffix), malformed citations (`path:0`, `path:5-3`, `path:` with no
    lines, absolute or `..` paths), malformed claims and unknown fact ids.
    Warnings: citations without an anchor, `path:line:col` locations in inline
    code, the same claim stated twice. Text output prints
    `file:LINE:COL: severity: code: message`, then a summary; every CI format
    of `check` works here too.

    \b
    Exit codes:
      0  no errors (warnings allowed unless --strict)
      1  errors found, or warnings with --strict
      2  usage, configuration or input error
    """
    from dshaudit.app import commands

    finish(commands.lint(config_path, paths, strict), fmt, outputs)


@click.command()
@repo_option
@click.option(
    "--pin", metavar="PIN", type=PIN, help=f"Pin to measure at (default: the config's default_pin). {PIN_HELP}"
)
@format_option(("text", "json"), "Output format.")
@config_option
@click.argument("ids", nargs=-1)
@handle_errors
def facts(repo: str | None, pin: str | None, fmt: str, config_path: str | None, ids: tuple[str, ...]) -> None:
    """Measure structural facts of DSH at a pin, from its syntax trees.

    Prints every fact (or only IDS) with its value, the counting rule that
    produced it, and the evidence (`path:lines`). A fact whose evidence holds
    code tree-sitter cannot parse is `cannot_evaluate`, never a silent
    undercount. Findings state expected values as claims:
    `claim: core.context-builtin-services.count == 5`.
    """
    from dshaudit.app import commands

    session = commands.Session.open(config_path, repo)
    finish(commands.facts(session, pin, ids), fmt, ())
