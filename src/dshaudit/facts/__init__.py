"""Structural facts about DSH, measured at a pin.

The detectors are listed in `registry.toml`; their tree-sitter queries are in
`queries/`; `reducers.py` turns matches into values. `measure` runs the ones
asked for over one snapshot, sharing reads and parses between them and
caching each detector's per-file work by blob id.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, fields
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import search, ui
from ..cache import Cache, Shard, digest, shaped
from ..model import Fact, FactStatus, Pin
from ..snapshot import Snapshot
from . import parallel
from .engine import (
    ENGINE_VERSION,
    CannotEvaluate,
    FactContext,
    Measurement,
    TreeCache,
    all_needles,
    file_matches,
    registry_toml,
)
from .reducers import COMBINE, PER_FILE, SEARCHES, WHOLE, Partial, Partials, evidence

if TYPE_CHECKING:
    from ..pins import PinResolver
    from ..repository import DshRepository


@dataclass(frozen=True)
class DetectorSpec:
    id: str
    definition: str
    paths: tuple[str, ...]
    reduce: str
    query: str | None = None
    needle: tuple[str, ...] | None = None  # any of these literals; files without one are never parsed
    exclude_tests: bool = False
    params: dict[str, Any] = field(default_factory=dict)
    reads: tuple[str, ...] = ()  # globs of other files whose content the reducer reads
    lists: tuple[str, ...] = ()  # globs of files whose names (not content) the reducer reads
    names_only: bool = False  # the reducer reads the names of the files of `paths`, never their content

    @property
    def kind(self) -> str:
        return "whole" if self.reduce in WHOLE else "query"

    @property
    def content_globs(self) -> tuple[str, ...]:
        """Files whose content can change the fact's value (history re-measures where one changes)."""
        return (() if self.names_only else self.paths) + self.reads

    @property
    def name_globs(self) -> tuple[str, ...]:
        """Files whose coming, going or renaming (not their edits) can change the fact's value."""
        return (self.paths if self.names_only else ()) + self.lists


@lru_cache(maxsize=1)
def registry() -> dict[str, DetectorSpec]:
    data = registry_toml()
    specs = {}
    known_keys = {f.name for f in fields(DetectorSpec)}
    for entry in data["fact"]:
        if set(entry) - known_keys:
            # A key the spec does not carry would change nothing, silently, and escape the cache key.
            raise RuntimeError(f"registry.toml: {entry.get('id')}: unknown keys {sorted(set(entry) - known_keys)}")
        spec = DetectorSpec(
            id=entry["id"],
            definition=entry["definition"],
            paths=tuple(entry["paths"]),
            reduce=entry["reduce"],
            query=entry.get("query"),
            needle=(entry["needle"],) if isinstance(entry.get("needle"), str) else tuple(entry.get("needle", ())) or None,
            exclude_tests=entry.get("exclude_tests", False),
            params=entry.get("params", {}),
            reads=tuple(entry.get("reads", ())),
            lists=tuple(entry.get("lists", ())),
            names_only=entry.get("names_only", False),
        )
        known = spec.reduce in WHOLE or (spec.reduce in COMBINE and spec.reduce in PER_FILE)
        if not known or (spec.kind == "query") != bool(spec.query):
            raise RuntimeError(f"registry.toml: {spec.id}: reducer {spec.reduce!r} does not fit (query: {spec.query})")
        specs[spec.id] = spec
    return specs


@lru_cache(maxsize=1)
def _code_digest() -> str:
    """The code that computes facts: any edit to it invalidates what it cached.
    (Coarser than one function's source, and far cheaper than inspecting it.)
    symbols.py is in it for `parse` and `language_for`; grep.py for the
    whole-tree searches that the marker and absent-string facts count."""
    here, top = resources.files(__package__), resources.files("dshaudit")
    return digest(
        *(here.joinpath(name).read_bytes() for name in ("reducers.py", "engine.py", "__init__.py")),
        *(top.joinpath(name).read_bytes() for name in ("symbols.py", "grep.py")),
    )


