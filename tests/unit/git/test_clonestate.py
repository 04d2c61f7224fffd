"""The questions a run asked the clone, asked again: the same answers hold, a moved
ref or a fetched commit does not."""

from __future__ import annotations

from pathlib import Path

from dshaudit.git.clonestate import ASKED_REV, ASKED_TAGS, ASKED_TYPE, still_answered
from dshaudit.git.repository import DshRepository
from fixture_repo import bare_clone, commit_elsewhere, git


def asked(repository: DshRepository) -> list[tuple[str, str, str]]:
    return [(question, name, answer) for (question, name), answer in repository.asked.items()]


def test_the_same_answers_hold_until_a_ref_moves_or_a_commit_arrives(fixture_repo, tmp_path):
    clone = bare_clone(fixture_repo, tmp_path / "clone.git")
    work = tmp_path / "work"
    later = commit_elsewhere(fixture_repo, work, {"new.ts": "export const arrived = 1\n"})

    git(clone, "update-ref", "refs/heads/moving", fixture_repo.shas["v1"])
    repository = DshRepository(Path(clone), "the clone")
    assert repository.resolve_branch("moving") == fixture_repo.shas["v1"]
    assert repository.resolve_tag("v2") == fixture_repo.shas["v2"]
    assert repository.object_type(later) is None
    assert repository.object_type(fixture_repo.shas["v3"]) == "commit"
    questions = asked(repository)
    assert {q for q, _, _ in questions} == {ASKED_REV, ASKED_TYPE}
    assert still_answered(str(clone), questions)

    git(clone, "fetch", "-q", str(work), "later")
    assert not still_answered(str(clone), questions)  # the commit it lacked is there now
    without_it = [q for q in questions if q[1] != later]
    assert still_answered(str(clone), without_it)
    git(clone, "update-ref", "refs/heads/moving", fixture_repo.shas["v3"])
    assert not still_answered(str(clone), without_it)  # the branch names another commit
    repository.close()


def test_a_clone_that_is_gone_answers_nothing(tmp_path):
    assert still_answered(str(tmp_path / "gone"), [])
    assert not still_answered(str(tmp_path / "gone"), [(ASKED_TYPE, "a" * 40, "commit")])


def test_the_tags_on_a_commit_hold_until_one_is_added(fixture_repo, tmp_path):
    clone = bare_clone(fixture_repo, tmp_path / "clone.git")
    repository = DshRepository(Path(clone), "the clone")
    v2 = fixture_repo.shas["v2"]
    assert repository.tags_at(v2) == ["v2"]
    questions = asked(repository)
    assert questions == [(ASKED_TAGS, v2, "v2")] and still_answered(str(clone), questions)
    git(clone, "tag", "-a", "-m", "a release", "release-2", v2)  # annotated: it leads to v2 through its object
    assert not still_answered(str(clone), questions)
    assert DshRepository(Path(clone), "again").tags_at(v2) == ["release-2", "v2"]
    repository.close()
