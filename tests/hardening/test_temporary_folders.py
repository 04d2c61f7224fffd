"""Temporary folders: runs that share one temporary folder never touch each other's
files there, and leave it as they found it; a temporary folder that cannot be used
changes no result. (The start-up prefetch, with the note it left for the next run,
is gone: every folder a run makes now lives only while the run works in it.)"""

from __future__ import annotations

import os
import shutil
import subprocess

from conftest import write_findings
from hardening.helpers import DSHAUDIT

BODY = (
    "`vendor/cordis/src/context.ts:14` → `this.fiber`\n"
    "`claim: search(-E 'thi[s]').count == 10`\n"
    "`claim: search('Service').files == 1`\n"
    "`claim: core.context-builtin-services.count == 5`\n"
)


def _run(workspace, cache, tmp, *args: str) -> subprocess.Popen:
    env = {**os.environ, "DSHAUDIT_CACHE_DIR": str(cache), "TMPDIR": str(tmp)}
    return subprocess.Popen(
        [DSHAUDIT, "check", "--format", "json", *args],
        cwd=workspace,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _done(proc: subprocess.Popen) -> tuple[int, str, str]:
    out, err = proc.communicate(timeout=120)
    return proc.returncode, out, err


def test_runs_sharing_a_temporary_folder_each_equal_a_run_alone_and_leave_it_empty(workspace, tmp_path):
    """Checks at new pins from a cache warm at v1 search only the changed files, through a
    folder of their own under the temporary folder: two at once, in one temporary folder."""
    write_findings(workspace, BODY)
    seed, shared_tmp = tmp_path / "seed", tmp_path / "tmp"
    shared_tmp.mkdir()
    assert _done(_run(workspace, seed, shared_tmp))[0] in (0, 1)
    alone = {}
    for pin in ("v2", "v3"):
        shutil.copytree(seed, tmp_path / f"alone-{pin}")
        alone[pin] = _done(_run(workspace, tmp_path / f"alone-{pin}", shared_tmp, "--pin", pin))
    assert alone["v2"][1] != alone["v3"][1]  # the pins differ, so a mix-up would show
    for pin in ("v2", "v3"):
        shutil.copytree(seed, tmp_path / f"together-{pin}")
    procs = {pin: _run(workspace, tmp_path / f"together-{pin}", shared_tmp, "--pin", pin) for pin in ("v2", "v3")}
    for pin, proc in procs.items():
        assert _done(proc)[:2] == alone[pin][:2], pin
    assert list(shared_tmp.iterdir()) == []


def test_a_temporary_folder_that_cannot_be_used_changes_no_result(workspace, tmp_path):
    write_findings(workspace, BODY)
    usable = tmp_path / "tmp"
    usable.mkdir()
    clean = _done(_run(workspace, tmp_path / "clean", usable, "--pin", "v2"))
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file\n")
    code, out, err = _done(_run(workspace, tmp_path / "blocked", blocker, "--pin", "v2"))
    assert (code, out) == clean[:2], err
    assert "Traceback" not in err and blocker.read_text() == "a file\n"
