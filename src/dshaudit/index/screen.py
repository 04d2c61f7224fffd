"""Screens: which files may hold a match of a search, decided without running it.

Every line a search can match holds one of the search's `literals` (a fixed
string, a word of an alternation, a pattern's plain beginning), so a file
without any of them holds no match, and git need not grep it. `may_match`
screens a file's bytes, `screened` many blobs read once for every search that
wants them, and `grep_screened` lets git read the files instead, printing the
lines that hold a literal. A screen only says where a match cannot be: git
decides what matches. For searches of plain words, `line_test` decides for a
line as git would.
"""

from __future__ import annotations

import os
import re
import string
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from dshaudit.documents.searches import BRE_META, Search
from dshaudit.git import run

_ERE_META = set(".[]()*+?{}^$\\|")


def literals(search: Search) -> tuple[bytes, ...] | None:
    """Strings one of which every line the search matches holds (lower case under -i),
    when the pattern shows them plainly: a fixed string, an alternation of plain
    words, or a pattern's plain beginning. None when it does not: then any file may
    match. A screen only, for `may_match`; git decides what matches."""
    pattern = search.pattern
    if pattern is None or "\n" in pattern or ("-i" in search.flags and not pattern.isascii()):
        return None
    if "-F" in search.flags:
        found = [pattern]
    else:
        meta = _ERE_META if "-E" in search.flags else BRE_META
        if "-E" in search.flags and "|" in pattern:
            grouped = _bars_inside_groups(pattern)
            if grouped is None:
                return None
        else:
            grouped = True
        if not grouped:
            found = pattern.split("|")  # only an alternation of plain words: one of them is in each match
            if any(not word or meta & set(word) for word in found):
                return None
        else:  # no alternation, or only inside a group after the plain beginning
            end = next((i for i, c in enumerate(pattern) if c in meta), len(pattern))
            if end < len(pattern) and pattern[end] in "*?+{\\":
                end -= 1  # a quantifier (or an escape that may be one) may repeat the last letter none times
            found = [pattern[: max(end, 0)]]
            if not found[0]:
                return None
    if "-i" in search.flags:
        return tuple(word.lower().encode() for word in found)
    return tuple(word.encode() for word in found)


def line_test(search: Search) -> Callable[[bytes], bool | None] | None:
    """Whether git grep matches a line, for a search whose pattern is plain words
    (`-F 'a b'`, a basic regex of no special character, or an extended one of
    words and top-level bars, `cost|usage`): those are exactly the lines holding
    a word, case folded under -i. The answer is None (git is asked) for a line
    that is not UTF-8, or under -i holds a character that may fold to an ASCII
    letter (_FOLDING); ASCII letters fold alike in every locale but the Turkic
    ones, where `i` and `I` are no pair. Words of ASCII match the same bytes in
    UTF-8 whatever the library, since no byte of a longer character is ASCII.
    Under -w, as git does it (`match_one_pattern`): the leftmost match, the
    longest of those that begin there, must have no word character (ASCII letter,
    digit, `_`) either side; if it has, the search goes on from the first place
    after it that follows a non-word character, so a shorter word at a rejected
    place is never tried. None for any other search."""
    words = _plain_words(search)
    folds = "-i" in search.flags
    if words is None or (folds and not _folds_ascii_alike()):
        return None
    flags = re.IGNORECASE if folds else 0  # a bytes pattern folds ASCII letters only
    found = re.compile(b"|".join(re.escape(w.encode()) for w in sorted(words, key=len, reverse=True)), flags).search

    def whole_word(line: bytes) -> bool:
        start, end = 0, len(line)
        while (m := found(line, start)) is not None:
            a, b = m.span()
            if (a == 0 or line[a - 1] not in _WORD_BYTES) and (b == end or line[b] not in _WORD_BYTES):
                return True
            if a + 1 >= end:
                return False
            start = a + 1
            while start < end and line[start - 1] in _WORD_BYTES:
                start += 1
            if start >= end:
                return False
        return False

    def test(line: bytes) -> bool | None:
        if not line.isascii():
            try:
                line.decode("utf-8")
            except UnicodeDecodeError:
                return None
            if folds and _FOLDING_RE.search(line):
                return None
        return whole_word(line) if "-w" in search.flags else found(line) is not None

    return test


