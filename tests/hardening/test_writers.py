"""Writers (`rebase --write`, `anchor --write`, `--output`, `report -o`): what a
file was is kept (line ends, a byte order mark, permission bits, hard links),
a file that cannot be read as text is refused untouched, and an output path
that is empty, given twice, or one of the inputs is refused before anything is
written. The cases of files swapped or edited mid-run are test_write_safety.py's."""

from __future__ import annotations

import os

import pytest

from conftest import run_cli, write_findings
from hardening.helpers import GOOD, one_line_error

BODY = "`vendor/cordis/src/context.ts:14` → `this.fiber`\n"
UNANCHORED = "`vendor/cordis/src/context.ts:14` holds the fiber\n"


def _raw(workspace, data: bytes, name: str = "f.md"):
    path = workspace / "findings" / name
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("bom", [b"", b"\xef\xbb\xbf"])
@pytest.mark.parametrize("newline", [b"\n", b"\r\n", b"\r"])
@pytest.mark.parametrize("command", ["rebase", "anchor"])
def test_line_ends_and_a_byte_order_mark_are_kept(workspace, bom, newline, command):
    text = (BODY if command == "rebase" else UNANCHORED) + "Last line, no end"
    data = bom + f"---\npin: v1\n---\n{text}".replace("\n", "\r" if newline == b"\r" else "\n").encode()
    if newline == b"\r\n":
        data = data.replace(b"\n", b"\r\n")
    path = _raw(workspace, data)
    args = ("rebase", "--to", "v2", "--write") if command == "rebase" else ("anchor", "findings/f.md", "--write")
    run = run_cli(*args)
    assert run.exit_code == 0, run.stderr
    after = path.read_bytes()
    assert after != data and after.startswith(bom + b"---")
    assert after.count(newline) == data.count(newline) and after.endswith(b"no end")
    others = {b"\n", b"\r\n", b"\r"} - {newline}
    stripped = after.replace(b"\r\n", b"") if newline != b"\r\n" else after.replace(b"\r\n", b"\0")
    assert not any(o in stripped for o in others if o != b"\r\n"), after


@pytest.mark.parametrize("bad", [b"\xff\xfe", b"\xc3\x28", b"\xed\xa0\x80", b"\x80"])
@pytest.mark.parametrize("command", ["rebase", "anchor"])
def test_bytes_that_are_not_utf8_are_refused_and_the_file_is_untouched(workspace, bad, command):
    text = BODY if command == "rebase" else UNANCHORED
    path = _raw(workspace, b"---\npin: v1\n---\n" + text.encode() + b"note " + bad + b"\n")
    before, stat = path.read_bytes(), path.stat()
    args = ("rebase", "--to", "v2", "--write") if command == "rebase" else ("anchor", "findings/f.md", "--write")
    run = run_cli(*args)
    assert run.exit_code == 2 and "findings/f.md" in run.stderr and "UTF-8" in run.stderr, run.stderr
    assert len(run.stderr.splitlines()) == 1 and "Traceback" not in run.stderr
    assert path.read_bytes() == before and path.stat().st_mtime_ns == stat.st_mtime_ns
    assert sorted(p.name for p in (workspace / "findings").iterdir()) == ["f.md"]


@pytest.mark.parametrize("command", ["rebase", "anchor"])
def test_a_hard_linked_findings_file_is_refused_and_both_names_keep_their_bytes(workspace, command):
    path = write_findings(workspace, BODY if command == "rebase" else UNANCHORED)
    other = workspace / "copy-elsewhere.md"
    other.hardlink_to(path)
    before = path.read_bytes()
    args = ("rebase", "--to", "v2", "--write") if command == "rebase" else ("anchor", "findings/f.md", "--write")
    run = run_cli(*args)
    one_line_error(run, 2, "findings/f.md: has 2 hard links")
    assert path.read_bytes() == before and other.read_bytes() == before
    assert os.path.samefile(path, other)


def test_an_empty_output_path_is_refused(workspace):
    write_findings(workspace, GOOD)
    for args in (("check", "--output", "json="), ("check", "--output", "json"), ("report", "-o", "")):
        run = run_cli(*args)
        assert run.exit_code == 2 and "Traceback" not in run.stderr, (args, run.stderr)
        assert "--output" in run.stderr or "-o" in run.stderr or "output" in run.stderr.lower(), run.stderr
    assert sorted(p.name for p in workspace.iterdir() if p.name != "cache") == ["dshaudit.toml", "findings"]


@pytest.mark.parametrize(
    "outputs, said",
    [
        (["json=out.json", "sarif=out.json"], "--output 'sarif=out.json': out.json is already an output of this run"),
        (["json=out.json", "json=./out.json"], "--output 'json=./out.json': ./out.json is already an output"),
    ],
)
def test_one_output_path_given_twice_is_refused_before_anything_is_written(workspace, outputs, said):
    path = write_findings(workspace, GOOD)
    before = path.read_bytes()
    args = [a for o in outputs for a in ("--output", o)]
    one_line_error(run_cli("check", *args), 2, said)
    assert not (workspace / "out.json").exists() and path.read_bytes() == before
