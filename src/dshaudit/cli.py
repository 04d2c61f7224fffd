"""The command line: parse options, call the core, print, pick the exit code."""

from __future__ import annotations

import inspect
import os
import sys
from collections.abc import Callable
from functools import wraps
from pathlib import Path
from typing import Any, TypeVar

import click

from dshaudit.app import commands
from dshaudit.app.commands import Session
from dshaudit.core import errors
from dshaudit.core.diagnostics import Outcome
from dshaudit.core.errors import DshauditError
from dshaudit.output.formats import FORMATS, emit, parse_outputs
from dshaudit.platform.textsafe import terminal_safe

F = TypeVar("F", bound=Callable[..., Any])

# Not indented: it is appended to each command's help after that help is
# dedented (below), so the result does not depend on whether the interpreter
# already stripped the docstring's indentation (Python 3.13 does, 3.11 and
# 3.12 do not).
EXIT_CODES_HELP = """

\b
Exit codes (the same for every command):
  0  every citation and claim holds
  1  a citation or claim fails (lint: a problem found; rebase: a citation is ambiguous or lost)
  2  usage, configuration or findings input error
  3  the DSH repository is unusable (missing SHA, shallow clone, unreachable URL)
  4  internal error in dshaudit (a bug: please report it)
"""

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


def handle_errors(fn: F) -> F:
    """One line on stderr and a documented exit code, never a traceback."""

    @wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from dshaudit.platform import cache

        try:
            cache.begin()
            try:
                return fn(*args, **kwargs)
            finally:
                cache.end()
        except DshauditError as exc:
            click.echo(f"dshaudit: {terminal_safe(str(exc))}", err=True)
            sys.exit(exc.exit_code)
        except KeyboardInterrupt:
            click.echo("dshaudit: interrupted", err=True)
            sys.exit(130)
        except (click.exceptions.Exit, click.ClickException, SystemExit):
            raise
        except BrokenPipeError:
            sys.exit(errors.EXIT_OK)
        except Exception as exc:  # a bug: say so briefly; DSHAUDIT_DEBUG=1 shows the traceback
            if os.environ.get("DSHAUDIT_DEBUG"):
                raise
            click.echo(
                f"dshaudit: internal error: {type(exc).__name__}: {terminal_safe(str(exc))} "
                "(set DSHAUDIT_DEBUG=1 for the traceback)",
                err=True,
            )
            sys.exit(errors.EXIT_INTERNAL)

    return wrapper  # type: ignore[return-value]


OUTPUT_HELP = (
    "Also write FORMAT to PATH (atomically), from the same run: repeatable, e.g. "
    "`--output sarif=results.sarif --output markdown=$GITHUB_STEP_SUMMARY`. "
    f"Formats: {', '.join(sorted(FORMATS))}."
)
FORMAT_HELP = (
    "Output format on stdout: text, json, or for CI sarif (code scanning), junit, "
    "github (workflow annotations), markdown ($GITHUB_STEP_SUMMARY)."
)
CONFIG_HELP = "Configuration file (default: dshaudit.toml here or above)."
PIN_HELP = "A pin name of dshaudit.toml, a full SHA, or a tag of the DSH clone."


def _finish(outcome: Outcome, fmt: str, outputs: tuple[str, ...], web_url: str = "") -> None:
    """Hand the outcome to the output layer and exit with its code."""
    sys.exit(emit(outcome, fmt, parse_outputs(outputs), web_url))


