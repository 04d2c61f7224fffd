"""`dshaudit check` on the fixture repository: every status, its message, the formats."""

from __future__ import annotations

import json

import pytest

from conftest import run_cli, write_findings


def check_one(workspace, citation: str, pin: str = "v1"):
    write_findings(workspace, f"Evidence: {citation}\n", pin=pin)
    run = run_cli("check", "--format", "json")
    doc = run.json
    assert doc["summary"]["total"] == 1, doc
    return run, doc["citations"][0]


@pytest.mark.parametrize(
    "citation",
    [
        "`vendor/cordis/src/context.ts:14-18` → `this.fiber` + `this.logger`",
        "`vendor/cordis/src/context.ts:14` → `this.fiber   =   new Fiber(self,`",  # whitespace-insensitive
        "`vendor/cordis/src/context.ts#Context.constructor`",
        "`vendor/cordis/src/context.ts:14-15#Context.constructor` → `new ReflectService`",
        "`vendor/cordis/src/context.ts#Context.Config.timeout` → `timeout?: number`",
        "`vendor/cordis/src/context.ts#Context.name` → `'root'`",
        "`packages/core/agent/src/index.ts#AgentRegistry.setFactory` → `already registered`",
        "`packages/core/agent/src/index.ts#AgentFactory.create`",
        "`packages/core/agent/src/index.ts#defaults.maxDepth` → `3`",
        "`packages/core/agent/src/index.ts#defaults.build`",
        "`packages/core/agent/src/index.ts#createAgent`",
        '`packages/ui/src/App.tsx#App` → `<div className="app">`',
        "`packages/ui/src/App.tsx#Panel`",
        "`docs/architecture.md:4` → `no privileged core to patch`",
        "`packages/legacy/notes.txt:2` → `line two`",  # not UTF-8: still text
        "`packages/core/session/src/crlf.ts:3` → `export const c = 3`",  # CRLF, no final newline
        "`vendor/cordis/src/context.ts:17@v2` → `this.fiber`",  # another pin
    ],
)
def test_ok(workspace, citation):
    run, v = check_one(workspace, citation)
    assert v["status"] == "ok", v
    assert run.exit_code == 0


@pytest.mark.parametrize(
    "citation, status, message",
    [
        (
            "`vendor/cordis/src/contxt.ts:14` → `x`",
            "missing_path",
            "no such file at v1; closest existing path: vendor/cordis/src/context.ts",
        ),
        (
            "`packages/core/agent/src/registry.ts:1` → `AgentFactory`",
            "missing_path",
            "no such file at v1; closest existing path: packages/core/agent/src/index.ts",
        ),
        (
            "`vendor/cordis/src/context.ts:30-40` → `x`",
            "out_of_range",
            "range 30-40 ends past the end of the file (34 lines at v1)",
        ),
        ("`packages/core/session/src/crlf.ts:4`", "out_of_range", "line 4 is past the end of the file (3 lines at v1)"),
        (
            "`vendor/cordis/src/context.ts:16` → `this.fiber`",
            "content_mismatch",
            "`this.fiber` is not on line 16; now at line 14",
        ),
        (
            "`vendor/cordis/src/context.ts:16` → `this.gone`",
            "content_mismatch",
            "`this.gone` is not on line 16; not found anywhere in the file",
        ),
        (
            "`vendor/cordis/src/context.ts#Context.destructor`",
            "unknown_symbol",
            "no declaration named Context.destructor; closest: Context.constructor at line 12",
        ),
        (
            "`vendor/cordis/src/context.ts:25#Context.constructor`",
            "outside_symbol",
            "lines 25 are outside Context.constructor (declared at 12-19)",
        ),
        ("`vendor/cordis/src:1`", "not_a_file", "vendor/cordis/src is a directory at v1, not a file"),
        ("`docs/context-link.ts:1@v3`", "not_a_file", "docs/context-link.ts is a symbolic link at v3, not a file"),
        ("`vendor/submodule/x.ts:1@v3`", "missing_path", None),
        ("`vendor/submodule:1@v3`", "not_a_file", "vendor/submodule is a submodule at v3, not a file"),
        ("`assets/logo.bin:1`", "binary", "assets/logo.bin is binary at v1; cite text files only"),
        ("`vendor/cordis/src/context.ts:0`", "invalid_citation", "line numbers start at 1"),
        ("`vendor/cordis/src/context.ts:9-3`", "invalid_citation", "range 9-3 runs backwards"),
        ("`../../etc/passwd:1`", "invalid_citation", "'.' and '..' are not allowed in a repository path"),
        ("`/etc/passwd:1`", "invalid_citation", "absolute paths are not repository paths"),
        ("`vendor/cordis/src/context.ts:1@v9`", "unknown_pin", None),
        ("`vendor/cordis/src/context.ts:1@6d1214af`", "unknown_pin", None),  # short SHAs are not pins
    ],
)
def test_failures(workspace, citation, status, message):
    run, v = check_one(workspace, citation)
    assert v["status"] == status, v
    if message is not None:
        assert v["message"] == message
    assert run.exit_code == 1


