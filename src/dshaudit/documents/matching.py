"""How the text of a document is matched against code.

A sentence about code shares words with the lines it is about: "the root
manifest is private" and `"private": true`; "the line that follows empties
the root fiber's disposables" and `this.fiber.disposables = []`. Identifiers
are split at their capitals and underscores, and both sides are stemmed
alike, so `MessageSourceMap` shares `source` and `map` with the prose
(`words_of`, `WordIndex`). Quoted text is compared without its whitespace
(`squash`: anchors), or with nothing but its letters and digits (`alnum`:
code quoted in prose).
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left
from collections.abc import Callable
from functools import lru_cache
from typing import Any

_PART_RE = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])")


_STOP = frozenset(
    """
    the and for are but not you all any can had her was one our out has him his how its may new now old
    see two way who did get let say she too use that with have this will your from they know want been
    good much some time very when come here just like long make many more only over such take than them
    well were what into also each which their there these those then other about after again being below
    between both does doing down during further once same should through under until while where whom why
    would could itself ever every because before above against within without upon whose nor off own yet
    line lines file files code cited cite citation text says said shows show here there thing things
    """.split()
)


def word_stem(word: str) -> str:
    """A crude stem, the same for prose and code: `services`, `service` and `Service` meet."""
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ing", "ed")) and len(word) > 5:
        word = word[:-3] if word.endswith("ing") else word[:-2]
        if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "lsz":
            word = word[:-1]  # `mapping`, `stopped`: the stem `map`, `stop`, as the code spells it
    elif word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        word = word[:-1]
    return word[:-1] if word.endswith("e") and len(word) > 3 else word


# A file's words repeat from line to line: each is stemmed once.
_stem_once = lru_cache(maxsize=1 << 16)(word_stem)


def words_of(text: str, stem: bool = True) -> list[str]:
    """The content words of a line of prose or code, in order, lowercase (and stemmed).
    The parts of each run of letters and digits are found over the whole text at once:
    a part never reaches past its run, since what ends a run ends a part too."""
    out = []
    for part in _PART_RE.findall(text):
        low = part.lower()
        if len(low) >= 3 and low not in _STOP:
            out.append(_stem_once(low) if stem else low)
    return out


class WordIndex:
    """Which lines of a file hold each word: built once per blob."""

    def __init__(self, lines: list[str]):
        self.size = len(lines)
        self.lines_of: dict[str, list[int]] = {}
        for i, ln in enumerate(lines, 1):
            for w in set(words_of(ln)):
                self.lines_of.setdefault(w, []).append(i)

    def without(self, lines: set[int]) -> WordIndex:
        """The same index with these lines (1-based) left out, as if they were blank."""
        if not lines:
            return self
        index = WordIndex([])
        index.size = self.size
        for word, at in self.lines_of.items():
            kept = [n for n in at if n not in lines]
            if kept:
                index.lines_of[word] = kept
        return index

    def weight(self, word: str) -> float:
        """How much finding the word on some lines says about them: rare words say more."""
        hits = len(self.lines_of.get(word, ()))
        return math.log((self.size + 1) / hits) if hits else 0.0

    def present(self, word: str, lo: int, hi: int) -> bool:
        hits = self.lines_of.get(word, ())
        k = bisect_left(hits, lo)
        return k < len(hits) and hits[k] <= hi


class WordIndexLater(WordIndex):
    """A WordIndex that `build` makes when it is first read: the suspect rules settle most
    versions of a file by the names on the cited lines, and never read its words."""

    def __init__(self, build: Callable[[], WordIndex]):  # the index itself is built on first read
        self._build = build

    def __getattr__(self, name: str) -> Any:
        # Asked only for what this object lacks: a built index's `size` and `lines_of`.
        if name not in ("size", "lines_of") or "_build" not in self.__dict__:
            raise AttributeError(name)
        built = self._build()
        self.size, self.lines_of = built.size, built.lines_of
        return getattr(self, name)


# -- text without what may differ ---------------------------------------------------------------

_ALNUM_RE = re.compile(r"[^0-9A-Za-z\u4e00-\u9fff]+")


def alnum(text: str) -> str:
    """Letters and digits only: quoted code survives lost backticks, quotes and spacing."""
    return _ALNUM_RE.sub("", text)


def squash(text: str) -> str:
    """Text with all whitespace removed: anchors compare this way."""
    return "".join(text.split())
