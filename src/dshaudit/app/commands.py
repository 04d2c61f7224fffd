"""One function per command: read the inputs, run the core, return an `Outcome`.

The command line (the cli package) only parses options, calls one of these and hands
the outcome to the output layer (output/). Everything a command needs from
its surroundings comes through a `Session`: the configuration, the DSH clone
(opened on first need, once) and the one pin resolver.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dshaudit.core.diagnostics import Outcome
from dshaudit.core.errors import InputError, RepoError
from dshaudit.core.model import Citation, Fact, LineRange, Pin, SourceLocation, Status, Verdict, format_lines
from dshaudit.documents.findings import MAX_FINDINGS_BYTES, FindingsFile, collect_markdown, load_findings_file
from dshaudit.output.pages import Page
from dshaudit.platform.config import Config, load_config

if TYPE_CHECKING:
    from dshaudit.checking.citations import FileText
    from dshaudit.git.pins import PinResolver
    from dshaudit.git.repository import DshRepository
    from dshaudit.moves.rebase import RebaseResult
    from dshaudit.moves.rebaser import Move


class LazyRepository:
    """The DSH clone, opened on the first call and the same one after: a run
    that never needs DSH (malformed findings, lint) never opens or clones it."""

    def __init__(self, spec: str | None, upstream_url: str):
        self.spec = spec
        self.upstream_url = upstream_url
        self._opened: DshRepository | None = None
        self._failed: RepoError | None = None  # why it could not be opened: said once, not tried again

    @property
    def is_open(self) -> bool:
        """Whether the clone is open already (the language server opens it, or
        makes it, with a progress report, before it is first needed)."""
        return self._opened is not None

    def __call__(self) -> DshRepository:
        if self._failed is not None:
            raise self._failed
        if self._opened is None:
            from dshaudit.git.repository import DshRepository

            try:
                self._opened = DshRepository.open(self.spec, self.upstream_url)
            except RepoError as exc:
                self._failed = exc
                raise
        return self._opened


def _provide_facts() -> None:
    """The facts measured above the facts package: a `tree-docs(...)` fact runs a check."""
    from dshaudit.facts.provided import provide

    provide("tree-docs", _measure_tree_docs)


def _measure_tree_docs(*args: Any) -> Fact:
    """A `tree-docs(...)` fact, its module (the whole check) imported when one is measured:
    most runs measure none, and `facts` answers from the cache."""
    from dshaudit.moves.treedocs_fact import measure_fact

    return measure_fact(*args)


@dataclass
class Session:
    config: Config
    repository: LazyRepository
    pins: PinResolver

    @classmethod
    def open(cls, config_path: str | None, repo: str | None, documents: tuple[Path, ...] = ()) -> Session:
        """The session for these documents: their configuration is --config, else
        found by walking up from the first document, else the packaged default."""
        from dshaudit.git.pins import PinResolver

        _provide_facts()
        config = load_config(Path(config_path) if config_path else None, list(documents))
        repository = LazyRepository(repo, config.upstream_url)
        return cls(config, repository, PinResolver(config, repository))

    def findings(self, paths: tuple[Path, ...]) -> list[FindingsFile]:
        return self.load(collect_markdown(list(self.default_paths(paths))))

    def load(self, sources: list[Path]) -> list[FindingsFile]:
        """The documents at these paths, parsed."""
        return [load_findings_file(p, self.config.web_url) for p in sources]

    def sources(self, paths: tuple[Path, ...], tree_docs: tuple[str, ...]) -> list[Path]:
        """The Markdown files of PATHS: default findings/, unless only tree documents are asked for."""
        return collect_markdown(list(self.default_paths(paths))) if paths or not tree_docs else []

    def documents(self, paths: tuple[Path, ...], tree_docs: tuple[str, ...]) -> list[FindingsFile]:
        """The findings files of PATHS (default findings/, unless only tree documents are asked for),
        then the documents of each --tree-docs."""
        return self.load(self.sources(paths, tree_docs)) + self.tree_docs(tree_docs)

    def tree_docs(self, specs: tuple[str, ...]) -> list[FindingsFile]:
        """The documents each `PIN[:DIR]` selects in DSH's tree (treedocs.py)."""
        from dshaudit.index import treedocs

        out: list[FindingsFile] = []
        for spec in specs:
            wanted = treedocs.TreeDocs.parse(spec)
            pin = self.pins.require(wanted.pin, "--tree-docs PIN")
            out += treedocs.load(wanted, pin, self.repository().snapshot(pin.sha, pin.name), self.config.web_url)
        return out

    def default_paths(self, paths: tuple[Path, ...]) -> tuple[Path, ...]:
        if paths:
            return paths
        default = self.config.root / "findings"
        if not default.is_dir():
            raise InputError(f"no PATHS given and no findings/ folder at {self.config.root}")
        return (default,)