@lru_cache(maxsize=1)
def library_versions() -> str:
    """The parser and grammar that build the syntax trees: a new release can
    parse the same file differently, so it must not reuse what the old one cached.
    Read from the modules and their install records directly: importlib.metadata
    would scan every installed package, which costs a warm run tens of milliseconds."""
    import tree_sitter
    import tree_sitter_typescript

    grammar = Path(tree_sitter_typescript.__file__).resolve().parent
    records = sorted(p.name for p in grammar.parent.glob("tree_sitter_typescript-*.dist-info"))
    # `tree_sitter_typescript-0.23.2.dist-info`; with no record, where the grammar is stands in for its version.
    grammar_version = ", ".join(r.removeprefix("tree_sitter_typescript-").removesuffix(".dist-info") for r in records)
    return (f"tree-sitter=={getattr(tree_sitter, '__version__', 'unknown')}; "
            f"tree-sitter-typescript=={grammar_version or grammar}")


@lru_cache(maxsize=None)
def _query_text(name: str) -> str:
    return resources.files(__package__).joinpath("queries", name).read_text(encoding="utf-8")


def detector_version(spec: DetectorSpec) -> str:
    """Changes whenever anything that decides a detector's results does: every
    field of its registry entry (paths, exclude_tests, reduce, definition and
    the rest, not only the query), the `[layout]` table (which files are tests,
    which folders packages), its query's text, the code, and the versions
    of tree-sitter and its TypeScript grammar. Not memoised by id: a spec
    changed under the same id must get a new version."""
    entry = json.dumps(asdict(spec), sort_keys=True)
    layout = json.dumps(registry_toml()["layout"], sort_keys=True)
    query = _query_text(spec.query) if spec.query else ""
    return digest(ENGINE_VERSION, entry, layout, query, _code_digest(), library_versions())


# What a cached entry must look like to be used (cache.py drops any other and it is measured again).
_EVIDENCE = [[str, int, int]]
PARTIAL_SHAPE = shaped(({"cannot_evaluate": str, "evidence": _EVIDENCE}, {str: (list, dict)}))
_FACT_ENTRY = shaped({"status": str, "value": object, "fields": {str: object}, "message": str, "evidence": _EVIDENCE})


def FACT_SHAPE(value: object) -> bool:
    return _FACT_ENTRY(value) and value["status"] in {s.value for s in FactStatus}  # type: ignore[index]


def _partials(spec: DetectorSpec, ctx: FactContext) -> Partials:
    if spec.needle:
        paths = ctx.files_with(spec.needle, list(spec.paths), spec.exclude_tests)
    else:
        paths = ctx.paths(list(spec.paths), spec.exclude_tests)
    shard = ctx.cache.shard("partial", detector_version(spec), PARTIAL_SHAPE)
    ids = ctx.blob_ids()
    todo = [p for p in paths if shard.get(f"{ids[p]}:{p}") is None]
    if todo:
        ui.detail(f"{spec.id}: {len(todo)} of {len(paths)} files not cached, reading them")
    with ui.progress(todo, f"{spec.id}") as files:
        _work(spec, ctx, shard, ids, files)
    partials = [(p, shard.get(f"{ids[p]}:{p}")) for p in sorted(paths)]
    for path, partial in partials:
        if "cannot_evaluate" in partial:
            raise CannotEvaluate(partial["cannot_evaluate"], evidence(partial["evidence"]))
    return partials


def needle_mask(data: bytes) -> int:
    """Bit k set when needle k of all_needles() occurs in the blob."""
    return sum(1 << k for k, n in enumerate(_encoded_needles()) if n in data)


@lru_cache(maxsize=1)
def _encoded_needles() -> tuple[bytes, ...]:
    return tuple(n.encode("utf-8") for n in all_needles())


