"""Reducers: matches (or the snapshot) in, a Measurement out.

Each takes the FactContext, the detector's spec and the query matches (empty
for detectors without a query), and returns the value, derived fields and the
evidence it rests on. They stay small: the structure lives in the queries.
"""

from __future__ import annotations

import json
import re
from pathlib import PurePosixPath

import tree_sitter
import yaml

from ..model import Evidence, LineRange
from .engine import (
    CannotEvaluate,
    FactContext,
    Match,
    Measurement,
    evidence_of,
    glob_regex,
    is_test_path,
    js_literal,
    package_of,
    unwrap,
)

REDUCERS = {}


def reducer(fn):
    REDUCERS[fn.__name__] = fn
    return fn


def _require(matches: list[Match], spec) -> None:
    if not matches:
        raise CannotEvaluate(f"nothing matched in {', '.join(spec.paths)}: the code this fact reads is not there")


def _walk(node: tree_sitter.Node):
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))


def _line_of(text: str, needle: str, start: int = 0) -> int | None:
    i = text.find(needle, start)
    return None if i < 0 else text.count("\n", 0, i) + 1


# -- generic -------------------------------------------------------------------


@reducer
def captured_names(ctx: FactContext, spec, matches: list[Match]) -> Measurement:
    """The text of one capture across matches, in source order; field `count`."""
    _require(matches, spec)
    capture, node = spec.params["capture"], spec.params.get("node", spec.params["capture"])
    names = [m.text(capture) for m in matches]
    evidence = tuple(evidence_of(m.path, m.node(node)) for m in matches)
    return Measurement(names, {"count": len(names), "names": sorted(names)}, evidence)


@reducer
def single_literal(ctx: FactContext, spec, matches: list[Match]) -> Measurement:
    """The literal value of the `@value` capture where `@key` is params.key; all sites must agree."""
    key = spec.params["key"]
    sites = [m for m in matches if m.text("key") == key]
    _require(sites, spec)
    values = [js_literal(m.node("value")) for m in sites]
    evidence = tuple(evidence_of(m.path, m.node("value")) for m in sites)
    distinct = sorted({json.dumps(v) for v in values})
    if len(distinct) != 1:
        raise CannotEvaluate(f"{key} is given {len(distinct)} different values: {', '.join(distinct)}", evidence)
    value = values[0]
    fields = {"sites": len(sites)}
    if spec.params.get("minutes") and isinstance(value, (int, float)):
        fields["minutes"] = value / 60_000
    return Measurement(value, fields, evidence)


# -- structural ----------------------------------------------------------------


@reducer
def static_loader_plugins(ctx: FactContext, spec, matches: list[Match]) -> Measurement:
    imported: dict[str, Match] = {}
    mounts: dict[str, list[Evidence]] = {}
    for m in matches:
        if m.node("plugin") is not None:
            imported[m.text("plugin")] = m
    for m in matches:
        used = set()
        if m.node("mounted") is not None:
            used.add(m.text("mounted"))
        if m.node("mounted_expr") is not None:
            used |= {n.text.decode() for n in _walk(m.node("mounted_expr")) if n.type == "identifier"}
        for name in used & imported.keys():
            mounts.setdefault(name, []).append(evidence_of(m.path, m.node("mount")))
    plugins = sorted(mounts)
    if not imported:
        raise CannotEvaluate(f"no `@deepseek-ai/cordis-plugin-*` default import in {', '.join(spec.paths)}")
    evidence = [evidence_of(imported[p].path, imported[p].node("import")) for p in plugins]
    evidence += [e for p in plugins for e in mounts[p]]
    return Measurement(
        plugins,
        {"count": len(plugins), "imported": sorted(imported), "mount_sites": sum(len(mounts[p]) for p in plugins)},
        tuple(sorted(set(evidence))),
    )


def _surface_kind(node: tree_sitter.Node) -> str:
    node = unwrap(node)
    value = js_literal(node)
    if node.type == "string":
        return str(value)
    if node.type == "object":
        for pair in node.named_children:
            if pair.type == "pair" and pair.child_by_field_name("key").text.decode() in ("op", "'op'"):
                inner = unwrap(pair.child_by_field_name("value"))
                if inner.type == "string":
                    return str(js_literal(inner))
    return "computed"


