"""Searches as facts: what a finding says `git grep` returns, measured at the pin.

A finding that states a search result writes it as a claim:

    `claim: search(-i -E 'unshare|network', 'packages/sandbox/**', ':!*.spec.ts').count == 8`
    `claim: search(-F 'retired policy baseline').files == 2`
    `claim: files('packages/*/*/package.json').count == 237`

`search(FLAGS 'PATTERN', 'PATHSPEC', ...)` is `git grep` over the tree of the
pin, with fixed semantics whatever the user's git configuration says: the
pattern is a basic regular expression unless `-E` (extended) or `-F` (fixed
string) is given; `-i` ignores case, `-w` matches whole words; binary files are
skipped. Pathspecs are git's (a `*` crosses `/`), each one a path or glob
inside the tree, optionally excluded with a leading `:!` or `:^`. Nothing
else reaches git: no other flag, no other pathspec magic, no `..`, no
absolute path, and the pattern is passed with `-e`, so a pattern that looks
like an option is a pattern.

Fields: `count` (the value: matching lines), `files` (files with a match),
`paths` (those files, sorted), `lines` (`path:line` of every match). The
matched lines are the fact's evidence. `files('GLOB', ...)` counts the files
of the tree that the pathspecs select; fields `count` and `paths`.

Each search is bounded: all the git processes that run its pattern together
may take SEARCH_SECONDS and write SEARCH_OUTPUT_BYTES (`Budget`). Past either,
git is stopped and the search's fact is `cannot_evaluate`, saying which bound
it reached; nothing of it is cached, and the run goes on. Patterns whose cost
no bound could tame are refused before git runs (documents/searches.py).

Which paths a pathspec selects is git/pathspec.py's; which files may hold a
match, screen.py's; a search found again at another commit, from its matches
at one, derive.py's.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING

from dshaudit.core.model import Evidence, Fact, FactStatus, LineRange, Pin
from dshaudit.documents.searches import FLAGS, Search
from dshaudit.git import run
from dshaudit.git.pathspec import git_pathspecs, select
from dshaudit.lang.parsing import CannotEvaluate
from dshaudit.platform import cache

if TYPE_CHECKING:
    from dshaudit.git.snapshot import Snapshot

MAX_EVIDENCE = 200  # places kept as evidence; the counts are of every match
SEARCH_SECONDS = 20.0  # wall-clock time of all the git processes that run one search's pattern
SEARCH_OUTPUT_BYTES = 64 * 1024 * 1024  # what those processes may write (matched lines, with their paths)


# Bump when what a search or files() returns for the same tree changes.
VERSION = "1"
_SHAPE = cache.shaped([[str, int]])


class SearchBound(CannotEvaluate):
    """A search ran past its bound of time or output; its fact is cannot_evaluate."""


class Budget:
    """What one search may still spend: the time until its deadline and the bytes of
    output left. Every git process that runs its pattern runs through `run`."""

    def __init__(self, search: Search) -> None:
        self.search = search
        self.deadline = time.monotonic() + SEARCH_SECONDS
        self.left = SEARCH_OUTPUT_BYTES

    def run(self, args: list[str], git_dir: str, cwd: str | None = None) -> run.Finished:
        try:
            left = self.deadline - time.monotonic()
            if left <= 0:
                raise run.Exceeded("time")
            done = run.bounded(args, git_dir, seconds=left, max_output=self.left, cwd=cwd)
        except run.Exceeded as exc:
            raise SearchBound(bound_message(exc.what)) from None
        self.left -= len(done.stdout)
        return done


STOPPED = "stopped at its bound: "  # how the message of a search's fact past its bound begins


def bound_message(what: str) -> str:
    if what == "time":
        return f"{STOPPED}the search ran past {SEARCH_SECONDS:g} s"
    return f"{STOPPED}the search's matches ran past {SEARCH_OUTPUT_BYTES // (1024 * 1024)} MiB of output"


def stopped(fact: Fact | None) -> bool:
    """Whether the fact is that of a search stopped at its bound: an outcome that holds one
    says more about this machine's load than about the tree, and is not kept for later runs."""
    return fact is not None and fact.status is FactStatus.CANNOT_EVALUATE and fact.message.startswith(STOPPED)


# Searches that reached their bound in this run, by (commit, expression): asked again, they fail
# at once instead of spending their bound a second time. Never cached: a later run tries again.
_over: dict[tuple[str, str], str] = {}
_over_lock = threading.Lock()