_WORD_BYTES = frozenset((string.ascii_letters + string.digits + "_").encode())  # git's word_char
_TURKIC = frozenset({"tr", "az", "crh", "tt", "ba", "kk", "ku"})  # locales where i and I are not each other's case


def _plain_words(search: Search) -> tuple[str, ...] | None:
    """The words a search's pattern is exactly (any of them matches), or None."""
    pattern = search.pattern
    if not pattern or not pattern.isascii() or "\n" in pattern:
        return None
    if "-F" in search.flags:
        return (pattern,)
    if "-E" in search.flags:
        words = tuple(pattern.split("|"))
        return None if any(not w or _ERE_META & set(w) for w in words) else words
    return None if BRE_META & set(pattern) else (pattern,)


def _folds_ascii_alike() -> bool:
    name = os.environ.get("LC_ALL") or os.environ.get("LC_CTYPE") or os.environ.get("LANG") or "C"
    return _utf8_locale() and re.split(r"[_.@]", name, maxsplit=1)[0].lower() not in _TURKIC


def _bars_inside_groups(pattern: str) -> bool | None:
    """For an extended regex: whether every `|` is inside parentheses (False: one is
    at the top level; None: bracket expressions or unbalanced parentheses, where
    this reading is not sure). Escaped characters are skipped."""
    if "[" in pattern or "\\|" in pattern:  # `\|`: a literal bar, or in some libraries another alternation
        return None
    depth, i = 0, 0
    top = False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            i += 1
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth < 0:
                return None
        elif c == "|" and depth == 0:
            top = True
        i += 1
    return None if depth else not top


# The characters past ASCII whose upper or lower case is (or begins with) an ASCII letter
# (K KELVIN SIGN, ſ LONG S, İ, ı, ß, the ligatures ﬁ ...): under -i a regular expression
# library may match them to one, in UTF-8.
_FOLDING = tuple(
    chr(c).encode()
    for c in (
        0xDF,
        0x130,
        0x131,
        0x149,
        0x17F,
        0x1F0,
        0x1E96,
        0x1E97,
        0x1E98,
        0x1E99,
        0x1E9A,
        0x1E9E,
        0x212A,
        0xFB00,
        0xFB01,
        0xFB02,
        0xFB03,
        0xFB04,
        0xFB05,
        0xFB06,
    )
)


def _utf8_locale() -> bool:
    """Whether git runs in a UTF-8 (or the C) locale, where only _FOLDING folds to ASCII."""
    name = os.environ.get("LC_ALL") or os.environ.get("LC_CTYPE") or os.environ.get("LANG") or "C"
    return name in ("C", "POSIX") or name.lower().replace("-", "").endswith(("utf8", "utf8@euro"))


_FOLDING_RE = re.compile(b"|".join(re.escape(f) for f in _FOLDING))


class Screen:
    """A file's bytes as `may_match` reads them, worked out once for every search that asks."""

    def __init__(self, data: bytes):
        self.data = data
        self._lower: bytes | None = None
        self._folds: bool | None = None

    @property
    def lower(self) -> bytes:
        if self._lower is None:
            self._lower = self.data.lower()  # ASCII letters only
        return self._lower

    @property
    def folds(self) -> bool:
        """Whether a character past ASCII here may fold to an ASCII letter under -i."""
        if self._folds is None:
            self._folds = not self.data.isascii() and (not _utf8_locale() or _FOLDING_RE.search(self.data) is not None)
        return self._folds


