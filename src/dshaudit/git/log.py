"""The first-parent history between two commits, as git lists it.

history and bisect walk git's first-parent path (the commits that landed on
the main line, for DSH merged pull requests): which commits are on it
(`first_parent_path`), what each changed (`read_steps`, one `git log --raw`
for all of them), and which changed a line matching a pattern (`Pickaxe`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

from dshaudit.core.errors import InputError, RepoError
from dshaudit.core.model import Pin
from dshaudit.git import run
from dshaudit.git.repository import DshRepository
from dshaudit.git.snapshot import Snapshot

_NO_BLOB = "0" * 40


@dataclass(frozen=True)
class Commit:
    sha: str
    date: str
    subject: str


_PULL_REQUEST_RE = re.compile(r"\(#(\d+)\)|\bpull request #(\d+)\b", re.IGNORECASE)


def pull_request(subject: str) -> int | None:
    """The pull request a commit subject names: `... (#123)` (a squash merge) or
    `Merge pull request #123 from ...` (a merge commit)."""
    m = _PULL_REQUEST_RE.search(subject)
    return int(m.group(1) or m.group(2)) if m else None


def is_ancestor(repository: DshRepository, older: str, newer: str) -> bool:
    """Whether `older` is an ancestor of `newer` (or the same commit); a RepoError when git cannot tell."""
    asked = run.run(["merge-base", "--is-ancestor", older, newer], repository.git_dir, env=run.C_LOCALE)
    if asked.returncode not in (0, 1):  # 1 is git's answer "no"; any other status is a failure to answer
        raise RepoError(f"cannot tell whether {older[:12]} is an ancestor of {newer[:12]}: {asked.reason}")
    return asked.returncode == 0


def first_parent_path(
    repository: DshRepository, good: str, bad: str, order: str = "bisect needs --good before --bad"
) -> list[str]:
    """The commits on the first-parent path after `good`, up to `bad` included, oldest first.
    An InputError when `good` is not an ancestor of `bad` (`order` says which option comes
    first); a RepoError when git cannot tell."""
    if not is_ancestor(repository, good, bad):
        raise InputError(f"{good[:12]} is not an ancestor of {bad[:12]}{_why_not(repository, good, bad)}: {order}")
    listed = run.run(
        ["rev-list", "--first-parent", "--reverse", f"{good}..{bad}"], repository.git_dir, env=run.C_LOCALE
    )
    if listed.returncode != 0:
        raise RepoError(f"cannot list the commits from {good[:12]} to {bad[:12]}: {listed.reason}")
    return [line for line in run.text(listed.stdout).splitlines() if line]


def _why_not(repository: DshRepository, good: str, bad: str) -> str:
    """Why `good` does not come before `bad`, in words: the two given the other way round,
    two commits that share no history (no swap helps), or lines that parted. Asked only
    once the range is refused, so a range in order costs nothing more."""
    if is_ancestor(repository, bad, good):
        return " (it comes after it: the two are the other way round)"
    base = run.run(["merge-base", good, bad], repository.git_dir, env=run.C_LOCALE)
    if base.returncode == 1:
        return " (the two commits share no history: no range joins them)"
    found = run.text(base.stdout).strip()
    return f" (the two lines of history part at {found[:12]})" if base.returncode == 0 and found else ""


def describe(repository: DshRepository, sha: str) -> Commit:
    """The commit's full SHA, committer date and subject."""
    done = run.run(["show", "-s", "--format=%H%x00%cI%x00%s", sha], repository.git_dir, env=run.C_LOCALE)
    if done.returncode != 0:
        raise RepoError(f"cannot read commit {sha[:12]}: {done.reason}")
    full, date, subject = run.text(done.stdout).split("\0", 2)
    return Commit(full, date, subject)


# -- what each commit changed ---------------------------------------------------------


@dataclass(frozen=True)
class Change:
    """One changed path of a commit, as `git log --raw` gives it."""

    status: str  # A, M, D, T or R (rename)
    old_path: str | None  # None when added
    new_path: str | None  # None when deleted
    old_blob: str | None
    new_blob: str | None
    new_mode: str = ""


