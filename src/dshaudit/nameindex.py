"""Which names occur in the tree of one DSH commit: one indexed pass, cached per name.

The rule, for every name a document holds (`references.py` decides which):
a name occurs at a commit when it is found, case-sensitively, as a whole word
in some text file of the commit's tree. "Whole word" is git grep's `-w`: the
character before the name and the one after it, where there are any, are not
ASCII letters, digits or `_`. So `Registry` is absent from a tree that only
says `AgentRegistry`, and `setFactory` is present in `reg.setFactory(f)`.
Binary files (git's `-I`) are not searched, and a path is not an occurrence.

How it is indexed: the names not yet known at this commit are looked up
together, in one `git grep -o -w -E` pass over the commit per group of up to
`CHUNK` names, the names joined into one alternation (one regex is far faster
in git than hundreds of `-e` patterns). Names made of word characters only
cannot overlap one another within a line, so their pass is exact; names with
other characters (`tool/start`, `@scope/name`, `$ctx`) go in a second pass,
and any of those it misses is looked up again on its own before it is called
absent. Each answer is cached per (commit SHA, name) in the `reference-names`
shard, so a warm lookup is a dictionary access and runs no git at all.

The same pass can also say where each name occurs (the paths), which the
fragment check needs to find candidate files; paths are kept in memory only.

History (`deletion`) is a bounded pickaxe on the first-parent path, and an
absence claim (`occurrences`) a case-insensitive whole-word search that stops
at the first few places; both are cached too. No text from a document is ever
passed to git as an option: patterns follow `-e`, pickaxe strings are glued
to `-S` in the same argument, revisions are validated SHAs.
"""

from __future__ import annotations

import re
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Iterable

from . import cache
from .errors import RepoError

if TYPE_CHECKING:
    from .snapshot import Snapshot

VERSION = "1"  # bump when the lookup rule changes what a cached answer means
CHUNK = 300  # names per alternation
# First-parent commits the history search looks back over, and the time it may take per run.
HISTORY_COMMITS = 200
HISTORY_BUDGET_SECONDS = 30.0
_WORD_NAME_RE = re.compile(r"[A-Za-z0-9_]+")
_SHA_RE = re.compile(r"[0-9a-f]{40}")
_ERE_SPECIAL_RE = re.compile(r"([.\[\]{}()*+?^$|\\])")


@dataclass(frozen=True)
class Deletion:
    """The first-parent commit that removed a name's last whole-word occurrence."""

    sha: str
    date: str  # committer date, ISO 8601
    subject: str

    def __str__(self) -> str:
        return f"{self.sha[:8]} {self.date[:10]} \"{self.subject}\""


@dataclass(frozen=True)
class HistoryAnswer:
    """What the bounded history search found for one name."""

    deletion: Deletion | None
    commits: int  # first-parent commits searched (the pin's own included)
    reached_root: bool  # the search went back to the first commit


# Cached entries as they are written below; another shape is dropped (cache.py) and looked up again.
_NAMES_SHAPE = cache.shaped(int)
_ABSENCE_SHAPE = cache.shaped([[str, int]])
_HISTORY_SHAPE = cache.shaped({"deletion": ([str, str, str], type(None)), "commits": int, "root": bool})


def _escape_ere(name: str) -> str:
    return _ERE_SPECIAL_RE.sub(r"\\\1", name)


