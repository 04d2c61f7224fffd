"""DSH's own documentation, read straight from its tree at a pin.

`check --tree-docs rc7:docs` takes every Markdown file under `docs/` at rc7
(or under any folder, or matching a glob such as `packages/**/README.md`),
without a checkout, and checks it as a document about DSH: each one is named
by its path in the tree, its relative links to lines (`../../x.ts#L42`)
resolve from its own folder, and it is a document *written at* rc7: checked at
another pin, its citations are first carried there through git's diff, so a
citation whose text moved, or was edited, since the document's commit says
so (verify.py), even where its line numbers are still in range.
"""

from __future__ import annotations

import hashlib
import posixpath
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dshaudit.core.errors import InputError
from dshaudit.core.model import Citation, Pin
from dshaudit.documents import searches
from dshaudit.documents.findings import MARKDOWN_ENDINGS, FindingsFile
from dshaudit.documents.frontmatter import FrontMatterError, split_front_matter
from dshaudit.documents.markdown import citations_in_markdown
from dshaudit.git import pathspec
from dshaudit.git.snapshot import Snapshot

if TYPE_CHECKING:
    pass

DEFAULT_DIR = "docs"


@dataclass(frozen=True)
class TreeDocs:
    """`PIN[:DIR]` as given to --tree-docs."""

    pin: str
    where: str  # a folder or a glob, in the tree

    @classmethod
    def parse(cls, spec: str) -> TreeDocs:
        pin, _, where = spec.partition(":")
        where = where.strip().strip("/") or DEFAULT_DIR
        if not pin.strip():
            raise InputError(f"--tree-docs {spec!r}: expected PIN[:DIR], e.g. rc7:docs")
        try:
            searches.parse(f"files({where!r})")
        except searches.SearchSyntaxError as exc:
            raise InputError(f"--tree-docs {spec!r}: {exc}") from None
        return cls(pin.strip(), where)

    def paths(self, snapshot: Snapshot) -> list[str]:
        return [
            p for p in snapshot.paths() if p.lower().endswith(MARKDOWN_ENDINGS) and pathspec.selected(p, (self.where,))
        ]


# (path, blob id, web address) -> the document's citations and digest. A document is
# parsed once per process, however many pins read it (history reads a tree's docs
# at both ends, and most documents are the same blob at both).
_PARSED: dict[tuple[str, str, str | None], tuple[tuple[Citation, ...], str]] = {}
_PARSED_LIMIT = 4096


def load(spec: TreeDocs, pin: Pin, snapshot: Snapshot, web_url: str | None) -> list[FindingsFile]:
    """Every Markdown document `spec` selects at `pin`, parsed as a document written at that pin."""
    paths = spec.paths(snapshot)
    if not paths:
        raise InputError(f"--tree-docs {spec.pin}:{spec.where}: no Markdown file there at {pin.name}")
    entries = {p: snapshot.entry(p) for p in paths}
    unread = sorted(
        {e.blob_sha for p, e in entries.items() if e and e.blob_sha and (p, e.blob_sha, web_url) not in _PARSED}
    )
    blobs = snapshot.read_many(unread) if unread else {}
    if len(_PARSED) + len(unread) > _PARSED_LIMIT:
        _PARSED.clear()
    out = []
    for path in paths:
        entry = entries[path]
        if entry is None or entry.blob_sha is None:
            continue  # a link or a submodule named like a document
        key = (path, entry.blob_sha, web_url)
        if key not in _PARSED:
            _PARSED[key] = _parse(path, blobs[entry.blob_sha], web_url)
        citations, digest = _PARSED[key]
        out.append(
            FindingsFile(
                path=path,
                front_matter={},
                citations=citations,
                pin=spec.pin,
                digest=digest,
                written_at=spec.pin,
            )
        )
    return out


def _parse(path: str, data: bytes, web_url: str | None) -> tuple[tuple[Citation, ...], str]:
    text = data.decode("utf-8", errors="replace").replace("\r\n", "\n").lstrip("\ufeff")
    try:
        _, skip = split_front_matter(text, path)
    except (FrontMatterError, InputError):
        skip = 0  # a document's own front matter is its business, not a pin
    citations = tuple(citations_in_markdown(text, path, skip, web_url, link_base=posixpath.dirname(path)))
    return citations, hashlib.sha256(data).hexdigest()
