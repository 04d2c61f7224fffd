"""The benchmark's timing of one process (bench/run.py): what a timed process leaves
running when it exits is stopped there and said, so that it does not spend the CPU
of the figure timed next."""

from __future__ import annotations

import importlib.util
import os
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_run", ROOT / "bench" / "run.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        del sys.modules[spec.name]


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc to see what is still running")
def test_a_process_left_running_is_stopped_and_said(bench, tmp_path):
    pid_file = tmp_path / "pid"
    leaves = (
        "import subprocess, sys, pathlib; "
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); "
        f"pathlib.Path({str(pid_file)!r}).write_text(str(child.pid))"
    )
    outcome = bench.run_once([sys.executable, "-c", leaves], dict(os.environ), tmp_path, timeout=30)
    assert outcome.left_running and not outcome.timed_out
    left = int(pid_file.read_text())
    deadline = time.monotonic() + 5
    while _running(left) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _running(left)

    tidy = bench.run_once([sys.executable, "-c", "pass"], dict(os.environ), tmp_path, timeout=30)
    assert not tidy.left_running and tidy.wall < 30


def test_the_cpu_of_a_timed_process_counts_the_processes_it_waits_for(bench, tmp_path):
    spins = "import time\nend = time.process_time() + 0.3\nwhile time.process_time() < end:\n    pass\n"
    waits = f"import subprocess, sys; subprocess.run([sys.executable, '-c', {spins!r}], check=True)"
    outcome = bench.run_once([sys.executable, "-c", waits], dict(os.environ), tmp_path, timeout=30)
    assert outcome.cpu >= 0.3
