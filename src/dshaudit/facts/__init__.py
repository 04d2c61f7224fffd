"""Structural facts about DSH, measured at a pin.

The detectors are listed in `registry.toml`; their tree-sitter queries are in
`queries/`; `reducers.py` turns matches into values. `measure` runs the ones
asked for over one snapshot, sharing reads and parses between them.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources

from ..model import Fact, FactStatus, Pin
from ..snapshot import Snapshot
from .engine import CannotEvaluate, FactContext
from .reducers import REDUCERS


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
        if spec.reduce not in REDUCERS:
            raise RuntimeError(f"registry.toml: {spec.id} names unknown reducer {spec.reduce!r}")
        specs[spec.id] = spec
    return specs


def measure_one(spec: DetectorSpec, ctx: FactContext, pin: Pin) -> Fact:
    try:
        matches = []
        if spec.query:
            paths = ctx.paths(list(spec.paths), spec.exclude_tests)
            matches = ctx.query(spec.query, paths, spec.needle)
        m = REDUCERS[spec.reduce](ctx, spec, matches)
    except CannotEvaluate as exc:
        return Fact(spec.id, spec.definition, pin, FactStatus.CANNOT_EVALUATE, None, {}, exc.evidence, str(exc))
    return Fact(spec.id, spec.definition, pin, FactStatus.OK, m.value, dict(m.fields), tuple(m.evidence))


class FactBook:
    """Facts measured on demand per pin, each at most once per run."""

    def __init__(self, repository_factory):
        self._repository_factory = repository_factory
        self._repository = None
        self._contexts: dict[str, FactContext] = {}
        self._facts: dict[tuple[str, str], Fact] = {}

    def get(self, fact_id: str, pin: Pin) -> Fact:
        key = (fact_id, pin.sha)
        if key not in self._facts:
            if self._repository is None:
                self._repository = self._repository_factory()
            if pin.sha not in self._contexts:
                self._contexts[pin.sha] = FactContext(self._repository.snapshot(pin.sha, pin.name))
            self._facts[key] = measure_one(registry()[fact_id], self._contexts[pin.sha], pin)
        return self._facts[key]

    def all(self, pin: Pin) -> list[Fact]:
        return [self.get(fact_id, pin) for fact_id in sorted(registry())]


def measure(snapshot: Snapshot, pin: Pin, ids: list[str] | None = None) -> list[Fact]:
    ctx = FactContext(snapshot)
    specs = registry()
    return [measure_one(specs[i], ctx, pin) for i in sorted(ids or specs)]
