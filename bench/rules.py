#!/usr/bin/env python3
"""What each rule that can flag a citation or a name flags, and what it costs.

Not a test: it prints a Markdown table for a person to read (METHOD.md's table
of the rules is measured by it).

    DSH_REPO=/path/to/dsh-clone [HANDBOOK_REPO=/path/to/handbook-clone] \\
        python bench/rules.py [--only findings|handbook]

Two corpora, each checked once from an empty cache folder, so that every rule
does all of its work: `findings/` of this repository at its pins (`dshaudit
check` from the repository's root, under its dshaudit.toml), and the `docs/en`
folder of the community handbook of DSH at a fixed commit, extracted to a
temporary folder and checked as written (`dshaudit check docs/en` from there:
no dshaudit.toml, so the packaged default names the pins). HANDBOOK_REPO names
a clone of the handbook (bare or not); without it the handbook's columns are
skipped with a note.

Each check runs in a process of its own, started by this script (so that
nothing one check read stays in memory for the next), with one job
(DSHAUDIT_WORKERS=1): all of its work then runs in that process, where the
rules' functions are wrapped. A wrapper counts what the rule looked at and what
it flagged (a rule flags by returning a message), and adds the wall seconds
spent inside it, from `time.perf_counter`: the outermost call only, so that a
rule calling itself, or another of its own functions, is counted once; a rule
called inside another measured rule is taken out of the other's seconds. What
time travel asks of the other rules on the file's older versions is time
travel's cost, and is not counted as theirs. Rules run in order, and the first
that flags a citation decides it, so a citation is counted under one rule only.

The figures are flags and seconds: "3 of 842" is 3 flagged of the 842 the rule
looked at (citations, names or numbers; a citation written twice alike is
checked once). The seconds are one run's, on a machine that may be doing other
work. The whole check's seconds (the run in process, from its command line to
its exit) are the last row, so that each rule's share can be read; what no row
counts is the rest of the check: reading the documents and their citations,
listing the trees, the claims, the report. The name lookup starts its `git
grep` pass early, beside the citations; waiting for it and reading its answer
is a row of its own rather than part of whichever rule asks first (quoted code,
as it happens), since how long the wait is depends on how much of the pass the
citations' work overlapped. That row and the one of a cited file read for the
citation rules (its declarations, parsed; the words of its lines, indexed) flag
nothing: they are work the rules share.

findings/ holds `tree-docs` claims, which check DSH's own documents with the
same rules within findings/'s run: the rules' work there has a column group of
its own (its seconds are part of findings/'s total), so that findings/'s own
columns count its own documents only. Under the table, each check's report
says how many of its citations are suspect and how many names fail, beside
which the rules' flags add up.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # bench/run.py: the constants and the handbook's extraction

from run import HANDBOOK_COMMIT, HANDBOOK_FOLDER, ROOT, extract, git_dir  # noqa: E402

TIMEOUT = 1800.0
CORPORA = ("findings", "handbook")
DOCUMENTS, TREE_DOCS = "documents", "tree-docs"  # where a rule's work is counted: the corpus, or its tree-docs claims
DECIDED = "suspect, decided by a rule it asks"  # what `suspect` becomes on the stack when one of its rules flags


@dataclass(frozen=True)
class Rule:
    """One line of the table: the functions whose time is the rule's, by module and name."""

    key: str
    text: str
    functions: tuple[tuple[str, str], ...]
    flags: bool = True  # False: work the rules share, which flags nothing itself


SUSPECT = "dshaudit.checking.suspect"
CITATIONS = "dshaudit.checking.citations"
REFERENCES = "dshaudit.checking.references"

