"""Machine-readable verdicts: stable key order, stable sort, so the same
input gives byte-identical output."""

from __future__ import annotations

import json

from ..model import CheckResult, ClaimStatus, ClaimVerdict, Fact, Verdict, format_lines


def jsonable(value: object) -> object:
    if isinstance(value, frozenset):
        return sorted((jsonable(v) for v in value), key=lambda v: json.dumps(v, sort_keys=True))
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    return value


def verdict_dict(v: Verdict) -> dict:
    c = v.citation
    anchor = None
    if c.symbol or c.anchors:
        anchor = {"symbol": c.symbol, "content": list(c.anchors)}
    return {
        "source": c.source.to_dict(),
        "target": {
            "pin": v.pin.name if v.pin else c.pin_ref,
            "sha": v.pin.sha if v.pin else None,
            "path": c.path,
            "lines": format_lines(c.lines) or None,
            "symbol": c.symbol,
        },
        "anchor": anchor,
        "status": v.status.value,
        "message": v.message,
    }


def fact_dict(f: Fact) -> dict:
    return {
        "id": f.id,
        "pin": f.pin.name,
        "sha": f.pin.sha,
        "status": f.status.value,
        "value": jsonable(f.value),
        "fields": jsonable(f.fields),
        "definition": f.definition,
        "evidence": [str(e) for e in f.evidence],
        "message": f.message,
    }


def claim_dict(v: ClaimVerdict) -> dict:
    c = v.claim
    return {
        "source": c.source.to_dict(),
        "kind": c.kind,
        "claim": c.text,
        "ref": c.ref,
        "op": c.op,
        "expected": jsonable(c.expected),
        "pin": v.pin.name if v.pin else None,
        "sha": v.pin.sha if v.pin else None,
        "status": v.status.value,
        "measured": jsonable(v.measured),
        "message": v.message,
        "evidence": [str(e) for e in v.fact.evidence] if v.fact else [],
    }


def summary(result: CheckResult) -> dict:
    failed = len(result.failed)
    claims = {s.value: sum(1 for c in result.claims if c.status is s) for s in ClaimStatus}
    return {
        "total": len(result.verdicts),
        "ok": len(result.verdicts) - failed,
        "failed": failed,
        "claims": {"total": len(result.claims), "failed": len(result.failed_claims), **claims},
    }


def dumps(doc: object) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def render(result: CheckResult, context) -> str:
    return dumps({
        "summary": summary(result),
        "citations": [verdict_dict(v) for v in result.verdicts],
        "claims": [claim_dict(v) for v in result.claims],
    })