def _page(text: str, code: int, output: Path | None) -> None:
    """A rendered page (report, history) to --output (atomically) or stdout, and the exit code."""
    from dshaudit.platform.writing import write_atomically

    if output:
        write_atomically(output, text)
    else:
        click.echo(text, nl=False)
    sys.exit(code)


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="dshaudit")
@click.option("-q", "--quiet", is_flag=True, help="No notes and no progress on stderr; errors only.")
@click.option("-v", "--verbose", is_flag=True, help="Say what is done and how long it takes (on stderr).")
@click.option("--no-cache", is_flag=True, help="Neither read nor write the cache (same as DSHAUDIT_NO_CACHE=1).")
@click.option(
    "--jobs",
    type=click.IntRange(min=1),
    metavar="N",
    help="Spread the work over N processes (default: $DSHAUDIT_WORKERS, else one per processor); "
    "1 does all of it in this process, in order.",
)
def main(quiet: bool, verbose: bool, no_cache: bool, jobs: int | None) -> None:
    """Check that an audit's citations of DeepSeek Harness (DSH) still hold.

    Findings are Markdown files that cite DSH code as `path:line`, `path:a-b`,
    `path:a,b,c` or `path#Symbol` at a pinned commit, each with an anchor saying
    what the cited lines hold (`path:12` → `text`). dshaudit reads DSH straight
    from git at the pinned SHAs and tells which citations still point at what
    they quote. METHOD.md describes the grammar.

    \b
    Start here:
      dshaudit check                      verify findings/ at their pins
      dshaudit show path/to/file.ts:40-52 print lines to cite
    """
    import gc

    from dshaudit.platform import background, cache, ui

    # A run allocates many small objects that live to its end (verdicts,
    # diagnostics, syntax trees): the collector's default thresholds would
    # walk them again and again for nothing. What the imports made is frozen
    # out of collection, and collection runs ten times less often.
    gc.freeze()
    gc.set_threshold(7000, 10, 10)
    ui.configure(be_quiet=quiet, be_verbose=verbose)
    cache.configure(enabled=not no_cache)
    background.configure(jobs)


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--repo", metavar="PATH_OR_URL", help=REPO_HELP)
@click.option(
    "--pin",
    metavar="PIN",
    help=f"Check every citation at this pin instead of the file's own; @suffixes still win. {PIN_HELP}",
)
@click.option(
    "--format", "fmt", type=click.Choice(sorted(FORMATS)), default="text", show_default=True, help=FORMAT_HELP
)
@click.option("--output", "outputs", multiple=True, metavar="FORMAT=PATH", help=OUTPUT_HELP)
@click.option("--strict", is_flag=True, help="Warnings fail too.")
@click.option("--tree-docs", "tree_docs", multiple=True, metavar="PIN[:DIR]", help=TREE_DOCS_HELP)
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help=CONFIG_HELP)
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
    session = Session.open(config_path, repo, paths)
    _finish(commands.check(session, paths, pin, strict, tree_docs), fmt, outputs, session.config.web_url)


@main.command()
@click.argument("citation")
@click.option("--repo", metavar="PATH_OR_URL", help=REPO_HELP)
@click.option(
    "--pin",
    metavar="PIN",
    help=f"Pin to read at when CITATION has no @PIN (default: the config's default_pin). {PIN_HELP}",
)
@click.option(
    "-C",
    "--context",
    "context_lines",
    type=click.IntRange(0, 200),
    default=3,
    show_default=True,
    help="Lines of context around each cited range.",
)
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help=CONFIG_HELP)
@handle_errors
def show(citation: str, repo: str | None, pin: str | None, context_lines: int, config_path: str | None) -> None:
    """Print the lines CITATION names, numbered, with a little context.

    CITATION is PATH:LINES[@PIN] or PATH#Symbol[@PIN], e.g.
    `vendor/cordis/src/context.ts:77-81@rc7`. Cited lines are marked with `>`,
    so you can pick an anchor and cite without a checkout.
    """
    session = Session.open(config_path, repo)
    _finish(commands.show(session, citation, pin, context_lines), "text", ())


@main.command()
@click.argument("citation")
@click.option("--repo", metavar="PATH_OR_URL", help=REPO_HELP)
@click.option(
    "--pin",
    metavar="PIN",
    help=f"Pin to read at when CITATION has no @PIN (default: the config's default_pin). {PIN_HELP}",
)
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True, help="Output format."
)
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help=CONFIG_HELP)
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
    session = Session.open(config_path, repo)
    _finish(commands.cite(session, citation, pin), fmt, ())


