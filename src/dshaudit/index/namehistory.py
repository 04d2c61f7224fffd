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

from dshaudit.core.errors import RepoError
from dshaudit.core.model import SHA_RE
from dshaudit.index.namegrep import CommitGrep
from dshaudit.index.namestore import VERSION
from dshaudit.platform import cache

# First-parent commits the history search looks back over.
HISTORY_COMMITS = 200
_HISTORY_SHAPE = cache.shaped({"deletion": ([str, str, str], type(None)), "commits": int, "root": bool})
_HUNK = re.compile(rb"@@ -\d+(?:,(\d+))? ")
_HEADER = b"\0\0"  # starts the line of a commit in the log: no line of a text patch holds a NUL


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
        word = re.compile(rb"(?<![A-Za-z0-9_])" + re.escape(needle) + rb"(?![A-Za-z0-9_])")
        for commit, removed in self.commits:
            if needle in removed and word.search(removed):
                return commit
        return None


def _removed_lines(grep: CommitGrep, commits: int) -> _Removed:
    """The window of `commits` first-parent commits up to the grep's commit, read in one
    `git log -p -U0`: for each commit, the lines its patch removes (a hunk `@@ -a,N`
    removes N lines), and whether the window reaches the first commit."""
    proc = grep.stream(
        [
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
            grep.sha,
            "--",
        ]
    )
    window: list[tuple[Deletion, list[bytes]]] = []
    parents = ""
    pending = 0  # lines still to come of the removed side of a hunk
    try:
        for line in proc.stdout:
            if pending:
                if line[:1] == b"-":
                    window[-1][1].append(line[1:])
                    pending -= 1
                    continue
                if line[:1] == b"\\":  # "\ No newline at end of file"
                    continue
                pending = 0
            if line.startswith(b"@@ -") and window:
                hunk = _HUNK.match(line)
                pending = 1 if hunk is None or hunk[1] is None else int(hunk[1])
            elif line.startswith(_HEADER):
                fields = line[len(_HEADER) :].rstrip(b"\n").decode("utf-8", "replace").split("\0")
                sha, date, parents, subject = (fields + [""] * 4)[:4]
                if SHA_RE.fullmatch(sha):
                    window.append((Deletion(sha, date, subject), []))
    finally:
        status = proc.wait()
    if status != 0:
        raise RepoError(f"git log -p failed at {grep.sha[:12]} (exit {status})")
    return _Removed([(c, b"".join(lines)) for c, lines in window], len(window) < commits or not parents.strip())


class NameHistory:
    """Bounded history searches from one commit."""

    def __init__(self, grep: CommitGrep):
        self.grep = grep
        self.sha = grep.sha
        self._windows: dict[int, _Removed] = {}

    def deletion(self, name: str, commits: int = HISTORY_COMMITS) -> HistoryAnswer:
        """The first-parent commit, within `commits` of this one, after which
        `name` no longer occurs as a whole word; `deletion` is None when there is none.
        A name that still occurs is answered as one that was never deleted."""
        shard = cache.current().shard("reference-history", VERSION, _HISTORY_SHAPE)
        key = f"{self.sha} {commits} {name}"
        hit = shard.get(key)
        if hit is not None:
            return _answer(hit)
        if commits not in self._windows:
            self._windows[commits] = _removed_lines(self.grep, commits)
        window = self._windows[commits]
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
