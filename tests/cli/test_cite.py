"""`dshaudit cite`: a citation ready to paste, with the anchor `dshaudit anchor` would pick."""

from __future__ import annotations

from conftest import run_cli, write_findings


def test_cite_prints_the_canonical_citation_with_its_rarest_token(workspace):
    run = run_cli("cite", "vendor/cordis/src/context.ts:15")
    assert run.exit_code == 0, run.stderr
    # `reflect` and `ReflectService` are each on two lines of the file, `self` on seven: the longer rare one.
    assert run.stdout == "`vendor/cordis/src/context.ts:15` → `ReflectService`\n"


def test_cite_prefers_string_literals_and_identifiers_over_keywords(workspace):
    run = run_cli("cite", "vendor/cordis/src/context.ts:9")  # static readonly origin = 'cordis'
    assert run.stdout == "`vendor/cordis/src/context.ts:9` → `'cordis'`\n"


def test_cite_writes_the_full_path_and_a_pin_that_is_not_the_default(workspace):
    run = run_cli("cite", "agent/src/registry.ts:17@v2")
    assert run.exit_code == 0, run.stderr
    assert run.stdout == "`packages/core/agent/src/registry.ts:17@v2` → `setFactory`\n"
    run = run_cli("cite", "vendor/cordis/src/context.ts:15", "--pin", "v1")
    assert "@" not in run.stdout  # v1 is the default pin


def test_cite_symbol_gets_its_declaration_lines(workspace):
    run = run_cli("cite", "packages/core/agent/src/registry.ts#AgentRegistry.setFactory@v2", "--format", "json")
    assert run.exit_code == 0, run.stderr
    assert run.json["citation"] == "`packages/core/agent/src/registry.ts:17-21#AgentRegistry.setFactory@v2`"
    assert (run.json["lines"], run.json["symbol"], run.json["anchor"]) == ("17-21", "AgentRegistry.setFactory", None)


def test_what_cite_prints_passes_check(workspace):
    body = "".join(
        f"- {run_cli('cite', c).stdout}"
        for c in (
            "vendor/cordis/src/context.ts:15",
            "vendor/cordis/src/context.ts:9",
            "packages/ui/src/App.tsx:4",
            "agent/src/index.ts:17",
            "vendor/cordis/src/context.ts#Context.plugin",
        )
    )
    write_findings(workspace, body)
    run = run_cli("check")
    assert run.exit_code == 0, run.stdout
    assert run.stdout.startswith("5 citations in 1 files: 5 ok")


def test_cite_refuses_what_does_not_hold(workspace):
    run = run_cli("cite", "vendor/cordis/src/context.ts:99")
    assert run.exit_code == 2
    assert "out_of_range" in run.stderr
    run = run_cli("cite", "not a citation")
    assert run.exit_code == 2 and "not a citation" in run.stderr
