"""Write safety: --write keeps permission bits and refuses a file swapped or edited
while the command ran; report output onto devices, FIFOs and sockets."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from conftest import run_cli, write_findings
from hardening.helpers import GOOD, one_line_error


@pytest.mark.parametrize("mode", [0o600, 0o640, 0o444, 0o755])
def test_rebase_and_anchor_write_keep_each_files_permission_bits(workspace, mode):
    path = write_findings(workspace, GOOD)
    path.chmod(mode)
    assert run_cli("rebase", "--to", "v2", "--write").exit_code == 0
    assert b"context.ts:17" in path.read_bytes() and (path.stat().st_mode & 0o7777) == mode
    other = write_findings(workspace, "`vendor/cordis/src/context.ts:14` holds the fiber\n", name="g.md")
    other.chmod(mode)
    run = run_cli("anchor", "findings/g.md", "--write")
    assert run.exit_code == 0 and "→" in other.read_text() and (other.stat().st_mode & 0o7777) == mode


def _during_rebase(monkeypatch, act):
    """Run `act` after rebase read the findings and before it writes them."""
    import dshaudit.moves.rebase as rebase_module

    real = rebase_module.rebase

    def meanwhile(*args, **kwargs):
        act()
        return real(*args, **kwargs)

    monkeypatch.setattr(rebase_module, "rebase", meanwhile)


def test_rebase_write_refuses_a_symlink_swapped_in_mid_run(workspace, tmp_path, monkeypatch):
    path = write_findings(workspace, GOOD)
    outside = tmp_path.parent / f"{tmp_path.name}-outside.md"
    outside.write_text(path.read_text())  # the same bytes: only the file's identity tells them apart
    _during_rebase(monkeypatch, lambda: (path.unlink(), path.symlink_to(outside)))
    run = run_cli("rebase", "--to", "v2", "--write")
    one_line_error(run, 2, "findings/f.md: is a symbolic link now; nothing is read or written through it")
    assert path.is_symlink() and outside.read_text() == GOOD.join(["---\npin: v1\n---\n", ""])
    assert [p.name for p in (workspace / "findings").iterdir()] == ["f.md"]


@pytest.mark.parametrize(
    "edit, message",
    [
        ("delete", "findings/f.md: cannot read: No such file or directory"),
        ("directory", "findings/f.md: is a directory, not a regular file"),
        ("fifo", "findings/f.md: is a FIFO, not a regular file"),
        ("truncate", "findings/f.md: changed on disk while rebase ran"),
        ("append", "findings/f.md: changed on disk while rebase ran"),
        ("not utf-8", "findings/f.md: changed on disk while rebase ran"),
    ],
)
def test_a_concurrent_edit_during_rebase_write_is_a_clear_error(workspace, monkeypatch, edit, message):
    path = write_findings(workspace, GOOD)
    other = write_findings(workspace, GOOD, name="g.md")
    before = other.read_bytes()
    acts = {
        "delete": lambda: path.unlink(),
        "directory": lambda: (path.unlink(), path.mkdir()),
        "fifo": lambda: (path.unlink(), os.mkfifo(path)),
        "truncate": lambda: path.write_text(""),
        "append": lambda: path.write_text(path.read_text() + "more\n"),
        "not utf-8": lambda: path.write_bytes(b"\xff\xfe"),
    }
    _during_rebase(monkeypatch, acts[edit])
    one_line_error(run_cli("rebase", "--to", "v2", "--write"), 2, message)
    assert other.read_bytes() == before  # all or none
    assert not [p.name for p in (workspace / "findings").iterdir() if p.name.startswith(".")]


def test_an_edit_just_before_the_rename_is_refused_too(workspace, monkeypatch):
    import dshaudit.platform.writing as writing

    path = write_findings(workspace, GOOD)
    real = writing._stage

    def stage_then_edit(target, text):
        tmp = real(target, text)
        path.write_text(path.read_text() + "an edit made meanwhile\n")
        return tmp

    monkeypatch.setattr(writing, "_stage", stage_then_edit)
    one_line_error(run_cli("rebase", "--to", "v2", "--write"), 2, "findings/f.md: changed on disk while rebase ran")
    assert path.read_text().endswith("an edit made meanwhile\n")
    assert [p.name for p in (workspace / "findings").iterdir()] == ["f.md"]


def test_report_output_onto_devices_and_streams(workspace, tmp_path, capfd):
    import socket
    import threading

    write_findings(workspace, GOOD)
    null = Path("/dev/null")
    assert run_cli("report", "--format", "json", "-o", "/dev/null").exit_code == 0
    assert null.is_char_device()
    run = run_cli("report", "--format", "json", "-o", "/dev/stdout")
    assert run.exit_code == 0 and run.stdout.startswith("{") and Path("/dev/stdout").is_symlink()
    run = run_cli("check", "--format", "json", "--output", "text=/dev/stderr")
    assert run.exit_code == 0 and "1 citations in 1 files" in run.stderr
    assert run_cli("check", "--output", "sarif=/dev/null").exit_code == 0 and null.is_char_device()
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    one_line_error(run_cli("report", "--format", "json", "-o", str(fifo)), 2, f"{fifo}: is a FIFO with no reader")
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    time.sleep(0.2)
    run = run_cli("report", "--format", "json", "-o", str(fifo))
    reader.join(10)
    assert run.exit_code == 0 and got and got[0].startswith(b"{") and fifo.is_fifo()
    sock_path = tmp_path / "sock"
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(sock_path))
    try:
        one_line_error(run_cli("report", "-o", str(sock_path)), 2, f"{sock_path}: is a socket; not written")
        one_line_error(
            run_cli("check", "--output", f"json={sock_path}", "--output", "sarif=new.sarif"),
            2,
            f"{sock_path}: is a socket",
        )
        assert not Path("new.sarif").exists()  # all or none
    finally:
        sock.close()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_an_output_never_replaces_an_input_however_it_is_named(workspace):
    path = write_findings(workspace, GOOD)
    before = path.read_bytes()
    (workspace / "alias.md").hardlink_to(path)
    for target in ("findings/f.md", "./findings/../findings/f.md", "alias.md", "dshaudit.toml"):
        run = run_cli("check", "--output", f"markdown={target}")
        one_line_error(run, 2, f"--output {Path(target)}: that is ")
        assert "which this run read" in run.stderr, target
    assert path.read_bytes() == before
    run = run_cli("report", "--output", "findings/f.md")
    assert run.exit_code == 2 and path.read_bytes() == before


def test_two_spellings_of_one_output_are_refused(workspace):
    write_findings(workspace, GOOD)
    run = run_cli("check", "--output", "json=out.json", "--output", "markdown=sub/../out.json")
    one_line_error(run, 2, "--output sub/../out.json: the same file as --output out.json")
    assert not (workspace / "out.json").exists()