def check(
    session: Session, paths: tuple[Path, ...], pin: str | None, strict: bool, tree_docs: tuple[str, ...] = ()
) -> Outcome:
    from dshaudit.app.memo import kept_outcome
    from dshaudit.checking.outcome import check_outcome, check_statuses, coverage

    sources = session.sources(paths, tree_docs)
    options = (tuple(map(str, paths)), pin, strict, tree_docs)
    kept = kept_outcome(
        "check", check_statuses(), options, session.config, session.repository.spec, sources, MAX_FINDINGS_BYTES
    )
    outcome = kept.read() if kept is not None else None
    if outcome is not None:
        return outcome

    from dshaudit.checking.verify import check as run_check
    from dshaudit.index import search
    from dshaudit.moves.carry import carried_verdicts

    files = session.load(sources) + session.tree_docs(tree_docs)
    result = run_check(files, session.pins, session.repository, pin, carry=carried_verdicts)
    unchecked = coverage(files, result, tuple(str(p) for p in paths))
    outcome = check_outcome(result, session.config.web_url, strict, coverage=unchecked)
    if kept is not None and not any(search.stopped(v.fact) for v in result.claims):
        kept.write(outcome, session.repository() if session.repository.is_open else None)
    return outcome


def lint(config_path: str | None, paths: tuple[Path, ...], strict: bool) -> Outcome:
    """No session: lint never opens DSH, so it knows pin names and SHAs only."""
    from dshaudit.checking.lint import default_paths
    from dshaudit.checking.lint import lint as run_lint

    config = load_config(Path(config_path) if config_path else None, list(paths))
    return run_lint(collect_markdown(default_paths(config, paths)), config).outcome(strict)


@dataclass(frozen=True)
class Cited:
    """A citation given on the command line, verified: its pin, verdict and file."""

    pin: Pin
    verdict: Verdict
    text: FileText

    @property
    def ranges(self) -> tuple[LineRange, ...]:
        return self.verdict.resolved_lines or self.verdict.citation.lines


def cited(session: Session, citation: str, pin: str | None) -> Cited:
    """CITATION (`PATH:LINES[@PIN]` or `PATH#Symbol[@PIN]`) read at its pin, else
    `pin`, else the default pin; an InputError unless it holds (a warning is fine)."""
    from dshaudit.checking.citations import Verifier
    from dshaudit.documents.grammar import find_citations

    found = find_citations(citation)
    if len(found) != 1 or found[0].text != citation.strip():
        raise InputError(f"{citation!r}: not a citation; expected PATH:LINES[@PIN] or PATH#Symbol[@PIN]")
    raw = found[0]
    if raw.problem:
        raise InputError(f"{citation}: {raw.problem}")
    the_pin = session.pins.require(raw.pin or pin, "@PIN or --pin")
    c = Citation(raw.path, raw.lines, raw.symbol, raw.pin, (), SourceLocation("<command line>", 1, 1), raw.text)
    verifier = Verifier(session.pins, session.repository)
    verdict = verifier.verify(c, the_pin, raw.pin or pin)
    if verdict.status.fails():
        raise InputError(f"{raw.text}: {verdict.status}: {verdict.message}")
    text = verifier.text(session.repository().snapshot(the_pin.sha, the_pin.name), verdict.path)
    assert text is not None  # the citation verified, so the path is a text file
    return Cited(the_pin, verdict, text)


def show(session: Session, citation: str, pin: str | None, context_lines: int) -> Outcome:
    found = cited(session, citation, pin)
    verdict, text = found.verdict, found.text
    head = f"{verdict.path} @ {found.pin.name} ({found.pin.sha[:12]}), {len(text.lines)} lines"
    if verdict.status is not Status.OK:  # a warning: the lines are still worth seeing
        head += f" ({verdict.status}: {verdict.message})"
    return Outcome("show", lines=(head, *numbered(text.lines, found.ranges, context_lines)), exit_override=0)


