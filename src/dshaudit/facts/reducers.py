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
from collections.abc import Callable, Collection, Iterable, Sequence
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Any, TypeVar

import tree_sitter
import yaml

from dshaudit.core.model import Evidence, LineRange
from dshaudit.documents import searches
from dshaudit.documents.searches import Search
from dshaudit.facts.engine import FactContext, Match, Measurement, glob_regex, layout, narrowing_pathspecs
from dshaudit.index import search
from dshaudit.lang.parsing import CannotEvaluate, field_node, js_literal, node_text, unwrap
from dshaudit.lang.symbols import walk

if TYPE_CHECKING:
    from dshaudit.facts.specs import DetectorSpec

# What per_file keeps of one file: JSON-able, since it is cached.
Partial = dict[str, Any]
# The partials of every file a detector read, as (path, partial) in path order.
Partials = list[tuple[str, Partial]]
# A place as partials keep it: [path, first line, last line].
Place = list[str | int]

PerFile = Callable[["DetectorSpec", str, list[Match]], Partial]
Combine = Callable[["DetectorSpec", FactContext, Partials], Measurement]
# Whole-tree detectors take the matches argument of a query detector's
# signature, always empty: they run no query.
Whole = Callable[[FactContext, "DetectorSpec", list[Match]], Measurement]
Searches = Callable[["DetectorSpec"], list[Search]]

PerFileT = TypeVar("PerFileT", bound=PerFile)
CombineT = TypeVar("CombineT", bound=Combine)
WholeT = TypeVar("WholeT", bound=Whole)

PER_FILE: dict[str, PerFile] = {}  # name -> per_file(spec, path, matches) for query detectors
COMBINE: dict[str, Combine] = {}  # name -> combine(spec, ctx, partials)
WHOLE: dict[str, Whole] = {}  # name -> whole(ctx, spec, [])
SEARCHES: dict[str, Searches] = {}  # name -> the searches (search.py) whole detector `name` counts


def per_file(name: str) -> Callable[[PerFileT], PerFileT]:
    def register(fn: PerFileT) -> PerFileT:
        PER_FILE[name] = fn
        return fn

    return register


def combine(name: str) -> Callable[[CombineT], CombineT]:
    def register(fn: CombineT) -> CombineT:
        COMBINE[name] = fn
        return fn

    return register


def whole(fn: WholeT) -> WholeT:
    WHOLE[fn.__name__] = fn
    return fn


def ev(path: str, node: tree_sitter.Node) -> Place:
    return [path, node.start_point[0] + 1, node.end_point[0] + 1]


def evidence(items: Iterable[Sequence[Any]]) -> tuple[Evidence, ...]:
    """Places read back from partials or the cache ([path, first, last]) as Evidence."""
    return tuple(Evidence(p, LineRange(a, b)) for p, a, b in items)


def _line_of(text: str, needle: str, start: int = 0) -> int | None:
    i = text.find(needle, start)
    return None if i < 0 else text.count("\n", 0, i) + 1


def _require(items: Collection[object], spec: DetectorSpec) -> None:
    if not items:
        raise CannotEvaluate(f"nothing matched in {', '.join(spec.paths)}: the code this fact reads is not there")


def _flat(partials: Partials, key: str) -> list[Any]:
    return [item for _, partial in partials for item in partial.get(key, [])]


# -- generic -------------------------------------------------------------------


@per_file("captured_names")
def _(spec: DetectorSpec, path: str, matches: list[Match]) -> Partial:
    capture, node = spec.params["capture"], spec.params.get("node", spec.params["capture"])
    return {"names": [[node_text(m.required(capture)), ev(path, m.required(node))] for m in matches]}


@combine("captured_names")
def _(spec: DetectorSpec, ctx: FactContext, partials: Partials) -> Measurement:
    found = _flat(partials, "names")
    _require(found, spec)
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
    sites = _flat(partials, "values")
    _require(sites, spec)
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
    constants = {name: (limit, where) for name, limit, where in _flat(partials, "constants")}
    mentions = ctx.files_with(spec.params["mention"], spec.params["mention_paths"], filter_only=False)
    providers: dict[str, dict[str, Any]] = {}
    found: list[Any] = []
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
    sites = _flat(partials, "sites")
    _require(sites, spec)
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
    guards = _flat(partials, "guards")
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
    found = _flat(partials, "outcomes")
    if not found:
        raise CannotEvaluate(f"no fallback outcome found in {', '.join(spec.paths)}")
    distinct = sorted({o for o, _ in found})
    value = distinct[0] if len(distinct) == 1 else distinct
    return Measurement(
        value, {"outcomes": distinct, "sites": len(found)}, tuple(sorted(set(evidence(e for _, e in found))))
    )


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
    line = _line_of(ctx.text(path), f'"{key}"') or 1
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
    evidence = tuple(Evidence(path, LineRange(n, n)) for g in globs if (n := _line_of(text, g)))
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
                line = _line_of(text, f'"{dep}"', text.find(f'"{section}"')) or 1
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


@whole
def test_files(ctx: FactContext, spec: DetectorSpec, matches: list[Match]) -> Measurement:
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