def test_full_sha_pin(workspace, fixture_repo):
    run, v = check_one(workspace, f"`vendor/cordis/src/context.ts:17@{fixture_repo.shas['v2']}` → `this.fiber`")
    assert v["status"] == "ok"
    assert v["target"]["sha"] == fixture_repo.shas["v2"]


def test_fenced_header_anchors_are_checked(workspace):
    body = "```ts\n// vendor/cordis/src/context.ts:14-15\nthis.fiber = new Fiber\nthis.reflect = new Nope\n```\n"
    write_findings(workspace, body)
    v = run_cli("check", "--format", "json").json["citations"][0]
    assert v["status"] == "content_mismatch"
    assert "`this.reflect = new Nope` is not on lines 14-15" in v["message"]
    assert v["source"] == {"file": "findings/f.md", "line": 5, "column": 4}


def test_several_shas_in_one_run_and_text_output(workspace):
    write_findings(
        workspace,
        "Old: `vendor/cordis/src/context.ts:14` → `this.fiber`\n"
        "New: `vendor/cordis/src/context.ts:14@v2` → `this.fiber`\n"
        "Renamed: `packages/core/agent/src/index.ts:17@v2` → `setFactory`\n",
    )
    run = run_cli("check")
    assert run.exit_code == 1
    assert run.stdout.splitlines() == [
        "findings/f.md:5:7: vendor/cordis/src/context.ts:14@v2: content_mismatch: "
        "`this.fiber` is not on line 14; now at line 17",
        "findings/f.md:6:11: packages/core/agent/src/index.ts:17@v2: missing_path: "
        "no such file at v2; closest existing path: packages/core/agent/src/registry.ts",
        "3 citations in 1 files: 1 ok, 2 failed",
    ]


def test_pin_option_moves_every_citation(workspace):
    write_findings(workspace, "`vendor/cordis/src/context.ts:14` → `this.fiber`\n")
    assert run_cli("check").exit_code == 0
    run = run_cli("check", "--pin", "v2")
    assert run.exit_code == 1 and "now at line 17" in run.stdout


def test_json_is_deterministic_and_sorted(workspace):
    write_findings(workspace, "`vendor/cordis/src/context.ts:14` → `this.fiber`\n", name="b.md")
    write_findings(workspace, "`docs/architecture.md:4` → `privileged`\n`assets/logo.bin:1`\n", name="a.md")
    first = run_cli("check", "--format", "json").stdout
    second = run_cli("check", "--format", "json").stdout
    assert first == second
    doc = json.loads(first)
    assert [c["source"]["file"] for c in doc["citations"]] == ["findings/a.md", "findings/a.md", "findings/b.md"]
    assert {k: doc["summary"][k] for k in ("total", "ok", "failed")} == {"total": 3, "ok": 2, "failed": 1}
    assert set(doc["citations"][0]) == {"source", "target", "anchor", "form", "quoted", "resolved", "status", "message"}
    assert doc["citations"][0]["form"] == "canonical"
    assert set(doc["citations"][0]["target"]) >= {"pin", "sha", "path", "lines"}


