"""What the hostile-input tests of this folder share.

Findings come from contributors' pull requests and DSH from upstream: both are
untrusted. Every case ends in a correct verdict or a one-line error with a
documented exit code: never a traceback, never a pass that was not earned, in
bounded time and memory, with nothing written where it should not be."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from conftest import run_cli, write_findings

# The installed console script, for the tests that run dshaudit as a process of its own.
DSHAUDIT = str(Path(sys.executable).parent / "dshaudit")

# A citation that holds at v1 of the fixture repository.
GOOD = "`vendor/cordis/src/context.ts:14` → `this.fiber`\n"


def start_check(workspace, cache, *args: str, **env: str) -> subprocess.Popen:
    """`dshaudit check --format json ARGS` started as a process of its own in the workspace,
    with `cache` as its cache folder and `env` added to its environment."""
    return subprocess.Popen(
        [DSHAUDIT, "check", "--format", "json", *args],
        cwd=workspace,
        env={**os.environ, "DSHAUDIT_CACHE_DIR": str(cache), **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finished(proc: subprocess.Popen) -> tuple[int, str, str]:
    """A started process's exit code, standard output and standard error."""
    out, err = proc.communicate(timeout=120)
    return proc.returncode, out, err


def one_verdict(workspace, citation: str, pin: str = "v1") -> dict:
    write_findings(workspace, f"{citation}\n", pin=pin)
    run = run_cli("check", "--format", "json")
    assert run.exit_code in (0, 1), run.stderr
    (v,) = run.json["citations"]
    return v


def one_line_error(run, code: int, starts: str) -> None:
    assert run.exit_code == code, (run.exit_code, run.stdout, run.stderr)
    assert run.stderr.startswith("dshaudit: " + starts), run.stderr
    assert len(run.stderr.splitlines()) == 1 and "Traceback" not in run.stderr


# Runs a command and prints its exit code and peak resident memory (KiB). Linux keeps, in a
# process's peak, the memory of what it was before it started the program: a command
# started straight from this test process would report the test process's own peak. So a
# small Python process starts it and reports what the command itself used.
_PEAK = """
import json, os, subprocess, sys, tempfile
with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
    proc = subprocess.Popen(sys.argv[1:], stdout=out, stderr=err)
    _, status, usage = os.wait4(proc.pid, 0)
    out.seek(0)
    err.seek(0)
    said = {"code": os.waitstatus_to_exitcode(status), "peak": usage.ru_maxrss}
    print(json.dumps({**said, "out": out.read().decode(), "err": err.read().decode()}))
"""


def run_measured(*command: str, cwd: Path) -> dict:
    """`command` run in `cwd`: its exit code, peak resident memory in KiB, stdout and stderr."""
    import json
    import subprocess

    ran = subprocess.run([sys.executable, "-c", _PEAK, *command], cwd=cwd, capture_output=True, text=True, check=True)
    return json.loads(ran.stdout)


def timed(*args: str) -> tuple[object, float]:
    start = time.perf_counter()
    run = run_cli(*args)
    return run, time.perf_counter() - start
