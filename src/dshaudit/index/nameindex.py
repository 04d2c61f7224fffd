"""Which names occur in the tree of one DSH commit: one indexed pass, cached per name.

The rule, for every name a document holds (`references.py` decides which):
a name occurs at a commit when it is found, case-sensitively, as a whole word
in some text file of the commit's tree. "Whole word" is git grep's `-w`: the
character before the name and the one after it, where there are any, are not
ASCII letters, digits or `_`. So `Registry` is absent from a tree that only
says `AgentRegistry`, and `setFactory` is present in `reg.setFactory(f)`.
Binary files (git's `-I`) are not searched, and a path is not an occurrence.

How it is indexed: the names not yet known at this commit are looked up
together, in one `git grep -o` pass over the commit per group of up to
`CHUNK` names, the names joined into one alternation (one regex is far faster
in git than hundreds of `-e` patterns). With Perl regexes (`-P`, when git has
them) the whole-word test is part of the pattern, so a longer name that is no
whole word at a place gives way to a shorter one there; the names inside a
match with other characters (`dsh` in `@scope/dsh-base`) are read from the
match, and a name with other characters the pass still misses (one that only
overlaps another) is looked up again on its own before it is called absent.
Without `-P` the pass is `-w -E`, and a name with other characters that begins
with a word looked for (`dsh-base` and `dsh`) gets a pass of its own. Each
answer is cached per (commit SHA, name) in the `reference-names` shard, so a
warm lookup is a dictionary access and runs no git at all.

A new commit is indexed from one already indexed, its *base*. A file with the
same content at both commits holds the same names at both, and between two
pins most files do not change; so a name the base found in a file that did
not change occurs here with no search at all, and the files that hold a name
here are those the base found among the unchanged files and those a pass
finds among the changed ones, the only files it searches. The files that hold
each name are stored for that, one shard per commit (`reference-paths`, as
positions in the commit's sorted list of files); a warm run never reads them.
With no base in the cache, or when most of the tree changed, the pass covers
the whole tree.

The passes run in the background: `start` plans what is not known yet and
starts the git processes, and the first answer that needs them waits for
them, so the caller can do other work meanwhile.

History (`deletion`) is a bounded pickaxe on the first-parent path, and an
absence claim (`occurrences`) a case-insensitive whole-word search for its
first few places: a claim made of word characters rides in the names pass
(its letters written `[aA]`), others share a `-F -i` pass; a base narrows
both to the changed files when its answer named every place. All are cached. No text from a document is
ever passed to git as an option: patterns follow `-e`, pickaxe strings are
glued to `-S` in the same argument, revisions are validated SHAs, and paths
follow `--` with pathspec magic switched off.
"""

from __future__ import annotations

import re
import time
from bisect import bisect_right
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from itertools import accumulate, islice
from typing import TYPE_CHECKING

from dshaudit.core.errors import RepoError
from dshaudit.documents.searches import escape_ere
from dshaudit.git import run
from dshaudit.git.fileindex import FileIndex
from dshaudit.index.screen import alternation
from dshaudit.platform import cache

if TYPE_CHECKING:
    from dshaudit.git.snapshot import Snapshot

VERSION = "1"  # bump when the lookup rule changes what a cached answer means
CHUNK = 300  # names per alternation
# First-parent commits the history search looks back over, and the time it may take per run.
HISTORY_COMMITS = 200
HISTORY_BUDGET_SECONDS = 30.0
ABSENCE_PLACES = 3  # places an absence claim's refutation names
# A base pays while its changed files are a small part of the tree: searching
# most of the tree through pathspecs costs as much as searching all of it.
FULL_SCAN_SHARE = 0.6
BASE_CANDIDATES = 3  # commits tried as a base, those that know most of the names first
PATHSPEC_CHARS = 100_000  # characters of paths on one git command line
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # every git knows it
_PERL: dict[str, bool] = {}  # git dir -> whether its git greps with -P
_WORD_NAME_RE = re.compile(r"[A-Za-z0-9_]+")
_LINE_NUMBER_RE = re.compile(r"^[0-9]+\0", re.MULTILINE)
_SHA_RE = re.compile(r"[0-9a-f]{40}")


@dataclass(frozen=True)
class Deletion:
    """The first-parent commit that removed a name's last whole-word occurrence."""

    sha: str
    date: str  # committer date, ISO 8601
    subject: str

    def __str__(self) -> str:
        return f'{self.sha[:8]} {self.date[:10]} "{self.subject}"'


@dataclass(frozen=True)
class HistoryAnswer:
    """What the bounded history search found for one name."""

    deletion: Deletion | None
    commits: int  # first-parent commits searched (the pin's own included)
    reached_root: bool  # the search went back to the first commit


