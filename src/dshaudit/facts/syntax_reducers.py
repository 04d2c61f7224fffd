"""The reducers of detectors that read syntax trees: each a `per_file` half,
cached by blob id, and a `combine` half over every file's partial."""

from __future__ import annotations

import json
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any

import tree_sitter

from dshaudit.facts.engine import FactContext, Match, Measurement, layout
from dshaudit.facts.reducing import Partial, Partials, Place, combine, ev, evidence, flat, per_file, require
from dshaudit.lang.parsing import CannotEvaluate, field_node, js_literal, node_text, unwrap
from dshaudit.lang.symbols import walk

if TYPE_CHECKING:
    from dshaudit.facts.specs import DetectorSpec


# -- generic -------------------------------------------------------------------


@per_file("captured_names")
def _(spec: DetectorSpec, path: str, matches: list[Match]) -> Partial:
    capture, node = spec.params["capture"], spec.params.get("node", spec.params["capture"])
    return {"names": [[node_text(m.required(capture)), ev(path, m.required(node))] for m in matches]}


@combine("captured_names")
def _(spec: DetectorSpec, ctx: FactContext, partials: Partials) -> Measurement:
    found = flat(partials, "names")
    require(found, spec)
    names = [n for n, _ in found]
    return Measurement(names, {"count": len(names), "names": sorted(names)}, evidence(e for _, e in found))


@per_file("single_literal")
def _(spec: DetectorSpec, path: str, matches: list[Match]) -> Partial:
    key = spec.params["key"]
    return {
        "values": [
            [js_literal(m.required("value")), ev(path, m.required("value"))] for m in matches if m.text("key") == key
        ]
    }


@combine("single_literal")
def _(spec: DetectorSpec, ctx: FactContext, partials: Partials) -> Measurement:
    key = spec.params["key"]
    sites = flat(partials, "values")
    require(sites, spec)
    values = [v for v, _ in sites]
    found = evidence(e for _, e in sites)
    distinct = sorted({json.dumps(v) for v in values})
    if len(distinct) != 1:
        raise CannotEvaluate(f"{key} is given {len(distinct)} different values: {', '.join(distinct)}", found)
    value = values[0]
    fields: dict[str, int | float] = {"sites": len(sites)}
    if spec.params.get("minutes") and isinstance(value, (int, float)):
        fields["minutes"] = value / 60_000
    return Measurement(value, fields, found)


# -- structural ----------------------------------------------------------------


@per_file("static_loader_plugins")
def _(spec: DetectorSpec, path: str, matches: list[Match]) -> Partial:
    imported: dict[str, Place] = {}
    used: list[list[Any]] = []
    for m in matches:
        if (plugin := m.node("plugin")) is not None:
            imported[node_text(plugin)] = ev(path, m.required("import"))
    for m in matches:
        names: set[str] = set()
        if (mounted := m.node("mounted")) is not None:
            names.add(node_text(mounted))
        if (mounted_expr := m.node("mounted_expr")) is not None:
            names |= {node_text(n) for n in walk(mounted_expr) if n.type == "identifier"}
        for name in sorted(names):
            used.append([name, ev(path, m.required("mount"))])
    return {"imported": imported, "used": used}


@combine("static_loader_plugins")
def _(spec: DetectorSpec, ctx: FactContext, partials: Partials) -> Measurement:
    imported: dict[str, list] = {}
    for _, partial in partials:
        imported.update(partial["imported"])
    if not imported:
        raise CannotEvaluate(f"no `@deepseek-ai/cordis-plugin-*` default import in {', '.join(spec.paths)}")
    mounts: dict[str, list] = {}
    for name, where in flat(partials, "used"):
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
            if pair.type == "pair" and node_text(field_node(pair, "key")) in ("op", "'op'"):
                inner = unwrap(field_node(pair, "value"))
                if inner.type == "string":
                    return str(js_literal(inner))
    return "computed"


@per_file("surface_op_kinds")
def _(spec: DetectorSpec, path: str, matches: list[Match]) -> Partial:
    return {"sites": [[_surface_kind(m.required("value")), ev(path, m.required("pair"))] for m in matches]}


@combine("surface_op_kinds")
def _(spec: DetectorSpec, ctx: FactContext, partials: Partials) -> Measurement:
    sites = flat(partials, "sites")
    require(sites, spec)
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
        if pair.type == "pair" and node_text(field_node(pair, "key")) == "depthLimit":
            value = js_literal(field_node(pair, "value"))
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
def _(spec: DetectorSpec, path: str, matches: list[Match]) -> Partial:
    constants: list[list[Any]] = []
    providers: list[list[Any]] = []
    for m in matches:
        if (constant := m.node("constant")) is not None:
            obj = _object_in(m.required("constant_value"))
            constants.append(
                [
                    node_text(constant),
                    _depth_limit_of(obj) if obj is not None else None,
                    ev(path, m.required("constant_declaration")),
                ]
            )
        elif (provider := m.node("provider")) is not None:
            value = unwrap(m.required("value"))
            obj = _object_in(value)
            ref: dict[str, bool | str | Place | None]
            if obj is not None:
                ref = {"explicit": _depth_limit_of(obj)}
            elif value.type == "identifier":
                ref = {"constant": node_text(value)}
            else:
                ref = {"computed": ev(path, value)}
            providers.append([node_text(provider), ref, ev(path, m.required("declaration"))])
    return {"constants": constants, "providers": providers}