@reducer
def surface_op_kinds(ctx: FactContext, spec, matches: list[Match]) -> Measurement:
    _require(matches, spec)
    by_package: dict[str, set[str]] = {}
    evidence = []
    for m in matches:
        kind = _surface_kind(m.node("value"))
        by_package.setdefault(package_of(m.path), set()).add(kind)
        evidence.append(evidence_of(m.path, m.node("pair")))
    value = {pkg: sorted(kinds) for pkg, kinds in sorted(by_package.items())}
    agent_loop = spec.params["agent_loop"]
    fields = {
        "agent_loop": value.get(agent_loop, []),
        "replace_packages": sorted(p for p, kinds in value.items() if "replace" in kinds),
        "kinds": sorted({k for kinds in value.values() for k in kinds}),
        "sites": len(matches),
    }
    return Measurement(value, fields, tuple(evidence))


def _depth_limit_of(obj: tree_sitter.Node) -> bool | None:
    for pair in obj.named_children:
        if pair.type == "pair" and pair.child_by_field_name("key").text.decode() == "depthLimit":
            value = js_literal(pair.child_by_field_name("value"))
            return value if isinstance(value, bool) else None
    return None


def _object_in(node: tree_sitter.Node) -> tree_sitter.Node | None:
    """The object literal a capabilities value holds, through `Object.freeze({...})`."""
    if node.type == "object":
        return node
    if node.type == "call_expression":
        args = node.child_by_field_name("arguments")
        for a in args.named_children if args else ():
            if a.type == "object":
                return a
    return None


@reducer
def depth_limit(ctx: FactContext, spec, matches: list[Match]) -> Measurement:
    _require(matches, spec)
    constants: dict[str, tuple[bool | None, Evidence]] = {}
    for m in matches:
        if m.node("constant") is not None:
            obj = _object_in(m.node("constant_value"))
            constants[m.text("constant")] = (
                _depth_limit_of(obj) if obj is not None else None,
                evidence_of(m.path, m.node("constant_declaration")),
            )
    providers = {}
    evidence = []
    mentions = ctx.snapshot.grep_files(spec.params["mention"])
    for m in matches:
        if m.node("provider") is None:
            continue
        value_node = m.node("value")
        package = package_of(m.path)
        obj = _object_in(value_node)
        if obj is not None:
            limit, declared = _depth_limit_of(obj), "explicit"
        elif value_node.type == "identifier" and value_node.text.decode() in constants:
            name = value_node.text.decode()
            limit, where = constants[name]
            declared = f"inherited from {name}"
            evidence.append(where)
        else:
            raise CannotEvaluate(
                f"{m.path}:{value_node.start_point[0] + 1}: capabilities of {m.text('provider')} are computed; "
                "their depthLimit cannot be read from the syntax tree",
                (evidence_of(m.path, value_node),),
            )
        key = PurePosixPath(package).name
        if key in providers:
            raise CannotEvaluate(
                f"{package} declares two providers ({providers[key]['class']}, {m.text('provider')}); "
                "the rule counts one per package",
                (evidence_of(m.path, m.node("declaration")),),
            )
        providers[key] = {
            "class": m.text("provider"),
            "depthLimit": limit,
            "declared": declared,
            "mentions_delegation_depth": any(p.startswith(package + "/") for p in mentions),  # any file, tests too
        }
        evidence.append(evidence_of(m.path, m.node("declaration")))
    shared_file = spec.params["shared_default_file"]
    shared = [v for n, v in constants.items() if v[1].path == shared_file]
    if len(shared) != 1:
        raise CannotEvaluate(f"expected one shared SubagentCapabilities constant in {shared_file}, found {len(shared)}")
    value = dict(sorted(providers.items()))
    fields = {
        "out_of_process_default": shared[0][0],
        "enforcing": sorted(p for p, v in value.items() if v["depthLimit"] is True),
        "not_enforcing": sorted(p for p, v in value.items() if v["depthLimit"] is False),
        "inheriting_default": sorted(p for p, v in value.items() if v["declared"].startswith("inherited")),
        "without_delegation_depth": sorted(p for p, v in value.items() if not v["mentions_delegation_depth"]),
        "count": len(value),
    }
    return Measurement(value, fields, tuple(sorted(set(evidence))))