@pytest.mark.parametrize(
    "front, expected",
    [
        ("---\npin: [1, 2\n---\n", "findings/f.md:2: malformed front matter"),
        ("---\npin: v1\n", "findings/f.md:1: front matter opened with '---' is never closed"),
        ("---\npin: v9\n---\n", "findings/f.md:2: front matter: pin 'v9'"),
        ("---\n- a list\n---\n", "findings/f.md:2: front matter must be a YAML mapping"),
    ],
)
def test_bad_front_matter_is_exit_2_one_line(workspace, front, expected):
    (workspace / "findings" / "f.md").write_text(front + "`docs/architecture.md:3` → `core`\n")
    run = run_cli("check")
    assert run.exit_code == 2
    assert run.stderr.startswith("dshaudit: " + expected)
    assert len(run.stderr.splitlines()) == 1


def test_non_utf8_findings_is_exit_2(workspace):
    (workspace / "findings" / "f.md").write_bytes(b"---\npin: v1\n---\ncaf\xe9\n")
    run = run_cli("check")
    assert run.exit_code == 2
    assert run.stderr == "dshaudit: findings/f.md:4: not UTF-8 (byte 0xe9); findings must be UTF-8\n"


def test_missing_paths_argument_is_exit_2(workspace):
    run = run_cli("check", "nowhere.md")
    assert run.exit_code == 2 and run.stderr == "dshaudit: nowhere.md: no such file or directory\n"


def test_a_file_without_a_pin_is_exit_2_naming_both_ways_to_give_one(workspace):
    write_findings(workspace, "`docs/architecture.md:3` → `core`\n", pin=None)
    run = run_cli("check", "--format", "json")
    assert run.exit_code == 2 and len(run.stderr.splitlines()) == 1
    assert run.stderr.startswith(
        "dshaudit: findings/f.md:1: no pin for `docs/architecture.md:3`: name one in the file's front matter "
        "(`pin: NAME`) or pass --pin"
    )
    assert run_cli("check", "--pin", "v1").exit_code == 0
    # Citations that all carry their own pin need none from the file.
    write_findings(workspace, "`docs/architecture.md:3@v1` → `core`\n", pin=None)
    assert run_cli("check").exit_code == 0


def test_a_clone_that_cannot_be_opened_is_tried_once(workspace, monkeypatch):
    """Its error is said once, in one line: the citations, names and claims that need it
    do not each try again (and, for the default clone, print that it is cloning)."""
    from dshaudit.git.repository import DshRepository

    tries = []
    opened = DshRepository.open

    def counted(spec, upstream):
        tries.append(spec)
        return opened(spec, upstream)

    monkeypatch.setattr(DshRepository, "open", staticmethod(counted))
    write_findings(workspace, "`vendor/cordis/src/context.ts:14` → `this.fiber`, and `AgentRegistry` too.\n")
    run = run_cli("--jobs", "1", "check", "--repo", str(workspace / "nowhere"))
    assert run.exit_code == 3 and run.stderr.count("no such DSH clone") == 1
    assert len(tries) == 1


@pytest.mark.parametrize(
    "args",
    [
        ["check", "--pin", ""],
        ["check", "--pin", "  "],
        ["facts", "--pin", ""],
        ["report", "--pin", "v1", "--pin", ""],
        ["show", "vendor/cordis/src/context.ts:14", "--pin", ""],
        ["history", "--from", "", "--to", "v2"],
        ["rebase", "--to", ""],
        ["bisect", "--good", "v1", "--bad", "", "vendor/cordis/src/context.ts:14"],
        ["check", ""],
        ["check", "findings/f.md", " "],
        ["check", "--config", ""],
        ["check", "--repo", ""],
        ["anchor", ""],
    ],
)
def test_a_blank_value_is_a_usage_error_not_the_option_left_out(workspace, args):
    """`--pin "$NEW_PIN"` or `check "$DOC"` with the variable unset gives a blank: read as
    no value, the run would go on at its defaults (the documents' own pins, every document
    below the current folder) and say nothing of the value meant."""
    write_findings(workspace, "Evidence: `vendor/cordis/src/context.ts:14` → `this.fiber`\n")
    run = run_cli(*args)
    assert run.exit_code == 2, run.stdout + run.stderr
    assert "is empty; name a" in run.stderr
