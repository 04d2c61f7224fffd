"""Code-like names in prose: what a sentence about DSH names, and where.

A document about code names things: `backticked spans`, dotted names
(`AgentRegistry.setFactory`), CamelCase and snake_case identifiers, quoted
string literals ('unavailable', "tool/start"), package names
(`@scope/name@1.2.3`). These are the candidates the document checker looks
up: as inferred anchors of a citation without one, and as names that must
exist somewhere in DSH. Plain words are not names: a lowercase English word,
an all-capital acronym or a capitalised word at a sentence start says
nothing checkable, and precision comes first.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from functools import lru_cache

from dshaudit.documents.codespans import code_spans

# Kinds, strongest first: a backticked span is the author saying "this is code".
CODE = "code"
PACKAGE = "package"
DOTTED = "dotted"
STRING = "string"
IDENTIFIER = "identifier"
PATH = "path"  # a code span that is a path of the tree (references.py)
COMMIT = "commit"  # a code span of 7 to 40 hex digits: a commit, never a name (references.py)

MAX_NAME_CHARS = 120
# Three patterns below lead with the literal character every match starts with, and look behind
# it (two characters, the second being that literal) only once it is found: Python's engine then
# jumps from one such character to the next, where a leading look-behind has it try every place
# of a document. Each one matches exactly what the look-behind-first form matches.
_PACKAGE_RE = re.compile(r"@(?<![\w@/.-]@)[a-z0-9][\w.-]*/[a-z0-9][\w.-]*(?:@\d[\w.+-]*)?")
_DOTTED_RE = re.compile(r"(?<![\w.$/@-])[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+(?:\(\))?(?![\w$/@-])")
# 'x', "x", “x”, ‘x’, 「x」: a short literal with no spaces at its ends.
_STRING_RE = re.compile(
    r"""(?<![\w'"])(['"])([^'"\n]{1,60}?)\1(?![\w'"])|“([^”\n]{1,80})”|‘([^’\n]{1,60})’|「([^」\n]{1,80})」"""
)
# A word that may pass `is_identifier_like`: an underscore or `$` in it, or a character after its
# first that may be a capital (ASCII ones, and any letter outside ASCII). Most of a document's words
# are plain ones, and the pattern passes over them without a Python call for each.
_MAYBE_IDENTIFIER = r"(?=[\w$]*[_$]|[A-Za-z_$][\w$]*[^\W_a-z0-9])"
_WORD_RE = re.compile(rf"(?<![\w$.@/-]){_MAYBE_IDENTIFIER}[A-Za-z_$][\w$]*(?![\w$/@-])")
URL_RE = re.compile(r"h(?<!\wh)ttps?://\S+")  # an address (at a word's start): its words are not names
# Emphasis written with underscores (`_Official screenshot_`, `__note__`): the underscores are
# markup, not the first and last characters of a name. One that opens a run of text and one
# that closes it, on one line, with no underscore-word character just outside them.
_UNDERSCORE_EMPHASIS_RE = re.compile(r"(_(?<![\w\\]_)_?)(?=[^\s_])([^\n]*?[^\s_\\])\1(?!\w)")

# Where the letters that pass for Latin ones come from: scripts with look-alikes of Latin
# letters (a Cyrillic а, a Greek ο, a Cherokee Ꭺ), and the fullwidth and mathematical forms
# of the Latin letters themselves. Accented Latin letters are letters of their own, not these.
_LOOKALIKE_SOURCES = ("CYRILLIC", "GREEK", "ARMENIAN", "CHEROKEE", "COPTIC", "LISU", "FULLWIDTH", "MATHEMATICAL")

# File endings that make a dotted token a file name, not a member access.
_FILE_ENDINGS = frozenset("ts tsx js jsx mjs cjs mts cts json md mdx yml yaml toml txt sh py lock css html".split())


@dataclass(frozen=True)
class Name:
    """A code-like name at [start, end) of the text it was found in."""

    text: str
    kind: str
    start: int
    end: int
    folder: str | None = None  # a relative path's: the folder of the path written just before it (references.py)


def is_identifier_like(word: str) -> bool:
    """snake_case, camelCase or CamelCase with an inner capital, `$x`, `_x`:
    not a plain word, not an all-capital acronym."""
    if "_" in word.strip("_") and any(c.isalpha() for c in word):
        return not word.isupper() or "_" in word  # SNAKE_CASE constants are names too
    if word.startswith(("$", "_")) and len(word) > 1:
        return True
    inner = word[1:]
    has_lower = any(c.islower() for c in word)
    has_inner_upper = any(c.isupper() for c in inner)
    if not (has_lower and has_inner_upper):
        return False
    # `macOS`, `iPhone`, `OpenAI`: a product name's capitals come at the end or
    # at the start only; an identifier has a capital after a lower-case letter
    # that is followed by more lower-case letters (`setFactory`, `AgentRegistry`).
    return bool(re.search(r"[a-z][A-Z][a-z]", word))


def lookalike(text: str) -> str | None:
    """What makes a name of Latin letters read as another one: its first letter from a
    script of look-alikes (`АgentRegistry` with a Cyrillic А), or fullwidth or mathematical
    (`ＡgentRegistry`), or its first invisible character (a zero-width space, a soft
    hyphen, a combining mark, a direction mark), as `U+0410 CYRILLIC CAPITAL LETTER A`.
    None when there is none, or when the name has no Latin letter: a name written in
    another script reads as itself."""
    import unicodedata

    from dshaudit.documents.grammar import describe_character

    if text.isascii() or not any(c.isascii() and c.isalpha() for c in text):
        return None
    for ch in text:
        if not ch.isascii() and (
            unicodedata.category(ch)[0] in "CM" or unicodedata.name(ch, "").startswith(_LOOKALIKE_SOURCES)
        ):
            return describe_character(ch)
    return None


def without_invisible(text: str) -> str:
    """The text without its invisible characters (formats, controls, combining marks): its shape."""
    import unicodedata

    return "".join(c for c in text if c.isascii() or unicodedata.category(c)[0] not in "CM")


def is_file_name(token: str) -> bool:
    return token.rsplit(".", 1)[-1].lower() in _FILE_ENDINGS


def _without_emphasis(text: str, spans: list[tuple[int, int, int, int]]) -> str:
    """The text with its underscore emphasis markers blanked out (same length, same places),
    for words and dotted names to be read from. Code spans are blanked first, so that a
    marker is never paired with an underscore inside one (`spans`: the text's code spans)."""
    if "_" not in text:
        return text
    # Built from slices, not from a list of the text's characters: a page is read whole.
    pieces: list[str] = []
    done = 0
    for start, _, _, end in sorted(spans):
        start, end = max(start, done), min(end, len(text))
        if start < end:
            pieces += [text[done:start], "\0" * (end - start)]  # as punctuation, as its backticks are
            done = end
    outside = "".join([*pieces, text[done:]])
    pieces, done = [], 0
    for m in _UNDERSCORE_EMPHASIS_RE.finditer(outside):
        width = len(m[1])
        pieces += [text[done : m.start()], " " * width, text[m.start() + width : m.end() - width], " " * width]
        done = m.end()
    return "".join([*pieces, text[done:]]) if pieces else text


def code_names(text: str, skip: list[tuple[int, int]] | None = None) -> list[Name]:
    """Every code-like name in `text`, in order, none overlapping another.
    `skip` lists spans (citations, claims) whose text is not a name."""
    return list(_code_names(text, tuple(skip or ())))


# Remembered by text, as grammar's citations are: an edited document's other chunks are as they were.
@lru_cache(maxsize=4096)
def _code_names(text: str, skip: tuple[tuple[int, int], ...]) -> tuple[Name, ...]:
    # Spans already taken, merged into disjoint intervals kept sorted: whether a
    # new span is free is then a look at its neighbours, not at every span.
    starts: list[int] = []
    ends: list[int] = []
    for a, b in sorted([*skip, *((m.start(), m.end()) for m in URL_RE.finditer(text))]):
        if starts and a <= ends[-1]:
            ends[-1] = max(ends[-1], b)
        else:
            starts.append(a)
            ends.append(b)
    found: list[Name] = []

    def free(a: int, b: int) -> bool:
        k = bisect_right(starts, a) - 1
        if k >= 0 and ends[k] > a:
            return False
        return k + 1 >= len(starts) or starts[k + 1] >= b

    def take(a: int, b: int) -> None:
        k = bisect_right(starts, a)
        starts.insert(k, a)
        ends.insert(k, b)

    def add(token: str, kind: str, a: int, b: int) -> None:
        # A "name" of hundreds of characters is not one (and is looked up through git's command line).
        if token and len(token) <= MAX_NAME_CHARS and free(a, b):
            found.append(Name(token, kind, a, b))
            take(a, b)

    spans = code_spans(text)
    for start, c_start, c_end, end in spans:
        content = text[c_start:c_end].strip()
        if content and len(content) <= MAX_NAME_CHARS and not content.startswith(("claim:", "prior:", "quoted:")):
            add(content, CODE, start, end)
        elif free(start, end):
            take(start, end)
    for m in _PACKAGE_RE.finditer(text):
        add(m.group(0), PACKAGE, m.start(), m.end())
    for m in _STRING_RE.finditer(text):
        inner = next(g for g in m.groups()[1:] if g is not None)
        if inner.strip() == inner and inner.strip():
            add(inner, STRING, m.start(), m.end())
    text = _without_emphasis(text, spans)
    for m in _DOTTED_RE.finditer(text):
        token = m.group(0).removesuffix("()")
        if not is_file_name(token) and not re.fullmatch(r"(?:[a-z]\.)+[a-z]?", token.lower()):  # `e.g`, `i.e.`
            add(token, DOTTED, m.start(), m.start() + len(token))
    for m in _WORD_RE.finditer(text):
        if is_identifier_like(m.group(0)):
            add(m.group(0), IDENTIFIER, m.start(), m.end())
    found.sort(key=lambda n: n.start)
    return tuple(found)
