"""The model's dataclasses: `replaced`, the copy with some fields changed that the
language server makes of each citation and verdict at every keystroke."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dshaudit.core.model import Citation, LineRange, Pin, SourceLocation, Status, Verdict, replaced

CITATION = Citation("a/b.ts", (LineRange(3, 4),), None, None, ("start",), SourceLocation("f.md", 2, 5), "a/b.ts:3-4")
VERDICT = Verdict(CITATION, Pin("v1", "0" * 40), Status.OK, "holds")
PLACES = st.builds(SourceLocation, st.text(max_size=5), st.integers(0, 9), st.integers(0, 9))


@given(PLACES, st.sampled_from(["a/b.ts", "c.ts"]), st.tuples(st.text(max_size=3)))
def test_a_citation_replaced_is_the_one_dataclasses_builds(source, path, anchors):
    for changes in ({"source": source}, {"path": path, "anchors": anchors}, {}):
        ours, theirs = replaced(CITATION, **changes), dataclasses.replace(CITATION, **changes)
        assert ours == theirs and hash(ours) == hash(theirs) and repr(ours) == repr(theirs)
        assert ours is not CITATION
    assert CITATION.source == SourceLocation("f.md", 2, 5)  # the original is untouched


def test_a_verdict_replaced_keeps_its_other_fields():
    other = replaced(CITATION, source=SourceLocation("g.md", 9, 1))
    moved = replaced(VERDICT, citation=other)
    assert moved == dataclasses.replace(VERDICT, citation=other)
    assert (moved.status, moved.message, moved.citation.source.file) == (Status.OK, "holds", "g.md")


def test_a_field_the_dataclass_lacks_is_refused():
    with pytest.raises(TypeError, match="no field 'sourc'"):
        replaced(CITATION, sourc=SourceLocation("g.md", 1, 1))