def cite(session: Session, citation: str, pin: str | None) -> Outcome:
    """CITATION as a finding writes it: the full path, its lines, the pin when it
    is not the default one, and the anchor `dshaudit anchor` would give it
    (a #Symbol is an anchor itself, so it gets its declaration's lines instead)."""
    from dshaudit.checking.anchoring import choose_anchor

    found = cited(session, citation, pin)
    verdict, c = found.verdict, found.verdict.citation
    suffix = "" if found.pin.name == session.config.default_pin else "@" + found.pin.ref
    anchor = None
    if c.symbol:
        target = f"{verdict.path}:{format_lines(c.lines or found.ranges[:1])}#{c.symbol}"
    else:
        target = f"{verdict.path}:{format_lines(c.lines)}"
        anchor = choose_anchor(c, verdict, found.text)
    written = f"`{target}{suffix}`" + (f" → `{anchor}`" if anchor else "")
    head = {
        "citation": written,
        "path": verdict.path,
        "lines": format_lines(c.lines or found.ranges[:1]),
        "symbol": c.symbol,
        "anchor": anchor,
        "pin": found.pin.name,
        "sha": found.pin.sha,
    }
    return Outcome("cite", head=head, lines=(written,), exit_override=0)


def numbered(lines: list[str], ranges: tuple[LineRange, ...], context: int) -> list[str]:
    """The cited lines marked `>`, numbered, with `context` lines around each range."""
    cited: set[int] = set()
    shown: set[int] = set()
    for r in ranges:
        cited.update(range(r.start, r.end + 1))
        shown.update(range(max(1, r.start - context), min(len(lines), r.end + context) + 1))
    width = len(str(max(shown))) if shown else 1
    out: list[str] = []
    last = None
    for n in sorted(shown):
        if last is not None and n != last + 1:
            out.append(" " * (width + 2) + "...")
        mark = ">" if n in cited else " "
        out.append(f"{mark} {n:>{width}} | {lines[n - 1]}".rstrip())
        last = n
    return out


def facts(session: Session, pin: str | None, ids: tuple[str, ...]) -> Outcome:
    """The registry's facts (or those of `ids`) measured at `pin`. Like `check`'s, the
    outcome is kept for the next run of the same inputs (app/memo.py): a fact is a
    function of the rules and of the tree of the commit the pin names."""
    from dshaudit.app.memo import kept_outcome

    kept = kept_outcome("facts", (), (pin, tuple(sorted(ids))), session.config, session.repository.spec, [], 0)
    outcome = kept.read() if kept is not None else None
    if outcome is not None:
        return outcome

    from dshaudit.documents.claims import show as show_value
    from dshaudit.facts.book import FactBook, registry
    from dshaudit.index import search

    the_pin = session.pins.require(pin)
    unknown = [i for i in ids if i not in registry()]
    if unknown:
        raise InputError(f"unknown fact {unknown[0]!r}; known: {', '.join(sorted(registry()))}")
    book = FactBook(session.repository, resolver=session.pins)
    try:
        measured = book.many(sorted(ids) or sorted(registry()), the_pin)
    finally:
        book.close()
    lines: list[str] = []
    for f in measured:
        lines.append(f"{f.id} @ {f.pin.name}: {f.status}")
        if f.status.value == "ok":
            lines.append(f"  value: {show_value(f.value)}")
            for k, v in f.fields.items():
                text = show_value(v)
                lines.append(f"  .{k}: {text if len(text) < 200 else text[:197] + '...'}")
        else:
            lines.append(f"  {f.message}")
        lines.append(f"  rule: {f.definition}")
        ev = [str(e) for e in f.evidence]
        if ev:
            more = f" (+{len(ev) - 5} more)" if len(ev) > 5 else ""
            lines.append(f"  evidence: {', '.join(ev[:5])}{more}")
    head = {"pin": the_pin.name, "sha": the_pin.sha, "facts": [f.as_dict() for f in measured]}
    outcome = Outcome("facts", head=head, lines=tuple(lines), exit_override=0)
    if kept is not None and not any(search.stopped(f) for f in measured):
        kept.write(outcome, session.repository() if session.repository.is_open else None)
    return outcome


@dataclass
class _RebasePlan:
    """The documents grouped by the pin they are carried from, and each group's moves."""

    files: list[FindingsFile]
    new_pin: Pin
    groups: dict[Pin, list[FindingsFile]]
    results: list[RebaseResult]


