"""The command line: parse options, call the core, print, pick the exit code."""

from __future__ import annotations

import os
import sys
from functools import wraps
from pathlib import Path

import click

from . import errors
from .config import Config, load_config
from .errors import DshauditError, InputError
from .findings import collect_markdown, load_findings_file
from .formats import FORMATS, RenderContext, render
from .grammar import find_citations
from .model import LineRange
from .snapshot import DshRepository
from .textsafe import terminal_safe
from .verify import FileText, Verifier

EXIT_CODES_HELP = """
\b
Exit codes:
  0  every citation holds
  1  a citation fails
  2  usage, configuration or findings input error
  3  the DSH repository is unusable (missing SHA, shallow clone, unreachable URL)
  4  internal error in dshaudit (a bug: please report it)
"""

REPO_HELP = (
    "DSH clone: a path (bare or not) or a URL. Default: $DSH_REPO, else a clone of the "
    "upstream URL in the user cache directory, made on first use."
)


def handle_errors(fn):
    """One line on stderr and a documented exit code, never a traceback."""

    @wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
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

    return wrapper


def _config(path: str | None) -> Config:
    return load_config(Path(path) if path else None)


def _repository_factory(repo: str | None, config: Config):
    """Open the clone on first need, once per run."""
    opened: list[DshRepository] = []

    def factory() -> DshRepository:
        if not opened:
            opened.append(DshRepository.open(repo, config.upstream_url))
        return opened[0]

    return factory


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.version_option(package_name="dshaudit")
def main():
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


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--repo", metavar="PATH_OR_URL", help=REPO_HELP)
@click.option("--pin", metavar="PIN", help="Check every citation at this pin (name or full SHA) instead of the file's own; @suffixes still win.")
@click.option("--format", "fmt", type=click.Choice(sorted(FORMATS)), default="text", show_default=True, help="Output format.")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="Configuration file (default: dshaudit.toml here or above).")
@handle_errors
def check(paths, repo, pin, fmt, config_path):
    """Verify every citation in PATHS (default: findings/).

    Each citation is checked at its strongest level: the file exists at the
    pinned SHA, the cited lines exist, a #Symbol resolves to a declaration that
    holds the lines, and every anchor text is on the cited lines (whitespace is
    ignored). Text output prints one line per failure,
    `findings/x.md:LINE:COL: path:lines@pin: status: reason`, then a summary.
    """
    from .verify import check as run_check

    config = _config(config_path)
    files = _load_findings(config, paths)
    result = run_check(files, config, _repository_factory(repo, config), pin)
    click.echo(render(fmt, result, RenderContext(config.web_url)), nl=False)
    sys.exit(errors.EXIT_OK if result.ok else errors.EXIT_FAILED)


check.help += EXIT_CODES_HELP


@main.command()
@click.argument("citation")
@click.option("--repo", metavar="PATH_OR_URL", help=REPO_HELP)
@click.option("--pin", metavar="PIN", help="Pin to read at when CITATION has no @PIN (default: the config's default_pin).")
@click.option("-C", "--context", "context_lines", type=click.IntRange(0, 200), default=3, show_default=True, help="Lines of context around each cited range.")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="Configuration file.")
@handle_errors
def show(citation, repo, pin, context_lines, config_path):
    """Print the lines CITATION names, numbered, with a little context.

    CITATION is PATH:LINES[@PIN] or PATH#Symbol[@PIN], e.g.
    `vendor/cordis/src/context.ts:77-81@rc7`. Cited lines are marked with `>`,
    so you can pick an anchor and cite without a checkout.
    """
    config = _config(config_path)
    found = find_citations(citation)
    if len(found) != 1 or found[0].text != citation.strip():
        raise InputError(f"{citation!r}: not a citation; expected PATH:LINES[@PIN] or PATH#Symbol[@PIN]")
    raw = found[0]
    if raw.problem:
        raise InputError(f"{citation}: {raw.problem}")
    ref = raw.pin or pin or config.default_pin
    if not ref:
        raise InputError("no pin: add @PIN to the citation, pass --pin, or set default_pin in dshaudit.toml")
    the_pin = config.resolve_pin(ref)
    if the_pin is None:
        raise InputError(f"pin {ref!r} is not in dshaudit.toml ({config.describe_pins()}) nor a full SHA")
    repository = DshRepository.open(repo, config.upstream_url)
    from .model import Citation, SourceLocation, Status

    c = Citation(raw.path, raw.lines, raw.symbol, raw.pin, (), SourceLocation("<command line>", 1, 1), raw.text)
    verdict = Verifier(config, repository).verify(c, the_pin, ref)
    if verdict.status not in (Status.OK,):
        raise InputError(f"{raw.text}: {verdict.status}: {verdict.message}")
    snap = repository.snapshot(the_pin.sha, the_pin.name)
    entry = snap.entry(raw.path)
    text = FileText.from_bytes(snap.read(entry.blob_sha))
    ranges = verdict.resolved_lines or raw.lines
    click.echo(terminal_safe(f"{raw.path} @ {the_pin.name} ({the_pin.sha[:12]}), {len(text.lines)} lines"))
    click.echo(_numbered(text.lines, ranges, context_lines), nl=False)