RULES = (
    Rule("block", "the block a `// path:12` line heads", ((SUSPECT, "_suspect_block"),)),
    Rule("names", "names on other lines", ((SUSPECT, "_where"),)),
    Rule("keys", "a key the description names (YAML, JSON)", ((SUSPECT, "_suspect_key"),)),
    Rule("relevance", "relevance (not written for dshaudit)", ((SUSPECT, "_suspect_relevance"),)),
    Rule("shape", "shape (written for dshaudit)", ((SUSPECT, "_suspect_shape"),)),
    Rule("midsentence", "sentences begun above", ((SUSPECT, "_suspect_midsentence"),)),
    Rule("words", "words a few lines away", ((SUSPECT, "_suspect_words"),)),
    Rule("time-travel", "time travel (of a suspect citation)", ((CITATIONS, "Verifier._time_travel"),)),
    Rule(
        "lookup",
        "names looked up in the tree (phantom, deleted)",
        (
            ("dshaudit.checking.mentions", "document_names"),
            ("dshaudit.checking.verify", "_about_dsh"),
            (REFERENCES, "prefetch_references"),
            (REFERENCES, "compare_fragments"),
            (REFERENCES, "check_references"),
        ),
    ),
    Rule("quoted", "quoted code compared by structure", ((REFERENCES, "evaluate_all"),)),
    Rule(
        "linked",
        "names beside a linked file",
        (("dshaudit.checking.linked", "linked_names"), ("dshaudit.checking.linked", "check_linked")),
    ),
    Rule(
        "stated",
        "numbers beside a measured file",
        (("dshaudit.checking.stated", "stated_numbers"), ("dshaudit.checking.stated", "check_stated")),
    ),
    Rule("view", "(shared) a cited file read for the citation rules", ((CITATIONS, "Verifier._view"),), flags=False),
    # The names' git pass runs beside the citations; the first rule to need its answer waits for it. Counted
    # apart, so that the wait does not fall on whichever rule happens to ask first.
    Rule(
        "git-pass",
        "(shared) the names' git pass, waited for and read",
        (("dshaudit.index.nameindex", "NameIndex._finish"),),
        flags=False,
    ),
)
# The citation rules `suspect` asks in turn: the first to return a message decides the citation.
SUSPECT_RULES = ("block", "keys", "relevance", "shape", "midsentence", "words")


# -- measuring, in the child process -------------------------------------------------


@dataclass
class Figure:
    looked: int = 0
    flagged: int = 0
    seconds: float = 0.0


class Meter:
    """The rules' figures of one run, by where they were counted (DOCUMENTS or TREE_DOCS).

    Each thread keeps a stack of what is running: rules, and the frames that say how
    to count what runs inside them (`suspect`, time travel, the tree-docs claims)."""

    def __init__(self) -> None:
        self.figures: dict[str, dict[str, Figure]] = {DOCUMENTS: {}, TREE_DOCS: {}}
        self._local = threading.local()
        self._lock = threading.Lock()

    def stack(self) -> list[str]:
        if not hasattr(self._local, "stack"):
            self._local.stack = []
        return self._local.stack

    def scope(self) -> str:
        return TREE_DOCS if TREE_DOCS in self.stack() else DOCUMENTS

    def figure(self, key: str) -> Figure:
        return self.figures[self.scope()].setdefault(key, Figure())

    def counted(self) -> bool:
        """Whether a rule called now is counted: not on behalf of time travel or of the
        suggestion for a suspect citation (`described_place`), whose work is theirs."""
        return not {"time-travel", "described-place"} & set(self.stack())

    @contextlib.contextmanager
    def inside(self, key: str) -> Iterator[None]:
        stack = self.stack()
        stack.append(key)
        try:
            yield
        finally:
            stack.pop()

    def timed(self, key: str, call: Callable[[], Any]) -> Any:
        """`call()`, its seconds added to rule `key` and taken out of the rule it runs inside."""
        stack = self.stack()
        outer = next((k for k in reversed(stack) if k in RULE_KEYS), None)
        start = time.perf_counter()
        with self.inside(key):
            result = call()
        elapsed = time.perf_counter() - start
        with self._lock:
            self.figure(key).seconds += elapsed
            if outer is not None:
                self.figure(outer).seconds -= elapsed
        return result

    def decided(self) -> None:
        """The `suspect` running now was decided by a rule it asks, not by the names."""
        stack = self.stack()
        if stack[-1:] == ["suspect"]:
            stack[-1] = DECIDED

    def count(self, key: str, looked: int, flagged: int) -> None:
        with self._lock:
            figure = self.figure(key)
            figure.looked += looked
            figure.flagged += flagged


RULE_KEYS = frozenset(r.key for r in RULES)
# What a rule's call is counted as, from its arguments and its answer: (looked at, flagged), or None.
Judge = Callable[[tuple, Any], tuple[int, int] | None]