def _plan_rebase(
    session: Session, paths: tuple[Path, ...], to_ref: str, from_ref: str | None, branches: bool = False
) -> _RebasePlan:
    from dshaudit.checking.verify import linked_commits
    from dshaudit.moves.rebase import rebase as run_rebase

    files = session.findings(paths)
    new_pin = session.pins.require(to_ref, "--to")
    groups: dict[Pin, list[FindingsFile]] = {}
    mixed: list[str] = []  # documents whose permalinks name several commits: in the group of each
    for f in files:
        ref = from_ref or f.pin
        if not ref:
            # A document not written for dshaudit: the one commit its permalinks name, if they agree.
            commits = linked_commits(f, session.pins, branches)
            if not commits and all(c.pin_ref for c in f.citations):
                continue  # nothing it cites is at a commit to carry from
            if not commits:
                raise InputError(f"{f.path}: no pin in its front matter, and no permalink at a commit; pass --from")
            if len(commits) > 1:
                mixed.append(f.path)  # each of its permalinks carried from its own commit
            for commit in commits:
                groups.setdefault(commit, []).append(f)
            continue
        groups.setdefault(session.pins.require(ref, "--from" if from_ref else f"{f.path}: front matter"), []).append(f)
    results = [
        run_rebase(group, session.pins, session.repository, old_pin, new_pin, frozenset(mixed), branches)
        for old_pin, group in sorted(groups.items(), key=lambda kv: kv[0].name)
    ]
    return _RebasePlan(files, new_pin, groups, results)


def _write_rebase(session: Session, plan: _RebasePlan) -> None:
    """Every new text first (each file checked unchanged since it was read), then the writes."""
    from dshaudit.moves.rebase import rewrite_findings
    from dshaudit.platform.writing import write_all_atomically

    # A document in several groups (permalinks at several commits) is written once, with all its moves.
    moves: dict[str, list[tuple[Move, Pin]]] = {}
    docs: dict[str, FindingsFile] = {}
    for r in plan.results:
        for f in plan.groups[r.old_pin]:
            docs[f.path] = f
            moves.setdefault(f.path, [])
        for m in r.moves:
            moves[m.citation.source.file].append((m, r.old_pin))
    texts = []
    unchanged = {}
    for path, f in docs.items():
        own = session.pins.resolve(f.pin) if f.pin else None
        old_pin = moves[path][0][1] if moves[path] else plan.new_pin
        new_text = rewrite_findings(f, [m for m, _ in moves[path]], old_pin, plan.new_pin, own)
        if new_text is not None and f.read is not None:
            # The file itself (a link's target), checked again just before it is replaced.
            texts.append((f.read.real, new_text))
            unchanged[f.read.real] = (f.read, f.path, "rebase")
    write_all_atomically(texts, unchanged)


def rebase(
    session: Session,
    paths: tuple[Path, ...],
    to_ref: str,
    from_ref: str | None,
    write: bool,
    branches: bool = False,
) -> Outcome:
    from dshaudit.checking.verify import check as run_check
    from dshaudit.moves.rebase import claim_change, rebase_outcome
    from dshaudit.platform import ui

    plan = _plan_rebase(session, paths, to_ref, from_ref, branches)
    files = plan.files
    before = run_check(files, session.pins, session.repository, from_ref, citations=False, references=False).claims
    after = run_check(files, session.pins, session.repository, to_ref, citations=False, references=False).claims
    changes = [d for a, b in zip(before, after) if (d := claim_change(a, b, plan.new_pin)) is not None]
    outcome = rebase_outcome(plan.results, plan.new_pin, changes)
    if write:
        _write_rebase(session, plan)
        if outcome.failing:
            ui.note(
                f"wrote the files; {len(outcome.failing)} citations need a person "
                "(ambiguous or lost, left as they were)"
            )
    return outcome


def _followed(session: Session, plan: _RebasePlan) -> dict[tuple[str, int, int], str]:
    """Where the text of each lost citation of a document not written for dshaudit went (carry.py)."""
    from dshaudit.checking.citations import Verifier
    from dshaudit.moves.carry import followed
    from dshaudit.moves.rebaser import MoveStatus

    verifier = Verifier(session.pins, session.repository)
    out = {}
    for r in plan.results:
        for m in r.moves:
            c = m.citation
            if m.status is MoveStatus.LOST and not c.by_shape and c.lines:
                v = followed(c, r.old_pin, plan.new_pin, verifier)
                if v is not None:
                    out[(c.source.file, c.source.line, c.source.column)] = v.message
    return out