@main.command()
@click.option("--repo", metavar="PATH_OR_URL", help=REPO_HELP)
@click.option("--pin", metavar="PIN", help="Pin to measure at (default: the config's default_pin).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True, help="Output format.")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="Configuration file.")
@click.argument("ids", nargs=-1)
@handle_errors
def facts(repo, pin, fmt, config_path, ids):
    """Measure structural facts of DSH at a pin, from its syntax trees.

    Prints every fact (or only IDS) with its value, the counting rule that
    produced it, and the evidence (`path:lines`). A fact whose evidence holds
    code tree-sitter cannot parse is `cannot_evaluate`, never a silent
    undercount. Findings state expected values as claims:
    `claim: core.context-builtin-services.count == 5`.
    """
    from .facts import FactBook, registry
    from .formats.json import dumps, fact_dict

    config = _config(config_path)
    the_pin = _resolve_pin(config, pin)
    unknown = [i for i in ids if i not in registry()]
    if unknown:
        raise InputError(f"unknown fact {unknown[0]!r}; known: {', '.join(sorted(registry()))}")
    book = FactBook(_repository_factory(repo, config))
    measured = [book.get(i, the_pin) for i in (sorted(ids) or sorted(registry()))]
    if fmt == "json":
        click.echo(dumps({"pin": the_pin.name, "sha": the_pin.sha, "facts": [fact_dict(f) for f in measured]}), nl=False)
        return
    from .claims import show as show_value

    for f in measured:
        click.echo(terminal_safe(f"{f.id} @ {f.pin.name}: {f.status}"))
        if f.status.value == "ok":
            click.echo(terminal_safe(f"  value: {show_value(f.value)}"))
            for k, v in f.fields.items():
                text = show_value(v)
                click.echo(terminal_safe(f"  .{k}: {text if len(text) < 200 else text[:197] + '...'}"))
        else:
            click.echo(terminal_safe(f"  {f.message}"))
        click.echo(terminal_safe(f"  rule: {f.definition}"))
        ev = [str(e) for e in f.evidence]
        if ev:
            more = f" (+{len(ev) - 5} more)" if len(ev) > 5 else ""
            click.echo(terminal_safe(f"  evidence: {', '.join(ev[:5])}{more}"))


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--repo", metavar="PATH_OR_URL", help=REPO_HELP)
@click.option("--pin", "pins", metavar="PIN", multiple=True, help="Report at this pin (repeatable: the first is the main one, later ones add a status column each). Default: each file's own pin.")
@click.option("--format", "fmt", type=click.Choice(["html", "markdown", "json"]), default="html", show_default=True, help="Output format.")
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path), help="Write here (atomically) instead of stdout.")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="Configuration file.")
@handle_errors
def report(paths, repo, pins, fmt, output, config_path):
    """Render the claims-versus-code report for PATHS (default: findings/).

    For each finding: every claim with the claimed and measured value and the
    evidence, every citation with its status, the cited lines and a permalink
    at the SHA; then every measured fact with its counting rule. HTML is one
    self-contained file (no external assets); Markdown reads on GitHub.
    The exit code is that of `check` on the first pin, so a report can gate CI.
    """
    from .facts import FactBook
    from .report import PinRun, build_report, render_report, write_atomically
    from .verify import check as run_check

    config = _config(config_path)
    files = _load_findings(config, paths)
    factory = _repository_factory(repo, config)
    book = FactBook(factory)
    runs = []
    for ref in pins or (None,):
        pin = _resolve_pin(config, ref) if ref else None
        result = run_check(files, config, factory, ref)
        fact_pin = pin or _resolve_pin(config, next((f.pin for f in files if f.pin), None))
        runs.append(PinRun(pin, result, book.all(fact_pin)))
    texts: dict = {}

    def reader(pin, path):
        key = (pin.sha, path)
        if key not in texts:
            snap = factory().snapshot(pin.sha, pin.name)
            entry = snap.entry(path)
            texts[key] = FileText.from_bytes(snap.read(entry.blob_sha)) if entry and entry.kind == "blob" else None
        return texts[key]

    text = render_report(build_report(config, files, runs, reader), fmt)
    if output:
        write_atomically(output, text)
    else:
        click.echo(text, nl=False)
    sys.exit(errors.EXIT_OK if runs[0].result.ok else errors.EXIT_FAILED)


def _load_findings(config: Config, paths) -> list:
    if not paths:
        default = config.root / "findings"
        if not default.is_dir():
            raise InputError(f"no PATHS given and no findings/ folder at {config.root}")
        paths = (default,)
    return [load_findings_file(p) for p in collect_markdown(list(paths))]


def _resolve_pin(config: Config, ref: str | None):
    ref = ref or config.default_pin
    if not ref:
        raise InputError("no pin: pass --pin or set default_pin in dshaudit.toml")
    pin = config.resolve_pin(ref)
    if pin is None:
        raise InputError(f"pin {ref!r} is not in dshaudit.toml ({config.describe_pins()}) nor a full SHA")
    return pin


def _numbered(lines: list[str], ranges: tuple[LineRange, ...], context: int) -> str:
    cited = set()
    shown = set()
    for r in ranges:
        cited.update(range(r.start, r.end + 1))
        shown.update(range(max(1, r.start - context), min(len(lines), r.end + context) + 1))
    width = len(str(max(shown))) if shown else 1
    out, last = [], None
    for n in sorted(shown):
        if last is not None and n != last + 1:
            out.append(" " * (width + 2) + "...")
        mark = ">" if n in cited else " "
        out.append(terminal_safe(f"{mark} {n:>{width}} | {lines[n - 1]}".rstrip()))
        last = n
    return "\n".join(out) + "\n"
