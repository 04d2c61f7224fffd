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
_HEADER = re.compile(b"^" + _HEADER_BYTES, re.MULTILINE)
# With -U0 a hunk is its header, the lines it removes (`-`), then those it adds (`+`).
_REMOVED = re.compile(rb"^@@ -[0-9]+(?:,[0-9]+)? \+[0-9]+(?:,[0-9]+)? @@[^\n]*\n((?:[-\\][^\n]*\n)*)", re.MULTILINE)
_MARKER = re.compile(rb"^\\[^\n]*\n", re.MULTILINE)  # "\ No newline at end of file": git's line, not the file's


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
    """The lines each commit of a window removed from its first parent's tree, newest commit first."""

    commits: list[tuple[Deletion, bytes]]
    reached_root: bool

    def deletion(self, name: str) -> Deletion | None:
        needle = name.encode()
        word = None  # compiled only for a name some commit removed as text, not for every name asked
        for commit, removed in self.commits:
            if needle in removed:
                word = word or re.compile(rb"(?<![A-Za-z0-9_])" + re.escape(needle) + rb"(?![A-Za-z0-9_])")
                if word.search(removed):
                    return commit
        return None


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
    """The window `_window_log` wrote: for each commit, the lines its patch removes (with
    -U0, those after a hunk's header that start with `-`), and whether the window reaches
    the first commit."""
    window: list[tuple[Deletion, bytes]] = []
    parents = ""
    # Each commit's part read where it lies in the log, none copied out of it: the log of
    # 200 commits can run to tens of megabytes.
    starts = [m.end() for m in _HEADER.finditer(log)]
    for start, end in zip(starts, [*(s - len(_HEADER_BYTES) for s in starts[1:]), len(log)]):
        line_end = log.find(b"\n", start, end)
        line_end = end if line_end < 0 else line_end
        head = log[start:line_end].decode("utf-8", "replace")
        sha, date, parents, subject = (head.split("\0") + [""] * 4)[:4]
        if not SHA_RE.fullmatch(sha):
            continue
        removed = b"".join(m[1] for m in _REMOVED.finditer(log, line_end, end))
        if b"\n\\" in removed or removed.startswith(b"\\"):
            removed = _MARKER.sub(b"", removed)
        window.append((Deletion(sha, date, subject), removed))
    return _Removed(window, len(window) < commits or not parents.strip())


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
