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
from .model import LineRange, format_lines
from .snapshot import DshRepository
from .textsafe import terminal_safe
from .verify import FileText, Verifier

# Indented like the commands' docstrings, which click dedents as one block.
EXIT_CODES_HELP = """

    \b
    Exit codes (the same for every command):
      0  every citation and claim holds
      1  a citation or claim fails (lint: a problem found; rebase: a citation is ambiguous or lost)
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
        from . import cache

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
@click.option("-q", "--quiet", is_flag=True, help="No notes and no progress on stderr; errors only.")
@click.option("-v", "--verbose", is_flag=True, help="Say what is done and how long it takes (on stderr).")
@click.option("--no-cache", is_flag=True, help="Neither read nor write the cache (same as DSHAUDIT_NO_CACHE=1).")
def main(quiet, verbose, no_cache):
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
    from . import cache, ui

    ui.configure(be_quiet=quiet, be_verbose=verbose)
    cache.configure(enabled=not no_cache)


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--repo", metavar="PATH_OR_URL", help=REPO_HELP)
@click.option("--pin", metavar="PIN", help="Check every citation at this pin (name or full SHA) instead of the file's own; @suffixes still win.")
@click.option("--format", "fmt", type=click.Choice(sorted(FORMATS)), default="text", show_default=True, help="Output format: text, json, or for CI sarif (code scanning), junit, github (workflow annotations), markdown ($GITHUB_STEP_SUMMARY).")
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
    factory = _repository_factory(repo, config)
    the_pin = _resolve_pin(config, pin, factory)
    unknown = [i for i in ids if i not in registry()]
    if unknown:
        raise InputError(f"unknown fact {unknown[0]!r}; known: {', '.join(sorted(registry()))}")
    book = FactBook(factory)
    measured = book.many(sorted(ids) or sorted(registry()), the_pin)
    book.close()
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
    for ref in pins:
        config = config.with_pin(_resolve_pin(config, ref, factory))
    book = FactBook(factory)
    runs = []
    for ref in pins or (None,):
        pin = _resolve_pin(config, ref) if ref else None
        result = run_check(files, config, factory, ref)
        fact_pin = pin or _resolve_pin(config, next((f.pin for f in files if f.pin), None))
        runs.append(PinRun(pin, result, book.all(fact_pin)))
    book.close()
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


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--to", "to_ref", required=True, metavar="PIN_OR_SHA", help="Pin (or full SHA) to carry the citations to.")
@click.option("--from", "from_ref", metavar="PIN", help="Pin the citations are at (default: each file's own pin).")
@click.option("--write", is_flag=True, help="Rewrite line numbers, paths and pins in the files (atomically). Ambiguous and lost citations are never written.")
@click.option("--repo", metavar="PATH_OR_URL", help=REPO_HELP)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True, help="Output format.")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="Configuration file.")
@handle_errors
def rebase(paths, to_ref, from_ref, write, repo, fmt, config_path):
    """Carry every citation in PATHS (default: findings/) to another pin.

    Lines are mapped through git's diff between the pins (renames followed);
    where that lands in edited code, the anchor is searched for, nearest
    first. A new place is taken only if the full check passes there. Each
    citation is reported as unchanged, shifted, edited (with the diff of its
    lines), renamed, ambiguous, lost, or skipped (it did not hold at the old
    pin, or names another pin). Claims are re-measured at the new pin and
    their changes listed. Exit 1 when any citation is ambiguous or lost.
    """
    from .claims import show as show_value
    from .rebase import rebase as run_rebase
    from .rebase import rewrite_findings
    from .report import write_atomically
    from .verify import check as run_check

    config = _config(config_path)
    files = _load_findings(config, paths)
    factory = _repository_factory(repo, config)
    new_pin = _resolve_pin(config, to_ref, factory)
    config = config.with_pin(new_pin)
    groups: dict = {}
    for f in files:
        ref = from_ref or f.pin
        if not ref:
            raise InputError(f"{f.path}: no pin in its front matter; pass --from")
        groups.setdefault(_resolve_pin(config, ref), []).append(f)
    results = [run_rebase(group, config, factory(), old_pin, new_pin) for old_pin, group in sorted(groups.items(), key=lambda kv: kv[0].name)]

    before = run_check(files, config, factory, from_ref, citations=False).claims
    after = run_check(files, config, factory, new_pin.name, citations=False).claims
    claim_changes = [
        (a, b) for a, b in zip(before, after)
        if a.status != b.status or show_value(a.measured) != show_value(b.measured)
    ]
    moves = [m for r in results for m in r.moves]
    moves.sort(key=lambda m: (m.citation.source.file, m.citation.source.line, m.citation.source.column))
    if fmt == "json":
        from .formats.json import dumps

        click.echo(dumps({
            "from": sorted({r.old_pin.name for r in results}),
            "to": {"pin": new_pin.name, "sha": new_pin.sha},
            "summary": {s: sum(1 for m in moves if m.status == s) for s in ("unchanged", "shifted", "edited", "renamed", "ambiguous", "lost", "skipped")},
            "citations": [_move_dict(m, r.old_pin, new_pin) for r in results for m in r.moves],
            "claims": [
                {"source": str(a.claim.source), "claim": a.claim.text, "kind": a.claim.kind,
                 "before": {"status": a.status.value, "measured": show_value(a.measured)},
                 "after": {"status": b.status.value, "measured": show_value(b.measured)}}
                for a, b in claim_changes
            ],
        }), nl=False)
    else:
        for r in results:
            for m in r.moves:
                if m.status == "unchanged":
                    continue
                c = m.citation
                arrow = f" -> {m.new_text(r.old_pin, new_pin)}@{new_pin.name}" if m.writable else ""
                click.echo(terminal_safe(f"{c.source}: {c.target_text}@{r.old_pin.name}{arrow}: {m.status}: {m.message}"))
        for a, b in claim_changes:
            click.echo(terminal_safe(
                f"{a.claim.source}: {a.claim.kind} {a.claim.text}: {a.status} ({show_value(a.measured)}) "
                f"-> {b.status} ({show_value(b.measured)}) at {new_pin.name}"
            ))
        counts = {s: sum(1 for m in moves if m.status == s) for s in ("unchanged", "shifted", "edited", "renamed", "ambiguous", "lost", "skipped")}
        click.echo(f"{len(moves)} citations to {new_pin.name}: " + ", ".join(f"{n} {s}" for s, n in counts.items())
                   + f"; {len(claim_changes)} claims change")
    if write:
        for r in results:
            by_file: dict = {}
            for m in r.moves:
                by_file.setdefault(m.citation.source.file, []).append(m)
            for f in groups[r.old_pin]:
                new_text = rewrite_findings(Path(f.path), by_file.get(f.path, []), r.old_pin, new_pin)
                if new_text is not None:
                    write_atomically(Path(f.path), new_text)
        needs = [m for m in moves if m.status in ("ambiguous", "lost")]
        if needs:
            from . import ui

            ui.note(f"wrote the files; {len(needs)} citations need a person (ambiguous or lost, left as they were)")
    sys.exit(errors.EXIT_FAILED if any(m.status in ("ambiguous", "lost") for m in moves) else errors.EXIT_OK)


@main.command()
@click.argument("target")
@click.option("--good", required=True, metavar="PIN_OR_SHA", help="Where the citation holds (or the fact has its old value).")
@click.option("--bad", required=True, metavar="PIN_OR_SHA", help="Where it no longer does; a descendant of --good.")
@click.option("--anchor", "anchors", multiple=True, metavar="TEXT", help="Content anchor for a TARGET given as a bare citation (repeatable).")
@click.option("--repo", metavar="PATH_OR_URL", help=REPO_HELP)
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True, help="Output format.")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="Configuration file.")
@handle_errors
def bisect(target, good, bad, anchors, repo, fmt, config_path):
    """Name the first commit where TARGET changes, between --good and --bad.

    TARGET is a citation in a findings file (`findings/01-core.md:17`, or
    `findings/01-core.md:17:3` when a line holds several), a bare citation
    (`path:12-14` with --anchor TEXT), or a fact id, optionally with a field
    (`session.known-event-types.count`). A citation changes when its check
    stops giving the same status; a fact when its value changes. The search
    walks the first-parent path, halving it, and prints the commit's SHA,
    date and subject.
    """
    import re as _re

    from .bisect import bisect as run_bisect
    from .claims import show as show_value
    from .claims import split_ref
    from .facts import FactBook, registry
    from .model import Citation, SourceLocation

    config = _config(config_path)
    factory = _repository_factory(repo, config)
    good_pin, bad_pin = _resolve_pin(config, good, factory), _resolve_pin(config, bad, factory)
    repository = factory()
    m = _re.match(r"^(.+\.md):(\d+)(?::(\d+))?$", target)
    fact_id, field = split_ref(target, set(registry()))
    if m and Path(m.group(1)).is_file():
        f = load_findings_file(Path(m.group(1)))
        line, col = int(m.group(2)), int(m.group(3)) if m.group(3) else None
        here = [c for c in f.citations if c.source.line == line and (col is None or c.source.column == col)]
        if len(here) != 1:
            what = "no citation" if not here else f"{len(here)} citations (add :COLUMN: {', '.join(str(c.source.column) for c in here)})"
            raise InputError(f"{target}: {what} on that line")
        citation = here[0]
    elif fact_id:
        citation = None
    else:
        from .grammar import find_citations

        found = find_citations(target)
        if len(found) != 1 or found[0].text != target.strip():
            raise InputError(f"{target!r}: neither a findings location (FILE.md:LINE), a citation, nor a fact id")
        raw = found[0]
        citation = Citation(raw.path, raw.lines, raw.symbol, None, tuple(anchors), SourceLocation("<command line>", 1, 1), raw.text, raw.problem)
    if citation is not None:
        verifier = Verifier(config, repository)

        def observe(pin):
            return str(verifier.verify(replace_pin(citation), pin, pin.name).status)
    else:
        book = FactBook(factory)

        def observe(pin):
            fact = book.get(fact_id, pin)
            if fact.status.value != "ok":
                return f"cannot_evaluate: {fact.message}"
            return show_value(fact.fields.get(field) if field else fact.value)

    try:
        result = run_bisect(repository, target, good_pin, bad_pin, observe)
    finally:
        if citation is None:
            book.close()
    if fmt == "json":
        from .formats.json import dumps

        click.echo(dumps({
            "target": target, "good": good_pin.sha, "bad": bad_pin.sha,
            "commits": result.commits, "probes": result.probes,
            "before": result.before, "after": result.after,
            "first": None if result.first is None else
            {"sha": result.first.sha, "date": result.first.date, "subject": result.first.subject},
        }), nl=False)
    elif result.first is None:
        click.echo(terminal_safe(f"{target}: the same at {good_pin.name} and {bad_pin.name} ({result.before})"))
    else:
        click.echo(terminal_safe(f"{result.first.sha} {result.first.date} {result.first.subject}"))
        click.echo(terminal_safe(
            f"{target}: {result.before} -> {result.after}, first at this commit "
            f"({result.commits} first-parent commits, {result.probes} checked)"
        ))


def replace_pin(citation):
    """The citation read at whatever pin it is verified at."""
    from dataclasses import replace

    return replace(citation, pin_ref=None)


def _move_dict(m, old_pin, new_pin) -> dict:
    c = m.citation
    return {
        "source": c.source.to_dict(),
        "status": m.status,
        "old": {"pin": old_pin.name, "path": c.path, "lines": format_lines(c.lines) or None, "symbol": c.symbol, "text": c.text},
        "new": {"pin": new_pin.name, "path": m.new_path, "lines": format_lines(m.new_lines) or None,
                "text": m.new_text(old_pin, new_pin)} if m.writable else None,
        "message": m.message,
        "diff": list(m.diff),
    }


def _load_findings(config: Config, paths) -> list:
    if not paths:
        default = config.root / "findings"
        if not default.is_dir():
            raise InputError(f"no PATHS given and no findings/ folder at {config.root}")
        paths = (default,)
    return [load_findings_file(p) for p in collect_markdown(list(paths))]


def _resolve_pin(config: Config, ref: str | None, factory=None):
    """A pin name, a full SHA, or (given a repository) a tag of the DSH clone."""
    ref = ref or config.default_pin
    if not ref:
        raise InputError("no pin: pass --pin or set default_pin in dshaudit.toml")
    pin = config.resolve_pin(ref)
    if pin is None and factory is not None:
        sha = factory().resolve_tag(ref)
        if sha:
            from .model import Pin

            pin = Pin(ref, sha)
    if pin is None:
        tags = " nor a tag of the clone" if factory is not None else ""
        raise InputError(f"pin {ref!r} is not in dshaudit.toml ({config.describe_pins()}), a full SHA{tags}")
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


@main.command("lint")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--strict", is_flag=True, help="Warnings fail too (unanchored citations, compiler-style locations, duplicate claims).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True, help="Output format.")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="Configuration file (default: dshaudit.toml here or above).")
@handle_errors
def lint_command(paths, strict, fmt, config_path):
    """Check the format of the findings in PATHS (default: findings/), without DSH.

    No repository is opened: lint reads the findings and dshaudit.toml only.
    Errors: missing or malformed front matter, a missing or unknown pin (also
    in an @suffix), malformed citations (`path:0`, `path:5-3`, `path:` with no
    lines, absolute or `..` paths), malformed claims and unknown fact ids.
    Warnings: citations without an anchor, `path:line:col` locations in inline
    code, the same claim stated twice. Text output prints
    `file:LINE:COL: severity: code: message`, then a summary.

    \b
    Exit codes:
      0  no errors (warnings allowed unless --strict)
      1  errors found, or warnings with --strict
      2  usage, configuration or input error
    """
    from .lint import default_paths, lint as run_lint

    config = _config(config_path)
    files = collect_markdown(default_paths(config, paths))
    result = run_lint(files, config)
    if fmt == "json":
        from .formats.json import dumps

        click.echo(dumps({
            "summary": {"files": len(result.files), "errors": len(result.errors),
                        "warnings": len(result.warnings), "strict": strict,
                        "failed": result.failed(strict)},
            "problems": [p.as_dict() for p in result.problems],
        }), nl=False)
    else:
        for p in result.problems:
            click.echo(terminal_safe(str(p)))
        click.echo(result.summary(strict))
    sys.exit(errors.EXIT_FAILED if result.failed(strict) else errors.EXIT_OK)


for _command in main.commands.values():
    _command.help = (_command.help or "").rstrip() + EXIT_CODES_HELP
