"""The line mapper, by properties: whatever the edit, a mapped line holds the
same text it held, and no deleted or edited line is ever said to be unchanged."""

from __future__ import annotations

import difflib

from hypothesis import given, settings
from hypothesis import strategies as st

from dshaudit.git.linemap import Hunk, LineMapper, parse_hunks


def hunks_of(old: list[str], new: list[str]) -> list[Hunk]:
    """Unified-diff hunks with zero context, numbered as `git diff -U0` numbers them."""
    out = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        out.append(Hunk(i1 + 1 if i2 > i1 else i1, i2 - i1, j1 + 1 if j2 > j1 else j1, j2 - j1))
    return out


def test_parse_hunks_from_git_output():
    text = "@@ -3 +3 @@\n-a\n+b\n@@ -10,0 +11,2 @@\n+x\n+y\n@@ -20,3 +22,0 @@\n"
    assert parse_hunks(text) == [Hunk(3, 1, 3, 1), Hunk(10, 0, 11, 2), Hunk(20, 3, 22, 0)]


@given(st.integers(1, 500))
def test_empty_diff_is_identity(line):
    m = LineMapper([]).map(line)
    assert (m.line, m.hunk) == (line, None)


@given(st.lists(st.integers(0, 9), min_size=1, max_size=40), st.integers(0, 40), st.integers(1, 8))
def test_pure_insertion_shifts_exactly(lines, at, count):
    at = min(at, len(lines))
    old = [f"old {i}" for i in range(len(lines))]
    new = old[:at] + [f"new {i}" for i in range(count)] + old[at:]
    mapper = LineMapper(hunks_of(old, new))
    for n in range(1, len(old) + 1):
        expected = n if n <= at else n + count
        assert mapper.map(n).line == expected


@given(st.integers(1, 40), st.integers(0, 39), st.integers(1, 8))
def test_pure_deletion_shifts_exactly(length, at, count):
    old = [f"line {i}" for i in range(length)]
    at = min(at, length - 1)
    count = min(count, length - at)
    new = old[:at] + old[at + count :]
    mapper = LineMapper(hunks_of(old, new))
    for n in range(1, length + 1):
        m = mapper.map(n)
        if at < n <= at + count:
            assert m.line is None and m.hunk is not None  # deleted: never unchanged
        else:
            assert m.line == (n if n <= at else n - count)


edit = st.tuples(st.sampled_from(["insert", "delete", "replace"]), st.integers(0, 60), st.integers(1, 5))


@settings(max_examples=300)
@given(st.integers(1, 60), st.lists(edit, max_size=8))
def test_random_edit_scripts_never_map_into_other_text(length, script):
    old = [f"line {i}" for i in range(length)]
    new = list(old)
    fresh = 0
    for kind, at, count in script:
        at = min(at, len(new))
        if kind == "insert":
            new[at:at] = [f"inserted {fresh + k}" for k in range(count)]
        elif kind == "delete":
            del new[at : at + count]
        else:
            new[at : at + count] = [f"replaced {fresh + k}" for k in range(count)]
        fresh += count
    mapper = LineMapper(hunks_of(old, new))
    surviving = set(new)
    for n, text in enumerate(old, start=1):
        m = mapper.map(n)
        if m.line is not None:
            # A mapped line lands on the very same text, never on inserted text.
            assert 1 <= m.line <= len(new) and new[m.line - 1] == text
        if text not in surviving:
            # A deleted or replaced line is never reported unchanged.
            assert m.line is None


@given(st.integers(1, 30), st.integers(0, 29))
def test_map_range_refuses_ranges_with_insertions_inside(length, at):
    old = [f"l{i}" for i in range(length)]
    at = min(at, length)
    new = old[:at] + ["wedge"] + old[at:]
    mapper = LineMapper(hunks_of(old, new))
    for start in range(1, length + 1):
        for end in range(start, length + 1):
            got = mapper.map_range(start, end)
            if start <= at < end:
                assert got is None  # the inserted line would sit inside the citation
            else:
                assert got is not None and new[got[0] - 1 : got[1]] == old[start - 1 : end]
