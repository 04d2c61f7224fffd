"""The model of the claims-versus-code report.

`build_report` turns check results (one per pin) into plain data, sorted for
byte-identical output: the page's JSON is this model itself, and the HTML and
Markdown templates (templates/report.*.j2, laid out by output/pages.py) only
lay it out.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dshaudit.app.upstream import history_model
from dshaudit.checking.citations import FileText
from dshaudit.core.diagnostics import permalink
from dshaudit.core.model import (
    ClaimVerdict,
    Evidence,
    Fact,
    LineRange,
    Pin,
    SourceLocation,
    Verdict,
    format_lines,
    merge_evidence,
)
from dshaudit.core.results import CheckResult
from dshaudit.core.status import Reach
from dshaudit.documents.claims import show
from dshaudit.documents.findings import FindingsFile
from dshaudit.platform.config import Config

if TYPE_CHECKING:
    from dshaudit.core.references import Reference
    from dshaudit.moves.history_result import HistoryResult

MAX_CITED_LINES = 12
# Reads a file of DSH at a pin (None: not a text file there).
Reader = Callable[[Pin, str], FileText | None]


def _link(web_url: str, sha: str, path: str, lines: tuple[LineRange, ...]) -> str:
    """A permalink to the first of the cited ranges."""
    return permalink(web_url, sha, path, lines[0] if lines else None)


@dataclass
class PinRun:
    """One pin's results: the check, and the facts measured there."""

    pin: Pin | None  # None: each file at its own pin
    result: CheckResult
    facts: list[Fact]


def _evidence(web_url: str, pin: Pin, ev: Evidence) -> dict[str, Any]:
    return {"text": str(ev), "url": permalink(web_url, pin.sha, ev.path, ev.lines)}


def _cited_lines(reader: Reader, v: Verdict) -> list[dict[str, Any]]:
    if v.pin is None or v.status.reach is not Reach.LINES:
        return []
    text: FileText | None = reader(v.pin, v.citation.path)
    if text is None:
        return []
    out: list[dict[str, Any]] = []
    for r in v.resolved_lines or v.citation.lines:
        for n in range(r.start, min(r.end, len(text.lines)) + 1):
            if len(out) == MAX_CITED_LINES:
                out.append({"number": None, "text": "…"})
                return out
            out.append({"number": n, "text": text.lines[n - 1]})
    return out


def _citation(web_url: str, reader: Reader, v: Verdict, others: list[tuple[str, Verdict | None]]) -> dict[str, Any]:
    c = v.citation
    return {
        "source": c.source.to_dict(),
        "text": c.text,
        "path": c.path,
        "lines": format_lines(c.lines),
        "symbol": c.symbol,
        "anchors": list(c.anchors),
        "pin": v.pin.name if v.pin else c.pin_ref,
        "status": v.status.value,
        "ok": v.ok,
        "message": v.message,
        "url": _link(web_url, v.pin.sha, c.path, v.resolved_lines or c.lines) if v.pin else None,
        "cited_lines": _cited_lines(reader, v),
        "at_pins": [{"pin": name, "status": o.status.value if o else "not_checked"} for name, o in others],
    }


def _claim(web_url: str, v: ClaimVerdict, others: list[tuple[str, ClaimVerdict | None]]) -> dict:
    c = v.claim
    fact = v.fact
    return {
        "source": c.source.to_dict(),
        "kind": c.kind,
        "text": c.text,
        "ref": c.ref,
        "claimed": f"{c.op} {show(c.expected)}",
        "measured": show(v.measured)
        if v.measured is not None or v.status.value in ("confirmed", "contradicted")
        else None,
        "status": v.status.value,
        "ok": v.ok,
        "message": v.message,
        "pin": v.pin.name if v.pin else None,
        "definition": fact.definition if fact else None,
        "fact_id": fact.id if fact else None,
        "evidence": [_evidence(web_url, fact.pin, e) for e in merge_evidence(fact.evidence)[:20]] if fact else [],
        "more_evidence": max(0, len(merge_evidence(fact.evidence)) - 20) if fact else 0,
        "at_pins": [{"pin": name, "status": o.status.value if o else "not_checked"} for name, o in others],
    }


def _reference(web_url: str, pin: Pin, r: Reference) -> dict[str, Any]:
    places = r.places(pin, web_url)
    return {**r.as_dict(), "ok": r.ok, "pin": pin.name, "url": places[0].url if places else None}


def _fact(web_url: str, f: Fact) -> dict:
    return {
        "id": f.id,
        "pin": f.pin.name,
        "status": f.status.value,
        "value": show(f.value) if f.status.value == "ok" else None,
        "fields": [{"name": k, "value": show(v)} for k, v in f.fields.items()],
        "definition": f.definition,
        "message": f.message,
        "evidence": [_evidence(web_url, f.pin, e) for e in merge_evidence(f.evidence)[:20]],
        "more_evidence": max(0, len(merge_evidence(f.evidence)) - 20),
    }


