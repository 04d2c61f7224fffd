"""Find the first commit where a citation stops holding or a fact's value changes.

The walk is git's first-parent path from GOOD to BAD (the commits that landed
on the main line), searched by halving: about log2(N) snapshots are read, not N.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .errors import InputError
from .model import Pin
from .snapshot import DshRepository


@dataclass(frozen=True)
class Commit:
    sha: str
    date: str
    subject: str


@dataclass(frozen=True)
class BisectResult:
    target: str
    good: Pin
    bad: Pin
    commits: int  # on the first-parent path, BAD included
    probes: int
    first: Commit | None  # None: nothing changed between GOOD and BAD
    before: str  # the observation at GOOD
    after: str  # the observation at the first changed commit


def first_parent_path(repository: DshRepository, good: str, bad: str) -> list[str]:
    git = repository.repo.git
    try:
        git.merge_base("--is-ancestor", good, bad)
    except Exception:
        raise InputError(f"{good[:12]} is not an ancestor of {bad[:12]}: bisect needs --good before --bad") from None
    out = git.rev_list("--first-parent", "--reverse", f"{good}..{bad}")
    return [line for line in out.splitlines() if line]


def describe(repository: DshRepository, sha: str) -> Commit:
    out = repository.repo.git.show("-s", "--format=%H%x00%cI%x00%s", sha)
    full, date, subject = out.split("\0", 2)
    return Commit(full, date, subject)


def bisect(repository: DshRepository, target: str, good: Pin, bad: Pin, observe: Callable[[Pin], str]) -> BisectResult:
    """`observe(pin)` returns what is watched at a commit (a status, a value);
    the answer is the first commit on the path whose observation differs from GOOD's."""
    path = first_parent_path(repository, good.sha, bad.sha)
    probes = 0

    def at(sha: str) -> str:
        nonlocal probes
        probes += 1
        return observe(Pin(sha[:12], sha))

    before = observe(good)
    after_bad = observe(bad)
    probes += 2
    if after_bad == before:
        return BisectResult(target, good, bad, len(path), probes, None, before, after_bad)
    lo, hi = -1, len(path) - 1  # path[hi] differs; path[lo] (or GOOD) is the same
    seen = {hi: after_bad}
    while hi - lo > 1:
        mid = (lo + hi) // 2
        seen[mid] = at(path[mid])
        if seen[mid] == before:
            lo = mid
        else:
            hi = mid
    return BisectResult(target, good, bad, len(path), probes, describe(repository, path[hi]), before, seen[hi])
