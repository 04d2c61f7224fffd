"""What a run asked the clone whose answer can change, asked again in one go.

A commit, tree or blob never changes, but which commit a branch or tag names,
which commit an abbreviated SHA names, and whether the clone holds an object
at all can, with a fetch. `DshRepository` notes each such question it asks
with its answer; an outcome kept between runs (app/memo.py) holds only while
every one of them still has the same answer. They are asked again here through
one `git cat-file --batch-check`, without opening the clone otherwise.
"""

from __future__ import annotations

from collections.abc import Iterable

from dshaudit.core.errors import RepoError
from dshaudit.git import run

ASKED_REV = "rev"  # the commit a revision names (`rev-parse --verify`): its SHA, or ""
ASKED_TYPE = "type"  # what a full SHA names in the clone: commit, tag, tree, blob, or ""


def still_answered(git_dir: str, asked: Iterable[tuple[str, str, str]]) -> bool:
    """Whether each (question, name, answer) noted by a `DshRepository` of the clone at
    `git_dir` has the same answer now. A name with a newline is never asked again
    (it was never a question dshaudit asks): the answer counts as changed."""
    asked = list(asked)
    if not asked:
        return True
    if any("\n" in name for _, name, _ in asked):
        return False
    try:
        done = run.run(
            ["cat-file", "--batch-check=%(objectname) %(objecttype)"],
            git_dir,
            input="".join(f"{name}\n" for _, name, _ in asked).encode(),
        )
        out = done.output()
    except RepoError:
        return False
    lines = out.decode("utf-8", "replace").splitlines()
    if len(lines) != len(asked):
        return False
    for (question, _, answer), line in zip(asked, lines):
        # `SHA TYPE` when the name names an object; `NAME missing` or `NAME ambiguous` when not.
        fields = line.rsplit(" ", 1)
        found = len(fields) == 2 and fields[1] not in ("missing", "ambiguous")
        now = (fields[0] if question == ASKED_REV else fields[1]) if found else ""
        if now != answer:
            return False
    return True