_FUNCTIONS = frozenset({"function_declaration", "function_expression", "arrow_function", "method_definition", "generator_function_declaration"})
_LITERALS = frozenset({"string", "number", "true", "false", "null", "undefined", "template_string"})


def _enclosing_function(node: tree_sitter.Node) -> tree_sitter.Node | None:
    while node is not None and node.type not in _FUNCTIONS:
        node = node.parent
    return node


def _deduplicates(fn: tree_sitter.Node) -> tree_sitter.Node | None:
    """An `if (... a === b ...) return` where neither a nor b is a literal."""
    for node in _walk(fn):
        if node.type != "if_statement":
            continue
        consequence = node.child_by_field_name("consequence")
        if consequence is None or not (
            consequence.type == "return_statement"
            or (consequence.type == "statement_block" and consequence.named_child_count == 1
                and consequence.named_children[0].type == "return_statement")
        ):
            continue
        for cmp in _walk(node.child_by_field_name("condition")):
            if cmp.type == "binary_expression" and cmp.child_by_field_name("operator").type == "===":
                left, right = cmp.child_by_field_name("left"), cmp.child_by_field_name("right")
                if left.type not in _LITERALS and right.type not in _LITERALS:
                    return node
    return None


@reducer
def snapshot_producers(ctx: FactContext, spec, matches: list[Match]) -> Measurement:
    _require(matches, spec)
    producers = {}
    evidence = []
    for m in matches:
        package = package_of(m.path)
        fn = _enclosing_function(m.node("pair"))
        scope = fn if fn is not None else m.node("pair")
        guard = _deduplicates(scope) if fn is not None else None
        ops = sorted({
            _surface_kind(p.child_by_field_name("value"))
            for p in _walk(scope)
            if p.type == "pair" and p.child_by_field_name("key").text.decode() == "surfaceOp"
        })
        entry = producers.setdefault(package, {"sites": [], "deduplicates": False, "surface_ops": set()})
        entry["sites"].append(f"{m.path}:{m.node('pair').start_point[0] + 1}")
        entry["deduplicates"] |= guard is not None
        entry["surface_ops"] |= set(ops)
        evidence.append(evidence_of(m.path, m.node("pair")))
        if guard is not None:
            evidence.append(evidence_of(m.path, guard))
    value = {
        pkg: {"sites": v["sites"], "deduplicates": v["deduplicates"], "surface_ops": sorted(v["surface_ops"])}
        for pkg, v in sorted(producers.items())
    }
    fields = {
        "count": len(value),
        "producers": sorted(PurePosixPath(p).name for p in value),
        "deduplicating": sorted(PurePosixPath(p).name for p, v in value.items() if v["deduplicates"]),
        "not_deduplicating": sorted(PurePosixPath(p).name for p, v in value.items() if not v["deduplicates"]),
        "setting_surface_op": sorted(PurePosixPath(p).name for p, v in value.items() if v["surface_ops"]),
    }
    return Measurement(value, fields, tuple(sorted(set(evidence))))


@reducer
def retired_header_fields(ctx: FactContext, spec, matches: list[Match]) -> Measurement:
    fields_found: set[str] = set()
    evidence = []
    for m in matches:
        found = set()
        for call in _walk(m.node("condition")):
            if call.type != "call_expression":
                continue
            fn = call.child_by_field_name("function")
            if fn is None or fn.text.decode().replace(" ", "") != "Object.hasOwn":
                continue
            if call.parent is not None and call.parent.type == "unary_expression" and call.parent.child(0).type == "!":
                continue  # `!Object.hasOwn(x, 'f')` throws when f is missing: a required field, not a retired one
            args = [a for a in call.child_by_field_name("arguments").named_children]
            if len(args) == 2 and args[1].type == "string":
                found.add(str(js_literal(args[1])))
        if found:
            fields_found |= found
            evidence.append(evidence_of(m.path, m.node("guard")))
    if not fields_found:
        raise CannotEvaluate(f"no throwing `Object.hasOwn` guard in {', '.join(spec.paths)}")
    names = sorted(fields_found)
    return Measurement(names, {"count": len(names)}, tuple(evidence))


