"""git grep over the tree of one commit: git scans every blob in C, faster
than Python reads the few it needs. (Searches of lines are search.py's.)"""

from __future__ import annotations

import git
from git.exc import GitCommandError


class Grep:
    """git grep at one commit."""

    def __init__(self, repo: git.Repo, sha: str):
        self.repo = repo
        self.sha = sha

    def needles(self, needles: list[str], paths: list[str]) -> dict[str, set[str]]:
        """Which of `needles` (fixed strings) occur in each of `paths`: one
        `git grep -o` per thousand paths, instead of reading every blob."""
        found: dict[str, set[str]] = {p: set() for p in paths}
        args = ["-o", "-z", "-a", "-F", "--no-color"] + [a for n in needles for a in ("-e", n)]
        prefix = self.sha + ":"
        for i in range(0, len(paths), 1000):
            specs = [f":(literal){p}" for p in paths[i:i + 1000]]
            try:
                out = self.repo.git.grep(*args, self.sha, "--", *specs, strip_newline_in_stdout=False)
            except GitCommandError as exc:
                if exc.status != 1:  # 1 means no match
                    raise
                continue
            for record in out.split("\n"):
                if record:
                    path, _, text = record.partition("\0")
                    path = path.removeprefix(prefix)
                    if path in found:
                        found[path].add(text)
        return found
