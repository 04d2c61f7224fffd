"""git at the commit of a name index: greps of its whole tree or of some of its files,
started in the background, and the other git calls the index makes, counted.

A grep of some files names them as literal pathspecs, a process per chunk of
them, so that no path is read as a pattern and no command line grows past what
a system allows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dshaudit.git import run
from dshaudit.git.grep import greps_with_perl

if TYPE_CHECKING:
    from dshaudit.git.snapshot import Snapshot

PATHSPEC_CHARS = 100_000  # characters of paths on one git command line


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


class Running:
    """A git process (a grep, a log) started now, its output spooled to a temporary file;
    `output` waits for it."""

    def __init__(self, git_dir: str, args: list[str], env: dict[str, str] | None = None):
        self.proc = run.Started(args, git_dir, env=env or {}, spool=True)

    def output(self, sha: str) -> bytes:
        # 1: nothing matched, unless git says why (a blob it could not read).
        return self.proc.finish().output(no_match_ok=True, commit=sha)

    def stop(self) -> None:
        self.proc.stop()


class CommitGrep:
    """git at one commit of a clone, for a name index; `calls` counts the processes
    it started (for tests and the benchmark)."""

    def __init__(self, snapshot: Snapshot):
        self.snapshot = snapshot
        self.git_dir = snapshot.repository.git_dir
        self.sha = snapshot.sha
        self.calls = 0

    def output(self, *args: str, input: bytes | None = None) -> bytes:
        """What git writes, run to its end; exit 1 is an answer (no match, nothing found).
        `input`: git's standard input (patterns given with `-f -`)."""
        self.calls += 1
        return run.run(args, self.git_dir, input=input).output(ok=(0, 1), commit=self.sha)

    def status(self, *args: str) -> int:
        """git's exit code alone (`git grep -q`)."""
        self.calls += 1
        return run.run(args, self.git_dir).returncode

    def begin(self, args: list[str]) -> Running:
        """git started now, its output spooled; `Running.output` waits for it."""
        self.calls += 1
        return Running(self.git_dir, args)

    def stream(self, args: list[str]) -> run.Started:
        """git started, its output read as it comes (and git stopped once the caller has enough)."""
        self.calls += 1
        return run.Started(args, self.git_dir, stderr=False)

    def start(self, args: list[str], files: list[str] | None, env: dict[str, str] | None = None) -> list[Running]:
        """`git grep ARGS SHA`, over the whole tree or only `files`, named as literal
        pathspecs (a process per chunk of them)."""
        if files is None:
            self.calls += 1
            return [Running(self.git_dir, [*args, self.sha], env)]
        runs = []
        for chunk in _pathspec_chunks(files):
            self.calls += 1
            runs.append(Running(self.git_dir, ["--literal-pathspecs", *args, self.sha, "--", *chunk], env))
        return runs

    def perl(self) -> bool:
        """Whether this git greps with Perl regexes (`-P`, built with PCRE2), asked once per clone."""
        return greps_with_perl(self.git_dir)
