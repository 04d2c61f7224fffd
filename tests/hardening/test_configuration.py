"""Configuration type confusion: a configuration that is not a regular file, too
deep, too large or of the wrong type is a one-line error naming the key, for
every command."""

from __future__ import annotations

import os

import pytest

from conftest import run_cli, write_findings
from hardening.helpers import GOOD, one_line_error, timed


def test_a_configuration_that_is_not_a_file_or_too_deep_is_an_input_error(workspace, tmp_path):
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)
    write_findings(workspace, GOOD)
    run, elapsed = timed("check", "--config", str(fifo))
    one_line_error(run, 2, f"{fifo}: is a FIFO, not a regular file")
    (workspace / "dshaudit.toml").write_text("a = " + "[" * 50_000 + "]" * 50_000 + "\n")
    one_line_error(run_cli("check"), 2, f"{workspace / 'dshaudit.toml'}: malformed configuration")
    (workspace / "dshaudit.toml").write_text("# " + "x" * 2_000_000 + "\n")
    one_line_error(run_cli("lint"), 2, f"{workspace / 'dshaudit.toml'}: 2000003 bytes is larger than")


@pytest.mark.parametrize(
    "toml, message",
    [
        ('upstream = "https://example.invalid/dsh"\n', "`upstream` must be a table"),
        ("[upstream]\nurl = 5\n", "`upstream.url` must be a string (the clone URL), not a number"),
        ('[upstream]\nurl = ""\n', "`upstream.url` must not be empty"),
        ("[upstream]\nurl = [1]\n", "`upstream.url` must be a string"),
        ('[upstream]\nurl = "https://example.invalid/dsh"\nweb = {a = 1}\n', "`upstream.web` must be a string"),
        ('pins = ["6d1214af7d96e9aa0095ef000806df57253b9ed7"]\n', "`pins` must be a table"),
        ("pins = 7\n", "`pins` must be a table"),
        ('pins = "v1"\n', "`pins` must be a table"),
        ("[pins]\nv1 = 5\n", "pin 'v1' must be a full 40-hex lowercase SHA, not a number"),
        ("[pins]\nv1 = {sha = 'x'}\n", "pin 'v1' must be a full 40-hex lowercase SHA, not a table"),
        ("[pins.v1]\nsha = 'x'\n", "pin 'v1' must be a full 40-hex lowercase SHA"),
        ('default_pin = ["v1"]\n', "`default_pin` must be a string (one of the pins), not an array"),
        ("default_pin = 1\n", "`default_pin` must be a string"),
        ("default_pin = 2026-01-01\n", "`default_pin` must be a string (one of the pins), not a date or time"),
        ('default_pin = "nope"\n', "default_pin 'nope' is not one of the pins"),
    ],
)
def test_configuration_of_the_wrong_type_is_a_one_line_error_naming_the_key(workspace, toml, message):
    config = workspace / "dshaudit.toml"
    config.write_text(toml)
    write_findings(workspace, GOOD)
    for args in (
        ["check"],
        ["lint"],
        ["show", "vendor/cordis/src/context.ts:14@v1"],
        ["report", "--format", "json"],
        ["rebase", "--to", "v2"],
        ["facts", "--pin", "v1"],
        ["anchor", "findings/f.md"],
        ["bisect", "findings/f.md:4", "--good", "v1", "--bad", "v2"],
    ):
        one_line_error(run_cli(*args), 2, f"{config}: {message}")
