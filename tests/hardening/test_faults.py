"""Faults: an interrupted clone, two runs sharing one cache, a full disk, and
Ctrl-C during rebase --write each leave what the next run can use."""

from __future__ import annotations

import json
import os
import subprocess

from conftest import run_cli, write_findings
from fixture_repo import write_config
from hardening.helpers import DSHAUDIT, one_line_error


def test_an_interrupted_clone_leaves_no_cache_entry_and_the_next_run_recovers(workspace, fixture_repo, monkeypatch):
    from dshaudit.git import repository

    url = f"file://{fixture_repo.path}"
    write_findings(workspace, "`vendor/cordis/src/context.ts:14` → `this.fiber`\n")
    real = repository.clone_bare

    def interrupted(*args, **kwargs):
        real(*args, **kwargs)
        raise KeyboardInterrupt  # Ctrl-C just after the objects arrived, before the rename

    monkeypatch.setattr(repository, "clone_bare", interrupted)
    run = run_cli("check", "--repo", url)
    assert run.exit_code == 130 and run.stderr.strip().endswith("interrupted")
    repos = workspace / "cache" / "repos"
    assert not list(repos.glob("*.git")) and not list(repos.glob(".clone-*"))
    monkeypatch.setattr(repository, "clone_bare", real)
    assert run_cli("check", "--repo", url).exit_code == 0


def test_two_runs_at_once_share_one_cache(workspace, facts_repo, tmp_path):
    write_config(workspace, facts_repo)
    env = {**os.environ, "DSH_REPO": str(facts_repo.path), "DSHAUDIT_CACHE_DIR": str(tmp_path / "shared")}
    outs = []
    for _ in range(2):  # twice: first both cold and racing, then both warm
        procs = [
            subprocess.Popen(
                [DSHAUDIT, "facts", "--format", "json", "--pin", "v1"],
                cwd=workspace,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            for _ in range(2)
        ]
        results = [p.communicate() for p in procs]
        assert all(p.returncode == 0 for p in procs), [e.decode() for _, e in results]
        outs += [o for o, _ in results]
    assert len(set(outs)) == 1
    for shard in (tmp_path / "shared").rglob("*.json"):
        json.loads(shard.read_text())  # every shard whole


def test_a_full_disk_fails_the_report_and_leaves_no_file(workspace, monkeypatch):
    import dshaudit.platform.writing as writing

    write_findings(workspace, "`vendor/cordis/src/context.ts:14` → `this.fiber`\n")
    real_replace = os.replace

    def full_disk(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(writing.os, "replace", full_disk)
    run = run_cli("report", "--output", "out.html")
    one_line_error(run, 2, "out.html: cannot write: No space left on device")
    monkeypatch.setattr(writing.os, "replace", real_replace)
    assert not (workspace / "out.html").exists()
    assert not [p for p in workspace.iterdir() if p.name.startswith(".out.html")]


def test_ctrl_c_during_rebase_write_leaves_each_file_old_or_new(workspace, monkeypatch):
    import dshaudit.platform.writing as writing

    for name in ("a.md", "b.md", "c.md"):
        write_findings(workspace, "`vendor/cordis/src/context.ts:14` → `this.fiber`\n", name=name)
    before = {p.name: p.read_bytes() for p in (workspace / "findings").iterdir()}
    real = writing.os.replace
    written = []

    def interrupt_after_first(src, dst):
        if written:
            raise KeyboardInterrupt
        real(src, dst)
        written.append(dst)

    monkeypatch.setattr(writing.os, "replace", interrupt_after_first)
    run = run_cli("rebase", "--to", "v2", "--write")
    assert run.exit_code == 130
    after = {p.name: p.read_bytes() for p in (workspace / "findings").iterdir()}
    assert set(after) == set(before)  # no temporary files left behind
    changed = [n for n in after if after[n] != before[n]]
    assert changed == ["a.md"]
    assert b"context.ts:17`" in after["a.md"] and b"pin: v2" in after["a.md"]
