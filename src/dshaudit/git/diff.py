"""`git diff` between two pinned commits, parsed for `rebase` (which carries
citations across it with linemap.py)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from dshaudit.git import run

if TYPE_CHECKING:
    from dshaudit.git.repository import DshRepository


class Diff:
    """What changed between two commits, for the paths asked about: renames
    (git's rename detection) and each file's hunks, from one `git diff` each."""

    def __init__(
        self,
        repository: DshRepository,
        old_sha: str,
        new_sha: str,
        known: tuple[dict[str, str], set[str]] | None = None,
    ):
        """`known`: the renames and deletions, when the caller has them already
        (history reads every commit's from one `git log`); else one `git diff` finds them."""
        self.repository = repository
        self.old_sha, self.new_sha = old_sha, new_sha
        self._hunks: dict[tuple[str, str], str] = {}
        self.renames: dict[str, str] = {}
        self.deleted: set[str] = set()
        if known is not None:
            self.renames, self.deleted = known
            return
        out = run.output_text(["diff", "--name-status", "-M", "-z", old_sha, new_sha], repository.git_dir)
        fields = out.split("\0")
        i = 0
        while i < len(fields) and fields[i]:
            status = fields[i]
            if status.startswith(("R", "C")):
                if status.startswith("R"):
                    self.renames[fields[i + 1]] = fields[i + 2]
                i += 3
            else:
                if status == "D":
                    self.deleted.add(fields[i + 1])
                i += 2

    def patches(self, pairs: list[tuple[str, str]]) -> dict[tuple[str, str], str]:
        """Unified diffs (-U0) for (old path, new path) pairs, in one git call."""
        wanted = [p for p in pairs if p not in self._hunks]
        if wanted:
            paths = sorted({x for pair in wanted for x in pair})
            out = run.output_text(
                [
                    "diff",
                    "-U0",
                    "--histogram",
                    "-M",
                    "--no-color",
                    "--no-ext-diff",
                    "--no-textconv",  # the stored lines, not a filter's rendering of them
                    self.old_sha,
                    self.new_sha,
                    "--",
                    *paths,
                ],
                self.repository.git_dir,
                keep_newline=True,
            )
            sections = re.split(r"^diff --git .*$", out, flags=re.M)[1:]
            found = {}
            for section in sections:
                old = re.search(r"^--- (?:a/(.*)|/dev/null)$", section, re.M)
                new = re.search(r"^\+\+\+ (?:b/(.*)|/dev/null)$", section, re.M)
                if old and new:
                    found[(old.group(1), new.group(1))] = section
            for pair in wanted:
                self._hunks[pair] = found.get(pair, "")
        return {p: self._hunks[p] for p in pairs}
