"""`history` and `bisect` ranges from untrusted input: reversed, between unrelated
commits, empty, and interrupted with Ctrl-C. A range that cannot be walked is a
one-line error (exit 2) that says why; an empty one is a walk of no commits; an
interrupted one exits 130 and leaves no temporary folder or file behind."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from conftest import run_cli, write_findings
from fixture_repo import git
from hardening.helpers import DSHAUDIT, GOOD, one_line_error


@pytest.fixture
def lines_of_history(workspace, fixture_repo, tmp_path, monkeypatch):
    """A clone of the fixture with a commit that shares no history with it (`lone`) and a
    branch off v1 (`side`), both pins of the workspace."""
    import shutil

    root = tmp_path / "lines"
    shutil.copytree(fixture_repo.path, root, symlinks=True)
    git(root, "checkout", "-q", "--orphan", "lone")
    git(root, "rm", "-rq", "--cached", ".")
    (root / "lone.ts").write_text("export const lone = 1\n")
    git(root, "add", "lone.ts")
    git(root, "commit", "-qm", "lone")
    lone = git(root, "rev-parse", "HEAD")
    git(root, "checkout", "-qf", "-b", "side", fixture_repo.shas["v1"])
    (root / "side.ts").write_text("export const side = 1\n")
    git(root, "add", "side.ts")
    git(root, "commit", "-qm", "side")
    side = git(root, "rev-parse", "HEAD")
    git(root, "checkout", "-qf", "main")
    monkeypatch.setenv("DSH_REPO", str(root))
    with (workspace / "dshaudit.toml").open("a") as config:
        config.write(f'lone = "{lone}"\nside = "{side}"\n')
    write_findings(workspace, GOOD)
    return {"lone": lone, "side": side, **fixture_repo.shas}


def _history(a: str, b: str):
    return run_cli("history", "--from", a, "--to", b)


def _bisect(a: str, b: str):
    return run_cli("bisect", "findings/f.md:4", "--good", a, "--bad", b)


# -- reversed, unrelated, diverged ---------------------------------------------------------------


@pytest.mark.parametrize("command, order", [(_history, "--from before --to"), (_bisect, "--good before --bad")])
def test_a_reversed_range_says_to_swap_its_ends(lines_of_history, command, order):
    shas = lines_of_history
    run = command("v3", "v1")
    one_line_error(run, 2, f"{shas['v3'][:12]} is not an ancestor of {shas['v1'][:12]} (it comes after it")
    assert run.stderr.rstrip().endswith(order)


@pytest.mark.parametrize("command", [_history, _bisect])
@pytest.mark.parametrize("ends", [("v1", "lone"), ("lone", "v3"), ("lone", "v1")])
def test_unrelated_commits_share_no_history(lines_of_history, command, ends):
    shas = lines_of_history
    run = command(*ends)
    one_line_error(run, 2, f"{shas[ends[0]][:12]} is not an ancestor of {shas[ends[1]][:12]} (the two commits share")
    assert "no range joins them" in run.stderr


@pytest.mark.parametrize("command", [_history, _bisect])
def test_two_lines_that_parted_name_where(lines_of_history, command):
    shas = lines_of_history
    run = command("side", "v3")
    one_line_error(run, 2, f"{shas['side'][:12]} is not an ancestor of {shas['v3'][:12]} (the two lines")
    assert f"part at {shas['v1'][:12]}" in run.stderr


# -- empty ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("to", ["v1", "sha"])
def test_an_empty_history_walks_no_commit(lines_of_history, to):
    sha = lines_of_history["v1"]
    run = run_cli("history", "--from", "v1", "--to", sha if to == "sha" else to, "--format", "json")
    assert run.exit_code == 0, run.stderr
    assert run.json["commits"] == [] and [c["status_at_to"] for c in run.json["citations"]] == ["ok"]
    text = _history("v1", sha if to == "sha" else to)
    assert text.exit_code == 0 and "0 first-parent commits" in text.stdout


def test_an_empty_bisect_has_nothing_to_find(lines_of_history):
    run = run_cli("bisect", "findings/f.md:4", "--good", "v1", "--bad", lines_of_history["v1"], "--format", "json")
    assert run.exit_code == 0, run.stderr
    assert run.json["first"] is None and run.json["commits"] == 0
    assert _bisect("v1", "v1").stdout.strip().endswith("the same at v1 and v1 (ok)")


@pytest.mark.parametrize("ref", ["HEAD", "main", "v1..v3", "v3~1", "-x", "--upload-pack=touch pwned", "lone~0"])
def test_range_ends_that_are_not_pins_never_reach_git(lines_of_history, ref):
    for option, command in (("--to", _history("v1", ref)), ("--bad", _bisect("v1", ref))):
        one_line_error(command, 2, f"{option}: pin {ref!r} is not in dshaudit.toml")
    assert not Path("pwned").exists()


# -- interrupted ---------------------------------------------------------------------------------

# Stands in for git: the first call of the subcommand named in HANG_ON leaves a mark and
# waits, so that Ctrl-C comes while dshaudit is in the middle of its walk.
_HANGING_GIT = """#!/bin/sh
for arg in "$@"; do
  if [ "$arg" = "$HANG_ON" ] && [ ! -e "$HANG_MARK" ]; then
    : > "$HANG_MARK"
    sleep 60
    exit 1
  fi
