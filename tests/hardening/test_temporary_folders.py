"""Temporary folders: runs that share one temporary folder never touch each other's
files there, and leave it as they found it; a temporary folder that cannot be used
changes no result. (The start-up prefetch, with the note it left for the next run,
is gone: every folder a run makes now lives only while the run works in it.)"""

from __future__ import annotations

import shutil

from conftest import write_findings
from hardening.helpers import finished, start_check

BODY = (
    "`vendor/cordis/src/context.ts:14` → `this.fiber`\n"
    "`claim: search(-E 'thi[s]').count == 10`\n"
    "`claim: search('Service').files == 1`\n"
    "`claim: core.context-builtin-services.count == 5`\n"
)


def test_runs_sharing_a_temporary_folder_each_equal_a_run_alone_and_leave_it_empty(workspace, tmp_path):
    """Checks at new pins from a cache warm at v1 search only the changed files, through a
    folder of their own under the temporary folder: two at once, in one temporary folder."""
    write_findings(workspace, BODY)
    seed, shared_tmp = tmp_path / "seed", tmp_path / "tmp"
    shared_tmp.mkdir()
    assert finished(start_check(workspace, seed, TMPDIR=str(shared_tmp)))[0] in (0, 1)
    alone = {}
    for pin in ("v2", "v3"):
        shutil.copytree(seed, tmp_path / f"alone-{pin}")
        alone[pin] = finished(start_check(workspace, tmp_path / f"alone-{pin}", "--pin", pin, TMPDIR=str(shared_tmp)))
    assert alone["v2"][1] != alone["v3"][1]  # the pins differ, so a mix-up would show
    for pin in ("v2", "v3"):
        shutil.copytree(seed, tmp_path / f"together-{pin}")
    procs = {
        pin: start_check(workspace, tmp_path / f"together-{pin}", "--pin", pin, TMPDIR=str(shared_tmp))
        for pin in ("v2", "v3")
    }
    for pin, proc in procs.items():
        assert finished(proc)[:2] == alone[pin][:2], pin
    assert list(shared_tmp.iterdir()) == []


def test_a_temporary_folder_that_cannot_be_used_changes_no_result(workspace, tmp_path):
    write_findings(workspace, BODY)
    usable = tmp_path / "tmp"
    usable.mkdir()
    clean = finished(start_check(workspace, tmp_path / "clean", "--pin", "v2", TMPDIR=str(usable)))
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file\n")
    code, out, err = finished(start_check(workspace, tmp_path / "blocked", "--pin", "v2", TMPDIR=str(blocker)))
    assert (code, out) == clean[:2], err
    assert "Traceback" not in err and blocker.read_text() == "a file\n"
