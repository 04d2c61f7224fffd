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
"""

from __future__ import annotations

import os
import re
import string
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, TypeVar

from dshaudit.core.model import Evidence, Fact, FactStatus, LineRange, Pin
from dshaudit.documents.searches import BRE_META, FLAGS, Search
from dshaudit.git import run
from dshaudit.git.fileindex import FileIndex
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
        return _files_fact(search, pin, [p for p, _ in found])
    return _search_fact(search, pin, found)


def matches(search: Search, snapshot: Snapshot) -> list[tuple[str, int]]:
    """(path, line) of every match at the snapshot's tree, in path and line order
    (for `files(...)`, (path, 0) of every file). A tree never changes, so they are
    cached by (tree's commit, expression)."""
    shard = cache.current().shard("searches", VERSION, _SHAPE)
    key = cache.digest(snapshot.sha, search.kind, search.text)
    hit = shard.get(key)
    if hit is not None:
        return [(p, int(n)) for p, n in hit]
    if search.kind == "files":
        found = [(p, 0) for p in select(snapshot.paths(), search.pathspecs)]
    else:
        found = sorted(_grep(search, snapshot, _git_pathspecs(search.pathspecs)))
    shard.put(key, [[p, n] for p, n in found])
    return found


def derive_many(searches: list[Search], snapshot: Snapshot, bases: list[str]) -> None:
    """Searches not cached at the snapshot's commit but cached at one of `bases` (other
    commits, e.g. the configured pins), derived from there and cached: the matches in
    the files that differ are found again, the rest kept. Which files differ is git's
    answer for the search's own pathspecs (`git diff-tree`), so the result is the
    commit's grep. The files that differ are read once for all the searches and
    screened (`may_match`); git greps the rest, one process a search. A search with
    no cached base, or between commits whose .gitattributes differ, is left to `measure`."""
    shard = cache.current().shard("searches", VERSION, _SHAPE)
    git_dir = snapshot.repository.git_dir
    target = snapshot.sha
    found: dict[Search, tuple[str, list[tuple[str, int]]]] = {}
    for s in searches:
        if s.kind != "search" or shard.get(cache.digest(target, s.kind, s.text)) is not None:
            continue
        for base in bases:
            hit = shard.get(cache.digest(base, s.kind, s.text)) if base != target else None
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
    for s in found:
        new_hits = [(p, n) for (_, p), ns in lines[s].items() for n in ns]
        gone = {p for p, _, _ in changed[s]}
        hits = sorted([h for h in found[s][1] if h[0] not in gone] + new_hits)
        shard.put(cache.digest(target, s.kind, s.text), [[p, n] for p, n in hits])


def found_in(
    places: dict[Search, list[tuple[str, str, str]]], git_dir: str, read: Callable[[list[str]], dict[str, bytes]]
) -> dict[Search, dict[tuple[str, str], list[int]]]:
    """The lines matching each search in its places (commit, path, blob): regular files
    its pathspecs select, at one commit (a new pin) or many (history's walk). Each
    file is screened first (`may_match`, git reading the files, or Python where git
    cannot), then git greps those that pass, a process a search, side by side. Where
    git screened, it greps only the lines the screen printed (`_Printed`): every line
    the search can match is among them, and the file is not read again."""
    import tempfile
    from concurrent.futures import ThreadPoolExecutor

    screenable = {s: ps for s, ps in places.items() if ps and literals(s) is not None}
    commits = {sha for ps in screenable.values() for sha, _, _ in ps}
    one = next(iter(commits)) if len(commits) == 1 else None
    # Paths at one commit, or COMMIT:PATH names for files of many commits at once.
    named = {s: [path if one else f"{sha}:{path}" for sha, path, _ in ps] for s, ps in screenable.items()}
    blobs = {path: blob for ps in screenable.values() for _, path, blob in ps} if one else None
    by_git = grep_screened(named, git_dir, one, blobs)
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

        def lines(s: Search) -> dict[tuple[str, str], list[int]]:
            kept = passed.get(s)
            todo = [(sha, path) for sha, path, _ in places[s] if kept is None or (sha, path) in kept]
            if kept is None:
                return regrep(s, git_dir, todo) if todo else {}
            found = printed.regrep(s, git_dir, [place for place in todo if printed.has(place)])
            rest = [place for place in todo if not printed.has(place)]
            return {**found, **regrep(s, git_dir, rest)} if rest else found

        with ThreadPoolExecutor(4) as pool:
            return dict(zip(places, pool.map(lines, places)))


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

    def regrep(self, search: Search, git_dir: str, places: list[tuple[str, str]]) -> dict[tuple[str, str], list[int]]:
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
        command, *options = _grep_args(search)
        for _, line in _grep_lines(
            git_dir, [command, "--no-index", *options], [os.path.basename(path)], cwd=self.folder
        ):
            place, number = origin[line - 1]
            found.setdefault(place, []).append(number)
        return found


def _git_pathspecs(pathspecs: tuple[str, ...]) -> list[str]:
    """The pathspecs as git is given them: exclusions alone select nothing in git, so
    with only exclusions the rest of the tree is searched."""
    specs = list(pathspecs)
    if specs and all(p.startswith((":!", ":^")) for p in specs):
        specs.insert(0, ".")
    return specs


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


def _files_fact(search: Search, pin: Pin, paths: list[str]) -> Fact:
    return Fact(
        search.text,
        search.definition,
        pin,
        FactStatus.OK,
        len(paths),
        {"count": len(paths), "paths": tuple(paths)},
        tuple(Evidence(p, LineRange(1, 1)) for p in paths[:MAX_EVIDENCE]),
    )


def _grep_args(search: Search) -> list[str]:
    """`git grep` with the search's fixed semantics (no colour, no textconv, binary
    files skipped, the pattern given with -e), up to and including the pattern."""
    args = ["grep", "-n", "-z", "-I", "--no-color", "--no-textconv", *(FLAGS[f] for f in search.flags)]
    if not {"-E", "-F"} & set(search.flags):
        args.append("--basic-regexp")
    assert search.pattern is not None
    return [*args, "-e", search.pattern]


def _grep(search: Search, snapshot: Snapshot, specs: list[str]) -> list[tuple[str, int]]:
    """(path, line) of every match of the search at the snapshot, in the pathspecs given."""
    args = [*_grep_args(search), snapshot.sha, "--", *specs]
    out = run.run(args, snapshot.repository.git_dir).output(no_match_ok=True, limit=300)
    return [(path, line) for path, line, _ in run.grep_lines(out, snapshot.sha + ":")]


def _search_fact(search: Search, pin: Pin, hits: list[tuple[str, int]]) -> Fact:
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
    gone = {old for old, _ in changed if old}
    fresh = fresh_paths(search, changed)
    if search.kind == "files":
        kept = [p for p in before.fields["paths"] if p not in gone]
        present = [p for p in fresh if snapshot.entry(p) is not None]
        return _files_fact(search, pin, sorted(set(kept) | set(present)))
    kept_hits = [(p, int(n)) for p, n in (ln.rsplit(":", 1) for ln in before.fields["lines"]) if p not in gone]
    if found is not None:
        new_hits = [(p, n) for p in fresh for n in found.get((snapshot.sha, p), ())]
    else:
        new_hits = _grep(search, snapshot, [f":(literal){p}" for p in fresh]) if fresh else []
    return _search_fact(search, pin, sorted(kept_hits + new_hits))


def fresh_paths(search: Search, changed: tuple[tuple[str | None, str | None], ...]) -> list[str]:
    """The paths after a change (old path, new path) that the search reads again."""
    chosen = selector(search.pathspecs)
    return sorted({new for _, new in changed if new and chosen(new)})


REGULAR_MODES = ("100644", "100755")  # git grep reads a tree's regular files only: no link, no submodule
_REGREP_ARGS = 60_000  # characters of file names given to one git grep


def regrep(search: Search, git_dir: str, places: list[tuple[str, str]]) -> dict[tuple[str, str], list[int]]:
    """The lines matching the search in each (commit, path), all in one `git grep` (a few,
    for many places) that names each file as COMMIT:PATH: git reads that blob with
    the path's attributes, as it does in a grep of the commit's tree. `places` must be
    regular files (REGULAR_MODES) the pathspecs select; the pathspecs are not applied here."""
    out: dict[tuple[str, str], list[int]] = {}
    for name, line in _grep_lines(git_dir, _grep_args(search), [f"{sha}:{path}" for sha, path in sorted(set(places))]):
        sha, path = name.split(":", 1)
        out.setdefault((sha, path), []).append(line)
    return out


def _grep_lines(git_dir: str, args: list[str], names: list[str], cwd: str | None = None) -> Iterator[tuple[str, int]]:
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
        out = run.run([*args, *named], git_dir, cwd=cwd).output(no_match_ok=True, limit=300)
        for name, line, _ in run.grep_lines(out):
            yield name, line
        start = end


_ERE_META = set(".[]()*+?{}^$\\|")


def literals(search: Search) -> tuple[bytes, ...] | None:
    """Strings one of which every line the search matches holds (lower case under -i),
    when the pattern shows them plainly: a fixed string, an alternation of plain
    words, or a pattern's plain beginning. None when it does not: then any file may
    match. A screen only, for `may_match`; git decides what matches."""
    pattern = search.pattern
    if pattern is None or "\n" in pattern or ("-i" in search.flags and not pattern.isascii()):
        return None
    if "-F" in search.flags:
        found = [pattern]
    else:
        meta = _ERE_META if "-E" in search.flags else BRE_META
        if "-E" in search.flags and "|" in pattern:
            grouped = _bars_inside_groups(pattern)
            if grouped is None:
                return None
        else:
            grouped = True
        if not grouped:
            found = pattern.split("|")  # only an alternation of plain words: one of them is in each match
            if any(not word or meta & set(word) for word in found):
                return None
        else:  # no alternation, or only inside a group after the plain beginning
            end = next((i for i, c in enumerate(pattern) if c in meta), len(pattern))
            if end < len(pattern) and pattern[end] in "*?+{\\":
                end -= 1  # a quantifier (or an escape that may be one) may repeat the last letter none times
            found = [pattern[: max(end, 0)]]
            if not found[0]:
                return None
    if "-i" in search.flags:
        return tuple(word.lower().encode() for word in found)
    return tuple(word.encode() for word in found)


def line_test(search: Search) -> Callable[[bytes], bool | None] | None:
    """Whether git grep matches a line, for a search whose pattern is plain words
    (`-F 'a b'`, a basic regex of no special character, or an extended one of
    words and top-level bars, `cost|usage`): those are exactly the lines holding
    a word, case folded under -i. The answer is None (git is asked) for a line
    that is not UTF-8, or under -i holds a character that may fold to an ASCII
    letter (_FOLDING); ASCII letters fold alike in every locale but the Turkic
    ones, where `i` and `I` are no pair. Words of ASCII match the same bytes in
    UTF-8 whatever the library, since no byte of a longer character is ASCII.
    Under -w, as git does it (`match_one_pattern`): the leftmost match, the
    longest of those that begin there, must have no word character (ASCII letter,
    digit, `_`) either side; if it has, the search goes on from the first place
    after it that follows a non-word character, so a shorter word at a rejected
    place is never tried. None for any other search."""
    words = _plain_words(search)
    folds = "-i" in search.flags
    if words is None or (folds and not _folds_ascii_alike()):
        return None
    flags = re.IGNORECASE if folds else 0  # a bytes pattern folds ASCII letters only
    found = re.compile(b"|".join(re.escape(w.encode()) for w in sorted(words, key=len, reverse=True)), flags).search

    def whole_word(line: bytes) -> bool:
        start, end = 0, len(line)
        while (m := found(line, start)) is not None:
            a, b = m.span()
            if (a == 0 or line[a - 1] not in _WORD_BYTES) and (b == end or line[b] not in _WORD_BYTES):
                return True
            if a + 1 >= end:
                return False
            start = a + 1
            while start < end and line[start - 1] in _WORD_BYTES:
                start += 1
            if start >= end:
                return False
        return False

    def test(line: bytes) -> bool | None:
        if not line.isascii():
            try:
                line.decode("utf-8")
            except UnicodeDecodeError:
                return None
            if folds and _FOLDING_RE.search(line):
                return None
        return whole_word(line) if "-w" in search.flags else found(line) is not None

    return test


_WORD_BYTES = frozenset((string.ascii_letters + string.digits + "_").encode())  # git's word_char
_TURKIC = frozenset({"tr", "az", "crh", "tt", "ba", "kk", "ku"})  # locales where i and I are not each other's case


def _plain_words(search: Search) -> tuple[str, ...] | None:
    """The words a search's pattern is exactly (any of them matches), or None."""
    pattern = search.pattern
    if not pattern or not pattern.isascii() or "\n" in pattern:
        return None
    if "-F" in search.flags:
        return (pattern,)
    if "-E" in search.flags:
        words = tuple(pattern.split("|"))
        return None if any(not w or _ERE_META & set(w) for w in words) else words
    return None if BRE_META & set(pattern) else (pattern,)


def _folds_ascii_alike() -> bool:
    name = os.environ.get("LC_ALL") or os.environ.get("LC_CTYPE") or os.environ.get("LANG") or "C"
    return _utf8_locale() and re.split(r"[_.@]", name, maxsplit=1)[0].lower() not in _TURKIC


def _bars_inside_groups(pattern: str) -> bool | None:
    """For an extended regex: whether every `|` is inside parentheses (False: one is
    at the top level; None: bracket expressions or unbalanced parentheses, where
    this reading is not sure). Escaped characters are skipped."""
    if "[" in pattern or "\\|" in pattern:  # `\|`: a literal bar, or in some libraries another alternation
        return None
    depth, i = 0, 0
    top = False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 1
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth < 0:
                return None
        elif c == "|" and depth == 0:
            top = True
        i += 1
    return None if depth else not top


# The characters past ASCII whose upper or lower case is (or begins with) an ASCII letter
# (K KELVIN SIGN, ſ LONG S, İ, ı, ß, the ligatures ﬁ ...): under -i a regular expression
# library may match them to one, in UTF-8.
_FOLDING = tuple(
    chr(c).encode()
    for c in (
        0xDF,
        0x130,
        0x131,
        0x149,
        0x17F,
        0x1F0,
        0x1E96,
        0x1E97,
        0x1E98,
        0x1E99,
        0x1E9A,
        0x1E9E,
        0x212A,
        0xFB00,
        0xFB01,
        0xFB02,
        0xFB03,
        0xFB04,
        0xFB05,
        0xFB06,
    )
)


def _utf8_locale() -> bool:
    """Whether git runs in a UTF-8 (or the C) locale, where only _FOLDING folds to ASCII."""
    name = os.environ.get("LC_ALL") or os.environ.get("LC_CTYPE") or os.environ.get("LANG") or "C"
    return name in ("C", "POSIX") or name.lower().replace("-", "").endswith(("utf8", "utf8@euro"))


_FOLDING_RE = re.compile(b"|".join(re.escape(f) for f in _FOLDING))


class Screen:
    """A file's bytes as `may_match` reads them, worked out once for every search that asks."""

    def __init__(self, data: bytes):
        self.data = data
        self._lower: bytes | None = None
        self._folds: bool | None = None

    @property
    def lower(self) -> bytes:
        if self._lower is None:
            self._lower = self.data.lower()  # ASCII letters only
        return self._lower

    @property
    def folds(self) -> bool:
        """Whether a character past ASCII here may fold to an ASCII letter under -i."""
        if self._folds is None:
            self._folds = not self.data.isascii() and (not _utf8_locale() or _FOLDING_RE.search(self.data) is not None)
        return self._folds


def may_match(words: tuple[bytes, ...] | None, ignore_case: bool, screen: Screen) -> bool:
    """Whether a file may hold a match of a search with these `literals`: False
    only when it cannot. Under -i the file's ASCII letters are folded; a file with
    a character that may fold to one (_FOLDING; in a locale other than UTF-8, any
    byte past ASCII) may match."""
    if words is None:
        return True
    if ignore_case:
        if screen.folds:
            return True
        data = screen.lower
    else:
        data = screen.data
    return any(w in data for w in words)


def screened(wanted: dict[Search, list[str]], read: Callable[[list[str]], dict[str, bytes]]) -> dict[Search, set[str]]:
    """For each search, those of its blobs that may hold a match (`may_match` with its
    `literals`, which must not be None): each blob read once for all the searches that
    want it, a batch's bytes at a time."""
    by_blob: dict[str, list[Search]] = {}
    for s, blobs in wanted.items():
        for blob in blobs:
            by_blob.setdefault(blob, []).append(s)
    words = {s: literals(s) for s in wanted}
    passed: dict[Search, set[str]] = {s: set() for s in wanted}
    order = sorted(by_blob)
    for start in range(0, len(order), 200):
        for blob, data in read(order[start : start + 200]).items():
            screen = Screen(data)
            for s in by_blob[blob]:
                if may_match(words[s], "-i" in s.flags, screen):
                    passed[s].add(blob)
    return passed


_SCREEN_ARGS = 100_000  # characters of pathspecs given to one screening git grep
_SCREEN_GROUP = 50  # files wanted alike below which a group shares a process with the other small ones


@dataclass
class Screened:
    """What `grep_screened` found: for each search, the names of its files that may hold a
    match; and for each file, the lines git printed (number, text), which hold every line
    a search that wants the file can match."""

    passed: dict[Search, set[str]]
    lines: dict[str, list[tuple[int, bytes]]]


def grep_screened(
    wanted: dict[Search, list[str]], git_dir: str, commit: str | None, blobs: dict[str, str] | None = None
) -> Screened | None:
    """`screened`, with git reading the files: for each search, those of its paths
    at `commit` that may hold a match (with no commit, the paths are COMMIT:PATH
    names, as `regrep` gives them to git: files of many commits at once). The
    regular files of a commit whose blob ids are given (`blobs`) are listed in an
    index (`fileindex`) instead of named as pathspecs. `git grep -P` prints every line of these
    files that holds a literal of a search that wants the file (those of -i
    searches in any ASCII case) or a character of _FOLDING; `may_match` on a
    file's printed lines then answers as it does on the whole file, since a
    literal never spans lines. Files wanted by the same searches share a process
    (a few, for many paths; all side by side): a file is scanned for its own
    searches' literals only, and a common word that one narrow search looks for
    is not looked for across the tree. Python never reads the files, and git's
    work runs beside it. Binary files (-I) are left out: a search skips them
    too. None when git has no Perl regexes, or the locale is not UTF-8 (where
    any byte past ASCII may fold): the caller reads the files itself."""
    if not _utf8_locale():
        return None
    words = {s: literals(s) for s in wanted}
    # Searches by their place in `wanted`: a path is asked for by many, and a Search hashes slowly.
    order = list(wanted)
    asking: dict[str, int] = {}  # path -> a bit per search that wants it
    for i, s in enumerate(order):
        if words[s]:
            for p in wanted[s]:
                asking[p] = asking.get(p, 0) | 1 << i
    groups: dict[int, list[str]] = {}
    for p in sorted(asking):
        groups.setdefault(asking[p], []).append(p)
    # Groups of a few files share one process, scanned for all their literals: a literal
    # more only prints more lines, and may_match reads each search's own words in them.
    few = [bits for bits, paths in groups.items() if len(paths) < _SCREEN_GROUP]
    if len(few) > 1:
        shared_bits = 0
        shared: list[str] = []
        for bits in few:
            shared_bits |= bits
            shared += groups.pop(bits)
        groups[shared_bits] = groups.get(shared_bits, []) + sorted(shared)
    env = {"LC_ALL": "C"}
    procs: list[run.Started] = []
    listings: list[FileIndex] = []
    try:
        for bits, paths in groups.items():
            mine = {s: words[s] for i, s in enumerate(order) if bits >> i & 1}
            options = ["-P", "-n", "-z", "-I", "--no-color", "--no-textconv", "-e", _screen_pattern(mine)]
            listing = FileIndex.of(git_dir, paths, blobs) if commit and blobs else None
            if listing is not None:
                listings.append(listing)
                procs.append(
                    run.Started(["grep", *listing.grep_options, *options], git_dir, env={**env, **listing.env})
                )
                paths = listing.left_out
            batch: list[str] = []
            size = 0
            for i, p in enumerate(paths):
                batch.append(f":(literal){p}" if commit else p)
                size += len(p) + 12
                if size > _SCREEN_ARGS or i == len(paths) - 1:
                    named = [commit, "--", *batch] if commit else [*batch, "--"]
                    procs.append(run.Started(["grep", *options, *named], git_dir, env=env))
                    batch, size = [], 0
        lines: dict[str, list[tuple[int, bytes]]] = {}
        for proc in procs:
            done = proc.finish()
            if done.found_nothing:
                continue
            if done.returncode != 0 and (b"perl" in done.stderr.lower() or b"pcre" in done.stderr.lower()):
                return None  # a git built without -P
            for path, line, text in run.grep_lines(done.output(limit=300), f"{commit}:" if commit else ""):
                lines.setdefault(path, []).append((line, text))
    finally:
        for proc in procs:
            proc.stop()
        for listing in listings:
            listing.close()
    screens = {p: Screen(b"\n".join(text for _, text in printed)) for p, printed in lines.items()}
    passed: dict[Search, set[str]] = {s: set() for s in wanted}
    for s, ps in wanted.items():
        folds, its_words = "-i" in s.flags, words[s]  # not looked up a path (a Search hashes slowly)
        passed[s] = {p for p in ps if p in screens and may_match(its_words, folds, screens[p])}
    return Screened(passed, lines)


def _screen_pattern(words: dict[Search, tuple[bytes, ...] | None]) -> str:
    """One Perl regex for a line holding any of these searches' literals, or a _FOLDING character.
    Byte for byte: in the C locale git's Perl regexes read bytes, and (?i) folds ASCII letters only."""
    sensitive = sorted({w for s, ws in words.items() if ws and "-i" not in s.flags for w in ws})
    folded = sorted({w for s, ws in words.items() if ws and "-i" in s.flags for w in ws})
    alternatives = [re.escape(w.decode()) for w in sensitive]
    if folded:
        alternatives.append("(?i:" + "|".join(re.escape(w.decode()) for w in folded) + ")")
    alternatives.append(_FOLDING_PERL)
    return "|".join(alternatives)


_Atom = TypeVar("_Atom", str, int)  # a character of a name, or a byte


def alternation(words: Iterable[Sequence[_Atom]], atom: Callable[[_Atom], str]) -> str:
    """A Perl regex for any of `words` (sequences of characters, or of bytes), each
    element written by `atom`, as a trie: words that begin alike share their
    beginning (`s(?:napshot|tart)`), so at each place the regex engine follows
    one branch rather than trying every word; last elements that are one byte
    share a bracket (`\\xc4[\\xb0\\xb1]`). Where one word begins another, the
    longer is tried first (a greedy `?`), as in an alternation sorted longest
    first; words that match at one place are all on one branch, so the first
    that lets the rest of a pattern match is the one that alternation picks."""

    def node(rests: set[tuple[_Atom, ...]]) -> str:
        by_head: dict[_Atom, set[tuple[_Atom, ...]]] = {}
        for rest in rests:
            if rest:
                by_head.setdefault(rest[0], set()).add(rest[1:])
        # A last element that is one byte (a character below 128, or any byte) can share a bracket.
        ends = sorted(h for h, after in by_head.items() if after == {()} and (not isinstance(h, str) or h.isascii()))
        branches = [atom(h) + node(after) for h, after in sorted(by_head.items()) if h not in ends]
        if ends:
            branches.append(atom(ends[0]) if len(ends) == 1 else "[" + "".join(atom(h) for h in ends) + "]")
        optional = () in rests
        if len(branches) == 1 and not optional:
            return branches[0]
        return "(?:" + "|".join(branches) + ")" + ("?" if optional else "") if branches else ""

    return node({tuple(w) for w in words})


_FOLDING_PERL = alternation(_FOLDING, lambda b: f"\\x{b:02x}")


def select(paths: list[str], pathspecs: tuple[str, ...]) -> list[str]:
    """Those of `paths` (sorted) that git's default pathspec rules select, as `selected`
    says. Only the runs of `paths` that begin with an including spec's literal start
    are tested: a tree has thousands of files, and most specs name one folder."""
    chosen = selector(pathspecs)
    starts = {_literal_start(s) for s in pathspecs if not s.startswith((":!", ":^"))}
    if not starts or "" in starts:
        return [p for p in paths if chosen(p)]
    picked: set[str] = set()
    for start in starts:
        i = bisect_left(paths, start)
        while i < len(paths) and paths[i].startswith(start):
            if chosen(paths[i]):
                picked.add(paths[i])
            i += 1
    return sorted(picked)


def _literal_start(spec: str) -> str:
    """What every path a spec selects begins with: the spec up to its first wildcard."""
    return re.split(r"[*?[]", spec, maxsplit=1)[0] if any(c in spec for c in "*?[") else spec.rstrip("/")


def selected(path: str, pathspecs: tuple[str, ...]) -> bool:
    """Whether git's default pathspec rules select `path`: a spec without wildcards
    names a file or a folder; with them, `*` matches across `/`."""
    return selector(pathspecs)(path)


@lru_cache(maxsize=512)
def selector(pathspecs: tuple[str, ...]) -> Callable[[str], bool]:
    """`selected` for these pathspecs, compiled once (history asks about every changed
    path of every commit), as git's tree walk selects: a spec matches a path that is
    itself or lies under it, and one with wildcards also what it matches as a pattern
    (`_wildmatch`)."""

    def compiled(specs: list[str]) -> Callable[[str], object] | None:
        if not specs:
            return None
        parts = [
            re.escape(s.rstrip("/")) + r"(?:/.*)?\Z" + (f"|{_wildmatch(s)}" if any(c in s for c in "*?[") else "")
            for s in specs
        ]
        try:
            return re.compile("|".join(f"(?:{p})" for p in parts), re.DOTALL).match
        except re.error:  # patterns that cannot stand side by side in one expression: one at a time
            each = [re.compile(p, re.DOTALL).match for p in parts]
            return lambda path: any(m(path) for m in each)

    include = compiled([s for s in pathspecs if not s.startswith((":!", ":^"))])
    exclude = compiled([s[2:] for s in pathspecs if s.startswith((":!", ":^"))])
    return lambda path: (include is None or include(path) is not None) and (exclude is None or not exclude(path))


# The character classes git's wildmatch knows, as the ASCII characters each holds.
_CLASSES = {
    "alnum": string.ascii_letters + string.digits,
    "alpha": string.ascii_letters,
    "blank": " \t",
    "cntrl": "".join(map(chr, range(32))) + "\x7f",
    "digit": string.digits,
    "graph": string.printable[:94],
    "lower": string.ascii_lowercase,
    "print": string.printable[:95],
    "punct": string.punctuation,
    "space": " \t\n\r\x0b\x0c",
    "upper": string.ascii_uppercase,
    "xdigit": string.hexdigits,
}
_NOTHING = "(?!)"


def _wildmatch(spec: str) -> str:
    """A pathspec's pattern as a regex, by the rules of git's wildmatch without
    WM_PATHNAME (a pathspec with no magic): `*` and `?` cross `/`; `[...]` is a class,
    negated by `!` or `^`, with ranges and `[:alpha:]`-style classes, `]` first is a
    member. A class never closed, or naming no class git knows, matches nothing
    (wildmatch gives up); fnmatch would read `[^a]` and `[[:digit:]]` otherwise."""
    out: list[str] = []
    i = 0
    while i < len(spec):
        c = spec[i]
        if c in "*?":
            out.append(".*" if c == "*" else ".")
            i += 1
            continue
        if c != "[":
            out.append(re.escape(c))
            i += 1
            continue
        j = i + 1
        negated = j < len(spec) and spec[j] in "!^"
        j += negated
        members: list[str] = []
        first = True
        while j < len(spec) and (first or spec[j] != "]"):
            first = False
            if spec.startswith("[:", j) and (end := spec.find(":]", j + 2)) != -1 and "]" not in spec[j + 2 : end]:
                name = spec[j + 2 : end]
                if name not in _CLASSES:
                    return _NOTHING
                members += map(re.escape, _CLASSES[name])
                j = end + 2
            elif j + 2 < len(spec) and spec[j + 1] == "-" and spec[j + 2] != "]":
                if spec[j] <= spec[j + 2]:  # a range backwards holds nothing
                    members.append(f"{re.escape(spec[j])}-{re.escape(spec[j + 2])}")
                j += 3
            else:
                members.append(re.escape(spec[j]))
                j += 1
        if j >= len(spec):
            return _NOTHING  # `[` never closed
        if members:
            out.append(f"[{'^' if negated else ''}{''.join(members)}]")
        else:  # only backwards ranges: a class of nothing
            out.append("." if negated else _NOTHING)
        i = j + 1
    return "".join(out) + r"\Z"
