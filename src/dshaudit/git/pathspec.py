"""git's pathspecs, as dshaudit gives them to git and reads them itself.

A search names the files it reads by pathspecs (`packages/**`, `:!*.spec.ts`),
and git selects the files of a tree by them. Where dshaudit must know which
paths a pathspec selects without asking git (a list of changed files, the
paths of a commit of a walk), it selects them here by the same rules: those of
a pathspec with no magic, where a spec without wildcards names a file or a
folder, `*` and `?` cross `/`, and `:!` or `:^` exclude.
"""

from __future__ import annotations

import re
import string
from bisect import bisect_left
from collections.abc import Callable
from functools import lru_cache


def git_pathspecs(pathspecs: tuple[str, ...]) -> list[str]:
    """The pathspecs as git is given them: exclusions alone select nothing in git, so
    with only exclusions the rest of the tree is searched."""
    specs = list(pathspecs)
    if specs and all(p.startswith((":!", ":^")) for p in specs):
        specs.insert(0, ".")
    return specs


def select(paths: list[str], pathspecs: tuple[str, ...]) -> list[str]:
    """Those of `paths` (sorted) that git's default pathspec rules select, as `selected`
    says. Only the runs of `paths` that begin with an including spec's literal start
    are tested: a tree has thousands of files, and most specs name one folder."""
    chosen = selector(pathspecs)
    starts = {_literal_start(s) for s in pathspecs if not s.startswith((":!", ":^"))}
    if not starts or "" in starts:
        return [p for p in paths if chosen(p)]
    picked: set[str] = set()
    for start in starts:
        i = bisect_left(paths, start)
        while i < len(paths) and paths[i].startswith(start):
            if chosen(paths[i]):
                picked.add(paths[i])
            i += 1
    return sorted(picked)


def _literal_start(spec: str) -> str:
    """What every path a spec selects begins with: the spec up to its first wildcard."""
    return re.split(r"[*?[]", spec, maxsplit=1)[0] if any(c in spec for c in "*?[") else spec.rstrip("/")


def selected(path: str, pathspecs: tuple[str, ...]) -> bool:
    """Whether git's default pathspec rules select `path`: a spec without wildcards
    names a file or a folder; with them, `*` matches across `/`."""
    return selector(pathspecs)(path)


@lru_cache(maxsize=512)
def selector(pathspecs: tuple[str, ...]) -> Callable[[str], bool]:
    """`selected` for these pathspecs, compiled once (history asks about every changed
    path of every commit), as git's tree walk selects: a spec matches a path that is
    itself or lies under it, and one with wildcards also what it matches as a pattern
    (`_wildmatch`)."""

    def compiled(specs: list[str]) -> Callable[[str], object] | None:
        if not specs:
            return None
        parts = [
            re.escape(s.rstrip("/")) + r"(?:/.*)?\Z" + (f"|{_wildmatch(s)}" if any(c in s for c in "*?[") else "")
            for s in specs
        ]
        try:
            return re.compile("|".join(f"(?:{p})" for p in parts), re.DOTALL).match
        except re.error:  # patterns that cannot stand side by side in one expression: one at a time
            each = [re.compile(p, re.DOTALL).match for p in parts]
            return lambda path: any(m(path) for m in each)

    include = compiled([s for s in pathspecs if not s.startswith((":!", ":^"))])
    exclude = compiled([s[2:] for s in pathspecs if s.startswith((":!", ":^"))])
    return lambda path: (include is None or include(path) is not None) and (exclude is None or not exclude(path))


# The character classes git's wildmatch knows, as the ASCII characters each holds.
_CLASSES = {
    "alnum": string.ascii_letters + string.digits,
    "alpha": string.ascii_letters,
    "blank": " \t",
    "cntrl": "".join(map(chr, range(32))) + "\x7f",
    "digit": string.digits,
    "graph": string.printable[:94],
    "lower": string.ascii_lowercase,
    "print": string.printable[:95],
    "punct": string.punctuation,
    "space": " \t\n\r\x0b\x0c",
    "upper": string.ascii_uppercase,
    "xdigit": string.hexdigits,
}
_NOTHING = "(?!)"
_STAR = ".*"  # a `*` of the glob (told from the other parts by identity) until the pattern is put together


def _wildmatch(spec: str) -> str:
    """A pathspec's pattern as a regex, by the rules of git's wildmatch without
    WM_PATHNAME (a pathspec with no magic): `*` and `?` cross `/`; `[...]` is a class,
    negated by `!` or `^`, with ranges and `[:alpha:]`-style classes, `]` first is a
    member. A class never closed, or naming no class git knows, matches nothing
    (wildmatch gives up); fnmatch would read `[^a]` and `[[:digit:]]` otherwise."""
    out: list[str] = []
    i = 0
    while i < len(spec):
        c = spec[i]
        if c == "*":
            if not out or out[-1] is not _STAR:  # `**` is `*`: both cross `/`
                out.append(_STAR)
            i += 1
            continue
        if c == "?":
            out.append(".")
            i += 1
            continue
        if c != "[":
            out.append(re.escape(c))
            i += 1
            continue
        j = i + 1
        negated = j < len(spec) and spec[j] in "!^"
        j += negated
        members: list[str] = []
        first = True
        while j < len(spec) and (first or spec[j] != "]"):
            first = False
            if spec.startswith("[:", j) and (end := spec.find(":]", j + 2)) != -1 and "]" not in spec[j + 2 : end]:
                name = spec[j + 2 : end]
                if name not in _CLASSES:
                    return _NOTHING
                members += map(re.escape, _CLASSES[name])
                j = end + 2
            elif j + 2 < len(spec) and spec[j + 1] == "-" and spec[j + 2] != "]":
                if spec[j] <= spec[j + 2]:  # a range backwards holds nothing
                    members.append(f"{re.escape(spec[j])}-{re.escape(spec[j + 2])}")
                j += 3
            else:
                members.append(re.escape(spec[j]))
                j += 1
        if j >= len(spec):
            return _NOTHING  # `[` never closed
        if members:
            out.append(f"[{'^' if negated else ''}{''.join(members)}]")
        else:  # only backwards ranges: a class of nothing
            out.append("." if negated else _NOTHING)
        i = j + 1
    return _unbacktracked(out)


def _unbacktracked(parts: list[str]) -> str:
    """The pattern of `parts` (each matching one character, or `_STAR`) with each
    stretch between two stars matched at its first place after the one before, and
    never tried again (an atomic group): the first place is always as good as a later
    one, for every part matches one character. Written as plain `.*`, a glob of many
    stars (`*a*a*a…q`) makes the regex engine try every way of splitting a path
    among them, which for a few dozen stars is more than any run can wait for."""
    pieces: list[list[str]] = [[]]
    for part in parts:
        if part is _STAR:
            pieces.append([])
        else:
            pieces[-1].append(part)
    joined = ["".join(piece) for piece in pieces]
    if len(joined) == 1:
        return joined[0] + r"\Z"
    first, *middle, last = joined
    return first + "".join(f"(?>.*?{piece})" for piece in middle if piece) + ".*" + last + r"\Z"
