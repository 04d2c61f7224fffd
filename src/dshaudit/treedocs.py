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
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from . import search
from .errors import InputError
from .findings import MARKDOWN_ENDINGS, FindingsFile, FrontMatterError, citations_in_markdown, split_front_matter
from .model import Citation, Evidence, Fact, FactStatus, LineRange, Pin, Status
from .snapshot import Snapshot

if TYPE_CHECKING:
    from .pins import PinResolver
    from .repository import DshRepository

DEFAULT_DIR = "docs"


@dataclass(frozen=True)
class TreeDocs:
    """`PIN[:DIR]` as given to --tree-docs."""

    pin: str
    where: str  # a folder or a glob, in the tree

    @classmethod
    def parse(cls, spec: str) -> "TreeDocs":
        pin, _, where = spec.partition(":")
        where = where.strip().strip("/") or DEFAULT_DIR
        if not pin.strip():
            raise InputError(f"--tree-docs {spec!r}: expected PIN[:DIR], e.g. rc7:docs")
        try:
            search.parse(f"files({where!r})")
        except search.SearchSyntaxError as exc:
            raise InputError(f"--tree-docs {spec!r}: {exc}") from None
        return cls(pin.strip(), where)

    def paths(self, snapshot: Snapshot) -> list[str]:
        return [p for p in snapshot.paths() if p.lower().endswith(MARKDOWN_ENDINGS) and search.selected(p, (self.where,))]


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
    unread = sorted({e.blob_sha for p, e in entries.items()
                     if e and e.blob_sha and (p, e.blob_sha, web_url) not in _PARSED})
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
        out.append(FindingsFile(
            path=path,
            front_matter={},
            citations=citations,
            pin=spec.pin,
            digest=digest,
            written_at=spec.pin,
        ))
    return out


def _parse(path: str, data: bytes, web_url: str | None) -> tuple[tuple[Citation, ...], str]:
    text = data.decode("utf-8", errors="replace").replace("\r\n", "\n").lstrip("\ufeff")
    try:
        _, skip = split_front_matter(text, path)
    except (FrontMatterError, InputError):
        skip = 0  # a document's own front matter is its business, not a pin
    citations = tuple(citations_in_markdown(text, path, skip, web_url, link_base=posixpath.dirname(path)))
    return citations, hashlib.sha256(data).hexdigest()


@lru_cache(maxsize=1)
def _rules_version() -> str:
    """dshaudit's own code and rules, as one digest: a cached count is as old as the rules that made it."""
    root = Path(__file__).parent
    h = hashlib.sha256()
    for f in sorted(p for p in root.rglob("*") if p.suffix in (".py", ".scm", ".toml") and p.is_file()):
        h.update(f.relative_to(root).as_posix().encode() + b"\0" + f.read_bytes())
    return h.hexdigest()[:16]


def measure_fact(spec: search.Search, pin: Pin, resolver: PinResolver,
                 repository: Callable[[], DshRepository]) -> Fact:
    """`tree-docs('[OF:]DIR'[, 'AT'])`, claimed at `pin`: the documents under DIR in the tree at OF
    (default `pin`), checked at AT (default OF itself), counted by verdict. Evidence: the
    citations that do not hold, at AT."""
    from . import cache
    from .verify import check

    docs_pin = resolver.require(spec.of, "tree-docs PIN") if spec.of else pin
    at = resolver.require(spec.at, "tree-docs PIN") if spec.at else docs_pin
    # Both trees are fixed by their SHAs: the counts change only with dshaudit's own rules.
    shard = cache.current().shard("tree-docs", _rules_version())
    key = cache.digest(docs_pin.sha, at.sha, spec.pathspecs[0])
    hit = shard.get(key)
    if hit is not None:
        evidence = tuple(Evidence(p, LineRange(a, b)) for p, a, b in hit["evidence"])
        cached = {k: tuple(v) if isinstance(v, list) else v for k, v in hit["fields"].items()}
        return Fact(spec.text, spec.definition, at, FactStatus.OK, hit["value"], cached, evidence)
    wanted = TreeDocs(docs_pin.sha, spec.pathspecs[0])
    docs = load(wanted, docs_pin, repository().snapshot(docs_pin.sha, docs_pin.name), resolver.config.web_url)
    result = check(docs, resolver, repository, at.sha, claims=False, references=False)
    statuses = Counter(v.status.value for v in result.verdicts)
    failing = sorted({v.citation.source.file for v in result.verdicts if v.status.fails()})
    fields: dict[str, object] = {
        "count": len(result.verdicts),
        "documents": len(docs),
        "held": statuses.get("ok", 0),
        "flagged": len(result.verdicts) - statuses.get("ok", 0),
        "failing_documents": tuple(failing),
        **{status: statuses.get(status, 0) for status in ("moved_since", "changed_since", "content_mismatch",
                                                          "suspect", "missing_path", "out_of_range")},
    }
    evidence = tuple(Evidence(v.path, v.resolved_lines[0] if v.resolved_lines else LineRange(1, 1))
                     for v in result.verdicts if v.status is not Status.OK)
    shard.put(key, {"value": len(result.verdicts), "fields": {k: list(v) if isinstance(v, tuple) else v
                                                              for k, v in fields.items()},
                    "evidence": [[e.path, e.lines.start, e.lines.end] for e in evidence]})
    return Fact(spec.text, spec.definition, at, FactStatus.OK, len(result.verdicts), fields, evidence)