@combine("depth_limit")
def _(spec: DetectorSpec, ctx: FactContext, partials: Partials) -> Measurement:
    constants = {name: (limit, where) for name, limit, where in flat(partials, "constants")}
    mentions = ctx.files_with(spec.params["mention"], spec.params["mention_paths"], filter_only=False)
    providers: dict[str, dict[str, Any]] = {}
    found: list[Any] = []
    for cls, ref, where in flat(partials, "providers"):
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
                f"{at[0]}:{at[1]}: capabilities of {cls} are computed; "
                "their depthLimit cannot be read from the syntax tree",
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
    require(providers, spec)
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


_FUNCTIONS = frozenset(
    {
        "function_declaration",
        "function_expression",
        "arrow_function",
        "method_definition",
        "generator_function_declaration",
    }
)
_LITERALS = frozenset({"string", "number", "true", "false", "null", "undefined", "template_string"})


def _enclosing_function(node: tree_sitter.Node) -> tree_sitter.Node | None:
    current: tree_sitter.Node | None = node
    while current is not None and current.type not in _FUNCTIONS:
        current = current.parent
    return current


def _deduplicates(fn: tree_sitter.Node) -> tree_sitter.Node | None:
    """An `if (... a === b ...) return` where neither a nor b is a literal."""
    for node in walk(fn):
        if node.type != "if_statement":
            continue
        consequence = node.child_by_field_name("consequence")
        if consequence is None or not (
            consequence.type == "return_statement"
            or (
                consequence.type == "statement_block"
                and consequence.named_child_count == 1
                and consequence.named_children[0].type == "return_statement"
            )
        ):
            continue
        for cmp in walk(field_node(node, "condition")):
            if cmp.type == "binary_expression" and field_node(cmp, "operator").type == "===":
                left, right = field_node(cmp, "left"), field_node(cmp, "right")
                if left.type not in _LITERALS and right.type not in _LITERALS:
                    return node
    return None


@per_file("snapshot_producers")
def _(spec: DetectorSpec, path: str, matches: list[Match]) -> Partial:
    sites = []
    for m in matches:
        pair = m.required("pair")
        fn = _enclosing_function(pair)
        scope = fn if fn is not None else pair
        guard = _deduplicates(fn) if fn is not None else None
        ops = sorted(
            {
                _surface_kind(field_node(p, "value"))
                for p in walk(scope)
                if p.type == "pair" and node_text(field_node(p, "key")) == "surfaceOp"
            }
        )
        sites.append({"site": ev(path, pair), "guard": ev(path, guard) if guard is not None else None, "ops": ops})
    return {"sites": sites}


@combine("snapshot_producers")
def _(spec: DetectorSpec, ctx: FactContext, partials: Partials) -> Measurement:
    sites = flat(partials, "sites")
    require(sites, spec)
    producers: dict[str, dict[str, Any]] = {}
    found: list[Any] = []
    for s in sites:
        path, line, _ = s["site"]
        entry = producers.setdefault(
            layout().package_of(path), {"sites": [], "deduplicates": False, "surface_ops": set()}
        )
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
def _(spec: DetectorSpec, path: str, matches: list[Match]) -> Partial:
    guards = []
    for m in matches:
        found: set[str] = set()
        for call in walk(m.required("condition")):
            if call.type != "call_expression":
                continue
            fn = call.child_by_field_name("function")
            if fn is None or node_text(fn).replace(" ", "") != "Object.hasOwn":
                continue
            if call.parent is not None and call.parent.type == "unary_expression" and call.parent.child(0).type == "!":
                continue  # `!Object.hasOwn(x, 'f')` throws when f is missing: a required field, not a retired one
            args = field_node(call, "arguments").named_children
            if len(args) == 2 and args[1].type == "string":
                found.add(str(js_literal(args[1])))
        if found:
            guards.append([sorted(found), ev(path, m.required("guard"))])
    return {"guards": guards}


@combine("retired_header_fields")
def _(spec: DetectorSpec, ctx: FactContext, partials: Partials) -> Measurement:
    guards = flat(partials, "guards")
    if not guards:
        raise CannotEvaluate(f"no throwing `Object.hasOwn` guard in {', '.join(spec.paths)}")
    names = sorted({f for fields, _ in guards for f in fields})
    return Measurement(names, {"count": len(names)}, evidence(e for _, e in guards))


@per_file("approval_fallback")
def _(spec: DetectorSpec, path: str, matches: list[Match]) -> Partial:
    out = []
    for m in matches:
        for s in (n for n in walk(m.required("fallback")) if n.type == "string"):
            out.append([str(js_literal(s)), ev(path, m.required("site"))])
    return {"outcomes": out}


@combine("approval_fallback")
def _(spec: DetectorSpec, ctx: FactContext, partials: Partials) -> Measurement:
    found = flat(partials, "outcomes")
    if not found:
        raise CannotEvaluate(f"no fallback outcome found in {', '.join(spec.paths)}")
    distinct = sorted({o for o, _ in found})
    value = distinct[0] if len(distinct) == 1 else distinct
    return Measurement(
        value, {"outcomes": distinct, "sites": len(found)}, tuple(sorted(set(evidence(e for _, e in found))))
    )
