"""The stretches of a document's prose: sentences, list items' sentences and table rows, by section."""

from hypothesis import given
from hypothesis import strategies as st

from dshaudit.documents.stretches import outline

DOC = """\
# Setup

The loader reads `a.ts`. It then starts.

- first item, about `b`
- second item. With a second sentence.

| Name | What |
|---|---|
| `c` | a row |

## Later

```ts
const notProse = 1;
```

Last words.
"""


def _texts(text: str) -> list[tuple[int, str]]:
    o = outline(text)
    return [(s.section, text[s.start : s.end]) for s in o.stretches]


def test_sentences_items_and_rows_are_stretches_of_their_section():
    found = _texts(DOC)
    assert (0, "The loader reads `a.ts`.") in found
    assert (0, "It then starts.") in found
    assert (0, "- first item, about `b`") in found
    assert (0, "| `c` | a row |") in found
    assert (1, "Last words.") in found
    assert not any("notProse" in t for _, t in found)  # a fenced block is not prose


def test_headings_are_found_with_their_text():
    o = outline(DOC)
    assert [DOC[a:b] for a, b in o.headings] == ["Setup", "Later"]


def test_the_stretch_around_an_offset():
    o = outline(DOC)
    at = DOC.index("`b`")
    s = o.around(at)
    assert s is not None and DOC[s.start : s.end] == "- first item, about `b`"
    assert o.around(DOC.index("notProse")) is None


def test_front_matter_lines_are_skipped():
    text = "---\ntitle: x\n---\nOne sentence.\n"
    assert [text[s.start : s.end] for s in outline(text, 3).stretches] == ["One sentence."]
    assert not any("title" in text[s.start : s.end] for s in outline(text, 3).stretches)


_PROSE = st.lists(
    st.sampled_from(
        ["# H", "## Sub", "- item. Two.", "| a | `b` |", "Plain words here.", "", "```", "x = 1", "1. one"]
    ),
    max_size=25,
).map("\n".join)


@given(_PROSE)
def test_stretches_are_disjoint_ordered_and_inside_the_text(text):
    o = outline(text)
    last = 0
    for s in o.stretches:
        assert last <= s.start < s.end <= len(text)
        assert -1 <= s.section < len(o.headings)
        last = s.end
