"""What a document mentions, read from its prose: the code-like names to
check at its pin, its absence claims (`` `absent: NAME` ``), and the names it
introduces itself, which are exempt."""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable, Iterator
from functools import lru_cache
from itertools import accumulate

from dshaudit.checking.plans import PATH_RE
from dshaudit.core.errors import InputError
from dshaudit.documents.blocks import prose_chunks
from dshaudit.documents.claims import CLAIM_SPAN_RE
from dshaudit.documents.codespans import code_spans
from dshaudit.documents.frontmatter import split_front_matter
from dshaudit.documents.grammar import JOINED_RE, find_citations
from dshaudit.documents.names import CODE, Name, code_names
from dshaudit.platform import cache

_FILES_CLAIM_RE = re.compile(r"\bfiles\(([^)`]*)\)")
ABSENT_SPAN_RE = re.compile(r"(?<!`)`absent:[ \t]*+([^`\s][^`\n]*+)`(?!`)")
_CODE_LANGUAGES = frozenset("ts typescript tsx js javascript jsx mjs cjs mts cts".split())


# Remembered by text: every pass over a document's prose (names, absence claims, code blocks,
# scoping) asks, and parsing the front matter's YAML each time cost more than the passes.
@lru_cache(maxsize=512)
def front_lines(text: str) -> int:
    """How many lines the document's front matter takes (0 without, or when it is malformed)."""
    try:
        return split_front_matter(text, "")[1]
    except InputError:
        return 0


def _prose(text: str) -> Iterator[tuple[int, str]]:
    """(offset in `text`, chunk) for each prose block below the front matter."""
    lines = text.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)
    chunks, _ = prose_chunks(text, front_lines(text))
    for a, b in chunks:
        yield starts[a], "\n".join(lines[a:b])


def _locator(text: str) -> Callable[[int], tuple[int, int]]:
    """1-based line and column of an offset in `text`, by a search in its line starts
    (counting newlines from the top for each name is quadratic in a long document)."""
    starts = list(accumulate((len(line) + 1 for line in text.split("\n")), initial=0))

    def line_column(offset: int) -> tuple[int, int]:
        line = bisect_right(starts, offset)
        return line, offset - starts[line - 1] + 1

    return line_column


def _citation_extents(chunk: str) -> list[tuple[int, int]]:
    """Each citation with the code span around it and the anchors after it."""
    spans = code_spans(chunk)
    content_starts = [c_start for _, c_start, _, _ in spans]
    out = []
    for raw in find_citations(chunk):
        start, after = raw.start, raw.end
        k = bisect_right(content_starts, raw.start) - 1  # the one code span that can hold it
        if k >= 0:
            s_start, c_start, c_end, s_end = spans[k]
            if c_start <= raw.start and raw.end <= c_end:
                start, after = s_start, s_end
        out.append((start, max(after, raw.anchors_end)))
    return out


# A document's names as the cache keeps them: text, kind, start, end, folder, line, column.
_NAMES_SHAPE = cache.shaped({"names": [[str, str, int, int, (str, type(None)), int, int]]})


def document_names(text: str) -> list[tuple[Name, int, int]]:
    """The code-like names in a Markdown document's prose, with their 1-based
    line and column; offsets in each Name are offsets in `text`. Citations
    and their anchors, claims and absence claims are not names. They follow from
    the text and dshaudit's rules alone, so they are cached by both: a document
    checked again unchanged is not read for names again."""
    shard = cache.current().shard("document-names", cache.code_version(), _NAMES_SHAPE)
    key = cache.digest(text)
    hit = shard.get(key)
    if hit is not None:
        return [
            (Name(t, kind, start, end, folder), line, column)
            for t, kind, start, end, folder, line, column in hit["names"]
        ]
    found = _document_names(text)
    shard.put(key, {"names": [[n.text, n.kind, n.start, n.end, n.folder, line, column] for n, line, column in found]})
    return found


def _document_names(text: str) -> list[tuple[Name, int, int]]:
    out = []
    locate = _locator(text)
    for offset, chunk in _prose(text):
        for n, folder in _chunk_names(chunk):
            line, column = locate(offset + n.start)
            out.append((Name(n.text, n.kind, offset + n.start, offset + n.end, folder), line, column))
    return out


