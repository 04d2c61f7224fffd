"""Searches at one commit derived from their matches at another: the files that
differ are grepped again, the rest kept.

A new pin's searches start from a pin whose searches are cached
(`derive_many`); history walks a search commit by commit (`advance`), the
changed files of all its commits screened and grepped at once (`found_in`).
Either way the result is what `git grep` over the whole tree says, at the cost
of the files that changed.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from dshaudit.core.model import Fact, FactStatus, Pin
from dshaudit.documents.searches import Search
from dshaudit.git import run
from dshaudit.git.pathspec import select, selector
from dshaudit.index.screen import grep_screened, line_test, literals, screened
from dshaudit.index.search import (
    Budget,
    SearchBound,
    cache_key,
    files_fact,
    gave_up,
    grep_args,
    grep_matches,
    search_fact,
    searches_shard,
)

if TYPE_CHECKING:
    from dshaudit.git.snapshot import Snapshot


def derive_many(searches: list[Search], snapshot: Snapshot, bases: list[str]) -> None:
    """Searches not cached at the snapshot's commit but cached at one of `bases` (other
    commits, e.g. the configured pins), derived from there and cached: the matches in
    the files that differ are found again, the rest kept. Which files differ is git's
    answer for the search's own pathspecs (`git diff-tree`), so the result is the
    commit's grep. The files that differ are read once for all the searches and
    screened (`may_match`); git greps the rest, one process a search. A search with
    no cached base, or between commits whose .gitattributes differ, is left to `measure`."""
    shard = searches_shard()
    git_dir = snapshot.repository.git_dir
    target = snapshot.sha
    found: dict[Search, tuple[str, list[tuple[str, int]]]] = {}
    for s in searches:
        if s.kind != "search" or shard.get(cache_key(s, target)) is not None:
            continue
        for base in bases:
            hit = shard.get(cache_key(s, base)) if base != target else None
            if hit is not None:
                found[s] = (base, [(p, int(n)) for p, n in hit])
                break
    same = {
        b: not run.run(
            ["diff-tree", "-r", "--name-only", "--no-renames", b, target, "--", ".gitattributes", "*/.gitattributes"],
            git_dir,
        ).output(limit=300)
        for b in {b for b, _ in found.values()}
    }
    found = {s: v for s, v in found.items() if same[v[0]]}
    if not found:
        return

    changed = _changes({s: found[s][0] for s in found}, git_dir, target)
    # Searches with the same pathspecs share one list of changes: its regular files are picked out once.
    regular: dict[int, list[tuple[str, str]]] = {}
    for s in found:
        if id(changed[s]) not in regular:
            regular[id(changed[s])] = [(p, blob) for p, mode, blob in changed[s] if mode in REGULAR_MODES]
    fresh = {s: regular[id(changed[s])] for s in found}
    lines = found_in({s: [(target, p, blob) for p, blob in fresh[s]] for s in found}, git_dir, snapshot.read_many)
    for s in lines:
        new_hits = [(p, n) for (_, p), ns in lines[s].items() for n in ns]
        gone = {p for p, _, _ in changed[s]}
        hits = sorted([h for h in found[s][1] if h[0] not in gone] + new_hits)
        shard.put(cache_key(s, target), [[p, n] for p, n in hits])


def grep_together(searches: list[Search], snapshot: Snapshot) -> None:
    """Searches not cached at the snapshot's commit, measured together and cached: the
    regular files each one's pathspecs select are its places, as if every file had
    changed since an empty tree, so all of them are screened in one pass over the
    tree (`found_in`), and each search is then grepped on the lines the screen printed
    instead of over the whole tree. The result is the commit's `git grep`: git itself
    decides, in the screen, which files are binary, as it does in a grep of the tree."""
    shard = searches_shard()
    target = snapshot.sha
    todo = [s for s in searches if s.kind == "search" and shard.get(cache_key(s, target)) is None]
    blobs = snapshot.blob_ids()
    if not todo:
        return
    paths = list(blobs)
    places = {s: [(target, p, blobs[p]) for p in select(paths, s.pathspecs)] for s in todo}
    lines = found_in(places, snapshot.repository.git_dir, snapshot.read_many)
    for s in lines:
        hits = sorted((p, n) for (_, p), ns in lines[s].items() for n in ns)
        shard.put(cache_key(s, target), [[p, n] for p, n in hits])


def found_in(
    places: dict[Search, list[tuple[str, str, str]]], git_dir: str, read: Callable[[list[str]], dict[str, bytes]]
) -> dict[Search, dict[tuple[str, str], list[int]]]:
    """The lines matching each search in its places (commit, path, blob): regular files
    its pathspecs select, at one commit (a new pin) or many (history's walk). Each
    file is screened first (`may_match`, git reading the files, or Python where git
    cannot), then git greps those that pass, a process a search, side by side. Where
    git screened, it greps only the lines the screen printed (`_Printed`): every line
    the search can match is among them, and the file is not read again. A search that
    reaches its bound (search.Budget) is left out of the answer, and remembered as
    such at each of its commits (`search.gave_up`)."""
    import tempfile

    from dshaudit.platform.background import side_by_side

    screenable = {s: ps for s, ps in places.items() if ps and literals(s) is not None}
    commits = {sha for ps in screenable.values() for sha, _, _ in ps}
    one = next(iter(commits)) if len(commits) == 1 else None
    # Paths at one commit, or COMMIT:PATH names for files of many commits at once.
    named = {s: [path if one else f"{sha}:{path}" for sha, path, _ in ps] for s, ps in screenable.items()}
    by_git = grep_screened(named, git_dir, one)
    # Each search's own sets are looked up once, outside the loops over its thousands of
    # places: a Search is hashed field by field, and that once a place would cost more.
    passed: dict[Search, set[tuple[str, str]]] = {}
    if by_git is not None:
        for s, ps in screenable.items():
            kept = by_git.passed[s]
            passed[s] = {(sha, path) for (sha, path, _), name in zip(ps, named[s]) if name in kept} if kept else set()
    else:  # a locale other than UTF-8: the files are read here
        by_blob = screened({s: [blob for _, _, blob in ps] for s, ps in screenable.items()}, read)
        for s, ps in screenable.items():
            kept = by_blob[s]
            passed[s] = {(sha, path) for sha, path, blob in ps if blob in kept}
    names: dict[tuple[str, str], str] = {}
    for s, ps in screenable.items():
        if through := passed[s]:
            names.update({(sha, path): name for (sha, path, _), name in zip(ps, named[s]) if (sha, path) in through})

    with tempfile.TemporaryDirectory(prefix="dshaudit-screened-") as folder:
        printed = _Printed(folder, by_git.lines if by_git is not None else {}, names)

        def lines(s: Search) -> dict[tuple[str, str], list[int]] | None:
            budget = Budget(s)
            kept = passed.get(s)
            todo = [(sha, path) for sha, path, _ in places[s] if kept is None or (sha, path) in kept]
            try:
                if kept is None:
                    return regrep(s, git_dir, todo, budget) if todo else {}
                found = printed.regrep(s, git_dir, [place for place in todo if printed.has(place)], budget)
                rest = [place for place in todo if not printed.has(place)]
                return {**found, **regrep(s, git_dir, rest, budget)} if rest else found
            except SearchBound as exc:
                gave_up(s, sorted({sha for sha, _, _ in places[s]}), exc)
                return None

        answers = dict(zip(places, side_by_side(lines, places)))
        return {s: found for s, found in answers.items() if found is not None}


class _Printed:
    """The lines the screen printed of each file that passed it, so that a search is
    grepped on them (`git grep --no-index`) instead of on the whole files: those of
    the files a search asks about, one after another, in one file of a folder (a
    match never spans lines, so each line number leads back to its file and line;
    a file each cost more to make than to grep, on some disks). A file whose printed
    lines hold a NUL is left out: among a few lines, one could make git take them
    for binary; it is grepped whole."""

    def __init__(self, folder: str, lines: dict[str, list[tuple[int, bytes]]], names: dict[tuple[str, str], str]):
        self.folder = folder
        self._printed: dict[tuple[str, str], list[tuple[int, bytes]]] = {}
        for place, name in names.items():
            printed = lines.get(name)
            if printed is not None and not any(b"\0" in text for _, text in printed):
                self._printed[place] = printed

    def has(self, place: tuple[str, str]) -> bool:
        return place in self._printed

    def regrep(
        self, search: Search, git_dir: str, places: list[tuple[str, str]], budget: Budget
    ) -> dict[tuple[str, str], list[int]]:
        """`regrep` on the printed lines of these places, with their line numbers in the files:
        by `line_test` when it can answer for them, else by git."""
        import tempfile

        test = line_test(search)
        answers = (
            {place: [(n, test(text)) for n, text in self._printed[place]] for place in sorted(places)} if test else {}
        )
        if test and all(a is not None for found in answers.values() for _, a in found):
            kept = {place: [n for n, matched in found if matched] for place, found in answers.items()}
            return {place: numbers for place, numbers in kept.items() if numbers}
        origin: list[tuple[tuple[str, str], int]] = []  # each line of the file: its place and line number
        fd, path = tempfile.mkstemp(dir=self.folder)
        with os.fdopen(fd, "wb") as out:
            for place in sorted(places):
                printed = self._printed[place]
                out.write(b"".join(text + b"\n" for _, text in printed))
                origin += [(place, number) for number, _ in printed]
        found: dict[tuple[str, str], list[int]] = {}
        command, *options = grep_args(search)
        for _, line in _grep_lines(
            git_dir, [command, "--no-index", *options], [os.path.basename(path)], budget, cwd=self.folder
        ):
            place, number = origin[line - 1]
            found.setdefault(place, []).append(number)
        return found


def _changes(bases: dict[Search, str], git_dir: str, target: str) -> dict[Search, list[tuple[str, str, str]]]:
    """(path, mode after, blob after) of each file a search's pathspecs select that
    differs between its base and `target`: what `git diff-tree BASE TARGET -- PATHSPECS`
    says. One `git diff-tree` a base lists every change, and each search's are picked
    out as git's pathspecs pick them (`select`): a diff-tree costs about 11 ms of
    CPU, and a new pin's searches have dozens of distinct pathspecs."""
    asked: dict[str, run.Started] = {}
    listed: dict[str, list[tuple[str, str, str]]] = {}
    try:
        for base in dict.fromkeys(bases.values()):
            asked[base] = run.Started(
                ["diff-tree", "-r", "-z", "--raw", "--no-renames", "--no-abbrev", base, target], git_dir
            )
        for base, proc in asked.items():
            fields = run.nul_fields(proc.finish().output(limit=300))
            listed[base] = [
                (path, meta.split(" ")[1], meta.split(" ")[3]) for meta, path in zip(fields[0::2], fields[1::2]) if meta
            ]
    finally:
        for proc in asked.values():
            proc.stop()
    in_order = {base: sorted(path for path, _, _ in changes) for base, changes in listed.items()}
    answers: dict[tuple[str, tuple[str, ...]], list[tuple[str, str, str]]] = {}
    for s, base in bases.items():
        if (base, s.pathspecs) not in answers:
            picked = set(select(in_order[base], s.pathspecs))
            answers[(base, s.pathspecs)] = [change for change in listed[base] if change[0] in picked]
    return {s: answers[(base, s.pathspecs)] for s, base in bases.items()}


def advance(
    search: Search,
    before: Fact,
    snapshot: Snapshot,
    pin: Pin,
    changed: tuple[tuple[str | None, str | None], ...],
    found: dict[tuple[str, str], list[int]] | None = None,
) -> Fact:
    """The fact at a commit, from its value at the parent and the commit's changed
    paths (old path, new path): matches in the files the commit changed are
    searched again, the rest kept. Equal to `measure` at the commit, at the cost
    of the changed files only (history walks many commits). `found`: the matches
    of `regrep` for (this commit, each of its fresh paths), grepped beforehand."""
    if before.status is FactStatus.CANNOT_EVALUATE:  # reached its bound before: no matches to carry on from
        return Fact(search.text, search.definition, pin, before.status, None, {}, (), before.message)
    gone = {old for old, _ in changed if old}
    fresh = fresh_paths(search, changed)
    if search.kind == "files":
        kept = [p for p in before.fields["paths"] if p not in gone]
        present = [p for p in fresh if snapshot.entry(p) is not None]
        return files_fact(search, pin, sorted(set(kept) | set(present)))
    kept_hits = [(p, int(n)) for p, n in (ln.rsplit(":", 1) for ln in before.fields["lines"]) if p not in gone]
    if found is not None:
        new_hits = [(p, n) for p in fresh for n in found.get((snapshot.sha, p), ())]
    else:
        try:
            new_hits = grep_matches(search, snapshot, [f":(literal){p}" for p in fresh]) if fresh else []
        except SearchBound as exc:
            return Fact(search.text, search.definition, pin, FactStatus.CANNOT_EVALUATE, None, {}, (), str(exc))
    return search_fact(search, pin, sorted(kept_hits + new_hits))


def fresh_paths(
    search: Search,
    changed: tuple[tuple[str | None, str | None], ...],
    chosen: Callable[[str], bool] | None = None,
) -> list[str]:
    """The paths after a change (old path, new path) that the search reads again
    (`chosen`: whether its pathspecs select a path, when the caller knows already)."""
    chosen = chosen or selector(search.pathspecs)
    return sorted({new for _, new in changed if new and chosen(new)})


REGULAR_MODES = ("100644", "100755")  # git grep reads a tree's regular files only: no link, no submodule
_REGREP_ARGS = 60_000  # characters of file names given to one git grep


def regrep(
    search: Search, git_dir: str, places: list[tuple[str, str]], budget: Budget | None = None
) -> dict[tuple[str, str], list[int]]:
    """The lines matching the search in each (commit, path), all in one `git grep` (a few,
    for many places) that names each file as COMMIT:PATH: git reads that blob with
    the path's attributes, as it does in a grep of the commit's tree. `places` must be
    regular files (REGULAR_MODES) the pathspecs select; the pathspecs are not applied here.
    Within the search's `budget` (a new one when none is given): SearchBound past it."""
    out: dict[tuple[str, str], list[int]] = {}
    names = [f"{sha}:{path}" for sha, path in sorted(set(places))]
    for name, line in _grep_lines(git_dir, grep_args(search), names, budget or Budget(search)):
        sha, path = name.split(":", 1)
        out.setdefault((sha, path), []).append(line)
    return out


def _grep_lines(
    git_dir: str, args: list[str], names: list[str], budget: Budget, cwd: str | None = None
) -> Iterator[tuple[str, int]]:
    """(file name, line number) of each line `git grep ARGS` matches in these files (COMMIT:PATH
    names, given as revisions; or files in `cwd`, given after `--`, which no name of a
    revision can be taken for), a few processes' worth of names at a time."""
    start = 0
    while start < len(names):
        end, size = start, 0
        while end < len(names) and (end == start or size < _REGREP_ARGS):
            size += len(names[end]) + 1
            end += 1
        named = [*names[start:end], "--"] if cwd is None else ["--", *names[start:end]]
        out = budget.run([*args, *named], git_dir, cwd=cwd).output(no_match_ok=True, limit=300)
        for name, line, _ in run.grep_lines(out):
            yield name, line
        start = end
