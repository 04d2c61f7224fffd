"""Numbers a document states beside a file that a registered fact measures.

"45 in-repo event types (known-event-types.ts)" states a count that the fact
`session.known-event-types` measures in exactly that file. In a document not
written for dshaudit, a number in a sentence, list item or table row that
names such a file (a citation of it, or its name) is compared with the fact at
the document's pin, when the words right after the number name what the fact
counts: at least two of the words of the fact's name (`session.known-event-types`:
session, known, event, types) among the four words after the number. A fact counts a list by its length.
Nothing is guessed: a number with other words, a file no fact measures alone,
or a fact whose value is no count, says nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from dshaudit.core.model import Citation, Fact, SourceLocation
from dshaudit.core.references import Reference, ReferenceStatus
from dshaudit.documents.matching import words_of
from dshaudit.documents.stretches import Outline

KIND = "stated"
WORDS_AFTER = 4
# A number of its own: not part of a version, a path, a decimal or a percentage, nor a list's `1.` or `2)`.
_NUMBER_RE = re.compile(r"(?<![\w.,/-])(\d{1,6})(?![\w.,/-]*\d)(?![%.)])")
_GLOB_CHARS = frozenset("*?[{")
_PATHISH_RE = re.compile(r"\S*\w[./]\w\S*")


@dataclass(frozen=True)
class Stated:
    """A number the text states of what a fact counts."""

    where: SourceLocation
    text: str  # the number and the words after it, as written
    value: int
    fact_id: str


def single_file_facts(specs: dict[str, tuple[str, ...]]) -> dict[str, list[str]]:
    """The facts that measure one file alone: its path -> their ids (`specs`: id -> paths)."""
    out: dict[str, list[str]] = {}
    for fact_id, paths in sorted(specs.items()):
        if len(paths) == 1 and not _GLOB_CHARS & set(paths[0]):
            out.setdefault(paths[0], []).append(fact_id)
    return out


def _fact_words(fact_id: str) -> set[str]:
    return set(words_of(fact_id.replace("-", " ").replace(".", " ")))


def stated_numbers(
    text: str, outline: Outline, citations: tuple[Citation, ...], files: dict[str, list[str]], path: str
) -> list[Stated]:
    """The numbers of the text that name what a fact of a file beside them counts."""
    named: dict[int, set[str]] = {}  # stretch start -> the fact files it names

    def mentions(file: str, written: str) -> bool:
        written = written.strip("`./")
        return bool(written) and (file == written or file.endswith("/" + written))

    for c in citations:
        at = outline.offset(c.source.line, c.source.column)
        stretch = outline.around(at) if at is not None else None
        if stretch is not None and not c.problem:
            named.setdefault(stretch.start, set()).update(f for f in files if mentions(f, c.path))
    out = []
    # The files' names, as one pattern: a document's stretches are thousands, the files a few.
    by_name: dict[str, set[str]] = {}
    for f in files:
        by_name.setdefault(f.rsplit("/", 1)[-1], set()).add(f)
    names = "|".join(re.escape(n) for n in sorted(by_name, key=len, reverse=True))
    named_re = re.compile(rf"(?<![\w.-])({names})(?![\w-])") if names else None
    for stretch in outline.stretches:
        part = text[stretch.start : stretch.end]
        here = set(named.get(stretch.start, set()))
        if named_re is not None:
            here.update(f for m in named_re.finditer(part) for f in by_name[m.group(1)])
        if not here:
            continue
        for m in _NUMBER_RE.finditer(part):
            # The words after it, file names and paths aside (`known-event-types.ts` is the file, not the thing).
            after = words_of(_PATHISH_RE.sub(" ", part[m.end() : m.end() + 80]))[:WORDS_AFTER]
            for file in sorted(here):
                for fact_id in files[file]:
                    wanted = _fact_words(fact_id)
                    hits = wanted & set(after)
                    if len(hits) >= 2:
                        offset = stretch.start + m.start()
                        line, column = outline.place(offset)
                        said = " ".join([m.group(1), *part[m.end() : m.end() + 80].split()[:WORDS_AFTER]])
                        where = SourceLocation(path, line, column)
                        out.append(Stated(where, said, int(m.group(1)), fact_id))
    return out


def count_of(fact: Fact) -> int | None:
    value = fact.value
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, (list, tuple, dict, set)):
        return len(value)
    return None


def check_stated(stated: list[Stated], measure: Callable[[str], Fact | None], at: str) -> list[Reference]:
    """Each stated number against its fact, measured at the document's pin (`measure`)."""
    out = []
    for s in stated:
        fact = measure(s.fact_id)
        count = count_of(fact) if fact is not None else None
        if fact is None or count is None:
            continue
        if count == s.value:
            out.append(Reference(s.where, s.text, KIND, ReferenceStatus.OK, f"`{s.fact_id}` is {count} at {at}"))
        else:
            out.append(
                Reference(
                    s.where,
                    s.text,
                    KIND,
                    ReferenceStatus.VALUE_DIFFERS,
                    f"the text says {s.value}; `{s.fact_id}` is {count} at {at} (counting rule: {fact.definition})",
                )
            )
    return out
