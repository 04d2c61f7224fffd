"""Fixtures shared by the unit tests: small git repositories, built from dicts of files.

The unit test folders are packages (each holds an `__init__.py`): this conftest is then
imported as `unit.conftest`, and does not take the place of tests/conftest.py, which
the test modules above import as `conftest`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from dshaudit.git.repository import DshRepository
from dshaudit.git.snapshot import Snapshot
from dshaudit.platform import cache
from fixture_repo import _commit, _write, git

# A commit's files: the text (or bytes) each path holds; None removes the path.
Files = dict[str, str | bytes | None]


@dataclass(frozen=True)
class Built:
    """A repository built for one test: its folder and its commits, oldest first."""

    root: Path
    shas: list[str]

    def repository(self) -> DshRepository:
        return DshRepository(self.root / ".git", "unit")

    def snapshot(self, commit: int = -1) -> Snapshot:
        """The tree of one commit (the newest by default)."""
        return self.repository().snapshot(self.shas[commit])


@pytest.fixture
def make_repo(tmp_path: Path) -> Callable[..., Built]:
    """Build a repository with one commit per dict of files (each commit on top of the one before).
    Commit i is dated day i+1 of August 2026, with the subject `commit i` unless `subjects` names one."""
    made = 0

    def build(*commits: Files, subjects: tuple[str, ...] = ()) -> Built:
        nonlocal made
        made += 1
        root = tmp_path / f"repo{made}"
        root.mkdir()
        git(root, "init", "-q", "-b", "main")
        shas = []
        for i, files in enumerate(commits):
            for rel, content in files.items():
                if content is None:
                    git(root, "rm", "-q", "-r", rel)
                else:
                    _write(root, rel, content)
            subject = subjects[i] if i < len(subjects) else f"commit {i}"
            shas.append(_commit(root, subject, f"2026-08-{i + 1:02d}T10:00:00Z", f"c{i}"))
        return Built(root, shas)

    return build


@pytest.fixture
def fresh_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A cache of this test's own, in its temporary folder, for the lookups that keep their answers there."""
    monkeypatch.setenv("DSHAUDIT_CACHE_DIR", str(tmp_path / "cache"))
    yield cache.begin()
    cache.end()
