"""Whole words and smart case: how the name index tells an occurrence.

A name occurs where it is a whole word in git grep's sense (`-w`): the
character before it and the one after it, where there are any, are not ASCII
letters, digits or `_`. An absence claim with no capital letter holds in any
case (smart case), one with a capital exactly as written.
"""

from __future__ import annotations

import re

WORD_RE = re.compile(r"[A-Za-z0-9_]+")  # a run of word characters


def any_case(text: str) -> bool:
    """Smart case: an absence claim with no capital letter holds in any case."""
    return text == text.lower()


def any_case_ere(text: str) -> str:
    """A claim made of word characters, as an extended regex matching it in any
    (ASCII) case, or exactly when it has a capital letter (smart case)."""
    if not any_case(text):
        return text
    return "".join(f"[{c}{c.upper()}]" if c.isalpha() and c.isascii() else c for c in text)


def is_word(name: str) -> bool:
    return WORD_RE.fullmatch(name) is not None


def first_word(name: str) -> str:
    """The word a name begins with (`dsh` of `dsh-base`); empty when it begins with another character."""
    m = WORD_RE.match(name)
    return m.group() if m else ""


def whole_word(text: str, fold: bool) -> re.Pattern[bytes]:
    """git grep's `-w` on one line's bytes; `fold` is `-i` in the C locale (ASCII letters only)."""
    return re.compile(
        rb"(?<![A-Za-z0-9_])" + re.escape(text.encode("utf-8")) + rb"(?![A-Za-z0-9_])", re.IGNORECASE if fold else 0
    )
