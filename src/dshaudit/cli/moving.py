"""The commands that follow DSH as it moves: `rebase` the citations to
another pin, `bisect` the commit where one changed."""

from __future__ import annotations

from pathlib import Path

import click

from dshaudit.cli.exits import finish, handle_errors
from dshaudit.cli.options import PIN_HELP, config_option, format_option, outputs_option, paths_argument, repo_option


@click.command()
@paths_argument
@click.option("--to", "to_ref", required=True, metavar="PIN", help=f"Pin to carry the citations to. {PIN_HELP}")
@click.option(
    "--from", "from_ref", metavar="PIN", help=f"Pin the citations are at (default: each file's own pin). {PIN_HELP}"
)
@click.option(
    "--write",
    is_flag=True,
    help="Rewrite line numbers, paths and pins in the files (atomically). Ambiguous and lost citations are "
    "never written; the pin written is the configured name, else the full SHA.",
)
@repo_option
@format_option()
@outputs_option
@config_option
@handle_errors
def rebase(
    paths: tuple[Path, ...],
    to_ref: str,
    from_ref: str | None,
    write: bool,
    repo: str | None,
    fmt: str,
    outputs: tuple[str, ...],
    config_path: str | None,
) -> None:
    """Carry every citation in PATHS (default: findings/) to another pin.

    Lines are mapped through git's diff between the pins (renames followed);
    where that lands in edited code, the anchor is searched for, nearest
    first. A new place is taken only if the full check passes there. Each
    citation is reported as unchanged, shifted, edited (with the diff of its
    lines), renamed, ambiguous, lost, or skipped (it did not hold at the old
    pin, or names another pin). Claims are re-measured at the new pin and
    their changes listed. Exit 1 when any citation is ambiguous or lost.
    """
    from dshaudit.app import commands

    session = commands.Session.open(config_path, repo, paths)
    finish(commands.rebase(session, paths, to_ref, from_ref, write), fmt, outputs, session.config.web_url)


@click.command()
@click.argument("target")
@click.option(
    "--good", required=True, metavar="PIN", help=f"Where the citation holds (or the fact has its old value). {PIN_HELP}"
)
@click.option("--bad", required=True, metavar="PIN", help="Where it no longer does; a descendant of --good.")
@click.option(
    "--anchor",
    "anchors",
    multiple=True,
    metavar="TEXT",
    help="Content anchor for a TARGET given as a bare citation (repeatable).",
)
@repo_option
@format_option(("text", "json"), "Output format.")
@config_option
@handle_errors
def bisect(
    target: str, good: str, bad: str, anchors: tuple[str, ...], repo: str | None, fmt: str, config_path: str | None
) -> None:
    """Name the first commit where TARGET changes, between --good and --bad.

    TARGET is a citation in a findings file (`findings/01-core.md:17`, or
    `findings/01-core.md:17:3` when a line holds several), a bare citation
    (`path:12-14` with --anchor TEXT), or a fact id, optionally with a field
    (`session.known-event-types.count`). A citation changes when its check
    stops giving the same status; a fact when its value changes. The search
    walks the first-parent path, halving it, and prints the commit's SHA,
    date and subject.
    """
    from dshaudit.app import commands

    session = commands.Session.open(config_path, repo)
    finish(commands.bisect(session, target, good, bad, anchors), fmt, ())
