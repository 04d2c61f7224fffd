"""Numbers stated beside a file that a registered fact measures alone (checking/stated.py)."""

from hypothesis import given
from hypothesis import strategies as st

from dshaudit.checking.linked import _parse
from dshaudit.checking.stated import single_file_facts, stated_numbers
from dshaudit.documents.stretches import outline

FILES = single_file_facts(
    {
        "session.known-event-types": ("packages/core/session/src/known-event-types.ts",),
        "scale.typescript-files": ("**/*.ts",),
    }
)


def _stated(text: str) -> list[tuple[int, str]]:
    return [(s.value, s.fact_id) for s in stated_numbers(text, outline(text), (), FILES, "d.md")]


def test_only_facts_of_one_file_are_matched_by_a_file_beside_a_number():
    assert FILES == {"packages/core/session/src/known-event-types.ts": ["session.known-event-types"]}


def test_a_count_with_the_words_of_the_fact_beside_its_file_is_stated():
    assert _stated("It lists 45 in-repo event types (known-event-types.ts).\n") == [(45, "session.known-event-types")]


def test_numbers_of_other_things_versions_and_list_markers_say_nothing():
    assert _stated("It has 45 lines (known-event-types.ts).\n") == []  # other words
    assert _stated("1. event types are in known-event-types.ts\n") == []  # a list marker
    assert _stated("Since 0.45 event types moved to known-event-types.ts.\n") == []  # a version
    assert _stated("It lists 45 in-repo event types.\n\nSee known-event-types.ts.\n") == []  # not beside it


@given(st.text(alphabet="0123456789 .,-/%()abcdefghijklmnoptsy\n", max_size=80))
def test_any_number_found_is_written_in_the_text(body):
    text = body + " event types in known-event-types.ts\n"
    for value, _ in _stated(text):
        assert str(value) in text


def test_a_declaration_span_names_what_it_declares():
    assert _parse("class Session") == (None, "Session", True)
    assert _parse("export async function runTurn") == (None, "runTurn", True)
    assert _parse("Session.fork") == ("Session", "fork", False)
    assert _parse("append()") == (None, "append", False)
    assert _parse("ctx.session.append(event)") == ("session", "append", False)  # the member it calls
    assert _parse("ctx.session") is None  # a service of the context, not a member of a type
    assert _parse("turn/end") is None
