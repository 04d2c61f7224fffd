"""The reducers of detectors about the tree as a whole: manifests, file
counts, and text searched over every file; each runs no query."""

from __future__ import annotations

import json
import re
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

import yaml

from dshaudit.core.model import Evidence, LineRange
from dshaudit.documents import searches
from dshaudit.documents.searches import Search
from dshaudit.facts.engine import FactContext, Match, Measurement, glob_regex, layout, narrowing_pathspecs
from dshaudit.facts.reducing import SEARCHES, line_of, whole
from dshaudit.index import search
from dshaudit.lang.parsing import CannotEvaluate

if TYPE_CHECKING:
    from dshaudit.facts.specs import DetectorSpec


# -- manifests -----------------------------------------------------------------


def _json(ctx: FactContext, path: str) -> dict[str, Any]:
    try:
        data = json.loads(ctx.text(path))
    except json.JSONDecodeError as exc:
        raise CannotEvaluate(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise CannotEvaluate(f"{path}: not a JSON object")
    return data


def _key_evidence(ctx: FactContext, path: str, key: str) -> Evidence:
    line = line_of(ctx.text(path), f'"{key}"') or 1
    return Evidence(path, LineRange(line, line))


@whole
def workspace_packages(ctx: FactContext, spec: DetectorSpec, matches: list[Match]) -> Measurement:
    path = spec.paths[0]
    try:
        config = yaml.safe_load(ctx.text(path)) or {}
    except yaml.YAMLError as exc:
        raise CannotEvaluate(f"{path}: not valid YAML ({exc})") from None
    globs = [g for g in config.get("packages", []) if isinstance(g, str)]
    include = [glob_regex(g.rstrip("/")) for g in globs if not g.startswith("!")]
    exclude = [glob_regex(g[1:].rstrip("/")) for g in globs if g.startswith("!")]
    folders = [p.rpartition("/")[0] for p in ctx.blob_ids() if p.endswith("/package.json")]
    members = sorted(f for f in folders if any(r.match(f) for r in include) and not any(r.match(f) for r in exclude))
    families = sorted({f for m in members if (f := layout().family_of(m))})
    text = ctx.text(path)
    evidence = tuple(Evidence(path, LineRange(n, n)) for g in globs if (n := line_of(text, g)))
    return Measurement(
        len(members),
        {"count": len(members), "members": members, "families": families, "family_count": len(families)},
        evidence,
    )


@whole
def root_dependencies(ctx: FactContext, spec: DetectorSpec, matches: list[Match]) -> Measurement:
    data = _json(ctx, "package.json")
    prod, dev = data.get("dependencies") or {}, data.get("devDependencies") or {}
    evidence = tuple(_key_evidence(ctx, "package.json", k) for k in ("dependencies", "devDependencies") if k in data)
    return Measurement(
        {"production": len(prod), "development": len(dev)},
        {"production": len(prod), "development": len(dev), "development_names": sorted(dev)},
        evidence,
    )


@whole
def vendored_packages(ctx: FactContext, spec: DetectorSpec, matches: list[Match]) -> Measurement:
    manifests = ctx.paths(spec.paths)
    names = sorted(str(_json(ctx, p).get("name", PurePosixPath(p).parent.name)) for p in manifests)
    evidence = tuple(_key_evidence(ctx, p, "name") for p in manifests)
    return Measurement(
        names, {"count": len(names), "folders": sorted(str(PurePosixPath(p).parent) for p in manifests)}, evidence
    )


@whole
def patches(ctx: FactContext, spec: DetectorSpec, matches: list[Match]) -> Measurement:
    files = ctx.paths(spec.paths)
    declared: dict[str, Any] = {}
    root = _json(ctx, "package.json")
    for source in ((root.get("pnpm") or {}).get("patchedDependencies"), root.get("patchedDependencies")):
        declared.update(source or {})
    if "pnpm-workspace.yaml" in ctx.blob_ids():
        workspace = yaml.safe_load(ctx.text("pnpm-workspace.yaml")) or {}
        declared.update(workspace.get("patchedDependencies") or {})
    specs = sorted(set(declared) | {PurePosixPath(f).name.removesuffix(".patch") for f in files})
    evidence = tuple(Evidence(f, LineRange(1, 1)) for f in files)
    return Measurement(specs, {"count": len(specs), "files": files, "declared": sorted(declared)}, evidence)


@whole
def sdk_dependencies(ctx: FactContext, spec: DetectorSpec, matches: list[Match]) -> Measurement:
    value: dict[str, dict[str, str]] = {}
    fields: dict[str, str | bool] = {}
    evidence: list[Evidence] = []
    for label, (path, dep) in sorted(spec.params.items()):
        data = _json(ctx, path)
        for section in ("dependencies", "devDependencies", "peerDependencies", "optionalDependencies"):
            if dep in (data.get(section) or {}):
                version = data[section][dep]
                value[dep] = {"version": version, "section": section, "manifest": path}
                fields[f"{label}_version"] = version
                fields[f"{label}_section"] = section
                fields[f"{label}_runtime"] = section == "dependencies"
                text = ctx.text(path)
                # The key as written; JSON may spell it otherwise (escapes), as in _key_evidence.
                line = line_of(text, f'"{dep}"', text.find(f'"{section}"')) or 1
                evidence.append(Evidence(path, LineRange(line, line)))
                break
        else:
            raise CannotEvaluate(f"{path} does not depend on {dep}")
    return Measurement(value, fields, tuple(evidence))


# -- scale ---------------------------------------------------------------------


@whole
def typescript_files(ctx: FactContext, spec: DetectorSpec, matches: list[Match]) -> Measurement:
    files = ctx.paths(spec.paths)
    where = layout()
    test = [p for p in files if where.is_test_path(p)]
    support = [p for p in files if where.is_test_support(p) and not where.is_test_path(p)]
    fields = {
        "total": len(files),
        "test": len(test),
        "source": len(files) - len(test),
        "test_with_support": len(test) + len(support),
        "source_without_support": len(files) - len(test) - len(support),
    }
    return Measurement(len(files), fields, ())


_TEST_ENDINGS = (".spec.ts", ".spec.tsx", ".e2e.ts")
_VITEST_CONFIG = re.compile(r"(^|/)vitest[^/]*\.config\.ts$")


@whole
def test_files(ctx: FactContext, spec: DetectorSpec, matches: list[Match]) -> Measurement:
    files = ctx.paths(spec.paths)
    # history measures this at every commit that adds, deletes or renames a file: each name is
    # tested once for any of the endings, and only a name holding `vitest` by the regex.
    named = [p for p in files if p.endswith(_TEST_ENDINGS)]
    configs = [p for p in files if "vitest" in p and _VITEST_CONFIG.search(p)]
    fields = {
        "spec": sum(p.endswith(".spec.ts") for p in named),
        "spec_tsx": sum(p.endswith(".spec.tsx") for p in named),
        "e2e": sum(p.endswith(".e2e.ts") for p in named),
        "vitest_configs": len(configs),
    }
    evidence = tuple(Evidence(p, LineRange(1, 1)) for p in configs)
    return Measurement(dict(fields), fields, evidence)


@whole
def docs_by_language(ctx: FactContext, spec: DetectorSpec, matches: list[Match]) -> Measurement:
    files = ctx.paths(spec.paths)
    chinese = sum(p.endswith(".zh.md") for p in files)
    fields = {"total": len(files), "chinese": chinese, "english": len(files) - chinese}
    return Measurement(len(files), fields, ())


# Text over the whole tree is a search (search.py), like a finding's `search(...)`
# claim: git greps the tree, and at a new commit the matches are derived from
# another pin's (only the files that differ are searched again).


def _marker_searches(spec: DetectorSpec) -> list[Search]:
    # Only files the globs may match are searched: .ts and .tsx are half of DSH's bytes.
    return [
        searches.of(
            ("-w", "-E"), "|".join(map(searches.escape_ere, spec.params["words"])), narrowing_pathspecs(spec.paths)
        )
    ]


@whole
def markers(ctx: FactContext, spec: DetectorSpec, matches: list[Match]) -> Measurement:
    words = spec.params["words"]
    allowed = set(ctx.paths(list(spec.paths)))
    hits = [h for h in search.matches(_marker_searches(spec)[0], ctx.snapshot) if h[0] in allowed]
    # Which word each line holds, read off the few matched lines (one search, not one per word:
    # history measures this fact again at every commit that changes a marker line).
    ctx.load(sorted({p for p, _ in hits}))
    texts = [ctx.text(p).split("\n")[n - 1] for p, n in hits]
    per_word = {w: sum(bool(re.search(rf"\b{re.escape(w)}\b", t)) for t in texts) for w in words}
    return Measurement(
        len(hits), {"lines": len(hits), **per_word}, tuple(Evidence(p, LineRange(n, n)) for p, n in hits)
    )


SEARCHES["markers"] = _marker_searches


def _absent_searches(spec: DetectorSpec) -> list[Search]:
    # A string with no character a basic regex reads otherwise is written as a finding
    # writes it (`search(-i 'ollama')`): the same search, grepped and cached once.
    return [
        searches.of(("-i",) if searches.plain(s) else ("-i", "-F"), s, narrowing_pathspecs(spec.paths))
        for s in spec.params["strings"]
    ]


@whole
def absent_strings(ctx: FactContext, spec: DetectorSpec, matches: list[Match]) -> Measurement:
    value: dict[str, int] = {}
    found: list[Evidence] = []
    for s, query in zip(spec.params["strings"], _absent_searches(spec)):
        hits = search.matches(query, ctx.snapshot)
        value[s] = len({p for p, _ in hits})
        found += [Evidence(p, LineRange(n, n)) for p, n in hits][:50]
    fields = {f"{s}_files": n for s, n in value.items()}
    fields["total_files"] = sum(value.values())
    return Measurement(value, fields, tuple(found))


SEARCHES["absent_strings"] = _absent_searches