def prepare(ctx: FactContext, ids: list[str]) -> None:
    """Do the per-file work of these detectors up front, all of it in one go
    across two processes when there is enough of it to pay for them."""
    specs = [registry()[i] for i in ids]
    if ctx.pool is None or parallel.workers() < 2:
        return
    blob = ctx.blob_ids()
    if ctx.prefilter:
        shard = ctx.needle_shard()
        wanted = {p for s in specs if s.needle for p in ctx.paths(list(s.paths), s.exclude_tests)}
        unknown = sorted(p for p in wanted if shard.get(blob[p]) is None)
        if len(unknown) >= parallel.MIN_SCANS:
            ui.detail(f"looking for detector literals in {len(unknown)} files, in {parallel.workers()} processes")
            for _, key, mask in ctx.pool.map([("needles", p, blob[p]) for p in unknown]):
                shard.put(key, mask)
    tasks: list[tuple[str, str, str]] = []
    shards: dict[str, Shard] = {}
    for s in specs:
        if s.kind == "whole":
            continue
        paths = ctx.files_with(s.needle, list(s.paths), s.exclude_tests) if s.needle else ctx.paths(list(s.paths), s.exclude_tests)
        shards[s.id] = part = ctx.cache.shard("partial", detector_version(s), PARTIAL_SHAPE)
        tasks += [(s.id, p, blob[p]) for p in paths if part.get(f"{blob[p]}:{p}") is None]
    if len(tasks) < parallel.MIN_FILES:
        return
    # A file's tasks side by side, so the detectors reading it share one parse in a worker.
    tasks.sort(key=lambda t: (t[1], t[0]))
    ui.detail(f"per-file work on {len(tasks)} files, in {parallel.workers()} processes")
    chunks = ctx.pool.chunks(tasks)
    with ui.progress(range(0, len(tasks), parallel.CHUNK), "reading and parsing", minimum=2) as bar:
        for _, results in zip(bar, chunks):
            for spec_id, key, partial in results:
                shards[spec_id].put(key, partial)


def detector_searches(ids: Iterable[str]) -> list[search.Search]:
    """The searches (search.py) the whole detectors among `ids` count."""
    specs = registry()
    return list(dict.fromkeys(q for i in ids if specs[i].reduce in SEARCHES for q in SEARCHES[specs[i].reduce](specs[i])))


def run_searches(queries: list[search.Search], snapshot: Snapshot) -> None:
    """Searches measured (and cached) side by side: each is a git grep, waiting on git."""
    if len(queries) > 1:
        with ThreadPoolExecutor(4) as pool:
            list(pool.map(lambda q: search.matches(q, snapshot), queries))


def per_file_partial(spec: DetectorSpec, path: str, source: bytes, trees: TreeCache | None = None) -> Partial:
    """A detector's work on one file, as a JSON-able partial (also in worker processes)."""
    if spec.query is None:  # registry() pairs every per-file reducer with a query
        raise ValueError(f"{spec.id} runs no query: it has no per-file work")
    try:
        return PER_FILE[spec.reduce](spec, path, file_matches(spec.query, path, source, spec.needle, trees))
    except CannotEvaluate as exc:
        return {"cannot_evaluate": str(exc), "evidence": [[e.path, e.lines.start, e.lines.end] for e in exc.evidence]}


def _work(spec: DetectorSpec, ctx: FactContext, shard: Shard, ids: dict[str, str], files: Iterable[str]) -> None:
    """Per-file work, here, for the files neither cached nor done by prepare()."""
    files = list(files)
    ctx.load(files)
    for path in files:
        shard.put(f"{ids[path]}:{path}", per_file_partial(spec, path, ctx.read(path), ctx.trees))


def _cached_fact(spec: DetectorSpec, ctx: FactContext) -> bool:
    return ctx.cache.shard("fact", detector_version(spec), FACT_SHAPE).get(f"{ctx.snapshot.sha}:{int(ctx.prefilter)}") is not None