def may_match(words: tuple[bytes, ...] | None, ignore_case: bool, screen: Screen) -> bool:
    """Whether a file may hold a match of a search with these `literals`: False
    only when it cannot. Under -i the file's ASCII letters are folded; a file with
    a character that may fold to one (_FOLDING; in a locale other than UTF-8, any
    byte past ASCII) may match."""
    if words is None:
        return True
    if ignore_case:
        if screen.folds:
            return True
        data = screen.lower
    else:
        data = screen.data
    return any(w in data for w in words)


def screened(wanted: dict[Search, list[str]], read: Callable[[list[str]], dict[str, bytes]]) -> dict[Search, set[str]]:
    """For each search, those of its blobs that may hold a match (`may_match` with its
    `literals`, which must not be None): each blob read once for all the searches that
    want it, a batch's bytes at a time."""
    by_blob: dict[str, list[Search]] = {}
    for s, blobs in wanted.items():
        for blob in blobs:
            by_blob.setdefault(blob, []).append(s)
    words = {s: literals(s) for s in wanted}
    passed: dict[Search, set[str]] = {s: set() for s in wanted}
    order = sorted(by_blob)
    for start in range(0, len(order), 200):
        for blob, data in read(order[start : start + 200]).items():
            screen = Screen(data)
            for s in by_blob[blob]:
                if may_match(words[s], "-i" in s.flags, screen):
                    passed[s].add(blob)
    return passed


_SCREEN_ARGS = 100_000  # characters of pathspecs given to one screening git grep
_SCREEN_GROUP = 50  # files wanted alike below which a group shares a process with the other small ones


@dataclass
class Screened:
    """What `grep_screened` found: for each search, the names of its files that may hold a
    match; and for each file, the lines git printed (number, text), which hold every line
    a search that wants the file can match."""

    passed: dict[Search, set[str]]
    lines: dict[str, list[tuple[int, bytes]]]


def grep_screened(wanted: dict[Search, list[str]], git_dir: str, commit: str | None) -> Screened | None:
    """`screened`, with git reading the files: for each search, those of its paths
    at `commit` that may hold a match (with no commit, the paths are COMMIT:PATH
    names, as `regrep` gives them to git: files of many commits at once), named to
    git as literal pathspecs. `git grep -P` prints every line of these
    files that holds a literal of a search that wants the file (those of -i
    searches in any ASCII case) or a character of _FOLDING; `may_match` on a
    file's printed lines then answers as it does on the whole file, since a
    literal never spans lines. Files wanted by the same searches share a process
    (a few, for many paths; all side by side): a file is scanned for its own
    searches' literals only, and a common word that one narrow search looks for
    is not looked for across the tree. Python never reads the files, and git's
    work runs beside it. Binary files (-I) are left out: a search skips them
    too. None when git has no Perl regexes, or the locale is not UTF-8 (where
    any byte past ASCII may fold): the caller reads the files itself."""
    if not _utf8_locale():
        return None
    words = {s: literals(s) for s in wanted}
    # Searches by their place in `wanted`: a path is asked for by many, and a Search hashes slowly.
    order = list(wanted)
    asking: dict[str, int] = {}  # path -> a bit per search that wants it
    for i, s in enumerate(order):
        if words[s]:
            for p in wanted[s]:
                asking[p] = asking.get(p, 0) | 1 << i
    groups: dict[int, list[str]] = {}
    for p in sorted(asking):
        groups.setdefault(asking[p], []).append(p)
    # Groups of a few files share one process, scanned for all their literals: a literal
    # more only prints more lines, and may_match reads each search's own words in them.
    few = [bits for bits, paths in groups.items() if len(paths) < _SCREEN_GROUP]
    if len(few) > 1:
        shared_bits = 0
        shared: list[str] = []
        for bits in few:
            shared_bits |= bits
            shared += groups.pop(bits)
        groups[shared_bits] = groups.get(shared_bits, []) + sorted(shared)
    env = {"LC_ALL": "C"}
    procs: list[run.Started] = []
    try:
        for bits, paths in groups.items():
            mine = {s: words[s] for i, s in enumerate(order) if bits >> i & 1}
            options = ["-P", "-n", "-z", "-I", "--no-color", "--no-textconv", "-e", _screen_pattern(mine)]
            batch: list[str] = []
            size = 0
            for i, p in enumerate(paths):
                batch.append(f":(literal){p}" if commit else p)
                size += len(p) + 12
                if size > _SCREEN_ARGS or i == len(paths) - 1:
                    named = [commit, "--", *batch] if commit else [*batch, "--"]
                    procs.append(run.Started(["grep", *options, *named], git_dir, env=env))
                    batch, size = [], 0
        lines: dict[str, list[tuple[int, bytes]]] = {}
        for proc in procs:
            done = proc.finish()
            if done.found_nothing:
                continue
            if done.returncode != 0 and (b"perl" in done.stderr.lower() or b"pcre" in done.stderr.lower()):
                return None  # a git built without -P
            for path, line, text in run.grep_lines(done.output(limit=300), f"{commit}:" if commit else ""):
                lines.setdefault(path, []).append((line, text))
    finally:
        for proc in procs:
            proc.stop()
    screens = {p: Screen(b"\n".join(text for _, text in printed)) for p, printed in lines.items()}
    passed: dict[Search, set[str]] = {s: set() for s in wanted}
    for s, ps in wanted.items():
        folds, its_words = "-i" in s.flags, words[s]  # not looked up a path (a Search hashes slowly)
        passed[s] = {p for p in ps if p in screens and may_match(its_words, folds, screens[p])}
    return Screened(passed, lines)


