"""Absence claims: the first places a text occurs at one commit, as a whole word.

A claim that a text occurs nowhere is refuted by its first few places
(`ABSENCE_PLACES`): paths that hold it first, then lines of file contents.
Smart case: a text with no capital letter is looked for in any case. A claim
made of word characters rides in the names pass (namepass.py); the others
share a `-F -i` pass of their own (`start`), each line sorted out afterwards;
a claim asked for alone is looked up by a grep stopped at its first places.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from itertools import accumulate, islice
from typing import TYPE_CHECKING

from dshaudit.index.namegrep import CommitGrep, Running
from dshaudit.index.namestore import ABSENCE_PLACES, NameStore
from dshaudit.index.words import any_case, whole_word

if TYPE_CHECKING:
    from dshaudit.git.snapshot import Snapshot


class Absences:
    """The places of absence claims at one commit."""

    def __init__(self, snapshot: Snapshot, grep: CommitGrep, store: NameStore):
        self.snapshot = snapshot
        self.sha = snapshot.sha
        self.grep = grep
        self.store = store
        self._joined: str | None = None  # every path, NUL between them
        self._lowered: str | None = None  # _joined in lower case, when it is ASCII
        self._starts: list[int] = []  # where each path begins in _joined

    def start(self, texts: list[str], files: list[str] | None) -> list[Running]:
        """One pass for several absence claims: case-insensitive when any of them is,
        each line sorted out by `whole_word` afterwards. The C locale makes git
        fold ASCII letters only, as Python's bytes patterns do."""
        fold = any(any_case(t) for t in texts)
        args = ["grep", "-n", "-z", "-I", *(["-i"] if fold else []), "-w", "-F", *[a for t in texts for a in ("-e", t)]]
        return self.grep.start(args, files, env={"LC_ALL": "C"})

    def lines(self, out: bytes, texts: list[str]) -> dict[str, list[tuple[str, int]]]:
        """The first lines of each claim in the output of `start` (in path order)."""
        patterns = {t: whole_word(t, any_case(t)) for t in texts}
        lines: dict[str, list[tuple[str, int]]] = {t: [] for t in texts}
        prefix = (self.sha + ":").encode()
        for record in out.split(b"\n"):
            path, _, rest = record.partition(b"\0")
            number, _, line = rest.partition(b"\0")
            if not number.isdigit():
                continue
            for t in texts:
                if len(lines[t]) < ABSENCE_PLACES and patterns[t].search(line):
                    lines[t].append((path.removeprefix(prefix).decode("utf-8", "replace"), int(number)))
        return lines

    def record(self, text: str, limit: int, lines: list[tuple[str, int]]) -> list[tuple[str, int]]:
        """Paths that hold the text first, then the first lines, up to `limit` places in all."""
        places: list[tuple[str, int]] = [(p, 0) for p in self.paths_holding(text, any_case(text), limit)]
        places += lines[: limit - len(places)]
        places.sort()
        self.store.put_absence(text, limit, places)
        return places

    def paths_holding(self, text: str, fold: bool, limit: int) -> list[str]:
        """The first `limit` paths (of files, links and submodules) that hold `text` as a
        whole word, in any case when `fold`. One search over them all, joined with NULs
        (no path holds one, and it is no word character), stopped once they are found
        (a common word is in thousands). The text is found first as a plain string, and
        the word's edges are tested only where it is: a pattern that starts with a
        look-behind is tried at every character, ten times as slow on DSH's paths."""
        word = re.compile(rf"(?<![A-Za-z0-9_]){re.escape(text)}(?![A-Za-z0-9_])", re.IGNORECASE if fold else 0)
        paths = self.snapshot.paths()
        if "\0" in text:
            return list(islice((p for p in paths if word.search(p)), limit))
        if self._joined is None:
            self._joined = "\0".join(paths)
            self._lowered = self._joined.lower() if self._joined.isascii() else None
            self._starts = list(accumulate((len(p) + 1 for p in paths[:-1]), initial=0))
        joined = self._joined
        if not fold:

            def find(pos: int) -> int:
                return joined.find(text, pos)
        elif self._lowered is not None and text.isascii():  # ASCII only: lower() folds as the pattern does
            lowered, needle = self._lowered, text.lower()

            def find(pos: int) -> int:
                return lowered.find(needle, pos)
        else:  # other letters may fold to ASCII ones (the Kelvin sign to k): the pattern's own folding
            literal = re.compile(re.escape(text), re.IGNORECASE)

            def find(pos: int) -> int:
                m = literal.search(joined, pos)
                return m.start() if m else -1

        held: dict[str, None] = {}
        at = find(0)
        while at >= 0 and len(held) < limit:
            if word.match(joined, at):
                held[paths[bisect_right(self._starts, at) - 1]] = None
            at = find(at + 1)
        return list(held)

    def first_lines(self, text: str, limit: int, fold: bool) -> list[tuple[str, int]]:
        """The first `limit` matching lines, stopping git once they are read."""
        args = ["grep", "-n", "-z", "-I", *(["-i"] if fold else []), "-w", "-F", "-e", text, self.sha]
        proc = self.grep.stream(args)
        places = []
        prefix = self.sha + ":"
        try:
            for raw in proc.stdout:
                path, _, rest = raw.decode("utf-8", "replace").partition("\0")
                line, _, _ = rest.partition("\0")
                if line.isdigit():
                    places.append((path.removeprefix(prefix), int(line)))
                if len(places) >= limit:
                    break
        finally:
            proc.stop()
        return places