@reducer
def approval_fallback(ctx: FactContext, spec, matches: list[Match]) -> Measurement:
    outcomes = []
    evidence = []
    for m in matches:
        strings = [n for n in _walk(m.node("fallback")) if n.type == "string"]
        for s in strings:
            outcomes.append(str(js_literal(s)))
            evidence.append(evidence_of(m.path, m.node("site")))
    if not outcomes:
        raise CannotEvaluate(f"no fallback outcome found in {', '.join(spec.paths)}")
    distinct = sorted(set(outcomes))
    value = distinct[0] if len(distinct) == 1 else distinct
    return Measurement(value, {"outcomes": distinct, "sites": len(outcomes)}, tuple(sorted(set(evidence))))


# -- manifests -----------------------------------------------------------------


def _json(ctx: FactContext, path: str) -> dict:
    try:
        data = json.loads(ctx.text(path))
    except json.JSONDecodeError as exc:
        raise CannotEvaluate(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from None
    if not isinstance(data, dict):
        raise CannotEvaluate(f"{path}: not a JSON object")
    return data


def _key_evidence(ctx: FactContext, path: str, key: str) -> Evidence:
    line = _line_of(ctx.text(path), f'"{key}"') or 1
    return Evidence(path, LineRange(line, line))


@reducer
def workspace_packages(ctx: FactContext, spec, matches) -> Measurement:
    path = spec.paths[0]
    try:
        config = yaml.safe_load(ctx.text(path)) or {}
    except yaml.YAMLError as exc:
        raise CannotEvaluate(f"{path}: not valid YAML ({exc})") from None
    globs = [g for g in config.get("packages", []) if isinstance(g, str)]
    include = [glob_regex(g.rstrip("/")) for g in globs if not g.startswith("!")]
    exclude = [glob_regex(g[1:].rstrip("/")) for g in globs if g.startswith("!")]
    members = sorted(
        str(PurePosixPath(p).parent)
        for p in ctx.blob_ids()
        if p.endswith("/package.json")
        and any(r.match(str(PurePosixPath(p).parent)) for r in include)
        and not any(r.match(str(PurePosixPath(p).parent)) for r in exclude)
    )
    families = sorted({m.split("/")[1] for m in members if m.startswith("packages/") and m.count("/") == 2})
    text = ctx.text(path)
    evidence = tuple(Evidence(path, LineRange(n, n)) for g in globs if (n := _line_of(text, g)))
    return Measurement(len(members), {"count": len(members), "members": members, "families": families, "family_count": len(families)}, evidence)


@reducer
def root_dependencies(ctx: FactContext, spec, matches) -> Measurement:
    data = _json(ctx, "package.json")
    prod, dev = data.get("dependencies") or {}, data.get("devDependencies") or {}
    evidence = tuple(_key_evidence(ctx, "package.json", k) for k in ("dependencies", "devDependencies") if k in data)
    return Measurement(
        {"production": len(prod), "development": len(dev)},
        {"production": len(prod), "development": len(dev), "development_names": sorted(dev)},
        evidence,
    )


@reducer
def vendored_packages(ctx: FactContext, spec, matches) -> Measurement:
    manifests = ctx.paths(spec.paths)
    names = sorted(str(_json(ctx, p).get("name", PurePosixPath(p).parent.name)) for p in manifests)
    evidence = tuple(_key_evidence(ctx, p, "name") for p in manifests)
    return Measurement(names, {"count": len(names), "folders": sorted(str(PurePosixPath(p).parent) for p in manifests)}, evidence)


@reducer
def patches(ctx: FactContext, spec, matches) -> Measurement:
    files = ctx.paths(spec.paths)
    declared = {}
    root = _json(ctx, "package.json")
    for source in ((root.get("pnpm") or {}).get("patchedDependencies"), root.get("patchedDependencies")):
        declared.update(source or {})
    if "pnpm-workspace.yaml" in ctx.blob_ids():
        workspace = yaml.safe_load(ctx.text("pnpm-workspace.yaml")) or {}
        declared.update(workspace.get("patchedDependencies") or {})
    specs = sorted(set(declared) | {PurePosixPath(f).name.removesuffix(".patch") for f in files})
    evidence = tuple(Evidence(f, LineRange(1, 1)) for f in files)
    return Measurement(specs, {"count": len(specs), "files": files, "declared": sorted(declared)}, evidence)


@reducer
def sdk_dependencies(ctx: FactContext, spec, matches) -> Measurement:
    value, fields, evidence = {}, {}, []
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
                line = _line_of(text, f'"{dep}"', text.find(f'"{section}"'))
                evidence.append(Evidence(path, LineRange(line, line)))
                break
        else:
            raise CannotEvaluate(f"{path} does not depend on {dep}")
    return Measurement(value, fields, tuple(evidence))


# -- scale ---------------------------------------------------------------------


@reducer
def typescript_files(ctx: FactContext, spec, matches) -> Measurement:
    files = ctx.paths(spec.paths)
    test = [p for p in files if is_test_path(p)]
    support = [p for p in files if p.startswith("packages/test-support/") and not is_test_path(p)]
    fields = {
        "total": len(files),
        "test": len(test),
        "source": len(files) - len(test),
        "test_with_support": len(test) + len(support),
        "source_without_support": len(files) - len(test) - len(support),
    }
    return Measurement(len(files), fields, ())


@reducer
def test_files(ctx: FactContext, spec, matches) -> Measurement:
    files = ctx.paths(spec.paths)
    vitest = re.compile(r"(^|/)vitest[^/]*\.config\.ts$")
    fields = {
        "spec": sum(p.endswith(".spec.ts") for p in files),
        "spec_tsx": sum(p.endswith(".spec.tsx") for p in files),
        "e2e": sum(p.endswith(".e2e.ts") for p in files),
        "vitest_configs": sum(bool(vitest.search(p)) for p in files),
    }
    evidence = tuple(Evidence(p, LineRange(1, 1)) for p in files if vitest.search(p))
    return Measurement(dict(fields), fields, evidence)


@reducer
def docs_by_language(ctx: FactContext, spec, matches) -> Measurement:
    files = ctx.paths(spec.paths)
    chinese = sum(p.endswith(".zh.md") for p in files)
    fields = {"total": len(files), "chinese": chinese, "english": len(files) - chinese}
    return Measurement(len(files), fields, ())


@reducer
def markers(ctx: FactContext, spec, matches) -> Measurement:
    words = spec.params["words"]
    allowed = set(ctx.paths(spec.paths))
    hits = [h for h in ctx.snapshot.grep_lines("|".join(words), word=True) if h[0] in allowed]
    per_word = {w: sum(bool(re.search(rf"\b{w}\b", text)) for _, _, text in hits) for w in words}
    evidence = tuple(Evidence(p, LineRange(n, n)) for p, n, _ in hits)
    return Measurement(len(hits), {"lines": len(hits), **per_word}, evidence)


@reducer
def absent_strings(ctx: FactContext, spec, matches) -> Measurement:
    value = {}
    evidence = []
    for s in spec.params["strings"]:
        hits = ctx.snapshot.grep_lines(re.escape(s), ignore_case=True)
        value[s] = len({p for p, _, _ in hits})
        evidence += [Evidence(p, LineRange(n, n)) for p, n, _ in hits[:50]]
    fields = {f"{s}_files": n for s, n in value.items()}
    fields["total_files"] = sum(value.values())
    return Measurement(value, fields, tuple(evidence))
