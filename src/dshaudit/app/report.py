"""The claims-versus-code report: one model, rendered through Jinja2 templates.

`build_report` turns check results (one per pin) into plain data; the HTML and
Markdown templates in templates/ only lay it out, and JSON is the model itself.
Everything from DSH or from findings is data to the templates: HTML
autoescapes it, Markdown passes it through `md` and `code` filters, and no
template ever evaluates it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jinja2

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
from dshaudit.platform.textsafe import markdown_code, markdown_text, terminal_safe

if TYPE_CHECKING:
    from dshaudit.core.references import Reference
    from dshaudit.git.log import Commit
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


# -- rendering -----------------------------------------------------------------


def _md(value: object) -> str:
    """Text safe inside a Markdown table cell."""
    return markdown_text("" if value is None else str(value))


def _code(value: object) -> str:
    """Inline code that survives any backticks inside it, and is safe in a table cell."""
    return markdown_code("" if value is None else str(value))


def _environment(autoescape: bool) -> jinja2.Environment:
    def load(name: str) -> str:
        return resources.files("dshaudit.templates").joinpath(name).read_text(encoding="utf-8")

    env = jinja2.Environment(
        loader=jinja2.FunctionLoader(load),
        autoescape=autoescape,
        # Control characters from DSH or findings (ANSI escapes, bells) become visible escapes.
        finalize=lambda value: terminal_safe(value) if isinstance(value, str) else value,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["md"] = _md
    env.filters["code"] = _code
    return env


def render_report(model: dict, fmt: str) -> str:
    if fmt == "json":
        from dshaudit.output.formats.json import dumps

        return dumps(model)
    template = {"html": "report.html.j2", "markdown": "report.md.j2"}[fmt]
    return _environment(autoescape=fmt == "html").get_template(template).render(report=model)


# -- upstream changes (history) ------------------------------------------------

# The timeline's drawing box: the SVG stretches it to the page's width
# (preserveAspectRatio="none"), so no text is drawn inside it; labels are HTML.
CHART_WIDTH, CHART_HEIGHT, SPARK_WIDTH, SPARK_HEIGHT = 1000, 100, 100, 20


def _steps(series: list[int], width: int, height: int, pad: float) -> tuple[str, list[float], tuple[int, int]]:
    """A step line through `series` (a value before the first commit, then one
    after each), as SVG path data; the x of each commit; the value range drawn."""
    lo, hi = min(series), max(series)
    slots = len(series)

    def x(i: int) -> float:
        return round(i * width / slots, 2)

    def y(v: int) -> float:
        return round(height / 2 if hi == lo else pad + (hi - v) * (height - 2 * pad) / (hi - lo), 2)

    d = [f"M0 {y(series[0])}"]
    for i in range(1, slots):
        d.append(f"H{x(i)} V{y(series[i])}")
    d.append(f"H{width}")
    return " ".join(d), [x(i) for i in range(1, slots)], (lo, hi)


def _commit_link(web_url: str, sha: str) -> str:
    return f"{web_url.rstrip('/')}/commit/{sha}"


def history_model(result: HistoryResult, web_url: str) -> dict[str, Any]:
    """The "Upstream changes since the pin" section: totals, the timeline and
    sparklines (path data for inline SVG), the commits and the citations to re-read."""
    commits = result.commits
    f, t = result.from_pin, result.to_pin
    series = [result.holding_at_from] + [c.holding for c in commits]
    line, xs, (lo, hi) = _steps(series, CHART_WIDTH, CHART_HEIGHT, 6)
    drops = sorted((c for c in commits if c.broken), key=lambda c: -c.broken)[:3]
    desc = (
        f"{series[0]} citations hold at {f.name} and {series[-1]} at {t.name}, over {len(commits)} "
        f"first-parent commits."
        + (
            " The largest drops: "
            + ", ".join(
                f"{c.broken} at {c.commit.sha[:12]}" + (f" (#{c.pull_request})" if c.pull_request else "")
                for c in drops
            )
            + "."
            if drops
            else ""
        )
    )
    files = []
    for path in result.files:
        values = [result.holding_by_file_at_from.get(path, 0)] + [c.holding_by_file.get(path, 0) for c in commits]
        spark, _, _ = _steps(values, SPARK_WIDTH, SPARK_HEIGHT, 2)
        total = sum(1 for h in result.citations if h.citation.source.file == path)
        files.append(
            {
                "file": path,
                "citations": total,
                "at_from": values[0],
                "at_to": values[-1],
                "path": spark,
                "changed": len(set(values)) > 1,
                "title": f"{path}: {values[0]} of {total} citations hold at {f.name}, {values[-1]} at {t.name}",
            }
        )

    def commit_ref(c: Commit) -> dict[str, Any]:
        from dshaudit.moves.history_result import pull_request

        pr = pull_request(c.subject)
        return {
            "sha": c.sha,
            "short": c.sha[:12],
            "url": _commit_link(web_url, c.sha),
            "date": c.date[:10],
            "subject": c.subject,
            "pull_request": pr,
            "pull_request_url": f"{web_url.rstrip('/')}/pull/{pr}" if pr else None,
        }

    rows = [
        {
            **commit_ref(c.commit),
            "broken": c.broken,
            "restored": c.restored,
            "edited": c.edited,
            "shifted": c.shifted,
            "claims_changed": c.claims_changed,
            "holding": c.holding,
            "impact": c.impact,
        }
        for c in commits
        if c.touched
    ]
    reread = [
        {
            "source": h.citation.source.to_dict(),
            "text": h.citation.text,
            "status": h.at_to.status.value if h.at_to else "",
            "failing": h.failing,
            "first_broken": commit_ref(h.first_broken) if h.first_broken else None,
            "edited_at": [commit_ref(c) for c in h.edited_at],
            "restored_at": [commit_ref(c) for c in h.restored_at],
            "now_at": h.now_at,
        }
        for h in result.to_reread()
    ]
    claims = [
        {
            "source": c.claim.source.to_dict(),
            "kind": c.claim.kind,
            "text": c.claim.text,
            "before": c.as_dict()["before"],
            "after": c.after,
            "first_changed": commit_ref(c.first_changed),
            "status": c.at_to.status.value if c.at_to else "",
            "times": len(c.changed_at),
        }
        for c in result.claims
        if c.first_changed is not None
    ]
    return {
        "title": f"Upstream changes from {f.name} to {t.name}",
        "from": {"name": f.name, "sha": f.sha, "url": _commit_link(web_url, f.sha)},
        "to": {"name": t.name, "sha": t.sha, "url": _commit_link(web_url, t.sha)},
        "summary": result.lines()[:3],
        "commit_count": len(commits),
        "untouched": len(commits) - len(rows),
        "chart": {
            "width": CHART_WIDTH,
            "height": CHART_HEIGHT,
            "line": line,
            "lo": lo,
            "hi": hi,
            "area": f"{line} V{CHART_HEIGHT} H0 Z",
            "broke": [x for x, c in zip(xs, commits) if c.broken],
            "restored": [x for x, c in zip(xs, commits) if c.restored],
            "title": f"Citations holding at each commit from {f.name} to {t.name}",
            "desc": desc,
        },
        "spark": {"width": SPARK_WIDTH, "height": SPARK_HEIGHT},
        "files": files,
        "commits": rows,
        "reread": reread,
        "claims": claims,
    }


def render_history(result: HistoryResult, web_url: str, fmt: str) -> str:
    """`dshaudit history` in one format: text and JSON from the result, HTML and Markdown through the templates."""
    if fmt == "text":
        return "".join(terminal_safe(line) + "\n" for line in result.lines())
    if fmt == "json":
        from dshaudit.output.formats.json import dumps

        return dumps(result.as_dict())
    template = {"html": "history.html.j2", "markdown": "history.md.j2"}[fmt]
    return _environment(autoescape=fmt == "html").get_template(template).render(history=history_model(result, web_url))