@lru_cache(maxsize=4096)
def _chunk_names(chunk: str) -> tuple[tuple[Name, str | None], ...]:
    """The names of one run of prose, at offsets in it, each with the folder it is joined to.
    Kept for the run: the language server checks a document again at every keystroke, and
    one run of prose changes while the others stay as they were."""
    skip = _citation_extents(chunk)
    skip += [(m.start(), m.end()) for m in CLAIM_SPAN_RE.finditer(chunk)]
    skip += [(m.start(), m.end()) for m in ABSENT_SPAN_RE.finditer(chunk)]
    found = code_names(chunk, skip)
    return tuple((n, _folder_before(chunk, found[i - 1], n) if i else None) for i, n in enumerate(found))


def _folder_before(chunk: str, before: Name, name: Name) -> str | None:
    """The folder of the path written just before `name`, when `name` is a relative path joined to it."""
    if before.kind != CODE or name.kind != CODE or "/" not in before.text or not PATH_RE.fullmatch(name.text):
        return None
    if name.text.split("/", 1)[0] == before.text.split("/", 1)[0] or not JOINED_RE.fullmatch(
        chunk[before.end : name.start]
    ):
        return None
    return before.text.rstrip("/").rsplit("/", 1)[0]


def absent_claims(text: str) -> list[tuple[str, int, int]]:
    """Each `` `absent: NAME` `` in the document's prose: the name, 1-based line and column."""
    out = []
    locate = _locator(text)
    for offset, chunk in _prose(text):
        for m in ABSENT_SPAN_RE.finditer(chunk):
            line, column = locate(offset + m.start())
            out.append((m.group(1).rstrip(" \t"), line, column))
    return out


def _fenced_blocks(text: str) -> Iterator[tuple[str, str, int]]:
    """(language in lower case, body, line number of the opening fence) of each fenced block
    with an info string."""
    lines = text.split("\n")
    _, fences = prose_chunks(text, front_lines(text))
    for a, b in fences:
        info = lines[a].strip().lstrip("`~").strip().split()
        if info:
            close = b - 1 if b - 1 > a and lines[b - 1].strip().startswith(("```", "~~~")) else b
            yield info[0].lower(), "\n".join(lines[a + 1 : close]), a + 1


def defined_in_code_blocks(text: str) -> set[str]:
    """The names declared in the document's fenced TypeScript/JavaScript
    blocks (each declaration's dotted name and its last component), and those a
    fenced Python block defines."""
    from dshaudit.documents.ownrepo import defined_in
    from dshaudit.lang.symbols import build_symbol_table

    names: set[str] = set()
    for language, body, _ in _fenced_blocks(text):
        if language in ("py", "python"):
            names |= {name for name, _ in defined_in(body, "block.py")}
        elif language in _CODE_LANGUAGES:
            suffix = ".tsx" if language in ("tsx", "jsx") else ".ts"
            for dotted in build_symbol_table(f"block{suffix}", body.encode("utf-8")).spans:
                names.add(dotted)
                names.add(dotted.rsplit(".", 1)[-1])
    return names


# Fenced blocks of commands the reader runs on their own machine: the names in them are the
# shell's, the system's or another tool's (a PowerShell cmdlet's output fields), not DSH's.
_COMMAND_LANGUAGES = frozenset("sh bash zsh fish shell console terminal powershell pwsh ps1 cmd bat batch".split())
_COMMAND_WORD_RE = re.compile(r"[A-Za-z_$][\w$]*")


def used_in_command_blocks(text: str) -> frozenset[str]:
    """The words the document's own fenced shell or PowerShell blocks use."""
    return frozenset(
        word
        for language, body, _ in _fenced_blocks(text)
        if language in _COMMAND_LANGUAGES
        for word in _COMMAND_WORD_RE.findall(body)
    )


def introduced(front_matter: dict) -> set[str]:
    """The names front matter `introduces:` (a name or a list of names)."""
    value = front_matter.get("introduces")
    if isinstance(value, str):
        return {value}
    if isinstance(value, list):
        return {str(v) for v in value if isinstance(v, (str, int))}
    return set()


def document_exemptions(text: str) -> set[str]:
    """Names the document introduces itself: `introduces:` and its code blocks' declarations."""
    try:
        front = split_front_matter(text, "")[0]
    except InputError:
        front = {}
    return introduced(front) | defined_in_code_blocks(text) | counted_paths(text)


def counted_paths(text: str) -> set[str]:
    """The paths the document's `files('...')` claims count: those claims check them
    (`files('packages/ui/').count == 0` says the folder is gone)."""
    return {q.rstrip("/") for m in _FILES_CLAIM_RE.finditer(text) for q in re.findall(r"'([^']*)'", m.group(1))}