def measure_one(spec: DetectorSpec, ctx: FactContext, pin: Pin) -> Fact:
    """A fact at a pin; a commit never changes, so the result is cached by
    (detector version, commit) and a warm run reads it back without looking at the tree."""
    shard = ctx.cache.shard("fact", detector_version(spec), FACT_SHAPE)
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

    def __init__(self, repository_factory: Callable[[], DshRepository], cache: Cache | None = None,
                 resolver: PinResolver | None = None):
        self._repository_factory = repository_factory
        self._resolver = resolver  # for facts that name a second pin (tree-docs('docs', 'rc2'))
        self._repository: DshRepository | None = None
        from .. import cache as cache_module

        self.cache = cache if cache is not None else cache_module.current()
        self._contexts: dict[str, FactContext] = {}
        self._facts: dict[tuple[str, str], Fact] = {}
        self._pool: parallel.Pool | None = None

    def close(self) -> None:
        """Stop the worker processes, if any were started."""
        if self._pool is not None:
            self._pool.close()
            self._pool = None

    def forget(self, pin: Pin) -> None:
        """Drop what was read and measured at `pin`: a walk over many commits keeps only the current one."""
        self._contexts.pop(pin.sha, None)
        self._facts = {k: v for k, v in self._facts.items() if k[1] != pin.sha}

    def _context(self, pin: Pin) -> FactContext:
        """The pin's context, the repository opened on first need."""
        if self._repository is None:
            self._repository = self._repository_factory()
        if pin.sha not in self._contexts:
            ctx = FactContext(self._repository.snapshot(pin.sha, pin.name), self.cache)
            if self._pool is None:
                self._pool = parallel.Pool(str(self._repository.repo.git_dir))
            ctx.pool = self._pool
            self._contexts[pin.sha] = ctx
        return self._contexts[pin.sha]

    def get(self, fact_id: str, pin: Pin) -> Fact:
        key = (fact_id, pin.sha)
        if key not in self._facts:
            ctx = self._context(pin)
            if search.split(fact_id) is None:
                self._facts[key] = measure_one(registry()[fact_id], ctx, pin)
            elif (parsed := search.parse(fact_id)).kind == "tree-docs":
                from ..treedocs import measure_fact

                if self._resolver is None:
                    raise RuntimeError("tree-docs facts need the FactBook's pin resolver")
                self._facts[key] = measure_fact(parsed, pin, self._resolver, self._repository_factory)
            else:
                self._facts[key] = search.measure(parsed, ctx.snapshot, pin)
        return self._facts[key]

    def all(self, pin: Pin) -> list[Fact]:
        return self.many(sorted(registry()), pin)

    def many(self, fact_ids: list[str], pin: Pin, derive_from: list[str] | None = None) -> list[Fact]:
        """Several facts at one pin, their per-file work done together. Their searches are
        derived from another commit's cached matches where they can be: those of
        `derive_from` (the closest first), else the configured pins. A walk over many
        commits, each far from every pin, passes the commits it measured at: then only
        the files changed since the last of them are grepped again."""
        todo = sorted({i for i in fact_ids if (i, pin.sha) not in self._facts})
        if todo:
            # Not one fact measured first to open the context: it would grep its searches whole.
            ctx = self._context(pin)
            specs = registry()
            searches = [i for i in todo if i not in specs and search.split(i) and search.parse(i).kind == "search"]
            detectors = [i for i in todo if i in specs and not _cached_fact(specs[i], ctx)]
            queries = list(dict.fromkeys([search.parse(i) for i in searches] + detector_searches(detectors)))
            with ThreadPoolExecutor(1) as background:
                # Derived from another commit's cached matches where there are some: only what differs
                # is grepped; the rest grepped whole. That is git's work, done while the detectors parse here.
                derived = None
                bases = derive_from if derive_from is not None else (
                    sorted({p.sha for p in self._resolver.config.pins.values()}) if self._resolver is not None else [])
                if queries and bases:
                    derived = background.submit(search.derive_many, queries, ctx.snapshot, bases)
                searched = background.submit(run_searches, queries, ctx.snapshot)
                prepare(ctx, detectors)
                if derived is not None:
                    derived.result()
                searched.result()
        return [self.get(i, pin) for i in fact_ids]


def measure(snapshot: Snapshot, pin: Pin, ids: list[str] | None = None, cache: Cache | None = None,
            prefilter: bool = True) -> list[Fact]:
    ctx = FactContext(snapshot, cache, prefilter)
    pool = ctx.pool = parallel.Pool(str(snapshot.repository.repo.git_dir))
    specs = registry()
    try:
        todo = [i for i in sorted(ids or specs) if not _cached_fact(specs[i], ctx)]
        with ThreadPoolExecutor(1) as background:  # git greps while the detectors parse here
            searched = background.submit(run_searches, detector_searches(todo), snapshot)
            prepare(ctx, todo)
            searched.result()
        facts = [measure_one(specs[i], ctx, pin) for i in sorted(ids or specs)]
    finally:
        pool.close()
    if cache is not None:
        cache.flush()
    return facts
