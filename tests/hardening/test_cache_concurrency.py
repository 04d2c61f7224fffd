"""Cache and concurrency: runs at different pins sharing one cache each give what a
run alone gives; a run killed while it writes leaves nothing the next run trusts;
a cache location that cannot be used means a run without a cache, said in a note.
(Forged or foreign caches are test_cache_integrity.py's; a clone interrupted and
two runs at one pin, test_faults.py's.)"""

from __future__ import annotations

import os
import signal
import time

import pytest

from conftest import write_findings
from hardening.helpers import finished, start_check

BODY = (
    "`vendor/cordis/src/context.ts:14` → `this.fiber`\n"
    "`packages/core/agent/src/index.ts:6` → `createAgent`\n"
    "`claim: search(-E 'thi[s]').count == 10`\n"
    "`claim: search('Service').files == 1`\n"
    "`claim: core.context-builtin-services.count == 5`\n"
)


def test_runs_at_different_pins_sharing_one_cache_each_equal_a_run_alone(workspace, tmp_path):
    write_findings(workspace, BODY)
    alone = {
        pin: finished(start_check(workspace, tmp_path / f"alone-{pin}", "--pin", pin)) for pin in ("v1", "v2", "v3")
    }
    assert {code for code, _, _ in alone.values()} <= {0, 1}
    assert alone["v1"][1] != alone["v2"][1]  # the pins differ, so a mix-up would show
    for attempt in range(2):  # cold and racing, then warm
        shared = tmp_path / "shared"
        procs = {pin: start_check(workspace, shared, "--pin", pin) for pin in ("v1", "v2", "v3")}
        together = {pin: finished(p) for pin, p in procs.items()}
        for pin in procs:
            assert together[pin][:2] == alone[pin][:2], (attempt, pin, together[pin][2])


@pytest.mark.parametrize("delay", [0.05, 0.3, 0.8])
def test_a_run_killed_mid_write_then_run_again_equals_a_clean_run(workspace, tmp_path, delay):
    write_findings(workspace, BODY)
    clean = finished(start_check(workspace, tmp_path / "clean"))
    cache = tmp_path / "killed"
    proc = start_check(workspace, cache)
    time.sleep(delay)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert finished(start_check(workspace, cache))[:2] == clean[:2]
    # A shard cut short as a crash mid-write would leave it, were shards not renamed into place.
    for shard in [p for p in cache.rglob("*") if p.is_file() and p.name != "key" and p.stat().st_size > 10]:
        data = shard.read_bytes()
        shard.write_bytes(data[: len(data) // 2])
    assert finished(start_check(workspace, cache))[:2] == clean[:2]


@pytest.mark.parametrize("where", ["a file", "under a file", "read-only"])
def test_a_cache_location_that_cannot_be_used_means_no_cache_and_a_note(workspace, tmp_path, where):
    write_findings(workspace, BODY)
    clean = finished(start_check(workspace, tmp_path / "clean"))
    blocker = tmp_path / "blocker"
    if where == "a file":
        blocker.write_text("not a folder\n")
        cache = blocker
    elif where == "under a file":
        blocker.write_text("not a folder\n")
        cache = blocker / "cache"
    else:
        if os.geteuid() == 0:
            pytest.skip("root writes into a read-only folder")
        blocker.mkdir(mode=0o500)
        cache = blocker
    code, out, err = finished(start_check(workspace, cache))
    assert (code, out) == clean[:2], err
    assert "not using the cache at" in err and "Traceback" not in err, err
    assert len([line for line in err.splitlines() if "cache" in line]) == 1, err
    if where != "read-only":
        assert blocker.read_text() == "not a folder\n"