def _replace(module_name: str, attribute: str, make: Callable[[Callable[..., Any]], Callable[..., Any]]) -> None:
    """`module.attribute` (or `module.Class.method`) replaced by `make(original)`."""
    import functools
    import importlib

    owner: Any = importlib.import_module(module_name)
    *path, name = attribute.split(".")
    for part in path:
        owner = getattr(owner, part)
    original = getattr(owner, name)
    setattr(owner, name, functools.wraps(original)(make(original)))


def _flagged_references(references: list[Any], fragments: bool) -> tuple[int, int]:
    """(looked at, flagged) among the names pass's references: quoted code, or the rest."""
    mine = [r for r in references if (r.kind == "fragment") == fragments]
    return len(mine), sum(not r.ok for r in mine)


def _linked_flags(linked: list[Any], before: list[Any], after: list[Any]) -> int:
    """The linked names `check_linked` gave a failing verdict of its own (one the names pass had not)."""
    said = {(r.source.line, r.source.column): (r.status, r.message) for r in before}
    now = {(r.source.line, r.source.column): r for r in after}
    flagged = 0
    for x in linked:
        place = (x.where.line, x.where.column)
        ref = now.get(place)
        if ref is not None and not ref.ok and said.get(place) != (ref.status, ref.message):
            flagged += 1
    return flagged


