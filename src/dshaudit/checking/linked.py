"""Names beside a link to a DSH file: claims that the file declares them.

A document not written for dshaudit often lists a file with what it holds:
``[`session/src/index.ts`](permalink): `class Session`, `SurfaceManager` ``.
A name in backticks (a code span) whose sentence, list item or table row (stretches.py)
links exactly one DSH code file as a whole (a permalink with no lines) is a
claim that the file declares it, checked at the document's pin:

- `ok`: the file declares it (a declaration whose last part is the name; for
  `Owner.member`, one inside a declaration named like `Owner`);
- `declared_elsewhere`: the file does not, another file does (named, with
  its line); at most `MAX_FILES` files holding the name are parsed;
- `not_declared`: no file declares it, and the file does not hold it (or
  holds it, for a name written as a declaration: `class Fiber` where the
  file only uses `Fiber`); a plain name the file uses is `ok`;
- a name that occurs nowhere keeps the verdict the names pass gave it.

`class X`, `interface X`, `function x`, `type X`, `enum X` and `const X`
spans name X. A call (`append()`) is its name; a call reached through a
service (`ctx.session.append(event)`) is the member of the part before it. Other names (strings, paths,
packages) are left to the names pass.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from dshaudit.core.model import Citation, SourceLocation
from dshaudit.core.references import Reference, ReferenceStatus
from dshaudit.documents.matching import word_stem
from dshaudit.documents.names import CODE, Name
from dshaudit.documents.stretches import Outline
from dshaudit.index import declarations
from dshaudit.index.nameindex import index_for

if TYPE_CHECKING:
    from dshaudit.git.snapshot import Snapshot

MAX_FILES = 60
CODE_ENDINGS = (".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs")
_DECLARED_RE = re.compile(
    r"(?:export\s+)?(?:default\s+)?(?:declare\s+)?(?:abstract\s+)?(?:async\s+)?"
    r"(?:class|interface|type|function\*?|enum|const|let|var|namespace)\s+([A-Za-z_$][\w$]*)"
)
# `name`, `Owner.member`, `append()`, and a call with its arguments: `ctx.session.append(event)`
# calls `append` of `session` (the parts before the last two name where it was reached from).
_NAME_RE = re.compile(r"(?:[A-Za-z_$][\w$]*\.)*?(?:([A-Za-z_$][\w$]*)\.)?([A-Za-z_$][\w$]*)(?:\([^()]*\))?")
KIND = "declaration"


@dataclass(frozen=True)
class LinkedName:
    name: Name
    where: SourceLocation
    path: str  # the linked file
    identifier: str
    owner: str | None  # `Session` of `Session.fork`
    declares: bool  # written as a declaration (`class Session`): being used in the file is not enough
    link: Citation  # the link to the file (the first, when the stretch links it more than once)


def linked_names(
    items: list[tuple[Name, SourceLocation]], outline: Outline, citations: tuple[Citation, ...]
) -> list[LinkedName]:
    """The names of `items` that a link beside them ties to one DSH code file."""
    files: dict[int, dict[str, Citation]] = {}  # stretch start -> the code files linked whole in it, by path
    for c in citations:
        if c.is_permalink and not c.lines and not c.symbol and not c.problem and c.path.endswith(CODE_ENDINGS):
            at = outline.offset(c.source.line, c.source.column)
            stretch = outline.around(at) if at is not None else None
            if stretch is not None:
                files.setdefault(stretch.start, {}).setdefault(c.path, c)
    out = []
    for name, where in items:
        if name.kind != CODE:
            continue  # a word of the prose (`WebSocket` in "the WebSocket downlink") names a topic, not a declaration
        stretch = outline.around(name.start)
        linked = files.get(stretch.start, {}) if stretch is not None else {}
        if len(linked) != 1:
            continue
        ((path, link),) = linked.items()
        parsed = _parse(name.text.strip())
        if parsed is not None and not path.endswith("/" + name.text.strip()) and name.text.strip() != path:
            owner, identifier, declares = parsed
            out.append(LinkedName(name, where, path, identifier, owner, declares, link))
    return out


def _parse(text: str) -> tuple[str | None, str, bool] | None:
    """(owner, identifier, written as a declaration) of a name that can be declared; None for anything else."""
    m = _DECLARED_RE.fullmatch(text)
    if m:
        return None, m.group(1), True
    m = _NAME_RE.fullmatch(text)
    if m is None:
        return None
    owner = m.group(1)
    # `ctx.session` is a service reached from a value, not a member of a type; `ctx.session.append()`
    # calls a member of that service.
    reached = text.split("(", 1)[0].count(".") >= 2
    if owner is None or not owner.islower() or "_" in owner or reached:
        return owner, m.group(2), False
    return None


def declared_at(snapshot: Snapshot, path: str, identifier: str, owner: str | None) -> int | None:
    """The line where the file at `path` declares the name, if it does."""
    entry = snapshot.entry(path)
    if entry is None or entry.blob_sha is None or entry.kind != "blob":
        return None
    blob = entry.blob_sha
    table = declarations.symbol_table(path, blob, lambda: snapshot.read(blob))
    lines = [
        span.start
        for dotted, spans in table.spans.items()
        if (parts := dotted.split("."))[-1] == identifier
        and (owner is None or (len(parts) > 1 and word_stem(parts[-2].lower()) == word_stem(owner.lower())))
        for span in spans
    ]
    return min(lines) if lines else None


def check_linked(linked: list[LinkedName], references: list[Reference], snapshot: Snapshot) -> list[Reference]:
    """The references, with each linked name's verdict: declared in its file, elsewhere, or nowhere."""
    if not linked:
        return references
    at = snapshot.sha[:8]
    by_place = {(r.source.line, r.source.column): i for i, r in enumerate(references)}
    index = index_for(snapshot)
    holders = index.paths(sorted({x.identifier for x in linked}))
    out = list(references)
    added = []
    for x in linked:
        i = by_place.get((x.where.line, x.where.column))
        if i is not None and out[i].status is not ReferenceStatus.OK:
            continue  # phantom, deleted, or another verdict of the names pass: it stands
        named = f"`{x.owner}.{x.identifier}`" if x.owner else f"`{x.identifier}`"
        line = declared_at(snapshot, x.path, x.identifier, x.owner)
        if line is not None:
            ref = Reference(x.where, x.name.text, KIND, ReferenceStatus.OK, f"{named} is declared at {x.path}:{line}")
        else:
            found = holders.get(x.identifier, frozenset())
            if not found:
                if i is not None:
                    continue
                ref = Reference(
                    x.where, x.name.text, KIND, ReferenceStatus.PHANTOM, f"`{x.identifier}` occurs nowhere at {at}"
                )
            else:
                elsewhere = next(
                    (
                        (p, n)
                        for p in sorted(found)[:MAX_FILES]
                        if p != x.path
                        and p.endswith(CODE_ENDINGS)
                        and (n := declared_at(snapshot, p, x.identifier, x.owner)) is not None
                    ),
                    None,
                )
                if elsewhere is not None:
                    ref = Reference(
                        x.where,
                        x.name.text,
                        KIND,
                        ReferenceStatus.DECLARED_ELSEWHERE,
                        f"{named} is not declared in {x.path}, the file linked beside it, at {at}; "
                        f"it is declared at {elsewhere[0]}:{elsewhere[1]}",
                    )
                elif x.path in found and not x.declares:
                    ref = Reference(
                        x.where, x.name.text, KIND, ReferenceStatus.OK, f"{named} is used in {x.path} at {at}"
                    )
                else:
                    ref = Reference(
                        x.where,
                        x.name.text,
                        KIND,
                        ReferenceStatus.NOT_DECLARED,
                        f"{named} is {'used' if x.path in found else 'not'} in {x.path}, the file linked beside it, "
                        f"and no file declares it at {at}",
                    )
        if i is not None:
            out[i] = replace(ref, kind=out[i].kind)
        else:
            added.append(ref)
    out += added
    out.sort(key=lambda r: (r.source.file, r.source.line, r.source.column))
    return out
