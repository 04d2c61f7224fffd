"""SARIF 2.1.0, for GitHub code scanning (`github/codeql-action/upload-sarif`).

One result per diagnostic the command shows (for `check`: each failing
citation or claim; those that hold are left out, and the run's
`properties.summary` carries the totals, as in JSON). A
result's location is the place in the findings file, so code scanning
annotates the audit repository's pull request; the DSH lines it points at are
`relatedLocations`, as permalinks at the pinned SHA. Rules are one per failing
status the command can give (`dshaudit/content_mismatch`, `dshaudit/contradicted`,
`dshaudit/unanchored_citation`, ...), with the status's own texts.

`partialFingerprints["dshauditFinding/v1"]` hashes the findings path, the rule
and what the citation or claim says, never a line number, so an alert survives
edits above it. `versionControlProvenance` names the audit repository (origin
URL without credentials, HEAD), when git knows it, and DSH at every pinned SHA
the run read.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from dshaudit.core.diagnostics import Diagnostic, Outcome
from dshaudit.core.status import DiagnosticStatus, Severity
from dshaudit.output.formats.json import dumps
from dshaudit.output.interface import RenderContext

if TYPE_CHECKING:
    from dshaudit.git.auditrepo import AuditRepository

SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
FINGERPRINT_KEY = "dshauditFinding/v1"
SRCROOT = "%SRCROOT%"
LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTE: "note", Severity.NONE: "none"}
NEEDS_REPOSITORY = True
RENDERS_DIAGNOSTICS = True


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("dshaudit")
    except PackageNotFoundError:  # running from a source tree that was never installed
        return "0"


def _rules(rules: tuple[DiagnosticStatus, ...]) -> list[dict[str, Any]]:
    out = []
    for status in rules:
        out.append(
            {
                "id": status.rule_id,
                "name": "".join(word.capitalize() for word in str(status).split("_")),
                "shortDescription": {"text": status.short},
                "fullDescription": {"text": f"{status.short} {status.help}"},
                "help": {"text": status.help, "markdown": status.help},
                "defaultConfiguration": {"level": LEVELS[status.severity]},
                "properties": {"tags": ["dshaudit", status.family]},
            }
        )
    return out


def fingerprints(items: tuple[Diagnostic, ...], paths: dict[str, str]) -> list[str]:
    """A hash per diagnostic of its findings file, what it says (citation text and
    anchors, or claim text) and its rule: never a line number, so moving a
    citation within its file keeps it. Identical diagnostics in one file are told
    apart by their rank among themselves, which only changes when another of
    them is added or removed above."""
    seen: dict[tuple[str, ...], int] = {}
    out = []
    for d in items:
        key = (paths.get(d.source.file, d.source.file), d.rule_id, *d.identity)
        rank = seen.get(key, 0)
        seen[key] = rank + 1
        out.append(hashlib.sha256(json.dumps([*key, rank]).encode("ascii")).hexdigest())
    return out


def _artifact(file: str, root: Path, repo: AuditRepository | None) -> dict[str, Any]:
    """Where a findings file is, as code scanning wants it: relative to the repository root."""
    path = repo.relative(root, file) if repo else file
    if Path(path).is_absolute():  # a findings file outside both the repository and the working directory
        return {"uri": Path(path).as_uri()}
    return {"uri": quote(path, safe="/"), "uriBaseId": SRCROOT}


def _result(
    e: Diagnostic, rule_index: int | None, fingerprint: str, root: Path, repo: AuditRepository | None
) -> dict[str, Any]:
    related = []
    for n, place in enumerate(e.places, start=1):
        # The path relative to DSH's tree at the pin (the base's URI plus the path is the permalink).
        physical: dict = {
            "artifactLocation": {"uri": quote(place.path, safe="/@"), "uriBaseId": dsh_base(place.pin.sha)}
        }
        if place.lines is not None:
            physical["region"] = {"startLine": place.lines.start, "endLine": place.lines.end}
        related.append(
            {
                "id": n,
                "physicalLocation": physical,
                "message": {"text": f"{place} ({place.pin.sha[:12]})"},
                "properties": {"permalink": place.url},
            }
        )
    result: dict[str, Any] = {
        "ruleId": e.rule_id,
        **({"ruleIndex": rule_index} if rule_index is not None else {}),
        "kind": "fail" if e.severity.rank >= Severity.WARNING.rank else "informational",
        "level": LEVELS[e.severity],
        "message": {"text": e.summary},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": _artifact(e.source.file, root, repo),
                    "region": {"startLine": e.source.line, "startColumn": e.source.column},
                },
            }
        ],
        "partialFingerprints": {FINGERPRINT_KEY: fingerprint},
        "properties": {
            "kind": e.kind,
            "status": str(e.status),
            "target": e.target,
            "pin": e.pin.name if e.pin else None,
            "sha": e.pin.sha if e.pin else None,
        },
    }
    if related:
        result["relatedLocations"] = related
    return result


def _provenance(items: tuple[Diagnostic, ...], web_url: str, repo: AuditRepository | None) -> list[dict[str, Any]]:
    """The audit repository, then DSH at each commit read. Without the audit
    repository there is nothing to map results to (SARIF2007 for each), so no
    provenance at all: the DSH_<sha> bases still name the commits."""
    out: list[dict[str, Any]] = []
    if repo is None or not repo.uri:
        return out
    from dshaudit.git.auditrepo import clean_remote_url  # loaded already: it found `repo`

    audit: dict[str, Any] = {"repositoryUri": repo.uri}
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
            out.append(
                {
                    "repositoryUri": dsh_uri,
                    "revisionId": sha,
                    "mappedTo": {"uriBaseId": dsh_base(sha)},
                    "properties": {"pin": name},
                }
            )
    return out


def dsh_base(sha: str) -> str:
    """The uriBaseId of DSH's tree at one commit: related locations are paths relative to it."""
    return f"DSH_{sha[:12]}"


def _dsh_bases(items: tuple[Diagnostic, ...], web_url: str) -> dict[str, Any]:
    """One base per DSH commit the run read: `<web>/blob/<sha>/`, which a path completes into a permalink."""
    out: dict[str, Any] = {}
    for e in items:
        for place in e.places:
            out.setdefault(
                dsh_base(place.pin.sha),
                {
                    "uri": f"{web_url.rstrip('/')}/blob/{place.pin.sha}/",
                    "description": {"text": f"DeepSeek Harness at {place.pin.name} ({place.pin.sha})"},
                },
            )
    return dict(sorted(out.items()))


def render(outcome: Outcome, context: RenderContext) -> str:
    root, repo = context.base, context.repository
    shown = outcome.shown
    rules = _rules(outcome.rules)
    index = {r["id"]: n for n, r in enumerate(rules)}
    paths = {d.source.file: (repo.relative(root, d.source.file) if repo else d.source.file) for d in shown}
    prints = fingerprints(shown, paths)
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "dshaudit",
                **({"informationUri": repo.uri} if repo is not None and repo.uri else {}),
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
            **_dsh_bases(shown, context.web_url),
        },
        "columnKind": "unicodeCodePoints",
        "results": [_result(d, index.get(d.rule_id), fp, root, repo) for d, fp in zip(shown, prints)],
    }
    if outcome.summary is not None:
        run["properties"] = {"summary": dict(outcome.summary.counts)}
    provenance = _provenance(outcome.diagnostics, context.web_url, repo)
    if provenance:
        run["versionControlProvenance"] = provenance
    return dumps({"$schema": SCHEMA_URI, "version": "2.1.0", "runs": [run]})
