"""Ambiguous input is an error, not a choice: a key given twice, or a pin in
another YAML form; every accepted form of the pin line is rewritten in place."""

from __future__ import annotations

import pytest

from conftest import run_cli
from hardening.helpers import GOOD, one_line_error


@pytest.mark.parametrize(
    "front, line",
    [
        ("pin: v1\npin: v2", 3),
        ("pin: v1\ntitle: a\ntitle: b", 4),
        ("pin: v1\n'pin': v2", 3),
        ("pin: v1\nx: {a: 1, a: 2}", 3),
    ],
)
def test_a_key_given_twice_is_an_error(workspace, front, line):
    (workspace / "findings" / "f.md").write_text(f"---\n{front}\n---\n{GOOD}")
    one_line_error(run_cli("check"), 2, f"findings/f.md:{line}: malformed front matter: key ")
    lint = run_cli("lint", "--strict", "--format", "json")
    assert lint.exit_code == 1 and "given twice" in lint.json["problems"][0]["message"]
    assert lint.json["problems"][0]["line"] == line


@pytest.mark.parametrize(
    "pin_line",
    [
        '"pin": v1',
        "'pin': v1",
        "pin: !!str v1",
        "pin: &p v1",
        "? pin\n: v1",
        "pin: >-\n  v1",
        "pin:\n  v1",
        "{pin: v1}",
        "pin: 'v1' extra",
    ],
)
def test_a_pin_in_another_yaml_form_is_refused_before_anything_is_written(workspace, pin_line):
    path = workspace / "findings" / "f.md"
    path.write_text(f"---\n{pin_line}\n---\n{GOOD}")
    before = path.read_bytes()
    run = run_cli("rebase", "--to", "v2", "--write")
    assert run.exit_code == 2 and "findings/f.md:2:" in run.stderr and len(run.stderr.splitlines()) == 1, run.stderr
    assert path.read_bytes() == before
    assert run_cli("check").exit_code == 2
    lint = run_cli("lint", "--format", "json")
    assert lint.exit_code == 1 and lint.json["problems"][0]["code"] == "malformed_front_matter"


@pytest.mark.parametrize("pin_line", ["pin: v1", "pin: 'v1'", 'pin: "v1"', "pin: v1  # where we started", "pin : v1"])
@pytest.mark.parametrize("bom, newline", [("", "\n"), ("\ufeff", "\n"), ("\ufeff", "\r\n"), ("", "\r")])
def test_rebase_write_moves_the_pin_with_the_lines_in_every_accepted_form(workspace, pin_line, bom, newline):
    path = workspace / "findings" / "f.md"
    text = f"---\n{pin_line}\n---\n```\nfenced\n```\n{GOOD}"
    path.write_bytes((bom + text.replace("\n", newline)).encode())
    run = run_cli("rebase", "--to", "v2", "--write")
    assert run.exit_code == 0, run.stderr
    after = path.read_bytes().decode()
    expected = bom + text.replace("context.ts:14", "context.ts:17").replace(pin_line, pin_line.replace("v1", "v2"))
    assert after == expected.replace("\n", newline)
    assert run_cli("check").exit_code == 0
