"""The command line: parse options, call the application, hand its outcome to
the output layer, pick the exit code.

The main group is here; the commands are in one module per job (checking,
authoring, pages, moving), and each imports what its run needs only when it
runs, so `--help` and `lint` load neither git nor the parsers.
"""

from __future__ import annotations

import inspect

import click

from dshaudit.cli import authoring, checking, moving, pages

# Not indented: it is appended to each command's help after that help is
# dedented (below), so the result does not depend on whether the interpreter
# already stripped the docstring's indentation (Python 3.13 does, 3.11 and
# 3.12 do not).
EXIT_CODES_HELP = """

\b
Exit codes (the same for every command):
  0  every citation and claim holds
  1  a citation or claim fails (lint: a problem found; rebase: one is ambiguous or lost; bump: one needs a person)
  2  usage, configuration or findings input error
  3  the DSH repository is unusable (missing SHA, shallow clone, unreachable URL)
  4  internal error in dshaudit (a bug: please report it)
"""


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

    from dshaudit.platform import background, cache, ui, writing

    # A run allocates many small objects that live to its end (verdicts,
    # diagnostics, syntax trees): the collector's default thresholds would
    # walk them again and again for nothing. What the imports made is frozen
    # out of collection, and collection runs ten times less often.
    gc.freeze()
    gc.set_threshold(7000, 10, 10)
    ui.configure(be_quiet=quiet, be_verbose=verbose)
    cache.configure(enabled=not no_cache)
    writing.forget_reads()  # a run's outputs are held against what this run reads, not an earlier one
    if jobs is None and (refused := background.refused_jobs_variable()) is not None:
        raise click.UsageError(
            f"{background.JOBS_VARIABLE}={refused!r}: expected a whole number of processes, 1 or more"
        )
    background.configure(jobs)


for _command in (
    checking.check,
    authoring.show,
    authoring.cite,
    checking.facts,
    pages.report,
    pages.history,
    moving.rebase,
    moving.bump,
    moving.bisect,
    authoring.anchor,
    authoring.lsp,
    checking.lint_command,
):
    _command.help = inspect.cleandoc(_command.help or "") + EXIT_CODES_HELP
    main.add_command(_command)