done
exec {git} "$@"
"""


@pytest.mark.parametrize(
    "command, hang_on",
    [
        (["history", "--from", "v1", "--to", "v3"], "grep"),  # in the claims' walk, beside the citations'
        (["history", "--from", "v1", "--to", "v3"], "log"),  # reading the commits
        (["bisect", "findings/f.md:4", "--good", "v1", "--bad", "v3"], "cat-file"),  # reading a probe's files
    ],
)
def test_ctrl_c_exits_130_and_leaves_nothing_behind(lines_of_history, workspace, tmp_path, command, hang_on):
    import shutil

    write_findings(workspace, GOOD + "\n`claim: search('fiber').count == 3`\n")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "git"
    fake.write_text(_HANGING_GIT.format(git=shutil.which("git")))
    fake.chmod(0o755)
    temp = tmp_path / "tmp"
    temp.mkdir()
    mark = tmp_path / "hanging"
    env = {
        **os.environ,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "TMPDIR": str(temp),
        "HANG_ON": hang_on,
        "HANG_MARK": str(mark),
        "DSHAUDIT_CACHE_DIR": str(tmp_path / "fresh-cache"),
    }
    # (The workspace is the test's own folder: the clone, the stand-in and the caches are in it too.)
    findings = workspace / "findings"
    before = {p: p.read_bytes() for p in findings.iterdir()}
    entries = {p.name for p in workspace.iterdir()}
    proc = subprocess.Popen(
        [DSHAUDIT, *command],
        cwd=workspace,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while not mark.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert mark.exists(), proc.communicate()
    os.killpg(proc.pid, signal.SIGINT)  # as a terminal sends Ctrl-C: to the whole process group
    out, err = proc.communicate(timeout=60)
    assert proc.returncode in (130, 2), (proc.returncode, out, err)
    assert err.decode().strip().splitlines()[-1] == "dshaudit: interrupted", err
    assert b"Traceback" not in err
    time.sleep(0.2)  # a forked helper that got the same Ctrl-C has ended by now
    assert list(temp.iterdir()) == []
    assert {p: p.read_bytes() for p in findings.iterdir()} == before
    assert {p.name for p in workspace.iterdir()} - entries <= {"fresh-cache", "hanging"}
    leftovers = [p for p in (tmp_path / "fresh-cache").rglob("*") if p.name.startswith((".clone-", "tmp"))]
    assert leftovers == []
    # The next run, uninterrupted, is whole.
    env.pop("HANG_ON")
    again = subprocess.run([DSHAUDIT, *command], cwd=workspace, env=env, capture_output=True)
    assert again.returncode in (0, 1), again.stderr