@dataclass(frozen=True)
class Step:
    """One first-parent commit and what it changed against its first parent."""

    commit: Commit
    parent: str
    changes: tuple[Change, ...]

    def pin(self, last: Pin) -> Pin:
        """The commit as a pin: `last` when it is that commit (its name is kept), else one named by its SHA."""
        sha = self.commit.sha
        return last if sha == last.sha else Pin(sha[:12], sha, named=False)

    @cached_property
    def touched(self) -> frozenset[str]:
        """Every path the commit changed, on either side."""
        return frozenset(p for c in self.changes for p in (c.old_path, c.new_path) if p)

    @cached_property
    def old_side(self) -> frozenset[str]:
        """Paths of the parent that the commit changed, renamed or deleted."""
        return frozenset(c.old_path for c in self.changes if c.old_path)

    @cached_property
    def listed(self) -> frozenset[str]:
        """Paths added, deleted or renamed (either side): what changes the tree's listing, not only a file's text."""
        return frozenset(p for c in self.changes if c.status in "ADR" for p in (c.old_path, c.new_path) if p)

    def tree(self, parent: Snapshot) -> Snapshot:
        """The commit's tree, from its parent's and its changes, with no `git ls-tree`."""
        return parent.derive(
            self.commit.sha,
            sorted(self.old_side),
            [(c.new_path, c.new_mode, c.new_blob or "") for c in self.changes if c.new_path],
        )

    @cached_property
    def renames(self) -> dict[str, str]:
        return {c.old_path: c.new_path for c in self.changes if c.status == "R" and c.old_path and c.new_path}

    @cached_property
    def deleted(self) -> set[str]:
        return {c.old_path for c in self.changes if c.status == "D" and c.old_path}


def read_steps(repository: DshRepository, from_sha: str, to_sha: str) -> list[Step]:
    """Every first-parent commit after FROM up to TO, oldest first, with its
    changes: one `git log` for all of them (a few tens of milliseconds for DSH's
    77 commits from rc7 to rc2). It is not narrowed to the cited paths: a
    pathspec would hide where a cited file is renamed to."""
    shas = first_parent_path(repository, from_sha, to_sha, "history needs --from before --to")
    if not shas:
        return []
    out = run.output_text(
        [
            "log",
            "--first-parent",
            "--diff-merges=first-parent",
            "--reverse",
            "--raw",
            "-M",
            "-z",
            "--no-abbrev",
            "--no-color",
            "--format=%x01%H%x00%P%x00%cI%x00%s",
            f"{from_sha}..{to_sha}",
        ],
        repository.git_dir,
    )
    steps = [_parse_step(chunk) for chunk in out.split("\x01")[1:]]
    if [s.commit.sha for s in steps] != shas:
        raise RepoError(f"git log and git rev-list disagree on the first-parent path {from_sha[:12]}..{to_sha[:12]}")
    return steps


def _parse_step(chunk: str) -> Step:
    fields = chunk.split("\0")
    sha, parents, date, subject = fields[:4]
    changes = []
    rest = fields[4:]
    i = 0
    while i < len(rest):
        meta = rest[i].lstrip("\n")
        if not meta.startswith(":"):
            i += 1
            continue
        _, new_mode, old_blob, new_blob, status = meta[1:].split(" ")
        letter = status[0]
        old_id = None if old_blob == _NO_BLOB else old_blob
        new_id = None if new_blob == _NO_BLOB else new_blob
        if letter in "RC":
            old, new = rest[i + 1], rest[i + 2]
            i += 3
            if letter == "C":  # a copy leaves its source as it was: an addition
                changes.append(Change("A", None, new, None, new_id, new_mode))
                continue
            changes.append(Change("R", old, new, old_id, new_id, new_mode))
        else:
            path = rest[i + 1]
            i += 2
            changes.append(
                Change(
                    letter, None if letter == "A" else path, None if letter == "D" else path, old_id, new_id, new_mode
                )
            )
    return Step(Commit(sha, date, subject), parents.split()[0] if parents else "", tuple(changes))


# -- which commits changed a matching line ---------------------------------------------


