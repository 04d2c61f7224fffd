"""When a name, or a path, was deleted: a bounded search of the first-parent history.

A name's deletion is the newest first-parent commit whose first parent held
the name as a whole word. Since the name occurs nowhere at the index's commit,
that is the newest commit in whose patch a removed line holds it: a line the
commit removed was in its parent's tree, and a commit whose parent held the
name and whose own tree does not must remove a line that holds it. So one
`git log -p -U0` over the window answers every name of a run: the lines each
commit removed are kept, and each name is looked for in them, newest commit
first. A path's deletion is the newest commit that removed it. Both look back
over `HISTORY_COMMITS` commits at most, and their answers are cached.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass

from dshaudit.core.model import SHA_RE
from dshaudit.index.namegrep import CommitGrep, Running
from dshaudit.index.namestore import VERSION
from dshaudit.platform import cache

# First-parent commits the history search looks back over.
HISTORY_COMMITS = 200
_HISTORY_SHAPE = cache.shaped({"deletion": ([str, str, str], type(None)), "commits": int, "root": bool})
# The line of a commit in the log starts with two NULs: every line of a patch starts with
# a character of its own (`-`, `+`, `@`, ...), though one may hold NULs further on.
_HEADER_BYTES = b"\0\0"
# With -U0 a hunk is its header, the lines it removes (`-`), then those it adds (`+`);
# git's own "\ No newline at end of file" may follow a removed line.
_HUNK_HEADER = re.compile(rb"@@ -[0-9]+(?:,[0-9]+)? \+[0-9]+(?:,[0-9]+)? @@[^\n]*")
_REMOVED_RUN = re.compile(rb"(?:[-\\][^\n]*\n)*")
_WORD_BYTE = re.compile(rb"[A-Za-z0-9_]")


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


@dataclass(frozen=True)
class _Removed:
    """A window's log, read where it lies: where each commit's part starts (newest first),
    and the commit each part is of. A name is looked for in the whole log at once (in C),
    and only a place where it occurs is then placed in its commit and its line: most names
    asked for occur nowhere in the window."""

    log: bytes
    starts: list[int]  # each part's start, just past the two NULs of its line
    heads: list[Deletion | None]  # the commit each part is of (None: a line that names none)
    reached_root: bool

    @property
    def commits(self) -> list[Deletion]:
        return [h for h in self.heads if h is not None]

    def deletion(self, name: str) -> Deletion | None:
        needle = name.encode()
        at = self.log.find(needle)
        while at >= 0:
            k = bisect_right(self.starts, at) - 1
            head = self.heads[k] if k >= 0 else None
            if head is not None and _whole_word(self.log, at, len(needle)) and _removed(self.log, at, self.starts[k]):
                return head  # the log is newest first: the first place found is the newest commit's
            at = self.log.find(needle, at + 1)
        return None


def _whole_word(log: bytes, at: int, size: int) -> bool:
    before = log[at - 1 : at] if at else b""
    after = log[at + size : at + size + 1]
    return not (before and _WORD_BYTE.match(before)) and not (after and _WORD_BYTE.match(after))


def _removed(log: bytes, at: int, part_start: int) -> bool:
    """Whether the place lies on a line a hunk removes: a line that starts with `-`, below a
    hunk's header with only such lines (and git's own `\\` lines) between them."""
    line_start = log.rfind(b"\n", part_start, at) + 1
    if line_start == 0 or log[line_start : line_start + 1] != b"-" or log.find(b"\n", at) < 0:
        return False  # on the commit's own line, or not a whole removed line
    header = log.rfind(b"\n@@ -", part_start, line_start)
    if header < 0:
        return False
    header_end = log.find(b"\n", header + 1, line_start)
    return (
        header_end >= 0
        and _HUNK_HEADER.fullmatch(log, header + 1, header_end) is not None
        and _REMOVED_RUN.fullmatch(log, header_end + 1, line_start) is not None
    )


def _window_log(sha: str, commits: int) -> list[str]:
    """`git log -p -U0` of the `commits` first-parent commits up to `sha`, each commit's
    patch against its first parent, under a line of its own that starts with two NULs."""
    return [
        "log",
        "--first-parent",
        "-m",
        "--no-renames",
        "--no-ext-diff",
        "--no-textconv",
        "-p",
        "-U0",
        "-n",
        str(commits),
        "--format=%x00%x00%H%x00%cI%x00%P%x00%s",
        sha,
        "--",
    ]


def _removed_lines(log: bytes, commits: int) -> _Removed:
    """The window `_window_log` wrote, its commits found, and whether it reaches the first commit."""
    starts = [len(_HEADER_BYTES)] if log.startswith(_HEADER_BYTES) else []
    at = log.find(b"\n" + _HEADER_BYTES)
    while at >= 0:
        starts.append(at + 1 + len(_HEADER_BYTES))
        at = log.find(b"\n" + _HEADER_BYTES, at + 1)
    heads: list[Deletion | None] = []
    parents = ""
    for start in starts:
        line_end = log.find(b"\n", start)
        head = log[start : line_end if line_end >= 0 else len(log)].decode("utf-8", "replace")
        sha, date, parents, subject = (head.split("\0") + [""] * 4)[:4]
        heads.append(Deletion(sha, date, subject) if SHA_RE.fullmatch(sha) else None)
    found = sum(1 for h in heads if h is not None)
    return _Removed(log, starts, heads, found < commits or not parents.strip())


class NameHistory:
    """Bounded history searches from one commit."""

    def __init__(self, grep: CommitGrep):
        self.grep = grep
        self.sha = grep.sha
        self._windows: dict[int, _Removed] = {}
        self._reading: dict[int, Running] = {}

    def start(self, commits: int = HISTORY_COMMITS) -> None:
        """Set git writing the window of `commits` commits while other work goes on: a
        name found nowhere at the commit will have its history asked for."""
        if commits not in self._windows and commits not in self._reading:
            self._reading[commits] = self.grep.begin(_window_log(self.sha, commits))

    def stop(self) -> None:
        """Stop reading a window that is not needed any more."""
        for reading in self._reading.values():
            reading.stop()
        self._reading.clear()

    def _window(self, commits: int) -> _Removed:
        if commits not in self._windows:
            self.start(commits)
            log = self._reading.pop(commits).output(self.sha)
            self._windows[commits] = _removed_lines(log, commits)
        return self._windows[commits]

    def deletion(self, name: str, commits: int = HISTORY_COMMITS) -> HistoryAnswer:
        """The first-parent commit, within `commits` of this one, after which
        `name` no longer occurs as a whole word; `deletion` is None when there is none.
        A name that still occurs is answered as one that was never deleted."""
        shard = cache.current().shard("reference-history", VERSION, _HISTORY_SHAPE)
        key = f"{self.sha} {commits} {name}"
        hit = shard.get(key)
        if hit is not None:
            return _answer(hit)
        window = self._window(commits)
        return _store(shard, key, HistoryAnswer(window.deletion(name), len(window.commits), window.reached_root))

    def path_deletion(self, path: str, commits: int = HISTORY_COMMITS) -> HistoryAnswer:
        """The newest first-parent commit, within `commits` of this one, that removed
        `path` (a file, or a file under a folder of that name), a move counted as a
        removal; `deletion` is None when there is none. Cached as `deletion` is."""
        shard = cache.current().shard("reference-history", VERSION, _HISTORY_SHAPE)
        key = f"{self.sha} {commits} path {path}"
        hit = shard.get(key)
        if hit is not None:
            return _answer(hit)
        window = self.grep.output("rev-list", "--first-parent", f"--max-count={commits + 1}", self.sha).decode().split()
        reached_root = len(window) <= commits
        out = self.grep.output(
            "--literal-pathspecs",
            "log",
            "--first-parent",
            "--no-renames",
            "--diff-filter=D",
            "-n",
            "1",
            "--format=%H%x00%cI%x00%s",
            self.sha,
            *([] if reached_root else ["--not", window[commits]]),
            "--",
            path,
        )
        sha, date, subject = (out.decode("utf-8", "replace").strip().split("\0") + ["", "", ""])[:3]
        found = Deletion(sha, date, subject) if SHA_RE.fullmatch(sha) else None
        return _store(shard, key, HistoryAnswer(found, min(len(window), commits), reached_root))

    def deletions(self, names: list[str], commits: int = HISTORY_COMMITS) -> dict[str, HistoryAnswer]:
        """`deletion` for several names, all answered from one read of the window."""
        return {name: self.deletion(name, commits) for name in names}


def _answer(hit: dict) -> HistoryAnswer:
    gone = Deletion(*hit["deletion"]) if hit["deletion"] else None
    return HistoryAnswer(gone, int(hit["commits"]), bool(hit["root"]))


def _store(shard: cache.Shard, key: str, answer: HistoryAnswer) -> HistoryAnswer:
    found = answer.deletion
    shard.put(
        key,
        {
            "deletion": [found.sha, found.date, found.subject] if found else None,
            "commits": answer.commits,
            "root": answer.reached_root,
        },
    )
    return answer
