"""git grep over the tree of one commit: git scans every blob in C, faster
than Python reads the few it needs. (Searches of lines are search.py's.)"""

from __future__ import annotations

import git
from git.exc import GitCommandError

from .fileindex import FileIndex


class Grep:
    """git grep at one commit."""

    def __init__(self, repo: git.Repo, sha: str):
        self.repo = repo
        self.sha = sha

    def needles(self, needles: list[str], paths: list[str], blobs: dict[str, str] | None = None) -> dict[str, set[str]]:
        """Which of `needles` (fixed strings) occur in each of `paths`: one `git grep -o`,
        instead of reading every blob. The regular files whose blob ids are given
        (`blobs`) are listed in an index for git (`fileindex`); the rest are named
        as pathspecs, a process per thousand."""
        found: dict[str, set[str]] = {p: set() for p in paths}
        args = ["-o", "-z", "-a", "-F", "--no-color"] + [a for n in needles for a in ("-e", n)]
        prefix = self.sha + ":"
        listing = FileIndex.of(str(self.repo.git_dir), paths, blobs) if blobs else None
        runs: list[tuple[list[str], dict[str, str] | None]] = []
        if listing is not None:
            runs.append((["--cached"], listing.env))
            paths = listing.left_out
        runs += [([self.sha, "--", *(f":(literal){p}" for p in paths[i:i + 1000])], None)
                 for i in range(0, len(paths), 1000)]
        try:
            for named, env in runs:
                try:
                    out = self.repo.git.grep(*args, *named, env=env, strip_newline_in_stdout=False)
                except GitCommandError as exc:
                    if exc.status != 1 or exc.stderr:  # 1 means no match, unless git says why
                        raise
                    continue
                for record in out.split("\n"):
                    if record:
                        path, _, text = record.partition("\0")
                        path = path.removeprefix(prefix)
                        if path in found:
                            found[path].add(text)
        finally:
            if listing is not None:
                listing.close()
        return found
