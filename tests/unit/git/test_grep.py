"""`Grep.needles`: which fixed strings each file holds, from one `git grep -o`,
equal to looking in the file itself, overlapping needles included; and
`Grep.files_holding`, the same with Perl regexes as with extended ones."""

from __future__ import annotations

import re
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from dshaudit.git import grep
from dshaudit.git.grep import _hiding
from dshaudit.git.repository import DshRepository
from dshaudit.git.snapshot import Snapshot
from fixture_repo import _commit, _write, git

T = TypeVar("T")


def _in_files(texts: list[str], ask: Callable[[Snapshot], T]) -> T:
    """`ask` of the one commit of a new repository whose files f0.txt, f1.txt, ... hold `texts`."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        git(root, "init", "-q", "-b", "main")
        for i, text in enumerate(texts):
            _write(root, f"f{i}.txt", text)
        sha = _commit(root, "c", "2026-08-01T10:00:00Z", "c")
        repository = DshRepository.open(str(root), "unused")
        try:
            return ask(repository.snapshot(sha))
        finally:
            repository.close()


# Few letters, so that needles overlap and hide one another often.
_needles = st.sets(st.text("abc", min_size=1, max_size=4), min_size=1, max_size=5).map(sorted)
_files = st.lists(st.text("abc-\n", max_size=40), min_size=1, max_size=8)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(needles=_needles, texts=_files)
@example(needles=["hasOwn", "maxDepth"], texts=["const x = maxDepthasOwn\n", "maxDepth hasOwn\n", "none\n"])
@example(needles=["ab", "b", "bc"], texts=["abc\n", "ab\n", "xbcx\n"])
def test_the_needles_git_reports_are_those_each_file_holds(needles, texts):
    found = _in_files(texts, lambda snap: snap.grep.needles(needles, sorted(snap.blob_ids())))
    hiding = _hiding(needles)
    for i, text in enumerate(texts):
        held = {n for n in needles if n in text}
        answer = found[f"f{i}.txt"]
        if answer is None:  # the caller reads this file: only where a match may hide a needle
            assert held & hiding, (text, needles)
        else:
            assert answer == held, (text, needles)


def test_needles_that_cannot_hide_one_another_are_never_read_again():
    """`"snapshot"` contains no start of `'snapshot'` past its first letter, nor the
    other way: git's matches say everything, and no file is read to learn more."""
    assert _hiding(["'snapshot'", '"snapshot"', "constructor", "surfaceOp"]) == set()
    assert _hiding(["maxDepth", "hasOwn"]) == {"maxDepth"}
    assert _hiding(["ab", "b"]) == set()  # `b` inside a match of `ab` is read from the match


# Lines with every character extended and Perl regexes give a meaning to, and runs of spaces.
_lines = st.text("ab .[]()*+?{}|^$\\`'#=", min_size=1, max_size=12).filter(lambda t: t.split())
_texts = st.lists(st.text("ab .[]()*+?{}|^$\\`'#=\n", max_size=30), min_size=1, max_size=5)


@pytest.mark.parametrize("perl", [True, False], ids=["perl", "extended"])
@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(lines=st.lists(_lines, min_size=1, max_size=3), texts=_texts)
@example(lines=["a.b", "(a|b)+"], texts=["aab\n", "ab\n", "(a|b)+\n"])
@example(lines=["db.exec(`PRAGMA x = ${ID}`)"], texts=["db.exec(`PRAGMA  x=${ID}`)\n", "db.exec(PRAGMA x = ID)\n"])
def test_files_holding_finds_the_lines_their_spacing_aside(perl, monkeypatch, lines, texts):
    """A file holds a line when some line of it reads as the line with its runs of spaces
    made any run, or none; git's answer with either syntax is what Python reads."""
    monkeypatch.setattr(grep, "greps_with_perl", lambda git_dir: perl)
    found = _in_files(texts, lambda snap: snap.grep.files_holding(lines))
    spaced = [re.compile(r"\s*".join(map(re.escape, line.split()))) for line in lines]
    held = sorted(
        f"f{i}.txt" for i, text in enumerate(texts) if any(p.search(row) for p in spaced for row in text.split("\n"))
    )
    assert found == held, (lines, texts)
