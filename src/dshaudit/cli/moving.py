"""The commands that follow DSH as it moves: `rebase` the citations to
another pin, `bump` documents to a new release with the pull request that
says so, `bisect` the commit where one changed."""

from __future__ import annotations

from pathlib import Path

import click

from dshaudit.cli.exits import finish, finish_page, handle_errors
from dshaudit.cli.options import (
    PIN,
    PIN_HELP,
    config_option,
    format_option,
    outputs_option,
    paths_argument,
    repo_option,
)
from dshaudit.output.emit import page_outputs

pin_branches_option = click.option(
    "--pin-branches/--keep-branches",
    default=True,
    help="Carry permalinks to a branch (blob/master/...) from the commit the branch is at and write the new "
    "commit in them, as every other permalink (the default): once moved, a document says what it says of "
    "that release. --keep-branches leaves them following their branch.",
)


@click.command()
@paths_argument
@click.option(
    "--to", "to_ref", required=True, metavar="PIN", type=PIN, help=f"Pin to carry the citations to. {PIN_HELP}"
)
@click.option(
    "--from",
    "from_ref",
    metavar="PIN",
    type=PIN,
    help=f"Pin the citations are at (default: each file's own pin). {PIN_HELP}",
)
@click.option(
    "--write",
    is_flag=True,
    help="Rewrite line numbers, paths and pins in the files (atomically). Ambiguous and lost citations are "
    "never written; the pin written is the configured name, else the full SHA.",
)
@pin_branches_option
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
    pin_branches: bool,
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
    finish(commands.rebase(session, paths, to_ref, from_ref, write, pin_branches), fmt, outputs, session.config.web_url)


@click.command()
@paths_argument
@click.option(
    "--to", "to_ref", required=True, metavar="PIN", type=PIN, help=f"The release to move the documents to. {PIN_HELP}"
)
@click.option("--dry-run", is_flag=True, help="Write nothing: print the pull-request body the move would give.")
@pin_branches_option
@repo_option
@outputs_option
@config_option
@handle_errors
def bump(
    paths: tuple[Path, ...],
    to_ref: str,
    dry_run: bool,
    pin_branches: bool,
    repo: str | None,
    outputs: tuple[str, ...],
    config_path: str | None,
) -> None:
    """Move the documents in PATHS (default: findings/) to a new DSH release.

    Each document is carried from its own pin (its front matter's, else the
    one commit its permalinks name) to PIN, and rewritten in place as
    `rebase --write` does: line numbers, paths, pins, and each permalink's
    commit and #L range; what was edited, lost or ambiguous is left exactly
    as it was. The history from each pin to PIN is walked, and a pull-request
    body in Markdown is printed (or written with --output PATH): what moved
    and where, what to re-read, what to fix by hand with the upstream commit
    and pull request that changed it, and the commits that mattered.

    Exit 0 when everything moved cleanly, 1 when something needs a person.

    \b
    Example:
      dshaudit bump docs/ --to rc2 --output pr.md
    """
    from dshaudit.app import commands

    session = commands.Session.open(config_path, repo, paths)
    formats = ("text", "json")
    _, files = page_outputs(outputs, None, formats)  # a bad --output is refused before anything is moved
    outcome = commands.bump(session, paths, to_ref, dry_run, pin_branches, tuple(p for _, p in files))
    finish_page(outcome, None, outputs, formats)


@click.command()
@click.argument("target")
@click.option(
    "--good",
    required=True,
    metavar="PIN",
    type=PIN,
    help=f"Where the citation holds (or the fact has its old value). {PIN_HELP}",
)
@click.option("--bad", required=True, metavar="PIN", type=PIN, help="Where it no longer does; a descendant of --good.")
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