def install(meter: Meter) -> None:
    """Wrap every rule's functions (RULES), and the frames that say where and whether a rule's work counts."""

    def rule(key: str, judge: Judge | None) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        def make(original: Callable[..., Any]) -> Callable[..., Any]:
            def wrapper(*args: Any, **kwargs: Any) -> Any:
                if key in meter.stack() or not meter.counted():
                    return original(*args, **kwargs)
                result = meter.timed(key, lambda: original(*args, **kwargs))
                if judge is not None and (counts := judge(args, result)) is not None:
                    meter.count(key, *counts)
                return result

            return wrapper

        return make

    def decides(args: tuple, result: Any) -> tuple[int, int]:
        """A rule `suspect` asks: one citation looked at, flagged when it returns a message."""
        if result:
            meter.decided()
        return 1, int(bool(result))

    def check_references(args: tuple, result: Any) -> None:
        """Counted here for both rules: the quoted code's verdicts come back among the names'."""
        meter.count("quoted", *_flagged_references(result, fragments=True))
        meter.count("lookup", *_flagged_references(result, fragments=False))

    def check_linked(args: tuple, result: Any) -> tuple[int, int]:
        linked, before = args[0], args[1]
        return len(linked), _linked_flags(linked, before, result)

    judges: dict[str, Judge] = {
        **{attribute: decides for r in RULES if r.key in SUSPECT_RULES for _, attribute in r.functions},
        "Verifier._time_travel": lambda args, result: (1, int(bool(result))),
        "check_references": check_references,
        "check_linked": check_linked,
        "check_stated": lambda args, result: (len(args[0]), sum(not x.ok for x in result)),
    }
    for r in RULES:
        for module, attribute in r.functions:
            _replace(module, attribute, rule(r.key, judges.get(attribute)))

    def frame(key: str, after: Callable[[tuple, Any, bool], None] | None = None) -> Callable[..., Any]:
        """A wrapper that marks what runs inside it (`key` on the stack) without timing it as a rule."""

        def make(original: Callable[..., Any]) -> Callable[..., Any]:
            def wrapper(*args: Any, **kwargs: Any) -> Any:
                if not meter.counted():
                    return original(*args, **kwargs)
                stack = meter.stack()
                stack.append(key)
                try:
                    result = original(*args, **kwargs)
                finally:
                    by_a_rule = stack.pop() == DECIDED
                if after is not None:
                    after(args, result, by_a_rule)
                return result

            return wrapper

        return make

    def names_decided(args: tuple, result: Any, by_a_rule: bool) -> None:
        """`suspect` flagged, and none of the rules it asks did: the names on other lines did."""
        inferred = args[0]
        if inferred.names and not inferred.block:
            meter.count("names", 1, int(bool(result) and not by_a_rule))

    _replace(CITATIONS, "suspect", frame("suspect", names_decided))
    _replace(CITATIONS, "described_place", frame("described-place"))

    def tree_docs(original: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            with meter.inside(TREE_DOCS):
                result = original(*args, **kwargs)
            meter.figures[TREE_DOCS].setdefault("total", Figure()).seconds += time.perf_counter() - start
            return result

        return wrapper

    _replace("dshaudit.moves.treedocs_fact", "measure_fact", tree_docs)


def measure_here(paths: list[str]) -> dict[str, Any]:
    """`dshaudit check PATHS --format json` run in this process, under the wrappers: the rules'
    figures, the run's seconds, its exit code, and what its JSON says of citations and names."""
    from dshaudit.cli import main

    meter = Meter()
    install(meter)
    sys.argv = ["dshaudit", "-q", "check", *paths, "--format", "json"]
    out = io.StringIO()
    start = time.perf_counter()
    with contextlib.redirect_stdout(out):
        try:
            main()
            code = 0
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else 1
    total = time.perf_counter() - start
    report = json.loads(out.getvalue()) if code in (0, 1) else {}
    return {
        "exit": code,
        "seconds": total,
        "figures": {
            scope: {key: [f.looked, f.flagged, f.seconds] for key, f in figures.items()}
            for scope, figures in meter.figures.items()
        },
        "suspect": sum(c["status"] == "suspect" for c in report.get("citations", [])),
        "citations": len(report.get("citations", [])),
        "references": len(report.get("references", [])),
        "references_failing": sum(r["status"] not in ("ok", "absent") for r in report.get("references", [])),
    }


# -- the corpora, from the parent process ---------------------------------------------


@dataclass
class Run:
    """One corpus's check, as the child measured it."""

    seconds: float
    figures: dict[str, dict[str, list]]
    suspect: int
    citations: int
    references: int
    references_failing: int


def measure(corpus: str, paths: list[str], cwd: Path, repo: str, cache: Path) -> Run:
    """The child process's figures for one corpus, from an empty cache folder."""
    shutil.rmtree(cache, ignore_errors=True)
    env = {**os.environ, "DSH_REPO": repo, "DSHAUDIT_WORKERS": "1", "DSHAUDIT_CACHE_DIR": str(cache)}
    argv = [sys.executable, str(Path(__file__).resolve()), "--child", *paths]
    try:
        proc = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        raise SystemExit(f"bench: measuring {corpus} ran past {TIMEOUT:.0f} s and was stopped") from None
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise SystemExit(f"bench: measuring {corpus} failed: {last}")
    figures = json.loads(proc.stdout.strip().splitlines()[-1])
    if figures["exit"] not in (0, 1):
        raise SystemExit(f"bench: `dshaudit check` of {corpus} exited {figures['exit']}: {proc.stderr.strip()}")
    return Run(
        figures["seconds"],
        figures["figures"],
        figures["suspect"],
        figures["citations"],
        figures["references"],
        figures["references_failing"],
    )


# The table's column groups: a corpus's own documents, and the documents of DSH's tree that
# findings/'s `tree-docs` claims check within its run (their seconds are part of its total).
COLUMNS = (
    ("findings", DOCUMENTS, "findings/"),
    ("findings", TREE_DOCS, "DSH's docs (tree-docs claims)"),
    ("handbook", DOCUMENTS, "handbook"),
)


def cells(run: Run | None, scope: str, key: str, flags: bool) -> list[str]:
    """A rule's flags ("3 of 842") and seconds in one column group."""
    if run is None:
        return ["skipped", "skipped"]
    looked, flagged, seconds = run.figures[scope].get(key, [0, 0, 0.0])
    return [f"{flagged} of {looked}" if flags else "–", f"{seconds:.3f}"]


def total(run: Run | None, scope: str) -> list[str]:
    if run is None:
        return ["skipped", "skipped"]
    seconds = run.seconds if scope == DOCUMENTS else run.figures[TREE_DOCS].get("total", [0, 0, 0.0])[2]
    return ["–", f"{seconds:.3f}"]


def table(runs: dict[str, Run | None]) -> list[str]:
    """The Markdown table: one row a rule, then the whole check."""
    head = ["rule"] + [text for _, _, name in COLUMNS for text in (f"{name} flagged", "seconds")]
    rows = [
        [r.text] + [c for corpus, scope, _ in COLUMNS for c in cells(runs.get(corpus), scope, r.key, r.flags)]
        for r in RULES
    ]
    rows.append(["whole check (total)"] + [c for corpus, scope, _ in COLUMNS for c in total(runs.get(corpus), scope)])
    widths = [max(len(row[i]) for row in [head, *rows]) for i in range(len(head))]

    def line(row: list[str]) -> str:
        return (
            "| " + " | ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))) + " |"
        )

    rule = "|" + "|".join("-" * (w + 2) if i == 0 else "-" * (w + 1) + ":" for i, w in enumerate(widths)) + "|"
    return [line(head), rule, *(line(row) for row in rows)]


def notes(runs: dict[str, Run | None], skipped: dict[str, str]) -> list[str]:
    """What each check's own report says, beside which the table's flags can be added up;
    and why a corpus was skipped."""
    out = [f"- {corpus}: skipped ({why})" for corpus, why in skipped.items()]
    for corpus, run in runs.items():
        if run is None:
            continue
        suspect = sum(run.figures[DOCUMENTS].get(key, [0, 0, 0.0])[1] for key in ("names", *SUSPECT_RULES))
        failing = sum(
            run.figures[DOCUMENTS].get(key, [0, 0, 0.0])[1] for key in ("lookup", "quoted", "linked", "stated")
        )
        out.append(
            f"- {corpus}: its report holds {run.citations} citations, {run.suspect} of them suspect (the citation "
            f"rules above flagged {suspect}), and {run.references} names, quoted code, absence claims and numbers, "
            f"{run.references_failing} of them failing (the rules above flagged {failing})."
        )
    return out


class Paragraphs(argparse.HelpFormatter):
    """Help whose description and epilog keep their paragraphs: each is wrapped on its own."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        # super() named in full: a generator has no `self` of its own for the bare form to find.
        return "\n\n".join(super(Paragraphs, self)._fill_text(p, width, indent) for p in text.split("\n\n"))


def main() -> None:
    parser = argparse.ArgumentParser(
        formatter_class=Paragraphs,
        description=f"{__doc__.splitlines()[0]}\n\n"
        f"Checks findings/ at its pins, and the community handbook's {HANDBOOK_FOLDER} at {HANDBOOK_COMMIT} as "
        "written, each once from an empty cache, with one job, in a process of its own. Prints a Markdown table: "
        'for each rule, what it flagged of what it looked at ("3 of 842") and the wall seconds spent inside it; '
        "then the whole check's seconds, and what each check's report says, beside which the flags add up.",
        epilog="environment: DSH_REPO names a clone of deepseek-ai/deepseek-harness (required); HANDBOOK_REPO a "
        "clone of the community handbook of DSH, bare or not (without it, the handbook's columns are skipped).",
    )
    parser.add_argument("--only", choices=CORPORA, help="measure one corpus alone")
    parser.add_argument("--child", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(measure_here(args.child)))
        return
    repo = os.environ.get("DSH_REPO")
    if not repo:
        raise SystemExit("bench: set DSH_REPO to a clone of deepseek-ai/deepseek-harness")
    if not Path(repo).is_dir():
        raise SystemExit(f"bench: DSH_REPO names no folder: {repo}")
    handbook = os.environ.get("HANDBOOK_REPO")
    if handbook and not Path(handbook).is_dir():
        raise SystemExit(f"bench: HANDBOOK_REPO names no folder: {handbook}")
    work = Path(tempfile.mkdtemp(prefix="dshaudit-rules-"))
    try:
        runs: dict[str, Run | None] = {corpus: None for corpus in CORPORA}
        skipped = {corpus: f"--only {args.only}" for corpus in CORPORA if args.only not in (None, corpus)}
        if "findings" not in skipped:
            runs["findings"] = measure("findings/", [], ROOT, repo, work / "cache-findings")
        if "handbook" not in skipped and not handbook:
            skipped["handbook"] = "HANDBOOK_REPO is not set: it names a clone of the community handbook of DSH"
        if "handbook" not in skipped:
            assert handbook is not None
            corpus = work / "handbook"
            extract(git_dir(handbook), HANDBOOK_COMMIT, corpus, HANDBOOK_FOLDER)
            runs["handbook"] = measure("the handbook", [HANDBOOK_FOLDER], corpus, repo, work / "cache-handbook")
        print(
            f"What each rule of `dshaudit check` flags and costs, each corpus checked once from an empty cache with "
            f"one job: findings/ at its pins; the handbook's {HANDBOOK_FOLDER} at {HANDBOOK_COMMIT}, as written. "
            f"Flags: flagged of looked at; seconds: wall, inside the rule. {os.cpu_count()} cores.\n"
        )
        print("\n".join(table(runs)))
        print()
        print("\n".join(notes(runs, skipped)))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
