"""The output layer: every command's `Outcome` in any format.

Each format is a module with `render(outcome, context) -> str`; adding one
means adding a module here and a line in FORMATS. text and json are for people
and scripts; sarif (code scanning), junit (test reports), github (workflow
annotations) and markdown ($GITHUB_STEP_SUMMARY) are for CI. All of them read
the same diagnostics and the same precomputed summary, so they report the same
things in the same order; none of them runs git or reads a file. `emit` renders
one run into several formats at once (stdout and `--output FORMAT=PATH`).
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import import_module
from pathlib import Path

import click

from dshaudit.core.diagnostics import Outcome
from dshaudit.core.errors import InputError
from dshaudit.git.auditrepo import AuditRepository, audit_repository
from dshaudit.platform.writing import write_all_atomically

FORMATS = {
    "text": "text",
    "json": "json",
    "sarif": "sarif",
    "junit": "junit",
    "github": "github",
    "markdown": "markdown",
}
# Formats that name findings files relative to the audit repository, so need git's word on it.
_NEED_REPOSITORY = {"sarif", "github"}


@dataclass(frozen=True)
class RenderContext:
    web_url: str  # DSH's web address (SARIF's provenance)
    # The folder findings paths are relative to (None: the working directory).
    root: Path | None = None
    # The audit's own git repository, asked before rendering; None outside one.
    repository: AuditRepository | None = None

    @property
    def base(self) -> Path:
        return self.root if self.root is not None else Path.cwd()


def context_for(formats: list[str], web_url: str, root: Path | None = None) -> RenderContext:
    """The context these formats need, with git asked once if any of them needs it."""
    base = root if root is not None else Path.cwd()
    repository = audit_repository(base) if _NEED_REPOSITORY & set(formats) else None
    return RenderContext(web_url, root, repository)


def render(fmt: str, outcome: Outcome, context: RenderContext) -> str:
    return str(import_module(f".{FORMATS[fmt]}", __name__).render(outcome, context))


def parse_outputs(values: tuple[str, ...], allowed: list[str] | None = None) -> list[tuple[str, Path]]:
    """`--output FORMAT=PATH` values, checked: a known format, a path, no path twice."""
    allowed = allowed or sorted(FORMATS)
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


def emit(outcome: Outcome, fmt: str, outputs: list[tuple[str, Path]], web_url: str) -> int:
    """Render the outcome once per format wanted: `fmt` to stdout, each
    (format, path) of `outputs` to its file. Everything is rendered before
    anything is written, and the files are written all or none (a folder that
    does not exist leaves every output as it was). Returns the exit code."""
    context = context_for([fmt, *(f for f, _ in outputs)], web_url)
    rendered: dict[str, str] = {}
    for f in [fmt, *(f for f, _ in outputs)]:
        if f not in rendered:
            rendered[f] = render(f, outcome, context)
    write_all_atomically([(path, rendered[f]) for f, path in outputs])
    click.echo(rendered[fmt], nl=False)
    return outcome.exit_code
