"""When a name, or a path, was deleted: a bounded search of the first-parent history.

History (`deletion`) is a bounded pickaxe on the first-parent path of the
index's commit: `git log -S` finds the commits that changed how often a name
occurs, and the newest whose first parent held it as a whole word is where it
went. A path's deletion is the newest commit that removed it. Both look back
over `HISTORY_COMMITS` commits at most, and their answers are cached.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from dshaudit.core.model import SHA_RE
from dshaudit.index.namegrep import CommitGrep
from dshaudit.index.namestore import VERSION
from dshaudit.platform import cache

# First-parent commits the history search looks back over, and the time it may take per run.
HISTORY_COMMITS = 200
HISTORY_BUDGET_SECONDS = 30.0
_HISTORY_SHAPE = cache.shaped({"deletion": ([str, str, str], type(None)), "commits": int, "root": bool})


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


class NameHistory:
    """Bounded history searches from one commit."""

    def __init__(self, grep: CommitGrep):
        self.grep = grep
        self.sha = grep.sha

    def deletion(self, name: str, commits: int = HISTORY_COMMITS) -> HistoryAnswer:
        """The first-parent commit, within `commits` of this one, after which
        `name` no longer occurs as a whole word; `deletion` is None when there is none.

        `git log -S` finds the commits that changed how often the string
        occurs; the newest one whose first parent held the name as a whole
        word is where it was deleted (a change to a longer name that contains
        it is passed over)."""

        def search(bound: list[str]) -> Deletion | None:
            out = self.grep.output(
                "log", "--first-parent", "-n", "3", "--format=%H%x00%cI%x00%s", f"-S{name}", self.sha, *bound, "--"
            )
            for record in out.decode("utf-8", "replace").splitlines():
                sha, date, subject = (record.split("\0") + ["", ""])[:3]
                if SHA_RE.fullmatch(sha) and self._had(name, sha):
                    return Deletion(sha, date, subject)
            return None

        return self._history(f"{self.sha} {commits} {name}", commits, search)

    def path_deletion(self, path: str, commits: int = HISTORY_COMMITS) -> HistoryAnswer:
        """The newest first-parent commit, within `commits` of this one, that removed
        `path` (a file, or a file under a folder of that name), a move counted as a
        removal; `deletion` is None when there is none. Cached as `deletion` is."""

        def search(bound: list[str]) -> Deletion | None:
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
                *bound,
                "--",
                path,
            )
            sha, date, subject = (out.decode("utf-8", "replace").strip().split("\0") + ["", "", ""])[:3]
            return Deletion(sha, date, subject) if SHA_RE.fullmatch(sha) else None

        return self._history(f"{self.sha} {commits} path {path}", commits, search)

    def _history(self, key: str, commits: int, search: Callable[[list[str]], Deletion | None]) -> HistoryAnswer:
        """A bounded history search's answer, cached under `key`: `search` gets the
        arguments that stop `git log` after `commits` first-parent commits."""
        shard = cache.current().shard("reference-history", VERSION, _HISTORY_SHAPE)
        hit = shard.get(key)
        if hit is not None:
            gone = Deletion(*hit["deletion"]) if hit["deletion"] else None
            return HistoryAnswer(gone, int(hit["commits"]), bool(hit["root"]))
        window = self.grep.output("rev-list", "--first-parent", f"--max-count={commits + 1}", self.sha).decode().split()
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
        return self.grep.status("grep", "-q", "-I", "-w", "-F", "-e", name, f"{sha}^1") == 0

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
