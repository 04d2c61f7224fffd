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
ASKED_TAGS = "tags"  # the tags on a commit: their names, sorted, joined by commas; or ""


def tags_by_commit(listing: bytes) -> dict[str, list[str]]:
    """The tags of the clone by the commit each leads to, from `git show-ref --tags -d`
    (an annotated tag's line `SHA refs/tags/NAME^{}` gives its commit), names sorted."""
    target: dict[str, str] = {}
    for line in listing.decode("utf-8", "replace").splitlines():
        sha, _, ref = line.partition(" ")
        name = ref.removeprefix("refs/tags/")
        if name.endswith("^{}"):
            target[name[:-3]] = sha  # peeled: the commit wins over the tag object's own id
        else:
            target.setdefault(name, sha)
    out: dict[str, list[str]] = {}
    for name, sha in sorted(target.items()):
        out.setdefault(sha, []).append(name)
    return out


def list_tags(git_dir: str) -> bytes:
    """`git show-ref --tags -d`: every tag and, for an annotated one, its commit (exit 1: no tags)."""
    return run.run(["show-ref", "--tags", "-d"], git_dir).output(ok=(0, 1))


def still_answered(git_dir: str, asked: Iterable[tuple[str, str, str]]) -> bool:
    """Whether each (question, name, answer) noted by a `DshRepository` of the clone at
    `git_dir` has the same answer now. A name with a newline is never asked again
    (it was never a question dshaudit asks): the answer counts as changed."""
    asked = list(asked)
    if any("\n" in name for _, name, _ in asked):
        return False
    tagged = [(name, answer) for question, name, answer in asked if question == ASKED_TAGS]
    if tagged:
        try:
            tags = tags_by_commit(list_tags(git_dir))
        except RepoError:
            return False
        if any(",".join(tags.get(name, [])) != answer for name, answer in tagged):
            return False
        asked = [a for a in asked if a[0] != ASKED_TAGS]
    if not asked:
        return True
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
