"""Work run beside the caller, and how many processes a run spreads its work over.

One count: `jobs()`, set by `dshaudit --jobs N`, else by DSHAUDIT_WORKERS,
else one per processor.

One rule (`placement`) says where work started now runs:

- with one job, inline: in the caller, when the answer is asked for;
- else in a forked process, when fork is at hand and no other thread runs
  (a fork may catch a thread holding a lock, or starting a process whose
  pipes the child would then hold open);
- else beside the caller without a fork: a `BackgroundJob`, whose work is a
  function of this process's memory, in a thread; a `WorkerPool`, whose work
  items are data sent to its workers, in processes started by a fork server
  (a process of its own, with no threads).

A process shares nothing with the caller once forked, so both run Python at
once; threads take turns, but still let git processes and reading overlap.

Work that mostly waits on git (greps, one per search or per pathspec group)
runs in threads, whatever `jobs()` says: `side_by_side`, up to GIT_WAITERS
at once, and `alongside` the caller's own work. A thread waiting on a git
process takes no core of this one, and git's processes then run at once.
No other module starts threads of its own for work; the language server's
request thread and the git layer's pipe feeder are plumbing, not work.

A job's failure is its caller's: what a background process raised is raised
again where its answer is asked for, never hidden by doing the work again;
Ctrl-C there is a KeyboardInterrupt here.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from enum import Enum
from typing import TYPE_CHECKING, Any, Generic, TypeVar

# concurrent.futures, pickle and traceback are imported where work starts or fails: a run that
# reads its kept outcome back starts none, and its time is mostly imports.
if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor
    from multiprocessing.connection import Connection
    from multiprocessing.process import BaseProcess

T = TypeVar("T")
Item = TypeVar("Item")

JOBS_VARIABLE = "DSHAUDIT_WORKERS"
_jobs: int | None = None  # the run's --jobs


def configure(jobs: int | None) -> None:
    """The run's `--jobs` (None: DSHAUDIT_WORKERS decides, else the processors)."""
    global _jobs
    _jobs = jobs


def jobs() -> int:
    """How many processes the run spreads its work over: the detectors' workers,
    and with more than one, the work started beside the caller."""
    if _jobs is not None:
        return _jobs
    named = named_jobs()
    return max(1, named) if named is not None else os.cpu_count() or 1


def named_jobs() -> int | None:
    """DSHAUDIT_WORKERS as a count (0 stands for 1); None when it is not set or names none."""
    named = os.environ.get(JOBS_VARIABLE, "").strip()
    return int(named) if named.isdecimal() else None


def refused_jobs_variable() -> str | None:
    """DSHAUDIT_WORKERS as written, when it is set but names no count of 1 or more: the
    command line refuses it as it refuses such a --jobs (cli/__init__.py), where `jobs`
    alone would pass it over for one process per processor."""
    named = os.environ.get(JOBS_VARIABLE, "")
    return named if named.strip() and not named_jobs() else None


GIT_WAITERS = 4  # threads that wait on git at once (`side_by_side`)


def side_by_side(work: Callable[[Item], T], items: Iterable[Item]) -> list[T]:
    """`work` of each item, the answers in the items' order, in up to GIT_WAITERS
    threads at once: for work that waits on git. Every item is done before the
    first failure is raised."""
    todo = list(items)
    if len(todo) < 2:
        return [work(item) for item in todo]
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(min(GIT_WAITERS, len(todo)), thread_name_prefix="dshaudit-git") as pool:
        return list(pool.map(work, todo))


