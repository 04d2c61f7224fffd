"""Facts measured at a pin: `FactBook` measures each fact asked for at most once
per run, and `measure` runs the detectors asked for over one snapshot, sharing
reads and parses between them and caching each detector's per-file work by blob
id (the work itself is `perfile.py`'s, spread over workers by `parallel.py`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import lru_cache
from typing import TYPE_CHECKING

from dshaudit.core.model import Fact, FactStatus, Pin
from dshaudit.documents import searches
from dshaudit.facts import parallel
from dshaudit.facts.engine import FactContext, Measurement
from dshaudit.facts.perfile import per_file_partial
from dshaudit.facts.provided import PROVIDED
from dshaudit.facts.reducers import COMBINE, PER_FILE, SEARCHES, WHOLE, Partials, evidence
from dshaudit.facts.specs import DetectorSpec, detector_version, load_specs
from dshaudit.git.snapshot import Snapshot
from dshaudit.index import derive, search
from dshaudit.lang.parsing import CannotEvaluate
from dshaudit.platform import ui
from dshaudit.platform.background import alongside, side_by_side
from dshaudit.platform.cache import Cache, Shard, shaped

if TYPE_CHECKING:
    from dshaudit.git.pins import PinResolver
    from dshaudit.git.repository import DshRepository


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
    for _, partial in partials:
        if "cannot_evaluate" in partial:
            raise CannotEvaluate(partial["cannot_evaluate"], evidence(partial["evidence"]))
    return partials


def prepare(ctx: FactContext, ids: list[str]) -> None:
    """Do the per-file work of these detectors up front, all of it in one go
    across the worker pool (--jobs) when there is enough of it to pay for one."""
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
        paths = (
            ctx.files_with(s.needle, list(s.paths), s.exclude_tests)
            if s.needle
            else ctx.paths(list(s.paths), s.exclude_tests)
        )
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


def _derive_then_search(queries: list[searches.Search], snapshot: Snapshot, bases: list[str]) -> None:
    """The searches' matches: derived from another commit's cached matches where there are
    some (only what differs is grepped), the rest grepped whole."""
    if queries and bases:
        derive.derive_many(queries, snapshot, bases)
    run_searches(queries, snapshot)


def detector_searches(ids: Iterable[str]) -> list[searches.Search]:
    """The searches (search.py) the whole detectors among `ids` count."""
    specs = registry()
    return list(
        dict.fromkeys(q for i in ids if specs[i].reduce in SEARCHES for q in SEARCHES[specs[i].reduce](specs[i]))
    )


def run_searches(queries: list[searches.Search], snapshot: Snapshot) -> None:
    """Searches measured (and cached) together: screened in one pass over the tree
    (`derive.grep_together`); any left (files() claims, or a tree with attributes)
    side by side, each a git grep, waiting on git."""
    derive.grep_together(queries, snapshot)
    if len(queries) > 1:
        side_by_side(lambda q: search.prefetch(q, snapshot), queries)


def _work(spec: DetectorSpec, ctx: FactContext, shard: Shard, ids: dict[str, str], files: Iterable[str]) -> None:
    """Per-file work, here, for the files neither cached nor done by prepare()."""
    files = list(files)
    ctx.load(files)
    for path in files:
        shard.put(f"{ids[path]}:{path}", per_file_partial(spec, path, ctx.read(path), ctx.trees))


def _kept_at(spec: DetectorSpec, cache: Cache, sha: str, prefilter: bool) -> tuple[Shard, str]:
    """Where the fact measured at commit `sha` is kept: a commit never changes, so a fact is
    kept by (detector version, commit), and read back without the tree."""
    return cache.shard("fact", detector_version(spec), FACT_SHAPE), f"{sha}:{int(prefilter)}"


def _kept_entry(spec: DetectorSpec, cache: Cache, sha: str, prefilter: bool) -> dict | None:
    shard, key = _kept_at(spec, cache, sha, prefilter)
    return shard.get(key)


def kept_fact(spec: DetectorSpec, cache: Cache, sha: str, pin: Pin, prefilter: bool = True) -> Fact | None:
    """The fact as measured at commit `sha` before, if it was, as a fact at `pin`."""
    hit = _kept_entry(spec, cache, sha, prefilter)
    if hit is None:
        return None
    return Fact(
        spec.id,
        spec.definition,
        pin,
        FactStatus(hit["status"]),
        hit["value"],
        hit["fields"],
        evidence(hit["evidence"]),
        hit["message"],
    )


def measure_one(spec: DetectorSpec, ctx: FactContext, pin: Pin) -> Fact:
    """A fact at a pin, the kept one (`kept_fact`) when there is one."""
    kept = kept_fact(spec, ctx.cache, ctx.snapshot.sha, pin, ctx.prefilter)
    if kept is not None:
        return kept
    fact = _measure(spec, ctx, pin)
    shard, key = _kept_at(spec, ctx.cache, ctx.snapshot.sha, ctx.prefilter)
    shard.put(
        key,
        {
            "status": fact.status.value,
            "value": fact.value,
            "fields": fact.fields,
            "message": fact.message,
            "evidence": [[e.path, e.lines.start, e.lines.end] for e in fact.evidence],
        },
    )
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


@lru_cache(maxsize=1)
def registry() -> dict[str, DetectorSpec]:
    """The detectors, each checked against its reducer: a whole-tree reducer runs no
    query, and a per-file one has both its per-file and its combining half."""
    specs = load_specs()
    for spec in specs.values():
        known = spec.reduce in WHOLE or (spec.reduce in COMBINE and spec.reduce in PER_FILE)
        if not known or (spec.reduce in WHOLE) == bool(spec.query):
            raise RuntimeError(f"registry.toml: {spec.id}: reducer {spec.reduce!r} does not fit (query: {spec.query})")
    return specs


class FactBook:
    """Facts measured on demand per pin, each at most once per run."""

    def __init__(
        self,
        repository_factory: Callable[[], DshRepository],
        cache: Cache | None = None,
        resolver: PinResolver | None = None,
    ):
        self._repository_factory = repository_factory
        self._resolver = resolver  # for facts that name a second pin (tree-docs('docs', 'rc2'))
        self._repository: DshRepository | None = None
        from dshaudit.platform import cache as cache_module

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
                self._pool = parallel.Pool(self._repository.git_dir)
            ctx.pool = self._pool
            self._contexts[pin.sha] = ctx
        return self._contexts[pin.sha]

    def get(self, fact_id: str, pin: Pin) -> Fact:
        key = (fact_id, pin.sha)
        if key not in self._facts:
            ctx = self._context(pin)
            if searches.split(fact_id) is None:
                self._facts[key] = measure_one(registry()[fact_id], ctx, pin)
            elif (parsed := searches.parse(fact_id)).kind in PROVIDED:
                if self._resolver is None:
                    raise RuntimeError(f"{parsed.kind} facts need the FactBook's pin resolver")
                measure = PROVIDED[parsed.kind]
                self._facts[key] = measure(parsed, pin, self._resolver, self._repository_factory)
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
        specs = registry()
        for i in todo:  # those measured at this commit before need no tree, and no clone opened
            if i in specs and (kept := kept_fact(specs[i], self.cache, pin.sha, pin)) is not None:
                self._facts[(i, pin.sha)] = kept
        todo = [i for i in todo if (i, pin.sha) not in self._facts]
        if todo:
            # Not one fact measured first to open the context: it would grep its searches whole.
            ctx = self._context(pin)
            search_ids = [
                i for i in todo if i not in specs and searches.split(i) and searches.parse(i).kind == "search"
            ]
            detectors = [i for i in todo if i in specs]
            queries = list(dict.fromkeys([searches.parse(i) for i in search_ids] + detector_searches(detectors)))
            bases = (
                derive_from
                if derive_from is not None
                else (
                    sorted({p.sha for p in self._resolver.config.pins.values()}) if self._resolver is not None else []
                )
            )
            with alongside(lambda: _derive_then_search(queries, ctx.snapshot, bases)):  # git's work, while
                prepare(ctx, detectors)  # the detectors parse here
        return [self.get(i, pin) for i in fact_ids]


def measure(
    snapshot: Snapshot, pin: Pin, ids: list[str] | None = None, cache: Cache | None = None, prefilter: bool = True
) -> list[Fact]:
    ctx = FactContext(snapshot, cache, prefilter)
    pool = ctx.pool = parallel.Pool(snapshot.repository.git_dir)
    specs = registry()
    try:
        todo = [i for i in sorted(ids or specs) if _kept_entry(specs[i], ctx.cache, snapshot.sha, prefilter) is None]
        with alongside(lambda: run_searches(detector_searches(todo), snapshot)):  # git greps while
            prepare(ctx, todo)  # the detectors parse here
        facts = [measure_one(specs[i], ctx, pin) for i in sorted(ids or specs)]
    finally:
        pool.close()
    if cache is not None:
        cache.flush()
    return facts