class NameIndex:
    """Name lookups at one commit, shared by every document checked in a run."""

    def __init__(self, git_dir: Path, sha: str):
        if not _SHA_RE.fullmatch(sha):
            raise RepoError(f"{sha!r}: not a full commit SHA")
        self.git_dir = git_dir
        self.sha = sha
        self._present: dict[str, bool] = {}
        self._paths: dict[str, frozenset[str]] = {}
        self.git_calls = 0  # for tests and the benchmark: git processes this index started

    # -- git ---------------------------------------------------------------------

    def _git(self, *args: str, ok: tuple[int, ...] = (0, 1)) -> bytes:
        self.git_calls += 1
        proc = subprocess.run(["git", f"--git-dir={self.git_dir}", *args], capture_output=True)
        if proc.returncode not in ok:
            command = next((a for a in args if not a.startswith("-") and "=" not in a), "")
            raise RepoError(f"git {command} failed at {self.sha[:12]}: {proc.stderr.decode(errors='replace').strip()}")
        return proc.stdout

    def _scan(self, names: list[str]) -> dict[str, set[str]]:
        """Where each of `names` occurs as a whole word: one pass per chunk."""
        found: dict[str, set[str]] = {n: set() for n in names}
        words = [n for n in names if _WORD_NAME_RE.fullmatch(n)]
        others = [n for n in names if not _WORD_NAME_RE.fullmatch(n)]
        groups = [words[i:i + CHUNK] for i in range(0, len(words), CHUNK)]
        groups += [others[i:i + CHUNK] for i in range(0, len(others), CHUNK)]
        prefix = self.sha + ":"

        def run(group: list[str]) -> bytes:
            # --heading names each file once above its matches: on DSH the
            # output is a tenth of what a path on every match line makes.
            pattern = "(" + "|".join(_escape_ere(n) for n in sorted(group, key=len, reverse=True)) + ")"
            return self._git("-c", "core.quotePath=false", "grep", "-o", "--heading", "--break", "-I", "-w", "-E",
                             "-e", pattern, self.sha)

        with ThreadPoolExecutor(max_workers=2) as pool:
            outputs = list(pool.map(run, groups))
        for out in outputs:
            for block in out.decode("utf-8", "replace").split("\n\n"):
                head, _, matches = block.partition("\n")
                path = head.removeprefix(prefix)
                for text in set(matches.split("\n")):
                    if text in found:
                        found[text].add(path)
        # Names with non-word characters can hide one another within a line
        # (`a/b` and `a/b/c`): each one the pass missed is looked up alone.
        for name in others:
            if not found[name]:
                out = self._git("grep", "-l", "-z", "-I", "-w", "-F", "-e", name, self.sha)
                found[name] = {p.removeprefix(prefix) for p in out.decode("utf-8", "replace").split("\0") if p}
        return found

    # -- lookups -----------------------------------------------------------------

    def unknown(self, names: Iterable[str]) -> list[str]:
        """Those of `names` whose presence is neither in memory nor in the cache."""
        shard = cache.current().shard("reference-names", VERSION, _NAMES_SHAPE)
        return [n for n in dict.fromkeys(names) if n not in self._present and shard.get(f"{self.sha} {n}") is None]

    def present(self, names: Iterable[str]) -> dict[str, bool]:
        """Whether each name occurs at this commit (the rule in the module docstring)."""
        shard = cache.current().shard("reference-names", VERSION, _NAMES_SHAPE)
        out: dict[str, bool] = {}
        missing = []
        for name in dict.fromkeys(names):
            if name in self._present:
                out[name] = self._present[name]
                continue
            hit = shard.get(f"{self.sha} {name}")
            if hit is None:
                missing.append(name)
            else:
                out[name] = self._present[name] = bool(hit)
        if missing:
            self.paths(missing)
            for name in missing:
                out[name] = self._present[name]
        return out

    def paths(self, names: Iterable[str]) -> dict[str, frozenset[str]]:
        """The files each name occurs in as a whole word (kept in memory only)."""
        shard = cache.current().shard("reference-names", VERSION, _NAMES_SHAPE)
        wanted = list(dict.fromkeys(names))
        todo = [n for n in wanted if n not in self._paths]
        if todo:
            for name, where in self._scan(todo).items():
                self._paths[name] = frozenset(where)
                self._present[name] = bool(where)
                shard.put(f"{self.sha} {name}", 1 if where else 0)
        return {n: self._paths[n] for n in wanted}

    def occurrences(self, text: str, snapshot: "Snapshot", limit: int = 3) -> list[tuple[str, int]]:
        """The first places `text` occurs as a whole word: (path, line) in file
        contents, (path, 0) for a path that holds it. Smart case: a text with
        no capital letter is looked up in any case, one with a capital exactly."""
        shard = cache.current().shard("reference-absence", VERSION, _ABSENCE_SHAPE)
        key = f"{self.sha} {limit} {text}"
        hit = shard.get(key)
        if hit is not None:
            return [(p, int(n)) for p, n in hit]
        places: list[tuple[str, int]] = []
        fold = any_case(text)
        word = re.compile(rf"(?<![A-Za-z0-9_]){re.escape(text)}(?![A-Za-z0-9_])", re.IGNORECASE if fold else 0)
        for path in snapshot.paths():
            if len(places) < limit and word.search(path):
                places.append((path, 0))
        if len(places) < limit:
            places += self._first_lines(text, limit - len(places), fold)
        places.sort()
        shard.put(key, [list(p) for p in places])
        return places

    def _first_lines(self, text: str, limit: int, fold: bool) -> list[tuple[str, int]]:
        """The first `limit` matching lines, stopping git once they are read."""
        self.git_calls += 1
        proc = subprocess.Popen(
            ["git", f"--git-dir={self.git_dir}", "grep", "-n", "-z", "-I", *(["-i"] if fold else []), "-w", "-F",
             "-e", text, self.sha],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        )
        assert proc.stdout is not None
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
            proc.kill()
            proc.stdout.close()
            proc.wait()
        return places

    def deletion(self, name: str, commits: int = HISTORY_COMMITS) -> HistoryAnswer:
        """The first-parent commit, within `commits` of this one, after which
        `name` no longer occurs as a whole word; `deletion` is None when there is none.

        `git log -S` finds the commits that changed how often the string
        occurs; the newest one whose first parent held the name as a whole
        word is where it was deleted (a change to a longer name that contains
        it is passed over)."""
        shard = cache.current().shard("reference-history", VERSION, _HISTORY_SHAPE)
        key = f"{self.sha} {commits} {name}"
        hit = shard.get(key)
        if hit is not None:
            gone = Deletion(*hit["deletion"]) if hit["deletion"] else None
            return HistoryAnswer(gone, int(hit["commits"]), bool(hit["root"]))
        window = self._git("rev-list", "--first-parent", f"--max-count={commits + 1}", self.sha).decode().split()
        reached_root = len(window) <= commits
        bound = [] if reached_root else ["--not", window[commits]]
        out = self._git("log", "--first-parent", "-n", "3", "--format=%H%x00%cI%x00%s", f"-S{name}",
                        self.sha, *bound, "--")
        found = None
        for record in out.decode("utf-8", "replace").splitlines():
            sha, date, subject = (record.split("\0") + ["", ""])[:3]
            if _SHA_RE.fullmatch(sha) and self._had(name, sha):
                found = Deletion(sha, date, subject)
                break
        answer = HistoryAnswer(found, min(len(window), commits), reached_root)
        shard.put(key, {"deletion": [found.sha, found.date, found.subject] if found else None,
                        "commits": answer.commits, "root": reached_root})
        return answer

    def _had(self, name: str, sha: str) -> bool:
        """Whether the first parent of `sha` held `name` as a whole word."""
        self.git_calls += 1
        proc = subprocess.run(
            ["git", f"--git-dir={self.git_dir}", "grep", "-q", "-I", "-w", "-F", "-e", name, f"{sha}^1"],
            capture_output=True,
        )
        return proc.returncode == 0

    def deletions(self, names: list[str], commits: int = HISTORY_COMMITS,
                  budget: float = HISTORY_BUDGET_SECONDS) -> dict[str, HistoryAnswer]:
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


def index_for(snapshot: "Snapshot") -> NameIndex:
    """The index of a snapshot's commit, one per process and commit."""
    git_dir = Path(snapshot.repository.repo.git_dir)
    key = (str(git_dir), snapshot.sha)
    if key not in _indexes:
        _indexes[key] = NameIndex(git_dir, snapshot.sha)
    return _indexes[key]


def forget() -> None:
    """Drop the in-process indexes (tests, and the warm benchmark, start afresh)."""
    _indexes.clear()
