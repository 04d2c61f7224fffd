from __future__ import annotations

import inspect
import re

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


EXIT_CODES_HEADING = "Exit codes (the same for every command):"


def exit_code_list(text: str) -> dict[int, str]:
    """The list under the exit-codes heading of a --help text, as {code: meaning}.

    The heading lines up with the help's first paragraph (it is part of the
    help, not nested in the paragraph before it); each item is one line (not
    rewrapped into a paragraph), indented under the heading. How deep is
    click's business, not the test's."""
    lines = text.splitlines()
    (at,) = [n for n, line in enumerate(lines) if line.strip() == EXIT_CODES_HEADING]
    indent = len(lines[at]) - len(lines[at].lstrip())
    first = next(line for line in lines[1:] if line.strip())  # after "Usage: ..."
    assert indent == len(first) - len(first.lstrip()), f"heading not aligned with the help: {lines[at]!r}"
    items: dict[int, str] = {}
    for line in lines[at + 1 :]:
        if not line.strip():
            break
        m = re.fullmatch(r"(\s*)(\d+)\s{2,}(\S.*)", line)
        assert m, f"not an item of the exit-code list: {line!r}"
        assert len(m.group(1)) > indent, f"not indented under the heading: {line!r}"
        items[int(m.group(2))] = m.group(3)
    return items


def test_help_teaches(workspace):
    run = run_cli("--help")
    assert "dshaudit check" in run.stdout and "dshaudit show" in run.stdout
    from dshaudit.cli import main
    from dshaudit.core import errors

    for name in main.commands:
        codes = exit_code_list(run_cli(name, "--help").stdout)
        assert list(codes) == [
            errors.EXIT_OK,
            errors.EXIT_FAILED,
            errors.EXIT_USAGE,
            errors.EXIT_REPO,
            errors.EXIT_INTERNAL,
        ], name
        assert codes[errors.EXIT_REPO] == (
            "the DSH repository is unusable (missing SHA, shallow clone, unreachable URL)"
        ), name
        assert codes[errors.EXIT_INTERNAL].startswith("internal error"), name


def test_help_does_not_depend_on_how_docstrings_are_indented():
    # Python 3.13 strips a docstring's common indentation when compiling it;
    # 3.11 and 3.12 keep it. Help stored already dedented reads the same on all.
    from dshaudit.cli import main

    for name, command in main.commands.items():
        assert command.help.rstrip("\n") == inspect.cleandoc(command.help), name
        assert command.help.count(EXIT_CODES_HEADING) == 1, name