@main.command()
@click.option("--repo", metavar="PATH_OR_URL", help=REPO_HELP)
@click.option("--pin", metavar="PIN", help=f"Pin to measure at (default: the config's default_pin). {PIN_HELP}")
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True, help="Output format."
)
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help=CONFIG_HELP)
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
    session = Session.open(config_path, repo)
    _finish(commands.facts(session, pin, ids), fmt, ())


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--repo", metavar="PATH_OR_URL", help=REPO_HELP)
@click.option(
    "--pin",
    "pins",
    metavar="PIN",
    multiple=True,
    help=f"Report at this pin (repeatable: the first is the main one, later ones add a status column each). Default: each file's own pin. {PIN_HELP}",
)
@click.option(
    "--since",
    metavar="PIN",
    help='Add the section "Upstream changes since the pin": what each commit from PIN to the report\'s pin did to the findings (as `dshaudit history`).',
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["html", "markdown", "json"]),
    default="html",
    show_default=True,
    help="Output format.",
)
@click.option(
    "--output", "-o", type=click.Path(dir_okay=False, path_type=Path), help="Write here (atomically) instead of stdout."
)
@click.option("--tree-docs", "tree_docs", multiple=True, metavar="PIN[:DIR]", help=TREE_DOCS_HELP)
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help=CONFIG_HELP)
@handle_errors
def report(
    paths: tuple[Path, ...],
    repo: str | None,
    pins: tuple[str, ...],
    since: str | None,
    fmt: str,
    output: Path | None,
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
    session = Session.open(config_path, repo, paths)
    _page(*commands.report(session, paths, pins, fmt, since, tree_docs), output)


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--from", "from_ref", required=True, metavar="PIN", help=f"The pin the walk starts from. {PIN_HELP}")
@click.option("--to", "to_ref", required=True, metavar="PIN", help="The pin it ends at; a descendant of --from.")
@click.option("--repo", metavar="PATH_OR_URL", help=REPO_HELP)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "html", "markdown"]),
    default="text",
    show_default=True,
    help="Output format.",
)
@click.option(
    "--output", "-o", type=click.Path(dir_okay=False, path_type=Path), help="Write here (atomically) instead of stdout."
)
@click.option("--tree-docs", "tree_docs", multiple=True, metavar="PIN[:DIR]", help=TREE_DOCS_HELP)
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help=CONFIG_HELP)
@handle_errors
def history(
    paths: tuple[Path, ...],
    from_ref: str,
    to_ref: str,
    repo: str | None,
    fmt: str,
    output: Path | None,
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
    session = Session.open(config_path, repo, paths)
    _page(*commands.history(session, paths, from_ref, to_ref, fmt, tree_docs), output)


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--to", "to_ref", required=True, metavar="PIN", help=f"Pin to carry the citations to. {PIN_HELP}")
@click.option(
    "--from", "from_ref", metavar="PIN", help=f"Pin the citations are at (default: each file's own pin). {PIN_HELP}"
)
@click.option(
    "--write",
    is_flag=True,
    help="Rewrite line numbers, paths and pins in the files (atomically). Ambiguous and lost citations are never written; the pin written is the configured name, else the full SHA.",
)
@click.option("--repo", metavar="PATH_OR_URL", help=REPO_HELP)
@click.option(
    "--format", "fmt", type=click.Choice(sorted(FORMATS)), default="text", show_default=True, help=FORMAT_HELP
)
@click.option("--output", "outputs", multiple=True, metavar="FORMAT=PATH", help=OUTPUT_HELP)
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help=CONFIG_HELP)
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
    session = Session.open(config_path, repo, paths)
    _finish(commands.rebase(session, paths, to_ref, from_ref, write), fmt, outputs, session.config.web_url)


@main.command()
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
@click.option("--repo", metavar="PATH_OR_URL", help=REPO_HELP)
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True, help="Output format."
)
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help=CONFIG_HELP)
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
    session = Session.open(config_path, repo)
    _finish(commands.bisect(session, target, good, bad, anchors), fmt, ())


@main.command()
@click.argument("document", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--pin", metavar="PIN", help=f"Pin to read the document at when its front matter names none. {PIN_HELP}")
@click.option("--write", is_flag=True, help="Make the edits in the file (atomically); without it they are only listed.")
@click.option("--repo", metavar="PATH_OR_URL", help=REPO_HELP)
@click.option(
    "--format", "fmt", type=click.Choice(sorted(FORMATS)), default="text", show_default=True, help=FORMAT_HELP
)
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help=CONFIG_HELP)
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
    session = Session.open(config_path, repo, (document,))
    _finish(commands.anchor(session, document, pin, write), fmt, (), session.config.web_url)


@main.command()
@click.option("--repo", metavar="PATH_OR_URL", help=REPO_HELP)
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False),
    help="Configuration file for every document (default: dshaudit.toml in the document's folder or above, else the packaged default).",
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


@main.command("lint")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--strict",
    is_flag=True,
    help="Warnings fail too (unanchored citations, compiler-style locations, duplicate claims).",
)
@click.option(
    "--format", "fmt", type=click.Choice(sorted(FORMATS)), default="text", show_default=True, help=FORMAT_HELP
)
@click.option("--output", "outputs", multiple=True, metavar="FORMAT=PATH", help=OUTPUT_HELP)
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help=CONFIG_HELP)
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
    _finish(commands.lint(config_path, paths, strict), fmt, outputs)


for _command in main.commands.values():
    _command.help = inspect.cleandoc(_command.help or "") + EXIT_CODES_HELP
