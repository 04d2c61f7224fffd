"""The one concurrency policy (platform/background.py): how many processes a run
uses, where work runs, and what a failure or Ctrl-C in the background does."""

from __future__ import annotations

import os
import threading
import time

import pytest

from conftest import run_cli
from dshaudit.core.errors import RepoError
from dshaudit.platform import background
from dshaudit.platform.background import BackgroundJob, Placement, WorkerPool

_set_up: list[str] = []  # in a worker of a pool: what its setup was given


def _set_up_with(word: str) -> None:
    _set_up.append(word)


def _square(n: int) -> tuple[int, list[str]]:
    return n * n, list(_set_up)


def test_the_count_is_jobs_else_the_variable_else_one_per_processor(monkeypatch):
    monkeypatch.delenv("DSHAUDIT_WORKERS", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 12)
    assert background.jobs() == 12, "not capped"
    monkeypatch.setenv("DSHAUDIT_WORKERS", "3")
    assert background.jobs() == 3
    monkeypatch.setenv("DSHAUDIT_WORKERS", "0")
    assert background.jobs() == 1
    monkeypatch.setenv("DSHAUDIT_WORKERS", "many")
    assert background.jobs() == 12
    background.configure(5)
    assert background.jobs() == 5


def test_the_jobs_option_sets_the_count_and_refuses_zero(tmp_path, monkeypatch):
    monkeypatch.setenv("DSHAUDIT_WORKERS", "3")
    run_cli("--jobs", "7", "lint", str(tmp_path))
    assert background.jobs() == 7
    run_cli("lint", str(tmp_path))
    assert background.jobs() == 3
    refused = run_cli("--jobs", "0", "lint", str(tmp_path))
    assert refused.exit_code == 2 and "--jobs" in refused.stderr


def test_a_variable_that_is_no_count_is_refused_in_one_line_unless_jobs_is_given(tmp_path, monkeypatch):
    for value in ("many", "0", "-2", "1.5", "²"):
        monkeypatch.setenv("DSHAUDIT_WORKERS", value)
        refused = run_cli("lint", str(tmp_path))
        assert refused.exit_code == 2, value
        assert "DSHAUDIT_WORKERS" in refused.stderr and "Traceback" not in refused.stderr
        assert run_cli("--jobs", "2", "lint", str(tmp_path)).exit_code == 0
    monkeypatch.setenv("DSHAUDIT_WORKERS", " 3 ")
    assert run_cli("lint", str(tmp_path)).exit_code == 0


def test_one_job_is_inline_a_lone_thread_forks_and_other_threads_keep_from_forking():
    background.configure(1)
    assert background.placement() is Placement.INLINE
    background.configure(2)
    assert background.placement() is Placement.PROCESS
    release = threading.Event()
    other = threading.Thread(target=release.wait)
    other.start()
    try:
        assert background.placement() is Placement.THREAD
    finally:
        release.set()
        other.join()


@pytest.mark.parametrize("where", list(Placement))
def test_the_answer_comes_back_from_wherever_it_is_computed(where):
    job = BackgroundJob.start(lambda: (os.getpid(), [1, 2]), where)
    pid, answer = job.result()
    assert answer == [1, 2] and (pid != os.getpid()) == (where is Placement.PROCESS)
    assert job.result() == (pid, answer)


def _fail() -> None:
    raise RepoError("no such commit", file="f.md", line=2)


@pytest.mark.parametrize("where", list(Placement))
def test_what_the_work_raises_is_raised_where_the_answer_is_asked_for(where):
    job = BackgroundJob.start(_fail, where)
    with pytest.raises(RepoError) as raised:
        job.result()
    assert str(raised.value) == "f.md:2: no such commit" and (raised.value.what, raised.value.line) == (
        "no such commit",
        2,
    )


def test_an_exception_that_cannot_be_pickled_is_named():
    class Local(Exception):
        pass

    def fail() -> None:
        raise Local("lost on the way")

    with pytest.raises(RuntimeError, match="Local: lost on the way"):
        BackgroundJob.start(fail, Placement.PROCESS).result()


def test_ctrl_c_in_a_background_process_is_ctrl_c_here():
    def interrupted() -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        BackgroundJob.start(interrupted, Placement.PROCESS).result()


def test_a_process_that_ends_without_an_answer_is_an_error():
    with pytest.raises(RuntimeError, match="ended with code 7"):
        BackgroundJob.start(lambda: os._exit(7), Placement.PROCESS).result()


