"""What the hostile-input tests of this folder share.

Findings come from contributors' pull requests and DSH from upstream: both are
untrusted. Every case ends in a correct verdict or a one-line error with a
documented exit code: never a traceback, never a pass that was not earned, in
bounded time and memory, with nothing written where it should not be."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from conftest import run_cli, write_findings

# The installed console script, for the tests that run dshaudit as a process of its own.
DSHAUDIT = str(Path(sys.executable).parent / "dshaudit")

# A citation that holds at v1 of the fixture repository.
GOOD = "`vendor/cordis/src/context.ts:14` → `this.fiber`\n"


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


def timed(*args: str) -> tuple[object, float]:
    start = time.perf_counter()
    run = run_cli(*args)
    return run, time.perf_counter() - start
