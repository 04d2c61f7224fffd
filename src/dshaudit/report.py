"""The claims-versus-code report: one model, rendered through Jinja2 templates.

`build_report` turns check results (one per pin) into plain data; the HTML and
Markdown templates in templates/ only lay it out, and JSON is the model itself.
Everything from DSH or from findings is data to the templates: HTML
autoescapes it, Markdown passes it through `md` and `code` filters, and no
template ever evaluates it.
"""

from __future__ import annotations

import html
import os
import re
import tempfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import jinja2

from .claims import show
from .config import Config
from .errors import InputError
from .findings import FindingsFile
from .model import CheckResult, ClaimVerdict, Evidence, Fact, LineRange, Pin, Verdict, format_lines
from .textsafe import terminal_safe
from .verify import FileText

MAX_CITED_LINES = 12


def permalink(web_url: str, sha: str, path: str, lines: tuple[LineRange, ...]) -> str:
    url = f"{web_url.rstrip('/')}/blob/{sha}/{path}"
    if lines:
        first = lines[0]
        url += f"#L{first.start}" if first.start == first.end else f"#L{first.start}-L{first.end}"
    return url


@dataclass
class PinRun:
    """One pin's results: the check, and the facts measured there."""

    pin: Pin | None  # None: each file at its own pin
    result: CheckResult
    facts: list[Fact]


def _evidence(web_url: str, pin: Pin, ev: Evidence) -> dict:
    return {"text": str(ev), "url": permalink(web_url, pin.sha, ev.path, (ev.lines,))}


def merge_evidence(evidence) -> list[Evidence]:
    """Adjacent or overlapping places in one file become one range, for reading."""
    merged: list[Evidence] = []
    for ev in sorted(evidence):
        last = merged[-1] if merged else None
        if last and last.path == ev.path and ev.lines.start <= last.lines.end + 1:
            merged[-1] = Evidence(ev.path, LineRange(last.lines.start, max(last.lines.end, ev.lines.end)))
        else:
            merged.append(ev)
    return merged


def _cited_lines(reader, v: Verdict) -> list[dict]:
    if v.pin is None or v.status.value in ("missing_path", "not_a_file", "binary", "invalid_citation", "unknown_pin", "out_of_range"):
        return []
    text: FileText | None = reader(v.pin, v.citation.path)
    if text is None:
        return []
    out = []
    for r in v.resolved_lines or v.citation.lines:
        for n in range(r.start, min(r.end, len(text.lines)) + 1):
            if len(out) == MAX_CITED_LINES:
                out.append({"number": None, "text": "…"})
                return out
            out.append({"number": n, "text": text.lines[n - 1]})
    return out


def _citation(web_url: str, reader, v: Verdict, others: list[tuple[str, Verdict | None]]) -> dict:
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
        "url": permalink(web_url, v.pin.sha, c.path, v.resolved_lines or c.lines) if v.pin else None,
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
        "measured": show(v.measured) if v.measured is not None or v.status.value in ("confirmed", "contradicted") else None,
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


def build_report(config: Config, files: list[FindingsFile], runs: list[PinRun], reader) -> dict:
    """The report model: plain, JSON-able data, sorted for byte-identical output."""
    primary = runs[0]
    web = config.web_url

    def keyed(result: CheckResult):
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
        findings.append({
            "file": f.path,
            "title": _title(f, text),
            "pin": primary.pin.name if primary.pin else f.pin,
            "claims": claims,
            "citations": citations,
            "failed": sum(not c["ok"] for c in citations) + sum(not c["ok"] for c in claims),
        })
    result = primary.result
    prior = [c for c in result.claims if c.claim.kind == "prior"]
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
            "citations": len(result.verdicts),
            "citations_ok": len(result.verdicts) - len(result.failed),
            "claims": len(result.claims) - len(prior),
            "claims_confirmed": sum(1 for c in result.claims if c.claim.kind == "claim" and c.ok),
            "prior_claims": len(prior),
            "prior_confirmed": sum(1 for c in prior if c.status.value == "confirmed"),
            "prior_contradicted": sum(1 for c in prior if c.status.value == "contradicted"),
            "failed": len(result.failed) + len(result.failed_claims),
        },
        "findings": findings,
        "drift": drift,
        "facts": [_fact(web, f) for f in primary.facts],
    }


def _drift(runs: list[PinRun]) -> dict:
    """Every citation and claim against every pin, and the first pin where it stops holding."""
    names = [run.pin.name if run.pin else "own pin" for run in runs]
    rows: dict[tuple, dict] = {}
    for i, run in enumerate(runs):
        for v in run.result.verdicts:
            row = rows.setdefault(("citation", *_pos(v.citation.source)), {
                "kind": "citation", "source": str(v.citation.source), "text": v.citation.text, "statuses": [None] * len(runs),
            })
            row["statuses"][i] = (v.status.value, v.ok)
        for v in run.result.claims:
            row = rows.setdefault(("claim", *_pos(v.claim.source)), {
                "kind": v.claim.kind, "source": str(v.claim.source), "text": v.claim.text, "statuses": [None] * len(runs),
            })
            # A prior claim "holds" while it says what the code says.
            row["statuses"][i] = (v.status.value, v.status.value == "confirmed")
    out = []
    for key in sorted(rows, key=lambda k: (k[1], k[2], k[3], k[0])):
        row = rows[key]
        statuses = [s or ("not_checked", False) for s in row["statuses"]]
        first = next((names[i] for i, (_, holds) in enumerate(statuses) if not holds), None)
        out.append({
            "kind": row["kind"], "source": row["source"], "text": row["text"],
            "statuses": [s for s, _ in statuses], "first_failing": first,
            "stable": len({s for s, _ in statuses}) == 1,
        })
    return {
        "pins": names,
        "rows": out,
        "changed": sum(1 for r in out if not r["stable"]),
        "first_failing_counts": {n: sum(1 for r in out if r["first_failing"] == n) for n in names},
    }


def _pos(source) -> tuple:
    return (source.file, source.line, source.column)


# -- rendering -----------------------------------------------------------------


def _md(value: object) -> str:
    """Text safe inside a Markdown table cell: no HTML, no table breaks, no links."""
    text = terminal_safe("" if value is None else str(value))
    text = html.escape(text, quote=False).replace("|", "\\|").replace("\n", " ")
    return re.sub(r"([\\`*_\[\]])", r"\\\1", text).replace("\\\\|", "\\|")


def _code(value: object) -> str:
    """Inline code that survives any backticks inside it, and is safe in a table cell."""
    text = terminal_safe(("" if value is None else str(value)).replace("\n", " ")).replace("|", "¦")
    if not text:
        return ""
    fence = "`" * (max((len(r) for r in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


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
        from .formats.json import dumps

        return dumps(model)
    template = {"html": "report.html.j2", "markdown": "report.md.j2"}[fmt]
    return _environment(autoescape=fmt == "html").get_template(template).render(report=model)


def write_atomically(path: Path, text: str) -> None:
    """Write through a temporary file in the same folder and rename: a reader
    sees the old file or the new one, never half of one."""
    folder = path.parent if str(path.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=folder)
    except OSError as exc:
        raise InputError(f"{path}: cannot write: {exc.strerror or exc}") from None
    umask = os.umask(0)
    os.umask(umask)
    try:
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; a report is an ordinary file
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise InputError(f"{path}: cannot write: {exc.strerror or exc}") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
