"""Structural facts about DSH, measured at a pin.

The detectors are listed in `registry.toml`; their tree-sitter queries are in
`queries/`; `reducers.py` turns matches into values. `measure` runs the ones
asked for over one snapshot, sharing reads and parses between them and
caching each detector's per-file work by blob id.
"""

from __future__ import annotations

import inspect
import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources

from ..cache import Cache, digest
from ..model import Fact, FactStatus, Pin
from ..snapshot import Snapshot
from .engine import ENGINE_VERSION, CannotEvaluate, FactContext, Measurement
from .reducers import COMBINE, PER_FILE, PER_TEXT, WHOLE, evidence


@dataclass(frozen=True)
class DetectorSpec:
    id: str
    definition: str
    paths: tuple[str, ...]
    reduce: str
    query: str | None = None
    needle: str | None = None
    exclude_tests: bool = False
    params: dict = field(default_factory=dict)

    @property
    def kind(self) -> str:
        if self.reduce in WHOLE:
            return "whole"
        return "text" if self.reduce in PER_TEXT else "query"


@lru_cache(maxsize=1)
def registry() -> dict[str, DetectorSpec]:
    data = tomllib.loads(resources.files(__package__).joinpath("registry.toml").read_text(encoding="utf-8"))
    specs = {}
    for entry in data["fact"]:
        spec = DetectorSpec(
            id=entry["id"],
            definition=entry["definition"],
            paths=tuple(entry["paths"]),
            reduce=entry["reduce"],
            query=entry.get("query"),
            needle=entry.get("needle"),
            exclude_tests=entry.get("exclude_tests", False),
            params=entry.get("params", {}),
        )
        known = spec.reduce in WHOLE or (spec.reduce in COMBINE and (spec.reduce in PER_FILE or spec.reduce in PER_TEXT))
        if not known or (spec.kind == "query") != bool(spec.query):
            raise RuntimeError(f"registry.toml: {spec.id}: reducer {spec.reduce!r} does not fit (query: {spec.query})")
        specs[spec.id] = spec
    return specs


_VERSIONS: dict[str, str] = {}


def detector_version(spec: DetectorSpec) -> str:
    """Changes whenever anything that decides a detector's per-file result does."""
    if spec.id in _VERSIONS:
        return _VERSIONS[spec.id]
    query = resources.files(__package__).joinpath("queries", spec.query).read_text() if spec.query else ""
    fns = [PER_FILE.get(spec.reduce) or PER_TEXT.get(spec.reduce), COMBINE.get(spec.reduce), WHOLE.get(spec.reduce)]
    source = "".join(inspect.getsource(fn) for fn in fns if fn)
    _VERSIONS[spec.id] = digest(ENGINE_VERSION, spec.id, repr(sorted(spec.params.items())), spec.needle or "", query, source)
    return _VERSIONS[spec.id]


def _partials(spec: DetectorSpec, ctx: FactContext) -> list[tuple[str, dict]]:
    if spec.needle:
        paths = ctx.files_with(spec.needle, list(spec.paths), spec.exclude_tests)
    else:
        paths = ctx.paths(list(spec.paths), spec.exclude_tests)
    shard = ctx.cache.shard("partial", detector_version(spec))
    ids = ctx.blob_ids()
    todo = [p for p in paths if shard.get(f"{ids[p]}:{p}") is None]
    # Text detectors may read every file of the tree: in batches, let go after
    # each, so memory stays bounded by a batch, not by the repository.
    batch = 400 if spec.kind == "text" else len(todo) or 1
    for i in range(0, len(todo), batch):
        chunk = todo[i:i + batch]
        ctx.load(chunk)
        for path in chunk:
            try:
                if spec.kind == "query":
                    partial = PER_FILE[spec.reduce](spec, path, ctx.matches(spec.query, path, spec.needle))
                else:
                    partial = PER_TEXT[spec.reduce](spec, path, ctx.text(path))
            except CannotEvaluate as exc:
                partial = {"cannot_evaluate": str(exc), "evidence": [[e.path, e.lines.start, e.lines.end] for e in exc.evidence]}
            shard.put(f"{ids[path]}:{path}", partial)
        if spec.kind == "text":
            ctx.forget(chunk)
    partials = [(p, shard.get(f"{ids[p]}:{p}")) for p in sorted(paths)]
    for path, partial in partials:
        if "cannot_evaluate" in partial:
            raise CannotEvaluate(partial["cannot_evaluate"], evidence(partial["evidence"]))
    return partials


def measure_one(spec: DetectorSpec, ctx: FactContext, pin: Pin) -> Fact:
    """A fact at a pin; a commit never changes, so the result is cached by
    (detector version, commit) and a warm run reads it back without looking at the tree."""
    shard = ctx.cache.shard("fact", detector_version(spec))
    key = f"{ctx.snapshot.sha}:{int(ctx.prefilter)}"
    hit = shard.get(key)
    if hit is not None:
        return Fact(spec.id, spec.definition, pin, FactStatus(hit["status"]), hit["value"], hit["fields"],
                    evidence(hit["evidence"]), hit["message"])
    fact = _measure(spec, ctx, pin)
    shard.put(key, {
        "status": fact.status.value, "value": fact.value, "fields": fact.fields, "message": fact.message,
        "evidence": [[e.path, e.lines.start, e.lines.end] for e in fact.evidence],
    })
    return fact


def _measure(spec: DetectorSpec, ctx: FactContext, pin: Pin) -> Fact:
    try:
        if spec.kind == "whole":
            m: Measurement = WHOLE[spec.reduce](ctx, spec, [])
        else:
            m = COMBINE[spec.reduce](spec, ctx, _partials(spec, ctx))
    except CannotEvaluate as exc:
        return Fact(spec.id, spec.definition, pin, FactStatus.CANNOT_EVALUATE, None, {}, exc.evidence, str(exc))
    return Fact(spec.id, spec.definition, pin, FactStatus.OK, m.value, dict(m.fields), tuple(m.evidence))


class FactBook:
    """Facts measured on demand per pin, each at most once per run."""

    def __init__(self, repository_factory, cache: Cache | None = None):
        self._repository_factory = repository_factory
        self._repository = None
        from .. import cache as cache_module

        self.cache = cache if cache is not None else cache_module.current()
        self._contexts: dict[str, FactContext] = {}
        self._facts: dict[tuple[str, str], Fact] = {}

    def get(self, fact_id: str, pin: Pin) -> Fact:
        key = (fact_id, pin.sha)
        if key not in self._facts:
            if self._repository is None:
                self._repository = self._repository_factory()
            if pin.sha not in self._contexts:
                self._contexts[pin.sha] = FactContext(self._repository.snapshot(pin.sha, pin.name), self.cache)
            self._facts[key] = measure_one(registry()[fact_id], self._contexts[pin.sha], pin)
        return self._facts[key]

    def all(self, pin: Pin) -> list[Fact]:
        return [self.get(fact_id, pin) for fact_id in sorted(registry())]


def measure(snapshot: Snapshot, pin: Pin, ids: list[str] | None = None, cache: Cache | None = None,
            prefilter: bool = True) -> list[Fact]:
    ctx = FactContext(snapshot, cache, prefilter)
    specs = registry()
    facts = [measure_one(specs[i], ctx, pin) for i in sorted(ids or specs)]
    if cache is not None:
        cache.flush()
    return facts
