"""Our own clone of an upstream (`clone_bare`, `DshRepository.cached_clone`) and the
fetch into it of a commit it lacks (`fetch_missing`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from dshaudit.core.errors import RepoError
from dshaudit.git.repository import DshRepository, clone_bare
from fixture_repo import _commit, _write, git


@pytest.fixture
def upstream(make_repo):
    """Two commits on main, tagged c0 and c1, and a tag `loose` on a commit no branch holds."""
    built = make_repo({"a.txt": "a\n"}, {"a.txt": "b\n"})
    git(built.root, "checkout", "-q", "--detach")
    _write(built.root, "loose.txt", "loose\n")
    loose = _commit(built.root, "loose", "2026-08-09T10:00:00Z", "loose")
    git(built.root, "checkout", "-q", "main")
    return built.root, built.shas, loose


def _refs(git_dir: Path) -> list[str]:
    return git(git_dir, "for-each-ref", "--format=%(refname)").split()


def test_a_bare_clone_holds_the_branches_and_every_tag(upstream, tmp_path):
    root, shas, loose = upstream
    clone = tmp_path / "clone.git"
    clone_bare(f"file://{root}", clone)
    assert _refs(clone) == ["refs/heads/main", "refs/tags/c0", "refs/tags/c1", "refs/tags/loose"]
    assert git(clone, "rev-parse", "--is-bare-repository") == "true"
    assert git(clone, "config", "remote.origin.tagOpt") == "--no-tags"
    repository = DshRepository(clone, "clone")
    assert repository.resolve_tag("loose") == loose and repository.has_commit(shas[1])


def test_a_clone_git_refuses_is_a_repo_error_in_gits_words(tmp_path):
    url = f"file://{tmp_path}/none"
    with pytest.raises(RepoError) as raised:
        clone_bare(url, tmp_path / "clone.git")
    assert str(raised.value) == f"{url}: cannot clone: fatal: '{tmp_path}/none' does not appear to be a git repository"


def test_a_cached_clone_fetches_a_commit_it_lacks(upstream, tmp_path, monkeypatch):
    root, shas, _ = upstream
    monkeypatch.setenv("DSHAUDIT_CACHE_DIR", str(tmp_path / "cache"))
    url = f"file://{root}"
    repository = DshRepository.cached_clone(url)
    _write(root, "a.txt", "c\n")
    later = _commit(root, "later", "2026-08-10T10:00:00Z", "later")
    assert not repository.has_commit(later)
    assert repository.snapshot(later).sha == later
    assert "refs/tags/later" in _refs(Path(repository.git_dir))
    with pytest.raises(RepoError, match=f"^{url}: cannot fetch commit 2{{40}}: fatal: "):
        repository.fetch_missing("2" * 40)
