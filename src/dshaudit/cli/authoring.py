"""The commands that help write findings: `show` and `cite` a place in DSH,
`anchor` a document's citations, and the language server for editors."""

from __future__ import annotations

from pathlib import Path

import click

from dshaudit.cli.exits import finish, handle_errors
from dshaudit.cli.options import PIN, PIN_HELP, FilledPath, config_option, format_option, repo_option

# show and cite read a citation at its own @PIN, else at this one.
citation_pin_option = click.option(
    "--pin",
    metavar="PIN",
    type=PIN,
    help=f"Pin to read at when CITATION has no @PIN (default: the config's default_pin). {PIN_HELP}",
)


@click.command()
@click.argument("citation")
@repo_option
@citation_pin_option
@click.option(
    "-C",
    "--context",
    "context_lines",
    type=click.IntRange(0, 200),
    default=3,
    show_default=True,
    help="Lines of context around each cited range.",
)
@config_option
@handle_errors
def show(citation: str, repo: str | None, pin: str | None, context_lines: int, config_path: str | None) -> None:
    """Print the lines CITATION names, numbered, with a little context.

    CITATION is PATH:LINES[@PIN] or PATH#Symbol[@PIN], e.g.
    `vendor/cordis/src/context.ts:77-81@rc7`. Cited lines are marked with `>`,
    so you can pick an anchor and cite without a checkout.
    """
    from dshaudit.app import commands

    session = commands.Session.open(config_path, repo)
    finish(commands.show(session, citation, pin, context_lines), "text", ())


@click.command()
@click.argument("citation")
@repo_option
@citation_pin_option
@format_option(("text", "json"), "Output format.")
@config_option
@handle_errors
def cite(citation: str, repo: str | None, pin: str | None, fmt: str, config_path: str | None) -> None:
    """Print CITATION ready to paste into a finding, with its best anchor.

    CITATION is PATH:LINES[@PIN] or PATH#Symbol[@PIN]; PATH may be abbreviated
    when one file ends so. The citation is checked at its pin first. Printed:
    `` `path:lines` → `anchor` ``, the anchor being the token of the first
    cited line found on the fewest lines of the file (identifiers and string
    literals first), as `dshaudit anchor` picks it; a #Symbol is an anchor
    itself and gets its declaration's lines. The pin is written (`@PIN`) when
    it is not the default pin.
    """
    from dshaudit.app import commands

    session = commands.Session.open(config_path, repo)
    finish(commands.cite(session, citation, pin), fmt, ())


@click.command()
@click.argument("document", type=FilledPath("name a Markdown document", path_type=Path, dir_okay=False))
@click.option(
    "--pin", metavar="PIN", type=PIN, help=f"Pin to read the document at when its front matter names none. {PIN_HELP}"
)
@click.option("--write", is_flag=True, help="Make the edits in the file (atomically); without it they are only listed.")
@repo_option
@format_option()
@config_option
@handle_errors
def anchor(document: Path, pin: str | None, write: bool, repo: str | None, fmt: str, config_path: str | None) -> None:
    """Anchor DOCUMENT's citations, turning a document into a finding.

    Every citation that holds but has no anchor gets one: the first name its
    sentence gives that stands on the cited lines, else the rarest identifier
    or string literal of its first line. Citations written as `path (line 12)`,
    `path:Name` or a permalink are rewritten as `path:lines` → `anchor`.
    A citation that is suspect, unresolved or failing is never touched.
    Without --write the edits are listed; with it they are made, every other
    byte of the file unchanged.
    """
    from dshaudit.app import commands

    session = commands.Session.open(config_path, repo, (document,))
    finish(commands.anchor(session, document, pin, write), fmt, (), session.config.web_url)


@click.command()
@repo_option
@click.option(
    "--config",
    "config_path",
    type=FilledPath("name a configuration file", dir_okay=False),
    help="Configuration file for every document (default: dshaudit.toml in the document's folder or above, "
    "else the packaged default).",
)
def lsp(repo: str | None, config_path: str | None) -> None:
    """Run the language server for findings, on stdin and stdout.

    An editor starts it for Markdown files (README.md says how, for VS Code,
    Neovim and Helix) and gets, as it types: the diagnostics of `check` on
    each citation and claim, hover with the cited lines at the pin, completion
    of paths, #Symbols, fact ids and pin names, code actions that anchor a
    citation, move it to where its anchor is now or carry it to another pin,
    and go to definition into the cited file at its pin. DSH is opened (or
    cloned) once, with progress reported to the editor.
    """
    from dshaudit.lsp import serve

    serve(repo, config_path)
