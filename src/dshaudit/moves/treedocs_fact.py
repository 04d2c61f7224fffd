"""The `tree-docs(...)` fact: DSH's own documents at one pin, checked at another
and counted by verdict. It runs a whole check, so it lives above the facts
package, which measures it through the measure registered for its kind
(`facts.provide`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING

from dshaudit.checking.citations import Verifier
from dshaudit.checking.verify import check
from dshaudit.core.model import Evidence, Fact, FactStatus, LineRange, Pin, Status
from dshaudit.documents import searches
from dshaudit.index.treedocs import TreeDocs, load
from dshaudit.moves.carry import carried_verdicts

if TYPE_CHECKING:
    from dshaudit.git.pins import PinResolver
    from dshaudit.git.repository import DshRepository


# One verifier for the tree-docs facts of a run: `tree-docs('docs')` checks the documents at
# their commit, and `tree-docs('docs', 'rc2')` first checks them there again before carrying
# them; the verdicts it remembers answer the second.
_VERIFIER: list[tuple[PinResolver, Callable[[], DshRepository], Verifier]] = []


def _verifier(resolver: PinResolver, repository: Callable[[], DshRepository]) -> Verifier:
    if not _VERIFIER or _VERIFIER[0][0] is not resolver or _VERIFIER[0][1] is not repository:
        _VERIFIER[:] = [(resolver, repository, Verifier(resolver, repository))]
    return _VERIFIER[0][2]


def measure_fact(
    spec: searches.Search, pin: Pin, resolver: PinResolver, repository: Callable[[], DshRepository]
) -> Fact:
    """`tree-docs('[OF:]DIR'[, 'AT'])`, claimed at `pin`: the documents under DIR in the tree at OF
    (default `pin`), checked at AT (default OF itself), counted by verdict. Evidence: the
    citations that do not hold, at AT."""
    from dshaudit.platform import cache

    docs_pin = resolver.require(spec.of, "tree-docs PIN") if spec.of else pin
    at = resolver.require(spec.at, "tree-docs PIN") if spec.at else docs_pin
    # Both trees are fixed by their SHAs: the counts change only with dshaudit's own rules.
    shard = cache.current().shard("tree-docs", cache.code_version())
    key = cache.digest(docs_pin.sha, at.sha, spec.pathspecs[0])
    hit = shard.get(key)
    if hit is not None:
        evidence = tuple(Evidence(p, LineRange(a, b)) for p, a, b in hit["evidence"])
        cached = {k: tuple(v) if isinstance(v, list) else v for k, v in hit["fields"].items()}
        return Fact(spec.text, spec.definition, at, FactStatus.OK, hit["value"], cached, evidence)
    wanted = TreeDocs(docs_pin.sha, spec.pathspecs[0])
    docs = load(wanted, docs_pin, repository().snapshot(docs_pin.sha, docs_pin.name), resolver.config.web_url)
    result = check(
        docs,
        resolver,
        repository,
        at.sha,
        claims=False,
        references=False,
        verifier=_verifier(resolver, repository),
        carry=carried_verdicts,
    )
    statuses = Counter(v.status.value for v in result.verdicts)
    failing = sorted({v.citation.source.file for v in result.verdicts if v.status.fails()})
    fields: dict[str, object] = {
        "count": len(result.verdicts),
        "documents": len(docs),
        "held": statuses.get("ok", 0),
        "flagged": len(result.verdicts) - statuses.get("ok", 0),
        "failing_documents": tuple(failing),
        **{
            status: statuses.get(status, 0)
            for status in (
                "moved_since",
                "changed_since",
                "content_mismatch",
                "suspect",
                "missing_path",
                "out_of_range",
            )
        },
    }
    evidence = tuple(
        Evidence(v.path, v.resolved_lines[0] if v.resolved_lines else LineRange(1, 1))
        for v in result.verdicts
        if v.status is not Status.OK
    )
    shard.put(
        key,
        {
            "value": len(result.verdicts),
            "fields": {k: list(v) if isinstance(v, tuple) else v for k, v in fields.items()},
            "evidence": [[e.path, e.lines.start, e.lines.end] for e in evidence],
        },
    )
    return Fact(spec.text, spec.definition, at, FactStatus.OK, len(result.verdicts), fields, evidence)
