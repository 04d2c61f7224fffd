"""SARIF 2.1.0, for GitHub code scanning (`github/codeql-action/upload-sarif`).

One result per failing citation or claim; citations and claims that hold are
left out (the run's `properties.summary` carries the totals, as in JSON). A
result's location is the place in the findings file, so code scanning
annotates the audit repository's pull request; the DSH lines it points at are
`relatedLocations`, as permalinks at the pinned SHA. Rules are one per failing
status (`dshaudit/content_mismatch`, `dshaudit/contradicted`, ...).

`partialFingerprints["dshauditFinding/v1"]` hashes the findings path, the rule
and what the citation or claim says, never a line number, so an alert survives
edits above it. `versionControlProvenance` names the audit repository (origin
URL without credentials, HEAD), when git knows it, and DSH at every pinned SHA
the run read.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from urllib.parse import quote

from ..model import CheckResult, ClaimStatus
from .common import (
    RULES,
    AuditRepository,
    Entry,
    audit_repository,
    base_dir,
    clean_remote_url,
    entries,
    fingerprints,
    rule_id,
)
from .json import dumps, summary

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
FINGERPRINT_KEY = "dshauditFinding/v1"
SRCROOT = "%SRCROOT%"
CLAIM_STATUSES = {s.value for s in ClaimStatus}


def _version() -> str:
    try:
        return version("dshaudit")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "0"


def _rules() -> list[dict]:
    out = []
    for status, (short, help_text) in RULES.items():
        out.append({
            "id": rule_id(status),
            "name": "".join(word.capitalize() for word in status.split("_")),
            "shortDescription": {"text": short},
            "fullDescription": {"text": f"{short} {help_text}"},
            "help": {"text": help_text, "markdown": help_text},
            "defaultConfiguration": {"level": "error"},
            "properties": {"tags": ["dshaudit", "claim" if status in CLAIM_STATUSES else "citation"]},
        })
    return out


def _artifact(file: str, root: Path, repo: AuditRepository | None) -> dict:
    """Where a findings file is, as code scanning wants it: relative to the repository root."""
    path = repo.relative(root, file) if repo else file
    if Path(path).is_absolute():  # a findings file outside both the repository and the working directory
        return {"uri": Path(path).as_uri()}
    return {"uri": quote(path, safe="/"), "uriBaseId": SRCROOT}


def _result(e: Entry, rule_index: int, fingerprint: str, root: Path, repo: AuditRepository | None) -> dict:
    related = []
    for n, place in enumerate(e.places, start=1):
        physical: dict = {"artifactLocation": {"uri": place.url}}
        if place.lines is not None:
            physical["region"] = {"startLine": place.lines.start, "endLine": place.lines.end}
        related.append({
            "id": n,
            "physicalLocation": physical,
            "message": {"text": f"{place} ({place.pin.sha[:12]})"},
        })
    result = {
        "ruleId": e.rule_id,
        "ruleIndex": rule_index,
        "kind": "fail",
        "level": "error",
        "message": {"text": e.summary},
        "locations": [{
            "physicalLocation": {
                "artifactLocation": _artifact(e.source.file, root, repo),
                "region": {"startLine": e.source.line, "startColumn": e.source.column},
            },
        }],
        "partialFingerprints": {FINGERPRINT_KEY: fingerprint},
        "properties": {
            "kind": e.kind,
            "status": e.status,
            "target": e.target,
            "pin": e.pin.name if e.pin else None,
            "sha": e.pin.sha if e.pin else None,
        },
    }
    if related:
        result["relatedLocations"] = related
    return result


def _provenance(items: list[Entry], web_url: str, repo: AuditRepository | None) -> list[dict]:
    out = []
    if repo is not None and repo.uri:
        audit: dict = {"repositoryUri": repo.uri}
        if repo.revision:
            audit["revisionId"] = repo.revision
        audit["mappedTo"] = {"uriBaseId": SRCROOT}
        out.append(audit)
    shas: dict[str, str] = {}
    for e in items:
        for pin in [e.pin, *(p.pin for p in e.places)]:
            if pin is not None:
                shas.setdefault(pin.sha, pin.name)
    dsh_uri = clean_remote_url(web_url)  # the configured web URL, if it is an absolute URI
    for sha, name in sorted(shas.items(), key=lambda kv: (kv[1], kv[0])):
        if dsh_uri:
            out.append({"repositoryUri": dsh_uri, "revisionId": sha, "properties": {"pin": name}})
    return out


def render(result: CheckResult, context) -> str:
    root = base_dir(context)
    repo = audit_repository(root)
    items = entries(result, context.web_url)
    failing = [e for e in items if not e.ok]
    rules = _rules()
    index = {r["id"]: n for n, r in enumerate(rules)}
    paths = {e.source.file: (repo.relative(root, e.source.file) if repo else e.source.file) for e in failing}
    prints = fingerprints(failing, paths)
    run: dict = {
        "tool": {
            "driver": {
                "name": "dshaudit",
                "version": _version(),
                "semanticVersion": _version(),
                "rules": rules,
            },
        },
        "originalUriBaseIds": {
            SRCROOT: {
                "description": {
                    "text": "The root of the audit repository (outside git: the folder dshaudit ran in).",
                },
            },
        },
        "columnKind": "unicodeCodePoints",
        "results": [_result(e, index[e.rule_id], fp, root, repo) for e, fp in zip(failing, prints)],
        "properties": {"summary": summary(result)},
    }
    provenance = _provenance(items, context.web_url, repo)
    if provenance:
        run["versionControlProvenance"] = provenance
    return dumps({"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]})