# Cached entries as they are written below; another shape is dropped (cache.py) and looked up again.
_NAMES_SHAPE = cache.shaped(int)
_ABSENCE_SHAPE = cache.shaped([[str, int]])
_STORED_SHAPE = cache.shaped([int])  # positions of the files a name occurs in, in the commit's sorted paths
_HISTORY_SHAPE = cache.shaped({"deletion": ([str, str, str], type(None)), "commits": int, "root": bool})


def _any_case_ere(text: str) -> str:
    """A claim made of word characters, as an extended regex matching it in any
    (ASCII) case, or exactly when it has a capital letter (smart case)."""
    if not any_case(text):
        return text
    return "".join(f"[{c}{c.upper()}]" if c.isalpha() and c.isascii() else c for c in text)


def _is_word(name: str) -> bool:
    return _WORD_NAME_RE.fullmatch(name) is not None


def _first_word(name: str) -> str:
    """The word a name begins with (`dsh` of `dsh-base`); empty when it begins with another character."""
    m = _WORD_NAME_RE.match(name)
    return m.group() if m else ""


def _whole_word(text: str, fold: bool) -> re.Pattern[bytes]:
    """git grep's `-w` on one line's bytes; `fold` is `-i` in the C locale (ASCII letters only)."""
    return re.compile(
        rb"(?<![A-Za-z0-9_])" + re.escape(text.encode("utf-8")) + rb"(?![A-Za-z0-9_])", re.IGNORECASE if fold else 0
    )


def _pathspec_chunks(paths: list[str]) -> list[list[str]]:
    chunks: list[list[str]] = []
    size = PATHSPEC_CHARS
    for p in paths:
        if size + len(p) + 1 > PATHSPEC_CHARS:
            chunks.append([])
            size = 0
        chunks[-1].append(p)
        size += len(p) + 1
    return chunks


class _Started:
    """A git grep started now, its output spooled to a temporary file; `output` waits
    for it. With `listing`, it greps the files that index lists (`--cached`), and the
    index is removed when the process is done."""

    def __init__(
        self, git_dir: str, args: list[str], env: dict[str, str] | None = None, listing: FileIndex | None = None
    ):
        self.listing = listing
        try:
            self.proc = run.Started(args, git_dir, env={**(env or {}), **(listing.env if listing else {})}, spool=True)
        except BaseException:
            if listing is not None:
                listing.close()
            raise

    def output(self, sha: str) -> bytes:
        try:
            # 1: nothing matched, unless git says why (a blob it could not read).
            return self.proc.finish().output(no_match_ok=True, commit=sha)
        finally:
            self._done()

    def stop(self) -> None:
        self.proc.stop()
        self._done()

    def _done(self) -> None:
        if self.listing is not None:
            self.listing.close()


@dataclass
class _Base:
    """An indexed commit, and which files of this commit are the same there."""

    sha: str
    files: list[str]  # its files, sorted: the stored answers are positions in this list
    stored: dict[str, list[int]]  # names whose files it stored
    same: frozenset[str]  # files of this commit with the same blob at the base
    changed: list[str]  # files of this commit that are new or have another blob, sorted

    def kept(self, name: str) -> set[str]:
        """The files of this commit that hold `name` by the base's answer: those unchanged."""
        return {p for i in self.stored[name] if (p := self.files[i]) in self.same}

    def witnessed(self, name: str) -> bool:
        return any(self.files[i] in self.same for i in self.stored[name])


class _Inside:
    """What a match of the names pass holds as whole words: the names (itself,
    and those inside a match with other characters, `dsh` and `dsh-base` in
    `@scope/dsh-base`, which git does not report again) and the absence claims
    (a word that reads as the claim, in any case for a claim with no capital
    letter). Worked out once per distinct match."""

    def __init__(self, names: list[str], claims: list[str]):
        self._words = {n for n in names if _is_word(n)}
        self._others = {
            n: re.compile(rf"(?<![A-Za-z0-9_]){re.escape(n)}(?![A-Za-z0-9_])") for n in names if not _is_word(n)
        }
        self._exact = {t for t in claims if not any_case(t)}
        self._folded = {t for t in claims if any_case(t)}
        self._names: dict[str, tuple[str, ...]] = {}
        self._claims: dict[str, tuple[str, ...]] = {}

    def names(self, match: str) -> tuple[str, ...]:
        if match not in self._names:
            if _is_word(match):
                held = {match} & self._words
            else:
                held = {w for w in _WORD_NAME_RE.findall(match) if w in self._words}
                held |= {n for n, word in self._others.items() if n in match and word.search(match)}
            self._names[match] = tuple(sorted(held))
        return self._names[match]

    def claims(self, match: str) -> tuple[str, ...]:
        if not (self._exact or self._folded):
            return ()
        if match not in self._claims:
            words = _WORD_NAME_RE.findall(match)
            held = {w for w in words if w in self._exact} | {w.lower() for w in words if w.lower() in self._folded}
            self._claims[match] = tuple(sorted(held))
        return self._claims[match]