@contextmanager
def alongside(work: Callable[[], object]) -> Iterator[None]:
    """`work`, which waits on git, in a thread while the caller's block runs: done when
    the block ends, and its failure raised then; a block that fails raises its own."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1, thread_name_prefix="dshaudit-git") as pool:
        done = pool.submit(work)
        yield
        done.result()


class Placement(Enum):
    INLINE = "inline"
    PROCESS = "process"  # a forked process
    THREAD = "thread"  # beside the caller, without a fork


def placement() -> Placement:
    """Where work started now runs (the module's docstring gives the rule)."""
    if jobs() < 2:
        return Placement.INLINE
    # Imported when first asked: a run that reads its kept outcome back starts no work beside it.
    import multiprocessing

    if "fork" in multiprocessing.get_all_start_methods() and threading.active_count() == 1:
        return Placement.PROCESS
    return Placement.THREAD


# What a background process sends back: how it ended, and its answer or exception.
_DONE, _FAILED, _INTERRUPTED = "done", "failed", "interrupted"


class BackgroundJob(Generic[T]):
    """One function's answer, computed by the rule of `placement` while the caller
    does other work. `result` waits for it (and raises what the work raised);
    `stop` says it is not wanted."""

    def __init__(self, work: Callable[[], T], where: Placement, stop: Callable[[], None] | None = None):
        self.placement = where
        self._work = work
        self._on_stop = stop
        self._outcome: tuple[str, Any] | None = None
        self._future: Future[T] | None = None
        self._thread: threading.Thread | None = None
        self._reader: Connection | None = None
        self._process: BaseProcess | None = None

    @classmethod
    def start(cls, work: Callable[[], T], where: Placement | None = None) -> BackgroundJob[T]:
        """`work` started where `where` says, by default where `placement` says now."""
        job = cls(work, placement() if where is None else where)
        if job.placement is Placement.PROCESS:
            job._fork()
        elif job.placement is Placement.THREAD:
            from concurrent.futures import Future

            job._future = Future()
            job._thread = threading.Thread(target=_settle, args=(job._future, work), name="dshaudit-job")
            job._thread.start()
        return job

    @classmethod
    def inline(cls, work: Callable[[], T], stop: Callable[[], None] | None = None) -> BackgroundJob[T]:
        """`work` done here when its answer is asked for; `stop`: what undoes the preparations
        the caller made for it, when it is not wanted."""
        return cls(work, Placement.INLINE, stop)

    @classmethod
    def done(cls, answer: T) -> BackgroundJob[T]:
        """An answer known already."""
        job = cls(lambda: answer, Placement.INLINE)
        job._outcome = (_DONE, answer)
        return job

    def result(self) -> T:
        if self._outcome is None:
            if self.placement is Placement.INLINE:
                self._outcome = (_DONE, self._work())
            elif self._future is not None:
                try:
                    self._outcome = (_DONE, self._future.result())
                finally:
                    self._join()
            else:
                self._outcome = self._receive()
        how, answer = self._outcome
        if how == _INTERRUPTED:
            raise KeyboardInterrupt  # Ctrl-C reached the process: it stops the caller too
        if how == _FAILED:
            assert isinstance(answer, BaseException)
            raise answer
        return answer

    def stop(self) -> None:
        """The answer is not wanted: a process is stopped; a thread, which cannot be, is waited for."""
        if self._outcome is not None:
            return
        self._outcome = (_FAILED, RuntimeError("the background job was stopped"))
        if self._on_stop is not None:
            self._on_stop()
        if self._future is not None and not self._future.cancel():
            self._future.exception()  # its git processes end with it; its error is not wanted
        self._join()
        if self._process is not None:
            if self._process.is_alive():
                self._process.kill()
            self._process.join()
        if self._reader is not None:
            self._reader.close()

    def _join(self) -> None:
        """The job's thread waited for to its end, not only to its answer: the process is one
        thread again once the answer is known, so that work started next may fork (`placement`)."""
        if self._thread is not None:
            self._thread.join()

    # -- in a forked process ----------------------------------------------------------

    def _fork(self) -> None:
        import multiprocessing

        context = multiprocessing.get_context("fork")
        self._reader, writer = context.Pipe(duplex=False)
        # Not a daemon: the work may start processes of its own (a pool of detector workers).
        self._process = context.Process(target=_answer, args=(writer, self._work), name="dshaudit-job")
        self._process.start()
        writer.close()

    def _receive(self) -> tuple[str, Any]:
        assert self._reader is not None and self._process is not None
        try:
            outcome: tuple[str, Any] = self._reader.recv()
        except EOFError:
            self._process.join()
            outcome = (_FAILED, RuntimeError(f"a background process ended with code {self._process.exitcode}"))
        except BaseException:  # Ctrl-C while waiting: the process is not waited for
            self._process.kill()
            raise
        finally:
            self._reader.close()
            self._process.join()
        return outcome


def _settle(future: Future[T], work: Callable[[], T]) -> None:
    """In the job's thread: the work's answer, or what it raised, set on `future`; nothing
    when the job was stopped before the thread began."""
    if not future.set_running_or_notify_cancel():
        return
    try:
        future.set_result(work())
    except BaseException as exc:  # Ctrl-C and exits too: the caller raises them where it asks
        future.set_exception(exc)


def _answer(writer: Connection, work: Callable[[], object]) -> None:
    """In the forked process: the work's answer, or how it failed, sent to the caller.
    What it measured is written to the cache before it ends, as this process ends
    without the interpreter's clean-up."""
    from dshaudit.platform import cache

    _drop_the_fork_server()
    outcome: tuple[str, Any]
    try:
        try:
            outcome = (_DONE, work())
        finally:
            cache.current().flush()
    except KeyboardInterrupt:
        outcome = (_INTERRUPTED, None)
    except BaseException as exc:
        outcome = (_FAILED, _portable(exc))
    try:
        writer.send(outcome)
    except BrokenPipeError:
        pass  # the caller stopped waiting for the answer
    except Exception as exc:  # an answer that cannot be pickled is a bug of the work's
        writer.send((_FAILED, _portable(exc)))
    finally:
        writer.close()


def _drop_the_fork_server() -> None:
    """A forked process inherits its parent's handle on multiprocessing's fork server,
    which it cannot wait for, not being its parent: a `WorkerPool` started from it would
    fail (ChildProcessError). The handle is dropped, so a fork server of its own starts
    if it needs one."""
    from multiprocessing import forkserver

    server = getattr(forkserver, "_forkserver", None)
    if server is None or getattr(server, "_forkserver_pid", None) is None:
        return
    alive = server._forkserver_alive_fd
    server._forkserver_pid = server._forkserver_address = server._forkserver_alive_fd = None
    if alive is not None:
        os.close(alive)


def _portable(exc: BaseException) -> BaseException:
    """The exception as the caller's process can receive it, with where it was raised
    as a note (shown with the traceback); a RuntimeError naming it when it cannot be pickled."""
    import pickle
    import traceback

    where = "raised in a background process:\n" + "".join(traceback.format_exception(exc))
    try:
        copy = pickle.loads(pickle.dumps(exc))
    except Exception:
        copy = RuntimeError(f"{type(exc).__name__}: {exc}")
    copy.add_note(where)
    return copy


class WorkerPool:
    """Processes for many small work items (`jobs()` of them), started on first use,
    each set up once by `setup(*args)`. Forked where `placement` allows; else started
    by a fork server, which imports `preload` once for all of them."""

    def __init__(self, setup: Callable[..., None], args: tuple[Any, ...], preload: Iterable[str] = ()):
        self._setup, self._args, self._preload = setup, args, list(preload)
        self._executor: ProcessPoolExecutor | None = None

    def map(self, fn: Callable[[Item], T], items: Iterable[Item]) -> Iterator[T]:
        """`fn` of each item, in order, as the workers finish them."""
        return self._start().map(fn, items)

    def _start(self) -> ProcessPoolExecutor:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        if self._executor is None:
            context: multiprocessing.context.BaseContext
            if placement() is Placement.PROCESS:
                context = multiprocessing.get_context("fork")
            else:
                methods = multiprocessing.get_all_start_methods()
                context = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
                if "forkserver" in methods and self._preload:
                    context.set_forkserver_preload(self._preload)
            self._executor = ProcessPoolExecutor(
                jobs(), mp_context=context, initializer=self._setup, initargs=self._args
            )
        return self._executor

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown()
            self._executor = None
