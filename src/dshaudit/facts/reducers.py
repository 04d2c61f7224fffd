"""Reducers: how matches become a fact's value.

A detector that reads syntax does it in two steps, so that its work on one
file can be cached by blob id and never redone:

- `per_file(spec, path, matches) -> partial`: JSON-able facts about one file
  (names found, literal values, evidence as [path, first, last]);
- `combine(spec, ctx, partials) -> Measurement`: the fact's value from the
  partials of every file it read, in path order.

A detector about the tree as a whole (manifests, file counts, text over every
file) is one `whole(ctx, spec) -> Measurement`: it reads a few small files,
only paths, or asks git grep; its result is cached per commit.
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
    glob_regex,
    js_literal,
    layout,
    unwrap,
)

PER_FILE = {}  # name -> per_file(spec, path, matches) for query detectors
COMBINE = {}  # name -> combine(spec, ctx, partials)
WHOLE = {}  # name -> whole(ctx, spec)


def per_file(name):
    def register(fn):
        PER_FILE[name] = fn
        return fn

    return register


def combine(name):
    def register(fn):
        COMBINE[name] = fn
        return fn

    return register


def whole(fn):
    WHOLE[fn.__name__] = fn
    return fn


def ev(path: str, node: tree_sitter.Node) -> list:
    return [path, node.start_point[0] + 1, node.end_point[0] + 1]


def evidence(items) -> tuple[Evidence, ...]:
    return tuple(Evidence(p, LineRange(a, b)) for p, a, b in items)


def _walk(node: tree_sitter.Node):
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))


def _line_of(text: str, needle: str, start: int = 0) -> int | None:
    i = text.find(needle, start)
    return None if i < 0 else text.count("\n", 0, i) + 1


def _require(items, spec) -> None:
    if not items:
        raise CannotEvaluate(f"nothing matched in {', '.join(spec.paths)}: the code this fact reads is not there")


def _flat(partials, key: str) -> list:
    return [item for _, partial in partials for item in partial.get(key, [])]


# -- generic -------------------------------------------------------------------


@per_file("captured_names")
def _(spec, path, matches: list[Match]) -> dict:
    capture, node = spec.params["capture"], spec.params.get("node", spec.params["capture"])
    return {"names": [[m.text(capture), ev(path, m.node(node))] for m in matches]}


@combine("captured_names")
def _(spec, ctx, partials) -> Measurement:
    found = _flat(partials, "names")
    _require(found, spec)
    names = [n for n, _ in found]
    return Measurement(names, {"count": len(names), "names": sorted(names)}, evidence(e for _, e in found))


@per_file("single_literal")
def _(spec, path, matches: list[Match]) -> dict:
    key = spec.params["key"]
    return {"values": [[js_literal(m.node("value")), ev(path, m.node("value"))] for m in matches if m.text("key") == key]}


@combine("single_literal")
def _(spec, ctx, partials) -> Measurement:
    key = spec.params["key"]
    sites = _flat(partials, "values")
    _require(sites, spec)
    values = [v for v, _ in sites]
    found = evidence(e for _, e in sites)
    distinct = sorted({json.dumps(v) for v in values})
    if len(distinct) != 1:
        raise CannotEvaluate(f"{key} is given {len(distinct)} different values: {', '.join(distinct)}", found)
    value = values[0]
    fields = {"sites": len(sites)}
    if spec.params.get("minutes") and isinstance(value, (int, float)):
        fields["minutes"] = value / 60_000
    return Measurement(value, fields, found)


# -- structural ----------------------------------------------------------------


@per_file("static_loader_plugins")
def _(spec, path, matches: list[Match]) -> dict:
    imported, used = {}, []
    for m in matches:
        if m.node("plugin") is not None:
            imported[m.text("plugin")] = ev(path, m.node("import"))
    for m in matches:
        names = set()
        if m.node("mounted") is not None:
            names.add(m.text("mounted"))
        if m.node("mounted_expr") is not None:
            names |= {n.text.decode() for n in _walk(m.node("mounted_expr")) if n.type == "identifier"}
        for name in sorted(names):
            used.append([name, ev(path, m.node("mount"))])
    return {"imported": imported, "used": used}


@combine("static_loader_plugins")
def _(spec, ctx, partials) -> Measurement:
    imported: dict[str, list] = {}
    for _, partial in partials:
        imported.update(partial["imported"])
    if not imported:
        raise CannotEvaluate(f"no `@deepseek-ai/cordis-plugin-*` default import in {', '.join(spec.paths)}")
    mounts: dict[str, list] = {}
    for name, where in _flat(partials, "used"):
        if name in imported:
            mounts.setdefault(name, []).append(where)
    plugins = sorted(mounts)
    found = [imported[p] for p in plugins] + [e for p in plugins for e in mounts[p]]
    return Measurement(
        plugins,
        {"count": len(plugins), "imported": sorted(imported), "mount_sites": sum(len(mounts[p]) for p in plugins)},
        tuple(sorted(set(evidence(found)))),
    )


def _surface_kind(node: tree_sitter.Node) -> str:
    node = unwrap(node)
    if node.type == "string":
        return str(js_literal(node))
    if node.type == "object":
        for pair in node.named_children:
            if pair.type == "pair" and pair.child_by_field_name("key").text.decode() in ("op", "'op'"):
                inner = unwrap(pair.child_by_field_name("value"))
                if inner.type == "string":
                    return str(js_literal(inner))
    return "computed"


@per_file("surface_op_kinds")
def _(spec, path, matches: list[Match]) -> dict:
    return {"sites": [[_surface_kind(m.node("value")), ev(path, m.node("pair"))] for m in matches]}


@combine("surface_op_kinds")
def _(spec, ctx, partials) -> Measurement:
    sites = _flat(partials, "sites")
    _require(sites, spec)
    by_package: dict[str, set[str]] = {}
    for kind, (path, _, _) in sites:
        by_package.setdefault(layout().package_of(path), set()).add(kind)
    value = {pkg: sorted(kinds) for pkg, kinds in sorted(by_package.items())}
    fields = {
        "agent_loop": value.get(spec.params["agent_loop"], []),
        "replace_packages": sorted(p for p, kinds in value.items() if "replace" in kinds),
        "kinds": sorted({k for kinds in value.values() for k in kinds}),
        "sites": len(sites),
    }
    return Measurement(value, fields, evidence(e for _, e in sites))


def _depth_limit_of(obj: tree_sitter.Node) -> bool | None:
    for pair in obj.named_children:
        if pair.type == "pair" and pair.child_by_field_name("key").text.decode() == "depthLimit":
            value = js_literal(pair.child_by_field_name("value"))
            return value if isinstance(value, bool) else None
    return None


def _object_in(node: tree_sitter.Node) -> tree_sitter.Node | None:
    """The object literal a capabilities value holds, through `Object.freeze({...})`."""
    node = unwrap(node)
    if node.type == "object":
        return node
    if node.type == "call_expression":
        args = node.child_by_field_name("arguments")
        for a in args.named_children if args else ():
            if a.type == "object":
                return a
    return None


@per_file("depth_limit")
def _(spec, path, matches: list[Match]) -> dict:
    constants, providers = [], []
    for m in matches:
        if m.node("constant") is not None:
            obj = _object_in(m.node("constant_value"))
            constants.append([m.text("constant"), _depth_limit_of(obj) if obj is not None else None,
                              ev(path, m.node("constant_declaration"))])
        elif m.node("provider") is not None:
            value = unwrap(m.node("value"))
            obj = _object_in(value)
            if obj is not None:
                ref = {"explicit": _depth_limit_of(obj)}
            elif value.type == "identifier":
                ref = {"constant": value.text.decode()}
            else:
                ref = {"computed": ev(path, value)}
            providers.append([m.text("provider"), ref, ev(path, m.node("declaration"))])
    return {"constants": constants, "providers": providers}


@combine("depth_limit")
def _(spec, ctx, partials) -> Measurement:
    constants = {name: (limit, where) for name, limit, where in _flat(partials, "constants")}
    mentions = ctx.files_with(spec.params["mention"], spec.params["mention_paths"], filter_only=False)
    providers, found = {}, []
    for cls, ref, where in _flat(partials, "providers"):
        package = layout().package_of(where[0])
        if "explicit" in ref:
            limit, declared = ref["explicit"], "explicit"
        elif ref.get("constant") in constants:
            limit, origin = constants[ref["constant"]]
            declared = f"inherited from {ref['constant']}"
            found.append(origin)
        else:
            at = ref.get("computed", where)
            raise CannotEvaluate(
                f"{at[0]}:{at[1]}: capabilities of {cls} are computed; their depthLimit cannot be read from the syntax tree",
                evidence([at]),
            )
        key = PurePosixPath(package).name
        if key in providers:
            raise CannotEvaluate(
                f"{package} declares two providers ({providers[key]['class']}, {cls}); the rule counts one per package",
                evidence([where]),
            )
        providers[key] = {
            "class": cls,
            "depthLimit": limit,
            "declared": declared,
            "mentions_delegation_depth": any(p.startswith(package + "/") for p in mentions),  # any file, tests too
        }
        found.append(where)
    _require(providers, spec)
    shared_file = spec.params["shared_default_file"]
    shared = [v for v in constants.values() if v[1][0] == shared_file]
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
    return Measurement(value, fields, tuple(sorted(set(evidence(found)))))


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


@per_file("snapshot_producers")
def _(spec, path, matches: list[Match]) -> dict:
    sites = []
    for m in matches:
        fn = _enclosing_function(m.node("pair"))
        scope = fn if fn is not None else m.node("pair")
        guard = _deduplicates(scope) if fn is not None else None
        ops = sorted({
            _surface_kind(p.child_by_field_name("value"))
            for p in _walk(scope)
            if p.type == "pair" and p.child_by_field_name("key").text.decode() == "surfaceOp"
        })
        sites.append({"site": ev(path, m.node("pair")), "guard": ev(path, guard) if guard is not None else None, "ops": ops})
    return {"sites": sites}


@combine("snapshot_producers")
def _(spec, ctx, partials) -> Measurement:
    sites = _flat(partials, "sites")
    _require(sites, spec)
    producers, found = {}, []
    for s in sites:
        path, line, _ = s["site"]
        entry = producers.setdefault(layout().package_of(path), {"sites": [], "deduplicates": False, "surface_ops": set()})
        entry["sites"].append(f"{path}:{line}")
        entry["deduplicates"] |= s["guard"] is not None
        entry["surface_ops"] |= set(s["ops"])
        found.append(s["site"])
        if s["guard"] is not None:
            found.append(s["guard"])
    value = {
        pkg: {"sites": v["sites"], "deduplicates": v["deduplicates"], "surface_ops": sorted(v["surface_ops"])}
        for pkg, v in sorted(producers.items())
    }
    name = lambda p: PurePosixPath(p).name  # noqa: E731
    fields = {
        "count": len(value),
        "producers": sorted(name(p) for p in value),
        "deduplicating": sorted(name(p) for p, v in value.items() if v["deduplicates"]),
        "not_deduplicating": sorted(name(p) for p, v in value.items() if not v["deduplicates"]),
        "setting_surface_op": sorted(name(p) for p, v in value.items() if v["surface_ops"]),
    }
    return Measurement(value, fields, tuple(sorted(set(evidence(found)))))


@per_file("retired_header_fields")
def _(spec, path, matches: list[Match]) -> dict:
    guards = []
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
            args = call.child_by_field_name("arguments").named_children
            if len(args) == 2 and args[1].type == "string":
                found.add(str(js_literal(args[1])))
        if found:
            guards.append([sorted(found), ev(path, m.node("guard"))])
    return {"guards": guards}


@combine("retired_header_fields")
def _(spec, ctx, partials) -> Measurement:
    guards = _flat(partials, "guards")
    if not guards:
        raise CannotEvaluate(f"no throwing `Object.hasOwn` guard in {', '.join(spec.paths)}")
    names = sorted({f for fields, _ in guards for f in fields})
    return Measurement(names, {"count": len(names)}, evidence(e for _, e in guards))


@per_file("approval_fallback")
def _(spec, path, matches: list[Match]) -> dict:
    out = []
    for m in matches:
        for s in (n for n in _walk(m.node("fallback")) if n.type == "string"):
            out.append([str(js_literal(s)), ev(path, m.node("site"))])
    return {"outcomes": out}


@combine("approval_fallback")
def _(spec, ctx, partials) -> Measurement:
    found = _flat(partials, "outcomes")
    if not found:
        raise CannotEvaluate(f"no fallback outcome found in {', '.join(spec.paths)}")
    distinct = sorted({o for o, _ in found})
    value = distinct[0] if len(distinct) == 1 else distinct
    return Measurement(value, {"outcomes": distinct, "sites": len(found)}, tuple(sorted(set(evidence(e for _, e in found)))))


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


@whole
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
    families = sorted({f for m in members if (f := layout().family_of(m))})
    text = ctx.text(path)
    evidence = tuple(Evidence(path, LineRange(n, n)) for g in globs if (n := _line_of(text, g)))
    return Measurement(len(members), {"count": len(members), "members": members, "families": families, "family_count": len(families)}, evidence)


@whole
def root_dependencies(ctx: FactContext, spec, matches) -> Measurement:
    data = _json(ctx, "package.json")
    prod, dev = data.get("dependencies") or {}, data.get("devDependencies") or {}
    evidence = tuple(_key_evidence(ctx, "package.json", k) for k in ("dependencies", "devDependencies") if k in data)
    return Measurement(
        {"production": len(prod), "development": len(dev)},
        {"production": len(prod), "development": len(dev), "development_names": sorted(dev)},
        evidence,
    )


@whole
def vendored_packages(ctx: FactContext, spec, matches) -> Measurement:
    manifests = ctx.paths(spec.paths)
    names = sorted(str(_json(ctx, p).get("name", PurePosixPath(p).parent.name)) for p in manifests)
    evidence = tuple(_key_evidence(ctx, p, "name") for p in manifests)
    return Measurement(names, {"count": len(names), "folders": sorted(str(PurePosixPath(p).parent) for p in manifests)}, evidence)


@whole
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


@whole
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


@whole
def typescript_files(ctx: FactContext, spec, matches) -> Measurement:
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


@whole
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


@whole
def docs_by_language(ctx: FactContext, spec, matches) -> Measurement:
    files = ctx.paths(spec.paths)
    chinese = sum(p.endswith(".zh.md") for p in files)
    fields = {"total": len(files), "chinese": chinese, "english": len(files) - chinese}
    return Measurement(len(files), fields, ())


# Text over the whole tree is git grep's job: it scans every blob of a commit
# in C faster than Python reads the changed ones, and the fact is cached per commit.


def _marker_grep(spec) -> tuple[str, bool, bool]:
    return "|".join(map(re.escape, spec.params["words"])), True, False


@whole
def markers(ctx: FactContext, spec, matches) -> Measurement:
    words = spec.params["words"]
    allowed = set(ctx.paths(list(spec.paths)))
    hits = [h for h in ctx.snapshot.grep.lines(*_marker_grep(spec)) if h[0] in allowed]
    per_word = {w: sum(bool(re.search(rf"\b{re.escape(w)}\b", text)) for _, _, text in hits) for w in words}
    return Measurement(len(hits), {"lines": len(hits), **per_word}, tuple(Evidence(p, LineRange(n, n)) for p, n, _ in hits))


markers.greps = lambda spec: [_marker_grep(spec)]


@whole
def absent_strings(ctx: FactContext, spec, matches) -> Measurement:
    value, found = {}, []
    for s in spec.params["strings"]:
        hits = ctx.snapshot.grep.lines(re.escape(s), False, True)
        value[s] = len({p for p, _, _ in hits})
        found += [Evidence(p, LineRange(n, n)) for p, n, _ in hits][:50]
    fields = {f"{s}_files": n for s, n in value.items()}
    fields["total_files"] = sum(value.values())
    return Measurement(value, fields, tuple(found))


absent_strings.greps = lambda spec: [(re.escape(s), False, True) for s in spec.params["strings"]]
