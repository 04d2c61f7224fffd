"""The commands whose result reads as a document: `report` and `history`."""

from __future__ import annotations

from pathlib import Path

import click

from dshaudit.cli.exits import finish_page, handle_errors
from dshaudit.cli.options import (
    HISTORY_FORMATS,
    PIN,
    PIN_HELP,
    REPORT_FORMATS,
    config_option,
    page_options,
    paths_argument,
    repo_option,
    tree_docs_option,
)


@click.command()
@paths_argument
@repo_option
@click.option(
    "--pin",
    "pins",
    metavar="PIN",
    type=PIN,
    multiple=True,
    help="Report at this pin (repeatable: the first is the main one, later ones add a status column each). "
    f"Default: each file's own pin. {PIN_HELP}",
)
@click.option(
    "--since",
    metavar="PIN",
    type=PIN,
    help='Add the section "Upstream changes since the pin": what each commit from PIN to the report\'s pin '
    "did to the findings (as `dshaudit history`).",
)
@page_options(REPORT_FORMATS)
@tree_docs_option
@config_option
@handle_errors
def report(
    paths: tuple[Path, ...],
    repo: str | None,
    pins: tuple[str, ...],
    since: str | None,
    fmt: str | None,
    outputs: tuple[str, ...],
    tree_docs: tuple[str, ...],
    config_path: str | None,
) -> None:
    """Render the claims-versus-code report for PATHS (default: findings/).

    For each finding: every claim with the claimed and measured value and the
    evidence, every citation with its status, the cited lines and a permalink
    at the SHA; then every measured fact with its counting rule. HTML is one
    self-contained file (no external assets); Markdown reads on GitHub.
    The exit code is that of `check` on the first pin, so a report can gate CI.
    """
    from dshaudit.app import commands

    session = commands.Session.open(config_path, repo, paths)
    finish_page(commands.report(session, paths, pins, since, tree_docs), fmt, outputs, REPORT_FORMATS)


@click.command()
@paths_argument
@click.option(
    "--from", "from_ref", required=True, metavar="PIN", type=PIN, help=f"The pin the walk starts from. {PIN_HELP}"
)
@click.option(
    "--to", "to_ref", required=True, metavar="PIN", type=PIN, help="The pin it ends at; a descendant of --from."
)
@repo_option
@page_options(HISTORY_FORMATS)
@tree_docs_option
@config_option
@handle_errors
def history(
    paths: tuple[Path, ...],
    from_ref: str,
    to_ref: str,
    repo: str | None,
    fmt: str | None,
    outputs: tuple[str, ...],
    tree_docs: tuple[str, ...],
    config_path: str | None,
) -> None:
    """Say what each commit from --from to --to did to the findings in PATHS (default: findings/).

    One forward pass over the first-parent commits (the merged pull
    requests): each citation is checked again only at commits that change its
    file, and its lines are carried through their diffs as `rebase` carries
    them; a fact is measured again only at commits that touch the files it
    watches. For every citation: its status at --to, the first commit where it
    stops holding, the commits that edited its lines while its anchors still
    stood there (re-read those), and those where it held again. For every
    claim: the first commit that changed it, with the values before and after.
    For every commit: its pull request and what it shifted, edited, broke,
    restored and changed. Text lists the commits that matter, most impactful
    first, then the citations to re-read; HTML draws the timeline.
    The exit code is that of `check --pin TO` for citations and claims.
    """
    from dshaudit.app import commands

    session = commands.Session.open(config_path, repo, paths)
    finish_page(commands.history(session, paths, from_ref, to_ref, tree_docs), fmt, outputs, HISTORY_FORMATS)