def _title(f: FindingsFile, text: str) -> str:
    title = f.front_matter.get("title")
    if isinstance(title, str) and title.strip():
        return title.strip()
    m = re.search(r"^#\s+(.+)$", text, re.M)
    return m.group(1).strip() if m else f.path


def build_report(
    config: Config,
    files: list[FindingsFile],
    runs: list[PinRun],
    reader: Reader,
    history: HistoryResult | None = None,
) -> dict[str, Any]:
    """The report model: plain, JSON-able data, sorted for byte-identical output.
    With `history` (`report --since`), the upstream changes since that pin too."""
    primary = runs[0]
    web = config.web_url

    def keyed(
        result: CheckResult,
    ) -> tuple[dict[tuple[str, int, int], Verdict], dict[tuple[str, int, int], ClaimVerdict]]:
        cits = {(v.citation.source.file, v.citation.source.line, v.citation.source.column): v for v in result.verdicts}
        cls = {(v.claim.source.file, v.claim.source.line, v.claim.source.column): v for v in result.claims}
        return cits, cls

    other_runs = [(run.pin.name if run.pin else "own pin", *keyed(run.result)) for run in runs[1:]]
    findings = []
    for f in files:
        text = Path(f.path).read_text(encoding="utf-8") if Path(f.path).exists() else ""
        citations = [
            _citation(web, reader, v, [(name, cits.get(_pos(v.citation.source))) for name, cits, _ in other_runs])
            for v in primary.result.verdicts
            if v.citation.source.file == f.path
        ]
        claims = [
            _claim(web, v, [(name, cls.get(_pos(v.claim.source))) for name, _, cls in other_runs])
            for v in primary.result.claims
            if v.claim.source.file == f.path
        ]
        names = [_reference(web, pin, r) for pin, r in primary.result.references if r.source.file == f.path]
        findings.append(
            {
                "file": f.path,
                "references": names,
                "references_failed": sum(not r["ok"] for r in names),
                "title": _title(f, text),
                "pin": primary.pin.name if primary.pin else f.pin,
                "claims": claims,
                "citations": citations,
                "failed": sum(not c["ok"] for c in citations) + sum(not c["ok"] for c in claims),
            }
        )
    s = primary.result.summary()
    drift = _drift(runs) if len(runs) > 1 else None
    return {
        "title": "DSH audit: claims versus code",
        "upstream": config.upstream_url,
        "pins": [
            {"name": run.pin.name, "sha": run.pin.sha} if run.pin else {"name": "each file's own pin", "sha": None}
            for run in runs
        ],
        "summary": {
            "files": len(files),
            "citations": s.citations,
            "citations_ok": s.citations_ok,
            "claims": s.own_claims,
            "claims_confirmed": s.own_confirmed,
            "prior_claims": s.prior_claims,
            "prior_confirmed": s.prior_confirmed,
            "prior_contradicted": s.prior_contradicted,
            "failed": s.failed,
        },
        "findings": findings,
        # Names the documents use that DSH does not hold at the pin: the section a reader of a draft wants first.
        "phantoms": [
            _reference(web, pin, r) for pin, r in primary.result.references if r.status.value in ("phantom", "deleted")
        ],
        "drift": drift,
        "history": history_model(history, web) if history else None,
        "facts": [_fact(web, f) for f in primary.facts],
    }


def _drift(runs: list[PinRun]) -> dict:
    """Every citation and claim against every pin, and the first pin where it stops holding."""
    names = [run.pin.name if run.pin else "own pin" for run in runs]
    rows: dict[tuple, dict] = {}
    for i, run in enumerate(runs):
        for v in run.result.verdicts:
            row = rows.setdefault(
                ("citation", *_pos(v.citation.source)),
                {
                    "kind": "citation",
                    "source": str(v.citation.source),
                    "text": v.citation.text,
                    "statuses": [None] * len(runs),
                },
            )
            row["statuses"][i] = (v.status.value, v.ok)
        for cv in run.result.claims:
            row = rows.setdefault(
                ("claim", *_pos(cv.claim.source)),
                {
                    "kind": cv.claim.kind,
                    "source": str(cv.claim.source),
                    "text": cv.claim.text,
                    "statuses": [None] * len(runs),
                },
            )
            # A prior claim "holds" while it says what the code says.
            row["statuses"][i] = (cv.status.value, cv.status.value == "confirmed")
    out = []
    for key in sorted(rows, key=lambda k: (k[1], k[2], k[3], k[0])):
        row = rows[key]
        statuses = [s or ("not_checked", False) for s in row["statuses"]]
        first = next((names[i] for i, (_, holds) in enumerate(statuses) if not holds), None)
        out.append(
            {
                "kind": row["kind"],
                "source": row["source"],
                "text": row["text"],
                "statuses": [s for s, _ in statuses],
                "first_failing": first,
                "stable": len({s for s, _ in statuses}) == 1,
            }
        )
    return {
        "pins": names,
        "rows": out,
        "changed": sum(1 for r in out if not r["stable"]),
        "first_failing_counts": {n: sum(1 for r in out if r["first_failing"] == n) for n in names},
    }


def _pos(source: SourceLocation) -> tuple[str, int, int]:
    return (source.file, source.line, source.column)