@dataclass
class _Search:
    """One search over the whole tree (`files` None) or some of its files: where
    `names` occur and the first places of the absence claims `texts`, its git
    processes started. Word names and word-only claims share one pass: a
    claim's letters are written as [aA] so that it is found in any case."""

    names: list[str]
    texts: list[str]
    files: list[str] | None
    looked_up: list[str] = field(default_factory=list)  # what the passes search for, the names and more
    checked: list[str] = field(default_factory=list)  # names looked for in Python, in the files of their first word
    # (names, claims, process, whether it is an -o pass or a -F pass for claims only)
    runs: list[tuple[list[str], list[str], _Started, bool]] = field(default_factory=list)

    def stop(self) -> None:
        for _, _, started, _ in self.runs:
            started.stop()


@dataclass
class _Pass:
    """What `start` set going; collected by `_finish`."""

    base: _Base | None
    scoped: _Search | None  # among the base's changed files only
    whole: _Search | None

    def stop(self) -> None:
        for search in (self.scoped, self.whole):
            if search is not None:
                search.stop()


class NameIndex:
    """Name lookups at one commit, shared by every document checked in a run."""

    def __init__(self, snapshot: Snapshot):
        if not _SHA_RE.fullmatch(snapshot.sha):
            raise RepoError(f"{snapshot.sha!r}: not a full commit SHA")
        self.snapshot = snapshot
        self.git_dir = snapshot.repository.git_dir
        self.sha = snapshot.sha
        self._present: dict[str, bool] = {}
        self._paths: dict[str, frozenset[str]] = {}
        self._pending: _Pass | None = None
        self._positions: dict[str, int] | None = None  # file -> its place in the sorted list of files
        self._joined: str | None = None  # every path, NUL between them, for absence claims
        self._lowered: str | None = None  # _joined in lower case, when it is ASCII
        self._starts: list[int] = []  # where each path begins in _joined
        self.git_calls = 0  # for tests and the benchmark: git processes this index started
        self.base: str | None = None  # the commit the last pass started from, if any (for tests and -v)

    # -- git ---------------------------------------------------------------------

    def _git(self, *args: str) -> bytes:
        self.git_calls += 1
        return run.run(args, self.git_dir).output(ok=(0, 1), commit=self.sha)

    def _start_git(self, args: list[str], files: list[str] | None, env: dict[str, str] | None = None) -> list[_Started]:
        """`git grep ARGS SHA`, over the whole tree or only `files`: those listed in an index
        (`fileindex`), the rest named as pathspecs (a process per chunk of them)."""
        if files is None:
            self.git_calls += 1
            return [_Started(self.git_dir, [*args, self.sha], env)]
        runs = []
        listing = FileIndex.of(self.git_dir, files, self.snapshot.blob_ids())
        if listing is not None:
            self.git_calls += 1
            at = args.index("grep") + 1
            runs.append(_Started(self.git_dir, [*args[:at], *listing.grep_options, *args[at:]], env, listing))
            files = listing.left_out
        for chunk in _pathspec_chunks(files):
            self.git_calls += 1
            runs.append(_Started(self.git_dir, ["--literal-pathspecs", *args, self.sha, "--", *chunk], env))
        return runs

    def _start_search(self, names: list[str], texts: list[str], files: list[str] | None) -> _Search:
        """The passes that find where `names` occur and where the claims `texts` do: started now."""
        search = _Search(names, texts, files)
        claims = [t for t in texts if _is_word(t)]
        if self._perl():
            self._start_perl(search, claims)
            return search
        # A name with other characters shares the word names' pass, and the
        # words inside a match of it are read from the match, unless it begins
        # with one of the words looked for (`dsh-base` and `dsh`): where it is
        # no whole word (`dsh-basement`), git would resume after its start,
        # past the word. Over the whole tree such a name has a pass of its
        # own; among a base's changed files it is looked for in the files
        # that hold its first word.
        starts = {n for n in names if _is_word(n)} | set(claims) | {t.lower() for t in claims if any_case(t)}
        shared = [n for n in names if _is_word(n) or _first_word(n) not in starts]
        apart = [n for n in names if n not in set(shared)]
        if files is not None:
            search.checked = apart
            shared += sorted({_first_word(n) for n in apart} - set(names))
            apart = []
        search.looked_up = shared + apart
        groups = [(shared[i : i + CHUNK], claims if i == 0 else []) for i in range(0, len(shared), CHUNK)]
        groups = groups or [([], claims)]
        groups += [(apart[i : i + CHUNK], []) for i in range(0, len(apart), CHUNK)]
        for group, with_claims in groups:
            if not group and not with_claims:
                continue
            # --heading names each file once above its matches: on DSH the
            # output is a tenth of what a path on every match line makes. -z
            # writes the path as it is (no C quotes around a tab or a quote).
            pattern = (
                "("
                + "|".join(
                    sorted(
                        [escape_ere(n) for n in group] + [_any_case_ere(t) for t in with_claims], key=len, reverse=True
                    )
                )
                + ")"
            )
            args = [
                "grep",
                "-o",
                "-z",
                *(["-n"] if with_claims else []),
                "--heading",
                "--break",
                "-I",
                "-w",
                "-E",
                "-e",
                pattern,
            ]
            search.runs += [(group, with_claims, started, True) for started in self._start_git(args, files)]
        rest = [t for t in texts if not _is_word(t)]
        if rest:
            search.runs += [([], rest, started, False) for started in self._start_absence(rest, files)]
        return search

    def _perl(self) -> bool:
        """Whether this git greps with Perl regexes (`-P`, built with PCRE2), asked once per clone."""
        key = self.git_dir
        if key not in _PERL:
            _PERL[key] = run.run(["grep", "-P", "-e", "x", EMPTY_TREE], self.git_dir).returncode in (0, 1)
        return _PERL[key]

    def _start_perl(self, search: _Search, claims: list[str]) -> None:
        """One pass for every name and word-only claim, with `-P`: a whole word
        is part of the pattern (lookarounds), so where a longer name is no whole
        word (`dsh-base` in `dsh-basement`) the shorter one is tried at the same
        place (`dsh`). Longest first, since the first alternative that matches
        wins; the names inside a match are read from it. The C locale keeps
        git from matching as UTF-8, so `(?i)` folds ASCII letters only."""
        names = search.names
        search.looked_up = list(names)
        for i in range(0, max(len(names), 1), CHUNK):
            group, with_claims = names[i : i + CHUNK], claims if i == 0 else []
            if not group and not with_claims:
                continue
            # The names and exact claims as a trie (`alternation`): PCRE tries far fewer
            # branches at each place than with one alternative a name. A claim in any case
            # is (?i:...), after them: PCRE looks for a caseless word faster than for
            # [aA][bB]..., and a name before it that matches where it does is the same
            # word or a longer one, which is what longest first would pick too.
            exact = alternation([*group, *(t for t in with_claims if not any_case(t))], re.escape)
            folded = [f"(?i:{t})" for t in sorted((t for t in with_claims if any_case(t)), key=len, reverse=True)]
            pattern = "(?<![A-Za-z0-9_])(?:" + "|".join([exact, *folded] if exact else folded) + ")(?![A-Za-z0-9_])"
            args = [
                "grep",
                "-o",
                "-z",
                *(["-n"] if with_claims else []),
                "--heading",
                "--break",
                "-I",
                "-P",
                "-e",
                pattern,
            ]
            search.runs += [
                (group, with_claims, started, True)
                for started in self._start_git(args, search.files, env={"LC_ALL": "C"})
            ]
        rest = [t for t in search.texts if not _is_word(t)]
        if rest:
            search.runs += [([], rest, started, False) for started in self._start_absence(rest, search.files)]

    def _finish_search(self, search: _Search) -> tuple[dict[str, set[str]], dict[str, list[tuple[str, int]]]]:
        """The files each name occurs in, and the first lines of each claim, in path order.
        Each run prints its files in path order, but the runs do not follow one another
        in it (the files an index lists, then those named as pathspecs): the first
        lines of each run are kept, and the first of them all picked at the end."""
        found: dict[str, set[str]] = {n: set() for n in search.names + search.looked_up}
        lines: dict[str, list[tuple[str, int]]] = {t: [] for t in search.texts}
        prefix = self.sha + ":"
        for _, texts, started, matches_only in search.runs:
            out = started.output(self.sha)
            if not matches_only:
                for t, places in self._absence_lines(out, texts).items():
                    lines[t] += places
                continue
            taken = dict.fromkeys(texts, 0)
            inside = _Inside(list(found), texts)
            for block in out.decode("utf-8", "replace").split("\n\n"):
                head, _, body = block.partition("\n")
                path = head.removeprefix(prefix)
                rows = body.split("\n") if texts else []
                # Each distinct match once: a file repeats the same names many times.
                distinct = set((_LINE_NUMBER_RE.sub("", body) if texts else body).split("\n"))
                claimed = False
                for text in distinct:
                    for name in inside.names(text):
                        found[name].add(path)
                    claimed = claimed or bool(inside.claims(text))
                if not claimed:
                    continue
                seen: dict[str, set[str]] = {}
                for row in rows:
                    number, _, text = row.partition("\0")
                    for claim in inside.claims(text):
                        if taken[claim] < ABSENCE_PLACES and number not in seen.setdefault(claim, set()):
                            seen[claim].add(number)
                            taken[claim] += 1
                            lines[claim].append((path, int(number)))
        if search.checked:
            found.update(self._check_in_files(search.checked, found))
        # Names with non-word characters can hide one another within a line
        # (`a/b` and `a/b/c`): over the whole tree, each one the pass missed is looked up alone.
        for name in search.names:
            if search.files is None and not _is_word(name) and not found[name]:
                found[name] = self._alone(name)
        return found, {t: sorted(places)[:ABSENCE_PLACES] for t, places in lines.items()}

    def _check_in_files(self, names: list[str], found: dict[str, set[str]]) -> dict[str, set[str]]:
        """Where each name with other characters is a whole word, among the files
        the pass found its first word in (a whole word of any file that holds it)."""
        blobs = self.snapshot.blob_ids()
        candidates = {n: sorted(p for p in found[_first_word(n)] if p in blobs) for n in names}
        data = self.snapshot.read_many(sorted({blobs[p] for paths in candidates.values() for p in paths}))
        out = {}
        for name in names:
            word = _whole_word(name, fold=False)
            out[name] = {p for p in candidates[name] if word.search(data.get(blobs[p], b""))}
        return out

    def _alone(self, name: str) -> set[str]:
        out = self._git("grep", "-l", "-z", "-I", "-w", "-F", "-e", name, self.sha)
        prefix = self.sha + ":"
        return {p.removeprefix(prefix) for p in out.decode("utf-8", "replace").split("\0") if p}

    # -- what the cache knows ------------------------------------------------------

    def _presence(self) -> cache.Shard:
        return cache.current().shard("reference-names", VERSION, _NAMES_SHAPE)

    def _stored(self, sha: str) -> cache.Shard:
        """The files of each name at commit `sha`, where they were stored."""
        return cache.current().shard("reference-paths", f"{VERSION}-{sha}", _STORED_SHAPE)

    def _absences(self) -> cache.Shard:
        return cache.current().shard("reference-absence", VERSION, _ABSENCE_SHAPE)

    def _known(self, name: str) -> bool | None:
        if name not in self._present:
            hit = self._presence().get(f"{self.sha} {name}")
            if hit is None:
                return None
            self._present[name] = bool(hit)
        return self._present[name]

    def _record(self, name: str, where: set[str]) -> None:
        """A complete answer: the files that hold `name` here."""
        self._paths[name] = frozenset(where)
        self._present[name] = bool(where)
        self._presence().put(f"{self.sha} {name}", 1 if where else 0)
        if self._positions is None:
            self._positions = {p: i for i, p in enumerate(self.snapshot.blob_ids())}
        position = self._positions
        if all(p in position for p in where):
            self._stored(self.sha).put(name, sorted(position[p] for p in where))

    def _load_stored(self, names: list[str]) -> None:
        missing = [n for n in names if n not in self._paths]
        if not missing:
            return
        shard = self._stored(self.sha)
        if any(shard.get(n) is not None for n in missing):
            files = list(self.snapshot.blob_ids())
            for n in missing:
                hit = shard.get(n)
                if hit is not None:
                    self._paths[n] = frozenset(files[i] for i in hit)
                    self._present[n] = bool(hit)

    def _choose_base(self, names: list[str], texts: list[str]) -> _Base | None:
        """The indexed commit that answers most of `names` and `texts`, when few files changed since."""
        wanted, claims = set(names), set(texts)
        votes: dict[str, int] = {}
        for key in self._presence().keys():
            sha, _, name = key.partition(" ")
            if name in wanted and sha != self.sha:
                votes[sha] = votes.get(sha, 0) + 1
        for key in self._absences().keys():
            sha, _, rest = key.partition(" ")
            limit, _, text = rest.partition(" ")
            if text in claims and limit == str(ABSENCE_PLACES) and sha != self.sha:
                votes[sha] = votes.get(sha, 0) + 1
        files = self.snapshot.blob_ids()
        best: tuple[tuple[int, int], _Base] | None = None
        repository = self.snapshot.repository
        for sha in sorted(votes, key=lambda s: (-votes[s], s))[:BASE_CANDIDATES]:
            stored = self._stored(sha)
            known = {n: stored.get(n) for n in wanted if stored.get(n) is not None}
            answered = sum(1 for t in claims if self._complete_absence(sha, t) is not None)
            if not (known or answered) or not _SHA_RE.fullmatch(sha) or not repository.has_commit(sha):
                continue
            there = repository.snapshot(sha).blob_ids()
            changed = sorted(p for p, blob in files.items() if there.get(p) != blob)
            if len(changed) > FULL_SCAN_SHARE * len(files):
                continue
            score = (len(known) + answered, -len(changed))
            if best is None or score > best[0]:
                same = frozenset(p for p, blob in files.items() if there.get(p) == blob)
                best = (score, _Base(sha, list(there), known, same, changed))
        return best[1] if best else None

    # -- lookups -----------------------------------------------------------------

    def start(self, presence: Iterable[str] = (), paths: Iterable[str] = (), absent: Iterable[str] = ()) -> None:
        """Start, in the background, what these answers need that is not known yet:
        whether each name of `presence` occurs, the files that hold each name of
        `paths`, and the places of each absence claim of `absent`. `present`,
        `paths` and `occurrences` wait for it."""
        self._finish()
        want_paths = list(dict.fromkeys(paths))
        self._load_stored(want_paths)
        want_paths = [n for n in want_paths if n not in self._paths]
        chosen = set(want_paths)
        want_presence = [n for n in dict.fromkeys(presence) if n not in chosen and self._known(n) is None]
        texts = [t for t in dict.fromkeys(absent) if t.isascii() and self._absence_hit(t, ABSENCE_PLACES) is None]
        if not (want_paths or want_presence or texts):
            return
        base = self._choose_base(want_paths + want_presence, texts)
        self.base = base.sha if base else None
        rest = []
        for name in want_presence:
            if base is not None and name in base.stored and base.witnessed(name):
                self._present[name] = True  # in a file that did not change: no search needed
                self._presence().put(f"{self.sha} {name}", 1)
            else:
                rest.append(name)
        names = want_paths + rest
        scoped = [n for n in names if base is not None and n in base.stored]
        whole = [n for n in names if base is None or n not in base.stored]
        texts_scoped = [t for t in texts if base is not None and self._complete_absence(base.sha, t) is not None]
        texts_whole = [t for t in texts if t not in texts_scoped]
        pending = self._pending = _Pass(base, None, None)
        try:
            if base is not None and (scoped or texts_scoped):
                pending.scoped = self._start_search(scoped, texts_scoped, base.changed)
            if whole or texts_whole:
                pending.whole = self._start_search(whole, texts_whole, None)
        except BaseException:
            self.stop()
            raise

    def _finish(self) -> None:
        """Wait for the pass `start` set going, and keep its answers."""
        pending, self._pending = self._pending, None
        if pending is None:
            return
        try:
            base = pending.base
            lines: dict[str, list[tuple[str, int]]] = {}
            if pending.scoped is not None:
                assert base is not None  # a search is scoped only to a base's changed files
                found, lines = self._finish_search(pending.scoped)
                for name in pending.scoped.names:
                    where = base.kept(name) | found[name]
                    if not where and not _is_word(name):
                        where = self._alone(name)  # as a pass over the whole tree would
                    self._record(name, where)
                for t in pending.scoped.texts:
                    lines[t] += [(p, n) for p, n in self._complete_absence(base.sha, t) or [] if p in base.same]
            if pending.whole is not None:
                found, more = self._finish_search(pending.whole)
                lines.update(more)
                for name in pending.whole.names:
                    self._record(name, found[name])
            for t, places in lines.items():
                self._store_absence(t, ABSENCE_PLACES, sorted(places))
        except BaseException:
            pending.stop()
            raise

    def stop(self) -> None:
        """Stop a pass still running (its answers are not needed any more)."""
        pending, self._pending = self._pending, None
        if pending is not None:
            pending.stop()

    def present(self, names: Iterable[str]) -> dict[str, bool]:
        """Whether each name occurs at this commit (the rule in the module docstring)."""
        wanted = list(dict.fromkeys(names))
        if self._pending is not None or any(self._known(n) is None for n in wanted):
            self.start(presence=wanted)
            self._finish()
        return {n: self._present[n] for n in wanted}

    def paths(self, names: Iterable[str]) -> dict[str, frozenset[str]]:
        """The files each name occurs in as a whole word."""
        wanted = list(dict.fromkeys(names))
        if self._pending is not None or any(n not in self._paths for n in wanted):
            self.start(paths=wanted)
            self._finish()
        return {n: self._paths[n] for n in wanted}

    # -- absence claims ------------------------------------------------------------

    def _absence_hit(self, text: str, limit: int) -> list[tuple[str, int]] | None:
        hit = self._absences().get(f"{self.sha} {limit} {text}")
        return None if hit is None else [(p, int(n)) for p, n in hit]

    def _complete_absence(self, sha: str, text: str) -> list[tuple[str, int]] | None:
        """The lines that hold `text` at `sha`, when its cached answer names all of them."""
        hit = self._absences().get(f"{sha} {ABSENCE_PLACES} {text}")
        if hit is None or len(hit) >= ABSENCE_PLACES:
            return None
        return [(p, int(n)) for p, n in hit if int(n)]

    def _start_absence(self, texts: list[str], files: list[str] | None) -> list[_Started]:
        """One pass for several absence claims: case-insensitive when any of them is,
        each line sorted out by `_whole_word` afterwards. The C locale makes git
        fold ASCII letters only, as Python's bytes patterns do."""
        fold = any(any_case(t) for t in texts)
        args = ["grep", "-n", "-z", "-I", *(["-i"] if fold else []), "-w", "-F", *[a for t in texts for a in ("-e", t)]]
        return self._start_git(args, files, env={"LC_ALL": "C"})

    def _absence_lines(self, out: bytes, texts: list[str]) -> dict[str, list[tuple[str, int]]]:
        """The first lines of each claim in the output of `_start_absence` (in path order)."""
        patterns = {t: _whole_word(t, any_case(t)) for t in texts}
        lines: dict[str, list[tuple[str, int]]] = {t: [] for t in texts}
        prefix = (self.sha + ":").encode()
        for record in out.split(b"\n"):
            path, _, rest = record.partition(b"\0")
            number, _, line = rest.partition(b"\0")
            if not number.isdigit():
                continue
            for t in texts:
                if len(lines[t]) < ABSENCE_PLACES and patterns[t].search(line):
                    lines[t].append((path.removeprefix(prefix).decode("utf-8", "replace"), int(number)))
        return lines

    def _store_absence(self, text: str, limit: int, lines: list[tuple[str, int]]) -> list[tuple[str, int]]:
        """Paths that hold the text first, then the first lines, up to `limit` places in all."""
        places: list[tuple[str, int]] = [(p, 0) for p in self._paths_holding(text, any_case(text), limit)]
        places += lines[: limit - len(places)]
        places.sort()
        self._absences().put(f"{self.sha} {limit} {text}", [list(p) for p in places])
        return places

    def _paths_holding(self, text: str, fold: bool, limit: int) -> list[str]:
        """The first `limit` paths (of files, links and submodules) that hold `text` as a
        whole word, in any case when `fold`. One search over them all, joined with NULs
        (no path holds one, and it is no word character), stopped once they are found
        (a common word is in thousands). The text is found first as a plain string, and
        the word's edges are tested only where it is: a pattern that starts with a
        look-behind is tried at every character, ten times as slow on DSH's paths."""
        word = re.compile(rf"(?<![A-Za-z0-9_]){re.escape(text)}(?![A-Za-z0-9_])", re.IGNORECASE if fold else 0)
        paths = self.snapshot.paths()
        if "\0" in text:
            return list(islice((p for p in paths if word.search(p)), limit))
        if self._joined is None:
            self._joined = "\0".join(paths)
            self._lowered = self._joined.lower() if self._joined.isascii() else None
            self._starts = list(accumulate((len(p) + 1 for p in paths[:-1]), initial=0))
        joined = self._joined
        if not fold:

            def find(pos: int) -> int:
                return joined.find(text, pos)
        elif self._lowered is not None and text.isascii():  # ASCII only: lower() folds as the pattern does
            lowered, needle = self._lowered, text.lower()

            def find(pos: int) -> int:
                return lowered.find(needle, pos)
        else:  # other letters may fold to ASCII ones (the Kelvin sign to k): the pattern's own folding
            literal = re.compile(re.escape(text), re.IGNORECASE)

            def find(pos: int) -> int:
                m = literal.search(joined, pos)
                return m.start() if m else -1

        held: dict[str, None] = {}
        at = find(0)
        while at >= 0 and len(held) < limit:
            if word.match(joined, at):
                held[paths[bisect_right(self._starts, at) - 1]] = None
            at = find(at + 1)
        return list(held)

    def occurrences(self, text: str, limit: int = ABSENCE_PLACES) -> list[tuple[str, int]]:
        """The first places `text` occurs as a whole word: (path, line) in file
        contents, (path, 0) for a path that holds it. Smart case: a text with
        no capital letter is looked up in any case, one with a capital exactly."""
        if self._pending is not None:
            self._finish()
        hit = self._absence_hit(text, limit)
        if hit is None and limit == ABSENCE_PLACES and text.isascii():
            self.start(absent=[text])
            self._finish()
            hit = self._absence_hit(text, limit)
        if hit is None:
            hit = self._store_absence(text, limit, self._first_lines(text, limit, any_case(text)))
        return hit

    def _first_lines(self, text: str, limit: int, fold: bool) -> list[tuple[str, int]]:
        """The first `limit` matching lines, stopping git once they are read."""
        self.git_calls += 1
        args = ["grep", "-n", "-z", "-I", *(["-i"] if fold else []), "-w", "-F", "-e", text, self.sha]
        proc = run.Started(args, self.git_dir, stderr=False)
        places = []
        prefix = self.sha + ":"
        try:
            for raw in proc.stdout:
                path, _, rest = raw.decode("utf-8", "replace").partition("\0")
                line, _, _ = rest.partition("\0")
                if line.isdigit():
                    places.append((path.removeprefix(prefix), int(line)))
                if len(places) >= limit:
                    break
        finally:
            proc.stop()
        return places

    # -- history -------------------------------------------------------------------

    def deletion(self, name: str, commits: int = HISTORY_COMMITS) -> HistoryAnswer:
        """The first-parent commit, within `commits` of this one, after which
        `name` no longer occurs as a whole word; `deletion` is None when there is none.

        `git log -S` finds the commits that changed how often the string
        occurs; the newest one whose first parent held the name as a whole
        word is where it was deleted (a change to a longer name that contains
        it is passed over)."""

        def search(bound: list[str]) -> Deletion | None:
            out = self._git(
                "log", "--first-parent", "-n", "3", "--format=%H%x00%cI%x00%s", f"-S{name}", self.sha, *bound, "--"
            )
            for record in out.decode("utf-8", "replace").splitlines():
                sha, date, subject = (record.split("\0") + ["", ""])[:3]
                if _SHA_RE.fullmatch(sha) and self._had(name, sha):
                    return Deletion(sha, date, subject)
            return None

        return self._history(f"{self.sha} {commits} {name}", commits, search)

    def path_deletion(self, path: str, commits: int = HISTORY_COMMITS) -> HistoryAnswer:
        """The newest first-parent commit, within `commits` of this one, that removed
        `path` (a file, or a file under a folder of that name), a move counted as a
        removal; `deletion` is None when there is none. Cached as `deletion` is."""

        def search(bound: list[str]) -> Deletion | None:
            out = self._git(
                "--literal-pathspecs",
                "log",
                "--first-parent",
                "--no-renames",
                "--diff-filter=D",
                "-n",
                "1",
                "--format=%H%x00%cI%x00%s",
                self.sha,
                *bound,
                "--",
                path,
            )
            sha, date, subject = (out.decode("utf-8", "replace").strip().split("\0") + ["", "", ""])[:3]
            return Deletion(sha, date, subject) if _SHA_RE.fullmatch(sha) else None

        return self._history(f"{self.sha} {commits} path {path}", commits, search)

    def _history(self, key: str, commits: int, search: Callable[[list[str]], Deletion | None]) -> HistoryAnswer:
        """A bounded history search's answer, cached under `key`: `search` gets the
        arguments that stop `git log` after `commits` first-parent commits."""
        shard = cache.current().shard("reference-history", VERSION, _HISTORY_SHAPE)
        hit = shard.get(key)
        if hit is not None:
            gone = Deletion(*hit["deletion"]) if hit["deletion"] else None
            return HistoryAnswer(gone, int(hit["commits"]), bool(hit["root"]))
        window = self._git("rev-list", "--first-parent", f"--max-count={commits + 1}", self.sha).decode().split()
        reached_root = len(window) <= commits
        found = search([] if reached_root else ["--not", window[commits]])
        answer = HistoryAnswer(found, min(len(window), commits), reached_root)
        shard.put(
            key,
            {
                "deletion": [found.sha, found.date, found.subject] if found else None,
                "commits": answer.commits,
                "root": reached_root,
            },
        )
        return answer

    def _had(self, name: str, sha: str) -> bool:
        """Whether the first parent of `sha` held `name` as a whole word."""
        self.git_calls += 1
        return run.run(["grep", "-q", "-I", "-w", "-F", "-e", name, f"{sha}^1"], self.git_dir).returncode == 0

    def deletions(
        self, names: list[str], commits: int = HISTORY_COMMITS, budget: float = HISTORY_BUDGET_SECONDS
    ) -> dict[str, HistoryAnswer]:
        """`deletion` for several names, two at a time, until `budget` seconds
        have gone by; names not searched by then are left out of the answer."""
        start = time.monotonic()
        answers: dict[str, HistoryAnswer] = {}

        def one(name: str) -> None:
            if time.monotonic() - start < budget:
                answers[name] = self.deletion(name, commits)

        with ThreadPoolExecutor(max_workers=2) as pool:
            list(pool.map(one, names))
        return answers


def any_case(text: str) -> bool:
    """Smart case: an absence claim with no capital letter holds in any case."""
    return text == text.lower()


_indexes: dict[tuple[str, str], NameIndex] = {}


def index_for(snapshot: Snapshot) -> NameIndex:
    """The index of a snapshot's commit, one per process and commit."""
    key = (snapshot.repository.git_dir, snapshot.sha)
    if key not in _indexes:
        _indexes[key] = NameIndex(snapshot)
    return _indexes[key]


def forget() -> None:
    """Drop the in-process indexes (tests, and the warm benchmark, start afresh),
    stopping any pass still running."""
    for index in _indexes.values():
        index.stop()
    _indexes.clear()
