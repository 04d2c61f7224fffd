"""Machine-readable verdicts: stable key order, stable sort, so the same
input gives byte-identical output."""

from __future__ import annotations

import json

from ..model import CheckResult, Verdict, format_lines


def verdict_dict(v: Verdict) -> dict:
    c = v.citation
    anchor = None
    if c.symbol or c.anchors:
        anchor = {"symbol": c.symbol, "content": list(c.anchors)}
    return {
        "source": {"file": c.source.file, "line": c.source.line, "column": c.source.column},
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


def summary(result: CheckResult) -> dict:
    failed = len(result.failed)
    return {"total": len(result.verdicts), "ok": len(result.verdicts) - failed, "failed": failed}


def render(result: CheckResult, context) -> str:
    doc = {"summary": summary(result), "citations": [verdict_dict(v) for v in result.verdicts]}
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
