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

Which paths a pathspec selects is git/pathspec.py's; which files may hold a
match, screen.py's; a search found again at another commit, from its matches
at one, derive.py's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dshaudit.core.model import Evidence, Fact, FactStatus, LineRange, Pin
from dshaudit.documents.searches import FLAGS, Search
from dshaudit.git import run
from dshaudit.git.pathspec import git_pathspecs, select
from dshaudit.platform import cache

if TYPE_CHECKING:
    from dshaudit.git.snapshot import Snapshot

MAX_EVIDENCE = 200  # places kept as evidence; the counts are of every match


# Bump when what a search or files() returns for the same tree changes.
VERSION = "1"
_SHAPE = cache.shaped([[str, int]])


def measure(search: Search, snapshot: Snapshot, pin: Pin) -> Fact:
    """Run the search at the pin's tree; its value is the count of matching lines (or files)."""
    found = matches(search, snapshot)
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
    if search.kind == "files":
        found = [(p, 0) for p in select(snapshot.paths(), search.pathspecs)]
    else:
        found = sorted(grep_matches(search, snapshot, git_pathspecs(search.pathspecs)))
    shard.put(key, [[p, n] for p, n in found])
    return found


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
    """(path, line) of every match of the search at the snapshot, in the pathspecs given."""
    args = [*grep_args(search), snapshot.sha, "--", *specs]
    out = run.run(args, snapshot.repository.git_dir).output(no_match_ok=True, limit=300)
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
