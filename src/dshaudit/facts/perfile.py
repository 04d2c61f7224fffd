"""One detector's work on one file, as a JSON-able partial: the same function in
this process and in the worker processes (parallel.py), so the number of workers
never changes an answer."""

from __future__ import annotations

from dshaudit.facts.engine import file_matches
from dshaudit.facts.reducers import PER_FILE, Partial
from dshaudit.facts.specs import DetectorSpec
from dshaudit.lang.parsing import CannotEvaluate, TreeCache


def per_file_partial(spec: DetectorSpec, path: str, source: bytes, trees: TreeCache | None = None) -> Partial:
    """A detector's work on one file, as a JSON-able partial (also in worker processes)."""
    if spec.query is None:  # registry() pairs every per-file reducer with a query
        raise ValueError(f"{spec.id} runs no query: it has no per-file work")
    try:
        return PER_FILE[spec.reduce](spec, path, file_matches(spec.query, path, source, spec.needle, trees))
    except CannotEvaluate as exc:
        return {"cannot_evaluate": str(exc), "evidence": [[e.path, e.lines.start, e.lines.end] for e in exc.evidence]}
