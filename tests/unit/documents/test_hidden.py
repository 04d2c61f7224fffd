"""Hidden characters: `hidden_in` asks only about the characters outside the runs it
knows to be visible, and must name the same ones as asking about every character."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from dshaudit.documents import grammar
from dshaudit.documents.grammar import hidden_character, hidden_in


def _asking_each(text: str) -> set[str]:
    return {ch for ch in set(text) if hidden_character(ch)}


# Characters from the blocks `hidden_in` knows, their edges and the hidden ones among them,
# and a few from elsewhere (emoji, a private-use character, Hangul's blank filler).
_EDGES = [c for low, high in grammar._MOSTLY_VISIBLE for c in (low - 1, low, high, high + 1)]
_CHARACTERS = st.one_of(
    st.sampled_from([chr(c) for c in _EDGES]),
    st.sampled_from(list("\u200b\u200d\u2028\u2029\u2060\u20d0\u302a\u3099\u00ad\u0300\ufeff\u3164\u2800\t\n\r ")),
    st.sampled_from(list("a中，。–“”→│ａ😀\ue000")),
    st.characters(),
)


@given(st.lists(_CHARACTERS, max_size=40).map("".join))
def test_the_hidden_characters_are_those_asking_about_each_character_finds(text):
    assert hidden_in(text) == _asking_each(text)


def test_a_hidden_character_inside_a_block_known_mostly_visible_is_named():
    # A combining mark among the CJK punctuation, a line separator among the general
    # punctuation, a zero-width space, a soft hyphen and a control among Latin, and a
    # combining mark among kana.
    for ch in "\u302a\u2028\u200b\u00ad\x85\u3099":
        assert any(low <= ord(ch) <= high for low, high in grammar._MOSTLY_VISIBLE)
        assert hidden_in(f"中文{ch}，abc") == {ch}


def test_a_page_of_visible_text_in_the_known_blocks_has_none():
    page = "Das ist gut — ünd “so” → 中文，标点。ｆｕｌｌ ｗｉｄｔｈ ひらがな カタカナ\n\t" * 50
    assert hidden_in(page) == set()
