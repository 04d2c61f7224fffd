"""git grep over the tree of one commit: git scans every blob in C, faster
than Python reads the few it needs.

Line searches can be started early, their output going to a temporary file,
so they run while other work goes on; `lines()` collects them.
"""

from __future__ import annotations

import subprocess
import tempfile

import git
from git.exc import GitCommandError

from .errors import RepoError


class Grep:
    """git grep at one commit, each search run at most once."""

    def __init__(self, repo: git.Repo, sha: str):
        self.repo = repo
        self.sha = sha
        self._running: dict[tuple, tuple] = {}  # started git grep processes and their output files
        self._hits: dict[tuple, list] = {}

    def start(self, pattern: str, word: bool = False, ignore_case: bool = False, within: tuple[str, ...] = ()) -> None:
        """Start `git grep` for an extended regex now; lines() collects it.
        `within` narrows the search to git pathspecs (the caller's own filter
        stays the authority: they only spare git the files it would drop)."""
        key = (pattern, word, ignore_case, within)
        if key in self._running or key in self._hits:
            return
        args = ["-n", "-z", "-a", "-E"] + (["-w"] if word else []) + (["-i"] if ignore_case else [])
        out = tempfile.TemporaryFile()
        proc = subprocess.Popen(
            ["git", f"--git-dir={self.repo.git_dir}", "grep", *args, "-e", pattern, self.sha,
             *(["--", *within] if within else [])],
            stdout=out, stderr=subprocess.PIPE,
        )
        self._running[key] = (proc, out)

    def lines(self, pattern: str, word: bool = False, ignore_case: bool = False,
              within: tuple[str, ...] = ()) -> list[tuple[str, int, str]]:
        """(path, line, text) for each line matching an extended regex, in every file (or those `within`)."""
        key = (pattern, word, ignore_case, within)
        if key in self._hits:
            return self._hits[key]
        self.start(pattern, word, ignore_case, within)
        proc, out = self._running.pop(key)
        err = proc.communicate()[1]
        if proc.returncode not in (0, 1):  # 1 means no match
            raise RepoError(f"git grep failed at {self.sha[:12]}: {err.decode(errors='replace').strip()}")
        out.seek(0)
        data = out.read().decode("utf-8", "replace")
        out.close()
        hits = []
        prefix = self.sha + ":"
        for record in data.split("\n"):
            if not record:
                continue
            path, line, text = record.split("\0", 2)
            hits.append((path.removeprefix(prefix), int(line), text))
        self._hits[key] = hits
        return hits

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