def bump(
    session: Session,
    paths: tuple[Path, ...],
    to_ref: str,
    dry_run: bool,
    branches: bool = False,
    outputs: tuple[Path, ...] = (),
) -> Outcome:
    """The whole move of documents to a new pin: rebased (written unless `dry_run`), their
    history walked from each group's pin, and the pull-request body that says what needs a person.
    The body's `outputs` are checked before any document is written: none may be an input."""
    from dshaudit.git.log import is_ancestor
    from dshaudit.moves.bump import BumpResult, body
    from dshaudit.moves.history import history as run_history
    from dshaudit.platform import ui
    from dshaudit.platform.writing import refuse_over_inputs

    plan = _plan_rebase(session, paths, to_ref, None, branches)
    refuse_over_inputs(list(outputs))
    if not dry_run:
        _write_rebase(session, plan)
    histories, unwalked = [], []
    for r in plan.results:
        if r.old_pin.sha == plan.new_pin.sha:
            continue
        # A branch ahead of the release (`blob/master/...`) is carried back through the diff:
        # no first-parent history leads from it to the release.
        if not is_ancestor(session.repository(), r.old_pin.sha, plan.new_pin.sha):
            unwalked.append(r.old_pin)
            continue
        ui.detail(f"bump: history from {r.old_pin.name} to {plan.new_pin.name}")
        histories.append(run_history(plan.groups[r.old_pin], session.pins, session.repository, r.old_pin, plan.new_pin))
    result = BumpResult(
        plan.new_pin,
        plan.results,
        histories,
        written=not dry_run,
        followed=_followed(session, plan),
        unwalked=tuple(unwalked),
    )
    text = body(result, session.config.web_url)
    return Outcome(
        "bump",
        head={"to": {"pin": plan.new_pin.name, "sha": plan.new_pin.sha}, "written": not dry_run},
        lines=tuple(text.split("\n")),
        exit_override=1 if result.needs_a_person else 0,
    )


def bisect(session: Session, target: str, good: str, bad: str, anchors: tuple[str, ...]) -> Outcome:
    from dshaudit.checking.citations import Verifier
    from dshaudit.documents.claims import show as show_value
    from dshaudit.facts.book import FactBook, registry
    from dshaudit.moves.bisect import bisect as run_bisect
    from dshaudit.moves.bisect import parse_target

    good_pin, bad_pin = session.pins.require(good, "--good"), session.pins.require(bad, "--bad")
    watched = parse_target(target, anchors, set(registry()))
    book = FactBook(session.repository, resolver=session.pins)
    verifier = Verifier(session.pins, session.repository)

    def observe(pin: Pin) -> str:
        if watched.citation is not None:
            return str(verifier.verify(watched.citation, pin, pin.name).status)
        assert watched.fact_id is not None
        fact = book.get(watched.fact_id, pin)
        if fact.status.value != "ok":
            return f"cannot_evaluate: {fact.message}"
        return show_value(fact.fields.get(watched.field) if watched.field else fact.value)

    try:
        result = run_bisect(session.repository(), target, good_pin, bad_pin, observe)
    finally:
        book.close()
    return Outcome("bisect", head=result.as_dict(), lines=result.lines(), exit_override=0)


def history(
    session: Session, paths: tuple[Path, ...], from_ref: str, to_ref: str, tree_docs: tuple[str, ...] = ()
) -> Page:
    """What each first-parent commit from FROM to TO did to the findings, as a
    page whose exit code is that of `check --pin TO` for its citations and claims."""
    from dshaudit.app.upstream import history_model
    from dshaudit.moves.history import history as run_history

    files = session.documents(paths, tree_docs)
    result = run_history(
        files,
        session.pins,
        session.repository,
        session.pins.require(from_ref, "--from"),
        session.pins.require(to_ref, "--to"),
    )
    return Page(
        "history",
        head=result.as_dict(),
        lines=result.lines(),
        model_of=partial(history_model, result, session.config.web_url),
        exit_override=1 if result.failing else 0,
    )


