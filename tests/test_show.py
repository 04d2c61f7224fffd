from __future__ import annotations

from conftest import run_cli


def test_show_prints_numbered_lines_with_context(workspace):
    run = run_cli("show", "vendor/cordis/src/context.ts:14-15", "-C", "1")
    assert run.exit_code == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0].startswith("vendor/cordis/src/context.ts @ v1 (")
    assert lines[0].endswith("), 34 lines")
    assert lines[1:] == [
        "  13 |     const self = this",
        "> 14 |     this.fiber = new Fiber(self, {}, Object.create(null), null, () => [])",
        "> 15 |     this.reflect = new ReflectService(self)",
        "  16 |     this.registry = new RegistryService(self)",
    ]


def test_show_symbol_at_other_pin_and_gaps(workspace):
    run = run_cli("show", "packages/core/agent/src/registry.ts#AgentRegistry.setFactory@v2", "-C", "0")
    assert run.exit_code == 0, run.stderr
    assert "@ v2" in run.stdout.splitlines()[0]
    assert run.stdout.splitlines()[1] == "> 17 |   setFactory(factory: AgentFactory): () => void {"
    run = run_cli("show", "vendor/cordis/src/context.ts:1,34", "-C", "0")
    assert run.stdout.splitlines()[1:] == [
        ">  1 | import { Fiber } from './fiber'",
        "    ...",
        "> 34 | }",
    ]


def test_show_errors_are_one_line(workspace):
    run = run_cli("show", "not a citation")
    assert run.exit_code == 2 and run.stderr.startswith("dshaudit: 'not a citation': not a citation")
    run = run_cli("show", "vendor/cordis/src/context.ts:99")
    assert run.exit_code == 2
    assert run.stderr == (
        "dshaudit: vendor/cordis/src/context.ts:99: out_of_range: "
        "line 99 is past the end of the file (34 lines at v1)\n"
    )
    run = run_cli("show", "vendor/cordis/src/context.ts:1@v9")
    assert run.exit_code == 2 and "pin 'v9'" in run.stderr


def test_help_teaches(workspace):
    run = run_cli("--help")
    assert "dshaudit check" in run.stdout and "dshaudit show" in run.stdout
    from dshaudit.cli import main

    for name in main.commands:
        text = run_cli(name, "--help").stdout
        assert "Exit codes (the same for every command):" in text, name
        assert "\n    3  the DSH repository is unusable" in text, name  # kept as a list, not rewrapped
