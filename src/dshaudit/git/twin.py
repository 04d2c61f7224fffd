"""Work on the clone beside the caller, through a handle of its own."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TypeVar

from dshaudit.git.repository import DshRepository
from dshaudit.platform import background
from dshaudit.platform.background import BackgroundJob, Placement

T = TypeVar("T")


def in_background(repository: DshRepository, compute: Callable[[DshRepository], T]) -> BackgroundJob[T]:
    """`compute` started by the run's rule (`background.placement`): inline, on `repository`
    itself; else on a twin (`DshRepository.twin`), since a handle reads objects through
    `git cat-file` processes of its own, which two threads or processes must not share.
    The twin is made here, before the work starts: a thread must not copy the trees this
    one lists."""
    where = background.placement()
    if where is Placement.INLINE:
        return BackgroundJob.inline(partial(compute, repository))
    return BackgroundJob.start(partial(_on_twin, compute, repository.twin()), where)


def _on_twin(compute: Callable[[DshRepository], T], twin: DshRepository) -> T:
    try:
        return compute(twin)
    finally:
        twin.close()  # its git processes: a forked process ends without the interpreter's clean-up