def report(
    session: Session,
    paths: tuple[Path, ...],
    pins: tuple[str, ...],
    since: str | None = None,
    tree_docs: tuple[str, ...] = (),
) -> Page:
    """The report, as a page whose exit code is that of `check` at its first pin.
    With `since`, the upstream changes from that pin to the report's (the first
    --pin, else the one pin the files name) are a section of it."""
    from dshaudit.app.report import PinRun, build_report
    from dshaudit.checking.citations import Verifier
    from dshaudit.checking.verify import check as run_check
    from dshaudit.facts.book import FactBook
    from dshaudit.moves.carry import carried_verdicts
    from dshaudit.moves.history import history as run_history

    files = session.documents(paths, tree_docs)
    resolved = [session.pins.require(ref) for ref in pins]
    changes = None
    if since is not None:
        own = {f.pin for f in files if f.pin}
        if not resolved and len(own) != 1:
            raise InputError(
                f"--since: the files name {len(own)} pins ({', '.join(sorted(own)) or 'none'}); "
                "pass --pin to say which one the changes lead to"
            )
        to_pin = resolved[0] if resolved else session.pins.require(own.pop(), "front matter")
        changes = run_history(files, session.pins, session.repository, session.pins.require(since, "--since"), to_pin)
    book = FactBook(session.repository, resolver=session.pins)
    runs = []
    plan: list[tuple[str | None, Pin | None]] = list(zip(pins, resolved)) or [(None, None)]
    try:
        for ref, pin in plan:
            result = run_check(files, session.pins, session.repository, ref, carry=carried_verdicts)
            fact_pin = pin or session.pins.require(next((f.pin for f in files if f.pin), None))
            runs.append(PinRun(pin, result, book.all(fact_pin)))
    finally:
        book.close()
    verifier = Verifier(session.pins, session.repository)

    def reader(pin: Pin, path: str) -> FileText | None:
        return verifier.text(session.repository().snapshot(pin.sha, pin.name), path)

    model = build_report(session.config, files, runs, reader, changes)
    return Page("report", head=model, model_of=lambda: model, exit_override=0 if runs[0].result.ok else 1)


def anchor(session: Session, path: Path, pin: str | None, write: bool) -> Outcome:
    """Anchors for a document's unanchored citations, and its wild forms made
    canonical: listed, or with --write made in the file (atomically)."""
    from dshaudit.checking.anchoring import Anchored, apply, propose
    from dshaudit.checking.citations import Verifier
    from dshaudit.checking.verify import check as run_check
    from dshaudit.core.diagnostics import Diagnostic, Summary
    from dshaudit.core.status import Severity
    from dshaudit.platform.writing import reread, write_all_atomically

    (f,) = session.findings((path,))
    result = run_check([f], session.pins, session.repository, pin, claims=False, references=False)
    by_source = {(v.citation.source.line, v.citation.source.column): v for v in result.verdicts}
    verifier = Verifier(session.pins, session.repository)
    verdicts, texts = {}, {}
    for i, c in enumerate(f.citations):
        v = by_source.get((c.source.line, c.source.column))
        if v is not None and v.pin is not None and v.status is Status.OK:
            verdicts[i] = v
            texts[i] = verifier.text(session.repository().snapshot(v.pin.sha, v.pin.name), v.path)
        elif v is not None and v.suggested:  # suspect, with the lines that hold what its text describes
            verdicts[i] = v
    edits = propose(list(f.citations), verdicts, texts, f.pin or pin, f.text.split("\n"))
    if write and edits and f.read is not None:
        data = reread(f.read, f.path, "anchor").data
        write_all_atomically(
            [(f.read.real, apply(data.decode("utf-8"), edits))], {f.read.real: (f.read, f.path, "anchor")}
        )
    diagnostics = tuple(
        Diagnostic(
            "edit",
            SourceLocation(f.path, e.line, e.column),
            Anchored.WRITTEN if write else Anchored.PROPOSED,
            e.why,
            f"{e.old} -> {e.new}",
            identity=("edit", e.old),
            payload_of=partial(e.as_dict, f.path),
        )
        for e in edits
    )
    skipped = sum(1 for c in f.citations if not (c.anchors or c.symbol)) - len(edits)
    line = (
        f"{len(edits)} citations {'anchored' if write else 'to anchor'} in {f.path}"
        f"; {skipped} left as they are (anchored already, not holding, suspect or quoted)"
    )
    counts = {"edits": len(edits), "written": write, "left": skipped}
    return Outcome(
        "anchor",
        diagnostics,
        Summary(line, counts, (("Edits", str(len(edits))),), "Nothing to anchor."),
        show_at=Severity.NOTE,
        sections=(("edits", ("edit",)),),
        files=(f.path,),
    )