def gave_up(search: Search, shas: list[str], bound: SearchBound) -> None:
    """Remember that `search` reached its bound at these commits."""
    with _over_lock:
        for sha in shas:
            _over[(sha, search.text)] = str(bound)


def _check_over(search: Search, sha: str) -> None:
    """SearchBound when the search reached its bound at this commit before, in this process."""
    reached = _over.get((sha, search.text))
    if reached is not None:
        raise SearchBound(reached)


def measure(search: Search, snapshot: Snapshot, pin: Pin) -> Fact:
    """Run the search at the pin's tree; its value is the count of matching lines (or files).
    A search that reaches its bound is cannot_evaluate, with the bound it reached."""
    try:
        found = matches(search, snapshot)
    except SearchBound as exc:
        return Fact(search.text, search.definition, pin, FactStatus.CANNOT_EVALUATE, None, {}, (), str(exc))
    if search.kind == "files":
        return files_fact(search, pin, [p for p, _ in found])
    return search_fact(search, pin, found)


def matches(search: Search, snapshot: Snapshot) -> list[tuple[str, int]]:
    """(path, line) of every match at the snapshot's tree, in path and line order
    (for `files(...)`, (path, 0) of every file). A tree never changes, so they are
    cached by (tree's commit, expression)."""
    shard = searches_shard()
    key = cache_key(search, snapshot.sha)
    hit = shard.get(key)
    if hit is not None:
        return [(p, int(n)) for p, n in hit]
    _check_over(search, snapshot.sha)
    if search.kind == "files":
        found = [(p, 0) for p in select(snapshot.paths(), search.pathspecs)]
    else:
        found = sorted(grep_matches(search, snapshot, git_pathspecs(search.pathspecs)))
    shard.put(key, [[p, n] for p, n in found])
    return found


def prefetch(search: Search, snapshot: Snapshot) -> None:
    """`matches`, measured ahead and cached, for a caller that wants no answer yet: a search
    that reaches its bound is remembered (`gave_up`), and `measure` says so when asked."""
    try:
        matches(search, snapshot)
    except SearchBound:
        pass


def searches_shard() -> cache.Shard:
    """Where the matches of searches are cached: a tree never changes, so they are kept
    by (commit, expression) (`cache_key`)."""
    return cache.current().shard("searches", VERSION, _SHAPE)


def cache_key(search: Search, sha: str) -> str:
    return cache.digest(sha, search.kind, search.text)


def files_fact(search: Search, pin: Pin, paths: list[str]) -> Fact:
    return Fact(
        search.text,
        search.definition,
        pin,
        FactStatus.OK,
        len(paths),
        {"count": len(paths), "paths": tuple(paths)},
        tuple(Evidence(p, LineRange(1, 1)) for p in paths[:MAX_EVIDENCE]),
    )


def grep_args(search: Search) -> list[str]:
    """`git grep` with the search's fixed semantics (no colour, no textconv, binary
    files skipped, the pattern given with -e), up to and including the pattern."""
    args = ["grep", "-n", "-z", "-I", "--no-color", "--no-textconv", *(FLAGS[f] for f in search.flags)]
    if not {"-E", "-F"} & set(search.flags):
        args.append("--basic-regexp")
    assert search.pattern is not None
    return [*args, "-e", search.pattern]


def grep_matches(search: Search, snapshot: Snapshot, specs: list[str]) -> list[tuple[str, int]]:
    """(path, line) of every match of the search at the snapshot, in the pathspecs given,
    within the search's bound (SearchBound past it)."""
    _check_over(search, snapshot.sha)
    args = [*grep_args(search), snapshot.sha, "--", *specs]
    try:
        out = Budget(search).run(args, snapshot.repository.git_dir).output(no_match_ok=True, limit=300)
    except SearchBound as exc:
        gave_up(search, [snapshot.sha], exc)
        raise
    return [(path, line) for path, line, _ in run.grep_lines(out, snapshot.sha + ":")]


def search_fact(search: Search, pin: Pin, hits: list[tuple[str, int]]) -> Fact:
    hits = sorted(hits)
    paths = sorted({p for p, _ in hits})
    fields = {
        "count": len(hits),
        "files": len(paths),
        "paths": tuple(paths),
        "lines": tuple(f"{p}:{n}" for p, n in hits),
    }
    return Fact(
        search.text,
        search.definition,
        pin,
        FactStatus.OK,
        len(hits),
        fields,
        tuple(Evidence(p, LineRange(n, n)) for p, n in hits[:MAX_EVIDENCE]),
    )
