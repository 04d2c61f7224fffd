"""One run rendered into every format asked for: one to stdout, the others
to their files, the files written all or none."""

from __future__ import annotations

from pathlib import Path

import click

from dshaudit.core.diagnostics import Outcome
from dshaudit.core.errors import InputError
from dshaudit.output.formats import DIAGNOSTIC_FORMATS, FORMATS
from dshaudit.output.interface import RenderContext
from dshaudit.platform.writing import write_all_atomically


def context_for(formats: list[str], web_url: str, root: Path | None = None) -> RenderContext:
    """The context these formats need, with git asked once if any of them needs it."""
    if not any(FORMATS[f].NEEDS_REPOSITORY for f in formats):
        return RenderContext(web_url, root)
    from dshaudit.git.auditrepo import audit_repository

    return RenderContext(web_url, root, audit_repository(root if root is not None else Path.cwd()))


def parse_outputs(values: tuple[str, ...], allowed: tuple[str, ...] = DIAGNOSTIC_FORMATS) -> list[tuple[str, Path]]:
    """`--output FORMAT=PATH` values, checked: a known format, a path, no path twice."""
    out: list[tuple[str, Path]] = []
    for value in values:
        fmt, sep, path = value.partition("=")
        if not sep or not path:
            raise InputError(f"--output {value!r}: expected FORMAT=PATH, e.g. sarif=results.sarif")
        if fmt not in allowed:
            raise InputError(f"--output {value!r}: unknown format {fmt!r} (one of {', '.join(allowed)})")
        if any(Path(path) == p for _, p in out):
            raise InputError(f"--output {value!r}: {path} is already an output of this run")
        out.append((fmt, Path(path)))
    return out


def emit(outcome: Outcome, fmt: str | None, outputs: list[tuple[str, Path]], web_url: str) -> int:
    """Render the outcome once per format wanted: `fmt` to stdout (None: nothing
    there), each (format, path) of `outputs` to its file. Everything is rendered
    before anything is written, and the files are written all or none (a folder
    that does not exist leaves every output as it was). Returns the exit code."""
    wanted = list(dict.fromkeys([*([fmt] if fmt else []), *(f for f, _ in outputs)]))
    context = context_for(wanted, web_url)
    rendered = {f: FORMATS[f].render(outcome, context) for f in wanted}
    write_all_atomically([(path, rendered[f]) for f, path in outputs])
    if fmt:
        click.echo(rendered[fmt], nl=False)
    return outcome.exit_code


def page_outputs(
    values: tuple[str, ...], fmt: str | None, formats: tuple[str, ...]
) -> tuple[str | None, list[tuple[str, Path]]]:
    """The stdout format and the files of a page command (report, history), whose
    `--output` takes a FILE as well as FORMAT=PATH: a FILE gets `--format` (else
    the page's first format) instead of stdout. A value is FORMAT=PATH when the
    part before its `=` names a format (one the page has not is refused), else
    it is a FILE, which may hold `=`. Stdout gets the page unless a FILE took
    it, or files were asked for and `--format` was not."""
    chosen = fmt or formats[0]
    pairs: list[str] = []
    to_file = False
    for value in values:
        name, sep, _ = value.partition("=")
        if sep and name in FORMATS:
            pairs.append(value)
        else:  # a FILE: the page as stdout would have had it
            pairs.append(f"{chosen}={value}")
            to_file = True
    files = parse_outputs(tuple(pairs), formats)
    if to_file or (files and fmt is None):
        return None, files
    return chosen, files
