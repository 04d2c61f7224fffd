"""Per-file detector work in worker processes, when there is enough of it.

Each worker opens its own `git cat-file --batch` on the same clone and reads
the blobs it is given by id, so the parent never holds or ships file bytes.
Results are plain JSON-able partials, identical to those computed in-process
(the same function computes both), so the number of workers never changes an
answer, only how long it takes. How many workers, and how they are started,
is the run's one rule (platform/background.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from dshaudit.platform.background import WorkerPool, jobs

if TYPE_CHECKING:
    from dshaudit.git.repository import DshRepository

MIN_FILES = 80  # files to parse: below this, starting processes costs more than it saves
MIN_SCANS = 1500  # files to scan for literals: a scan is cheap, so the bar is higher
CHUNK = 40

# A work item: (detector id or "needles", path, blob id).
Task = tuple[str, str, str]
# Its result: (detector id or "needles", cache key, partial or needle mask).
Result = tuple[str, str, object]

_repository: DshRepository | None = None  # this worker's clone, opened by _init


def workers() -> int:
    """How many processes the per-file work is spread over: the run's jobs."""
    return jobs()


def _init(git_dir: str) -> None:
    global _repository
    from dshaudit.git.repository import DshRepository

    _repository = DshRepository(Path(git_dir), git_dir)


def _run(items: list[Task]) -> list[Result]:
    """Work items (detector id or "needles", path, blob id) -> (shard name, key, result)."""
    from dshaudit.facts.perfile import per_file_partial
    from dshaudit.facts.specs import load_specs, needle_mask
    from dshaudit.lang.parsing import TreeCache

    if _repository is None:
        raise RuntimeError("_run runs in a worker process, after _init opened the clone")
    blobs = _repository.read_blobs([blob for _, _, blob in items])
    trees = TreeCache(limit=64)  # detectors reading the same file in this chunk share its parse
    out: list[Result] = []
    for job, path, blob in items:
        if job == "needles":
            out.append(("needles", blob, needle_mask(blobs[blob])))
        else:
            out.append((job, f"{blob}:{path}", per_file_partial(load_specs()[job], path, blobs[blob], trees)))
    return out


class Pool:
    """The detectors' workers, started on first use and shared by every detector of a run."""

    def __init__(self, git_dir: str):
        self.git_dir = git_dir
        self._workers = WorkerPool(_init, (git_dir,), preload=["dshaudit.facts.perfile"])

    def map(self, items: list[Task]) -> list[Result]:
        return [r for chunk in self.chunks(items) for r in chunk]

    def chunks(self, items: list[Task]) -> Iterator[list[Result]]:
        """Results a chunk at a time, in order, as the workers finish them."""
        return self._workers.map(_run, [items[i : i + CHUNK] for i in range(0, len(items), CHUNK)])

    def close(self) -> None:
        self._workers.close()