def _screen_pattern(words: dict[Search, tuple[bytes, ...] | None]) -> str:
    """One Perl regex for a line holding any of these searches' literals, or a _FOLDING character.
    Byte for byte: in the C locale git's Perl regexes read bytes, and (?i) folds ASCII letters only."""
    sensitive = sorted({w for s, ws in words.items() if ws and "-i" not in s.flags for w in ws})
    folded = sorted({w for s, ws in words.items() if ws and "-i" in s.flags for w in ws})
    alternatives = [re.escape(w.decode()) for w in sensitive]
    if folded:
        alternatives.append("(?i:" + "|".join(re.escape(w.decode()) for w in folded) + ")")
    alternatives.append(_FOLDING_PERL)
    return "|".join(alternatives)


_Atom = TypeVar("_Atom", str, int)  # a character of a name, or a byte


def alternation(words: Iterable[Sequence[_Atom]], atom: Callable[[_Atom], str]) -> str:
    """A Perl regex for any of `words` (sequences of characters, or of bytes), each
    element written by `atom`, as a trie: words that begin alike share their
    beginning (`s(?:napshot|tart)`), so at each place the regex engine follows
    one branch rather than trying every word; last elements that are one byte
    share a bracket (`\\xc4[\\xb0\\xb1]`). Where one word begins another, the
    longer is tried first (a greedy `?`), as in an alternation sorted longest
    first; words that match at one place are all on one branch, so the first
    that lets the rest of a pattern match is the one that alternation picks."""

    def node(rests: set[tuple[_Atom, ...]]) -> str:
        by_head: dict[_Atom, set[tuple[_Atom, ...]]] = {}
        for rest in rests:
            if rest:
                by_head.setdefault(rest[0], set()).add(rest[1:])
        # A last element that is one byte (a character below 128, or any byte) can share a bracket.
        ends = sorted(h for h, after in by_head.items() if after == {()} and (not isinstance(h, str) or h.isascii()))
        branches = [atom(h) + node(after) for h, after in sorted(by_head.items()) if h not in ends]
        if ends:
            branches.append(atom(ends[0]) if len(ends) == 1 else "[" + "".join(atom(h) for h in ends) + "]")
        optional = () in rests
        if len(branches) == 1 and not optional:
            return branches[0]
        return "(?:" + "|".join(branches) + ")" + ("?" if optional else "") if branches else ""

    return node({tuple(w) for w in words})


_FOLDING_PERL = alternation(_FOLDING, lambda b: f"\\x{b:02x}")