def _job_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("dshaudit-job")]


def test_a_job_in_a_thread_has_no_thread_left_once_it_is_answered_or_stopped():
    """The process is one thread again, so that work started next may fork (`placement`)."""
    for n in range(20):
        job = BackgroundJob.start(lambda n=n: n, Placement.THREAD)
        assert job.result() == n
        assert not _job_threads(), "the job's thread outlived its answer"
    release = threading.Event()
    job = BackgroundJob.start(release.wait, Placement.THREAD)
    release.set()
    job.stop()
    assert not _job_threads(), "the job's thread outlived its stop"


def test_stop_ends_a_process_still_at_work():
    job = BackgroundJob.start(lambda: time.sleep(60), Placement.PROCESS)
    began = time.monotonic()
    job.stop()
    assert time.monotonic() - began < 30
    with pytest.raises(RuntimeError, match="stopped"):
        job.result()


def test_inline_work_runs_only_when_asked_for_and_stop_undoes_its_preparations():
    ran, undone = [], []
    asked = BackgroundJob.inline(lambda: ran.append("asked") or "answer", stop=lambda: undone.append("asked"))
    unwanted = BackgroundJob.inline(lambda: ran.append("unwanted"), stop=lambda: undone.append("unwanted"))
    assert ran == []
    assert asked.result() == "answer"
    asked.stop()
    unwanted.stop()
    assert ran == ["asked"] and undone == ["unwanted"]


@pytest.mark.parametrize("where", [Placement.PROCESS, Placement.THREAD])
def test_a_worker_pool_sets_each_worker_up_and_answers_in_order(monkeypatch, where):
    background.configure(2)
    monkeypatch.setattr(background, "placement", lambda: where)
    pool = WorkerPool(_set_up_with, ("ready",))
    try:
        assert list(pool.map(_square, range(6))) == [(n * n, ["ready"]) for n in range(6)]
    finally:
        pool.close()


# The fork is forced beside the pool's management thread, which `placement` would not do.
@pytest.mark.filterwarnings("ignore:This process .* is multi-threaded:DeprecationWarning")
def test_a_background_process_starts_workers_of_its_own_after_its_parent_did(monkeypatch):
    """Its parent's fork server is not its child: it starts one of its own."""
    background.configure(2)
    monkeypatch.setattr(background, "placement", lambda: Placement.THREAD)  # workers from a fork server
    parents = WorkerPool(_set_up_with, ("parent",))

    def in_the_child() -> list[tuple[int, list[str]]]:
        own = WorkerPool(_set_up_with, ("child",))
        try:
            return list(own.map(_square, [3]))
        finally:
            own.close()

    try:
        assert list(parents.map(_square, [2])) == [(4, ["parent"])]
        assert BackgroundJob.start(in_the_child, Placement.PROCESS).result() == [(9, ["child"])]
    finally:
        parents.close()


def test_side_by_side_answers_in_order_and_finishes_every_item_before_a_failure():
    done = []

    def work(n: int) -> int:
        time.sleep(0.02 * (5 - n))  # the first items end last
        done.append(n)
        if n == 1:
            raise RepoError("item 1")
        return n * n

    assert background.side_by_side(lambda n: n * n, range(5)) == [0, 1, 4, 9, 16]
    with pytest.raises(RepoError, match="item 1"):
        background.side_by_side(work, range(5))
    assert sorted(done) == [0, 1, 2, 3, 4]


def test_side_by_side_waits_on_git_at_once_whatever_the_jobs(monkeypatch):
    monkeypatch.setenv(background.JOBS_VARIABLE, "1")
    running, most = [0], [0]
    lock = threading.Lock()

    def work(_: int) -> None:
        with lock:
            running[0] += 1
            most[0] = max(most[0], running[0])
        time.sleep(0.05)
        with lock:
            running[0] -= 1

    background.side_by_side(work, range(8))
    assert most[0] == background.GIT_WAITERS


def test_alongside_runs_beside_the_block_and_says_its_failure_after_the_block_s_own():
    seen = []
    with background.alongside(lambda: seen.append(threading.current_thread().name)):
        pass
    assert seen and seen[0] != threading.current_thread().name

    def failing() -> None:
        raise RepoError("git failed")

    with pytest.raises(RepoError, match="git failed"):
        with background.alongside(failing):
            pass
    with pytest.raises(ValueError, match="the block"):
        with background.alongside(failing):
            raise ValueError("the block")