class Pickaxe:
    """The first-parent commits whose diff adds or removes a line matching a
    pattern (`git log -G`), in the files of some globs: one git process for the
    whole range, started at once so that it runs while the walk does its own work.
    Renames are read as a deletion and an addition (`--no-renames`), so a file
    that moves with matching lines is found too; `--text` reads binary files as
    `git grep -a` does, and a textconv filter the configuration sets is not run."""

    def __init__(
        self,
        repository: DshRepository,
        from_sha: str,
        to_sha: str,
        pattern: str,
        ignore_case: bool,
        globs: tuple[str, ...],
        paths: list[str] | None = None,
    ):
        """`paths`: only these files (literal paths), when the caller knows that no other can
        hold a matching line; an empty list asks nothing of git. Else the files of `globs`."""
        self._commits: set[str] | None = None
        self._proc: run.Started | None = None
        if paths is not None and not paths:
            self._commits = set()
            return
        args = [
            "log",
            "--first-parent",
            "--diff-merges=first-parent",
            "-s",
            "--no-renames",
            "--text",
            "--no-textconv",  # the stored lines, which the searches it stands for grep
            "--format=%H",
            *(["-i"] if ignore_case else []),
            "-G",
            pattern,
            f"{from_sha}..{to_sha}",
            "--",
            *([f":(glob){g}" for g in globs] if paths is None else [f":(literal){p}" for p in paths]),
        ]
        self._proc = run.Started(args, repository.git_dir)

    def commits(self) -> set[str]:
        if self._commits is None and self._proc is not None:
            done = self._proc.finish()
            if done.returncode:
                raise RepoError(f"git log -G failed: {done.stderr.decode('utf-8', 'replace').strip()}")
            self._commits = set(done.stdout.decode().split())
        assert self._commits is not None
        return self._commits

    def close(self) -> None:
        """End git if its answer was not collected (`stop` does nothing once it was)."""
        if self._proc is not None:
            self._proc.stop()


# -- the versions of one file near a commit -----------------------------------------------


@dataclass(frozen=True)
class FileVersion:
    """The file as one first-parent commit near another left it."""

    commit: Commit
    blob: str
    distance: int  # first-parent commits from the one asked about: negative before it, positive after


def nearby_versions(repository: DshRepository, sha: str, path: str, reach: int) -> list[FileVersion]:
    """The versions of `path` that the first-parent commits within `reach` before and after `sha`
    made (after: on the first-parent line of the clone's HEAD), nearest first. A version is the
    file as the commit left it; one that deleted the file is left out."""
    out: list[FileVersion] = []
    for side, revs in ((-1, [f"-n{reach}", sha]), (1, ["--reverse", "--ancestry-path", f"{sha}..HEAD"])):
        line_of = _first_parent_positions(repository, revs, side, reach)
        listed = run.run(
            [
                "log",
                "--first-parent",
                "--no-renames",
                "--format=%x01%H%x00%cI%x00%s",
                "--raw",
                "--no-abbrev",
                *revs,
                "--",
                path,
            ],
            repository.git_dir,
            env=run.C_LOCALE,
        )
        if listed.returncode != 0:
            continue  # no HEAD, or `sha` not below it: nothing on that side
        for record in run.text(listed.stdout).split("\x01")[1:]:
            head, _, raw = record.partition("\n")
            full, date, subject = head.split("\0", 2)
            if full not in line_of:
                continue  # beyond the reach
            blobs = [ln.split()[3] for ln in raw.splitlines() if ln.startswith(":")]
            if blobs and blobs[0] != _NO_BLOB:
                out.append(FileVersion(Commit(full, date, subject), blobs[0], line_of[full]))
    return sorted(out, key=lambda v: (abs(v.distance), v.distance))


def _first_parent_positions(repository: DshRepository, revs: list[str], side: int, reach: int) -> dict[str, int]:
    """The first-parent commits `revs` names (at most `reach` past the start), each with its signed distance."""
    listed = run.run(["rev-list", "--first-parent", *revs], repository.git_dir, env=run.C_LOCALE)
    if listed.returncode != 0:
        return {}
    commits = [line for line in run.text(listed.stdout).splitlines() if line]
    if side > 0:
        commits = commits[:reach]
        return {c: i + 1 for i, c in enumerate(commits)}
    return {c: -i for i, c in enumerate(commits)}
