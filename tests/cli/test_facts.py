"""`dshaudit facts` on the DSH-shaped fixture of tests/fixture_facts.py (its JSON,
--pin and ids, an unknown id), and claims measured through `dshaudit check`: every
operator and status, the gate, and a pin where a parse error sits near the needle."""

from __future__ import annotations

import json

import pytest

from conftest import run_cli, write_findings
from dshaudit.facts.book import registry
from fixture_repo import write_config

# -- dshaudit facts ---------------------------------------------------------------------------


@pytest.fixture
def facts_workspace(tmp_path, facts_repo, monkeypatch):
    """dshaudit.toml with pins v1..v4 of the facts fixture, default v1; the cwd."""
    write_config(tmp_path, facts_repo)
    (tmp_path / "findings").mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DSH_REPO", str(facts_repo.path))
    monkeypatch.setenv("DSHAUDIT_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path


def test_facts_json(facts_workspace, facts_repo):
    first = run_cli("facts", "--format", "json")
    second = run_cli("facts", "--format", "json")
    assert first.exit_code == 0, first.stderr
    assert first.stdout == second.stdout
    doc = json.loads(first.stdout)
    assert doc["pin"] == "v1" and doc["sha"] == facts_repo.shas["v1"]
    specs = registry()
    assert [f["id"] for f in doc["facts"]] == sorted(specs)
    for f in doc["facts"]:
        assert {"value", "definition", "evidence"} <= set(f), f["id"]
        assert f["status"] == "ok", f
        assert f["definition"] == specs[f["id"]].definition
        assert isinstance(f["evidence"], list) and all(isinstance(e, str) for e in f["evidence"])
    by_id = {f["id"]: f for f in doc["facts"]}
    assert by_id["hooks.default-timeout-ms"]["value"] == 600000
    assert by_id["hooks.default-timeout-ms"]["evidence"] == ["packages/hooks/hook-protocol/src/runner.ts:2"]
    assert by_id["session.surface-op-kinds"]["fields"]["agent_loop"] == ["append"]
    assert by_id["subagent.claude-code.persist-session"]["value"] is False


def test_facts_json_pin_and_ids(facts_workspace, facts_repo):
    run = run_cli(
        "facts", "--pin", "v3", "--format", "json", "subagent.claude-code.persist-session", "hooks.default-timeout-ms"
    )
    doc = run.json
    assert doc["pin"] == "v3" and doc["sha"] == facts_repo.shas["v3"]
    hooks, persist = doc["facts"]
    assert (hooks["id"], hooks["status"], hooks["value"]) == ("hooks.default-timeout-ms", "ok", 300000)
    assert persist["id"] == "subagent.claude-code.persist-session"
    assert persist["status"] == "cannot_evaluate" and persist["value"] is None
    assert "packages/subagent/subagent-claude-code/src/defaults.ts:4" in persist["message"]
    assert persist["evidence"] == ["packages/subagent/subagent-claude-code/src/defaults.ts:4"]


def test_facts_unknown_id_is_exit_2(facts_workspace):
    run = run_cli("facts", "no.such-fact")
    assert run.exit_code == 2
    assert run.stderr.startswith("dshaudit: unknown fact 'no.such-fact'")


KEPT = "the outcome of an earlier run of the same inputs"


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_facts_run_again_are_the_kept_outcome_until_an_input_changes(facts_workspace, facts_repo, fmt):
    first = run_cli("-v", "facts", "--format", fmt)
    again = run_cli("-v", "facts", "--format", fmt)
    assert KEPT not in first.stderr and KEPT in again.stderr
    assert (again.stdout, again.exit_code) == (first.stdout, first.exit_code) and first.exit_code == 0
    ids = ("hooks.default-timeout-ms", "subagent.claude-code.persist-session")
    assert KEPT not in run_cli("-v", "facts", "--format", fmt, *ids).stderr  # other facts
    assert KEPT in run_cli("-v", "facts", "--format", fmt, *reversed(ids)).stderr  # the same, in another order
    other = run_cli("-v", "facts", "--pin", "v3", "--format", fmt)
    assert KEPT not in other.stderr and other.stdout != first.stdout  # another commit
    with (facts_workspace / "dshaudit.toml").open("a") as config:
        config.write(f'extra = "{facts_repo.shas["v2"]}"\n')  # one more pin under [pins]
    assert KEPT not in run_cli("-v", "facts", "--format", fmt).stderr  # the configuration
    assert KEPT not in run_cli("-v", "--no-cache", "facts", "--format", fmt).stderr


# -- claims through `dshaudit check` ---------------------------------------------------------

# (kind, expression, status, measured) at pin v1; measured None means not asserted.
CLAIMS_V1 = [
    # ==, != on numbers, lists (ordered), sets (unordered), strings, booleans
    ("claim", "core.context-builtin-services.count == 5", "confirmed", 5),
    ("claim", "core.context-builtin-services == [fiber, reflect, registry, events, logger]", "confirmed", None),
    ("claim", "core.context-builtin-services == {logger, events, registry, reflect, fiber}", "confirmed", None),
    ("claim", "core.context-builtin-services != [logger, events, registry, reflect, fiber]", "confirmed", None),
    ("claim", "core.context-builtin-services.count == 6", "contradicted", 5),
    ("claim", "workspace.packages == 21", "confirmed", 21),
    ("claim", "workspace.packages != 239", "confirmed", 21),
    ("claim", "hooks.default-timeout-ms == 600,000", "confirmed", 600000),
    ("claim", "hooks.default-timeout-ms == 600_000", "confirmed", 600000),
    ("claim", "hooks.default-timeout-ms.minutes == 10", "confirmed", 10),
    ("claim", "subagent.claude-code.persist-session == false", "confirmed", False),
    ("claim", "subagent.claude-code.persist-session == true", "contradicted", False),
    ("claim", "subagent.sdk-dependencies.claude-code_runtime == true", "confirmed", True),
    ("claim", "subagent.sdk-dependencies.codex_section == optionalDependencies", "confirmed", "optionalDependencies"),
    ("claim", "subagent.depth-limit.enforcing == {subagent-fork}", "confirmed", ["subagent-fork"]),
    ("claim", "approval.fallback-outcome == 'unavailable'", "confirmed", "unavailable"),
    ("claim", 'approval.fallback-outcome == "unavailable"', "confirmed", "unavailable"),
    ("claim", "session.surface-op-kinds.agent_loop == {append}", "confirmed", ["append"]),
    ("claim", "root.patches == {node-pty@1.2.0, left-pad@1.3.0}", "confirmed", None),
    ("claim", "session.retired-header-fields == [approvalPolicy, sandboxMode]", "confirmed", None),
    ("claim", "session.retired-header-fields == [sandboxMode, approvalPolicy]", "contradicted", None),
    # <, <=, >, >=
    ("claim", "workspace.packages < 22", "confirmed", 21),
    ("claim", "workspace.packages <= 21", "confirmed", 21),
    ("claim", "workspace.packages > 20", "confirmed", 21),
    ("claim", "workspace.packages >= 21", "confirmed", 21),
    ("claim", "workspace.packages > 21", "contradicted", 21),
    ("claim", "hooks.default-timeout-ms < 2,589", "contradicted", 600000),
    ("claim", "hooks.default-timeout-ms.minutes >= 9.5", "confirmed", 10),
    # contains, excludes: lists, sets, dict keys, text
    ("claim", "core.context-builtin-services contains {fiber, logger}", "confirmed", None),
    ("claim", "core.context-builtin-services excludes root", "confirmed", None),
    ("claim", "boot.static-loader-plugins excludes {Hmr, Logger}", "confirmed", ["Include", "Loader"]),
    ("claim", "boot.static-loader-plugins contains Hmr", "contradicted", ["Include", "Loader"]),
    ("claim", "boot.static-loader-plugins.imported contains Hmr", "confirmed", ["Hmr", "Include", "Loader"]),
    ("claim", "workspace.packages.families contains [test-support, subagent]", "confirmed", None),
    ("claim", "session.known-event-types excludes user/message", "contradicted", None),
    ("claim", "session.surface-op-kinds contains packages/core/agent-loop", "confirmed", None),
    ("claim", "approval.fallback-outcome contains avail", "confirmed", "unavailable"),
    ("claim", "scale.absent-strings.ollama_files == 0", "confirmed", 0),
    # unknown facts and fields
    ("claim", "core.no-such-fact == 1", "unknown_fact", None),
    ("claim", "workspace.packages.no_such_field == 1", "unknown_fact", None),
    # claims that cannot be read or compared
    ("claim", "workspace.packages.families < 3", "invalid_claim", None),
    ("claim", "hooks.default-timeout-ms contains 6", "invalid_claim", None),
    ("claim", "workspace.packages == {a, b", "invalid_claim", None),
    ("claim", "workspace.packages is big", "invalid_claim", None),
    # the prior audit's word: reported either way, never fails the gate
    ("prior", "workspace.packages == 239", "contradicted", 21),
    ("prior", "core.context-builtin-services.count == 5", "confirmed", 5),
]


def _findings(claims) -> str:
    return "# Claims\n\n" + "".join(f"- `{kind}: {expr}`\n" for kind, expr, _, _ in claims)


def test_claims_every_operator_and_status(facts_workspace):
    write_findings(facts_workspace, _findings(CLAIMS_V1), pin="v1", name="claims.md")
    run = run_cli("check", "--format", "json")
    doc = run.json
    assert doc["citations"] == []
    got = [(c["kind"], c["claim"], c["status"]) for c in doc["claims"]]
    assert got == [(kind, expr, status) for kind, expr, status, _ in CLAIMS_V1]
    for c, (_, expr, _, measured) in zip(doc["claims"], CLAIMS_V1):
        assert c["pin"] == "v1"
        if measured is not None:
            assert c["measured"] == measured, expr
    by_claim = {c["claim"]: c for c in doc["claims"]}
    contradicted = by_claim["core.context-builtin-services.count == 6"]
    assert contradicted["message"] == "measured 5"
    assert contradicted["evidence"][0] == "vendor/cordis/src/context.ts:18"
    first_claim_line = 6  # after 3 lines of front matter, a heading and a blank line
    index = [expr for _, expr, _, _ in CLAIMS_V1].index("core.context-builtin-services.count == 6")
    assert contradicted["source"] == {"file": "findings/claims.md", "line": first_claim_line + index, "column": 3}
    assert "no field 'no_such_field'" in by_claim["workspace.packages.no_such_field == 1"]["message"]
    assert "compares numbers" in by_claim["workspace.packages.families < 3"]["message"]
    failed = sum(1 for kind, _, status, _ in CLAIMS_V1 if kind == "claim" and status != "confirmed")
    assert doc["summary"]["claims"]["total"] == len(CLAIMS_V1)
    assert doc["summary"]["claims"]["failed"] == failed
    assert run.exit_code == 1


def test_claims_that_hold_pass_the_gate(facts_workspace):
    write_findings(
        facts_workspace,
        "`claim: workspace.packages.count == 21` and `prior: workspace.packages == 239`\n",
        pin="v1",
    )
    run = run_cli("check", "--format", "json")
    assert [c["status"] for c in run.json["claims"]] == ["confirmed", "contradicted"]
    assert run.exit_code == 0


def test_claims_at_a_pin_with_a_parse_error(facts_workspace):
    write_findings(
        facts_workspace,
        "- `claim: subagent.claude-code.persist-session == false`\n"
        "- `claim: hooks.default-timeout-ms == 300,000`\n"
        "- `claim: hooks.default-timeout-ms.minutes == 5`\n",
        pin="v3",
    )
    run = run_cli("check", "--format", "json")
    claims = run.json["claims"]
    assert [c["status"] for c in claims] == ["cannot_evaluate", "confirmed", "confirmed"]
    assert "packages/subagent/subagent-claude-code/src/defaults.ts:4" in claims[0]["message"]
    assert claims[0]["evidence"] == ["packages/subagent/subagent-claude-code/src/defaults.ts:4"]
    assert run.exit_code == 1
    # The same claim at v2 (no parse error near the needle) holds; --pin moves every claim.
    assert [c["status"] for c in run_cli("check", "--pin", "v2", "--format", "json").json["claims"]] == [
        "confirmed",
        "confirmed",
        "confirmed",
    ]
