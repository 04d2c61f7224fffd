"""The one diagnostic stream through the commands: pins resolved one way everywhere
(tags included), each cited part matched on its own, several outputs from one run,
every command in every format, and rebase --write refusing a file edited under it."""

from __future__ import annotations

import json
import subprocess

import jsonschema
import pytest

from conftest import REPO_ROOT, run_cli, write_findings
from dshaudit.output.formats import DIAGNOSTIC_FORMATS

SCHEMA = json.loads((REPO_ROOT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
CONTEXT = "vendor/cordis/src/context.ts"


@pytest.fixture
def tagged(workspace, fixture_repo, tmp_path, monkeypatch):
    """The fixture repository copied, with an annotated tag `rel-2` on v2; the config names only v1."""
    clone = tmp_path / "dsh.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(fixture_repo.path), str(clone)], check=True)
    subprocess.run(
        [
            "git",
            f"--git-dir={clone}",
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.invalid",
            "tag",
            "-a",
            "rel-2",
            "-m",
            "release two",
            fixture_repo.shas["v2"],
        ],
        check=True,
    )
    tag_object = subprocess.run(
        ["git", f"--git-dir={clone}", "rev-parse", "rel-2"], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert tag_object != fixture_repo.shas["v2"]  # annotated: the tag is an object of its own
    monkeypatch.setenv("DSH_REPO", str(clone))
    (workspace / "dshaudit.toml").write_text(f'default_pin = "v1"\n\n[pins]\nv1 = "{fixture_repo.shas["v1"]}"\n')
    return workspace


def test_rebase_to_a_tag_writes_a_pin_that_check_accepts(tagged, fixture_repo):
    path = write_findings(tagged, f"`{CONTEXT}:14` → `this.fiber`\n")
    run = run_cli("rebase", "--to", "rel-2", "--write", "--format", "json")
    assert run.exit_code == 0, run.stderr
    sha = fixture_repo.shas["v2"]
    assert run.json["to"] == {"pin": "rel-2", "sha": sha}  # peeled to the commit, not the tag object
    text = path.read_text()
    assert text.startswith(f"---\npin: {sha}\n---\n") and f"`{CONTEXT}:17`" in text  # the SHA, never the tag
    checked = run_cli("check", "--format", "json")
    assert checked.exit_code == 0, checked.stdout
    assert checked.json["citations"][0]["target"]["sha"] == sha


def test_rebase_from_a_tag_and_back(tagged, fixture_repo):
    write_findings(tagged, f"`{CONTEXT}:17` → `this.fiber`\n", pin=fixture_repo.shas["v2"])
    run = run_cli("rebase", "--from", "rel-2", "--to", "v1", "--format", "json")
    assert run.exit_code == 0, run.stderr
    (move,) = run.json["citations"]
    assert move["status"] == "shifted" and move["new"]["text"] == f"{CONTEXT}:14"
    assert run.json["from"] == ["rel-2"]


def test_a_tag_of_a_configured_commit_is_written_by_the_configured_name(workspace, fixture_repo, tmp_path, monkeypatch):
    clone = tmp_path / "dsh.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(fixture_repo.path), str(clone)], check=True)
    subprocess.run(["git", f"--git-dir={clone}", "tag", "release-v2", fixture_repo.shas["v2"]], check=True)
    monkeypatch.setenv("DSH_REPO", str(clone))
    path = write_findings(workspace, f"`{CONTEXT}:14` → `this.fiber`\n")
    assert run_cli("rebase", "--to", "release-v2", "--write").exit_code == 0
    assert path.read_text().startswith("---\npin: v2\n---\n")


def test_tags_work_as_pins_everywhere(tagged, fixture_repo):
    write_findings(tagged, f"`{CONTEXT}:17@rel-2` → `this.fiber`\n`{CONTEXT}:14` → `this.fiber`\n")
    run = run_cli("check", "--format", "json")
    assert run.exit_code == 0, run.stdout
    assert [c["target"]["sha"] for c in run.json["citations"]] == [fixture_repo.shas["v2"], fixture_repo.shas["v1"]]
    assert run_cli("check", "--pin", "rel-2").exit_code == 1  # line 14 holds other code at v2
    assert run_cli("show", f"{CONTEXT}:17@rel-2").exit_code == 0
    facts = run_cli("facts", "--pin", "rel-2", "--format", "json", "core.context-builtin-services")
    assert facts.exit_code == 0 and facts.json["sha"] == fixture_repo.shas["v2"]


# -- each cited part on its own -----------------------------------------------------------------


@pytest.mark.parametrize(
    "citation, status",
    [
        # Lines 13 and 15 with line 14 between them: the joined text is not in the file.
        (f"`{CONTEXT}:13,15` → `const self = this this.reflect`", "content_mismatch"),
        # Each anchor within one part: holds.
        (f"`{CONTEXT}:13,15` → `const self = this` + `this.reflect`", "ok"),
        # Touching parts are one block of text: an anchor may run across them.
        (f"`{CONTEXT}:13,14` → `const self = this this.fiber`", "ok"),
        (
            f"`{CONTEXT}:13-14,15` → `this.fiber = new Fiber(self, {{}}, Object.create(null), null, () => []) this.reflect`",
            "ok",
        ),
    ],
)
def test_an_anchor_never_spans_uncited_lines(workspace, citation, status):
    write_findings(workspace, citation + "\n")
    run = run_cli("check", "--format", "json")
    assert run.json["citations"][0]["status"] == status, run.json["citations"][0]["message"]


# -- several outputs from one run ----------------------------------------------------------------


def test_one_check_writes_every_format(workspace):
    write_findings(
        workspace,
        f"`{CONTEXT}:14` → `this.fiber`\n`{CONTEXT}:15` → `this.fiber`\n"
        "`claim: core.context-builtin-services.count == 5`\n",
    )
    # out/ is missing: a usage error, and no output is written, not even the ones that could be.
    run = run_cli(
        "check",
        "--format",
        "text",
        "--output",
        "sarif=r.sarif",
        "--output",
        "markdown=r.md",
        "--output",
        "json=out/r.json",
        "--output",
        "junit=r.xml",
    )
    assert run.exit_code == 2 and run.stderr == "dshaudit: out/r.json: cannot write: No such file or directory\n"
    assert sorted(p.name for p in workspace.iterdir() if p.is_file()) == ["dshaudit.toml"]
    (workspace / "out").mkdir()
    run = run_cli(
        "check",
        "--format",
        "text",
        "--output",
        "json=out/r.json",
        "--output",
        "sarif=r.sarif",
        "--output",
        "markdown=r.md",
        "--output",
        "junit=r.xml",
    )
    assert run.exit_code == 1
    assert run.stdout == run_cli("check").stdout
    for fmt, name in (("json", "out/r.json"), ("sarif", "r.sarif"), ("markdown", "r.md"), ("junit", "r.xml")):
        assert (workspace / name).read_text() == run_cli("check", "--format", fmt).stdout, fmt
    jsonschema.Draft4Validator(SCHEMA).validate(json.loads((workspace / "r.sarif").read_text()))


def test_the_first_run_wrote_nothing_when_a_folder_was_missing(workspace):
    write_findings(workspace, f"`{CONTEXT}:14` → `this.fiber`\n")
    run = run_cli("check", "--output", "json=nowhere/r.json")
    assert run.exit_code == 2 and run.stderr.startswith("dshaudit: nowhere/r.json: cannot write")
    assert not (workspace / "nowhere").exists()


@pytest.mark.parametrize(
    "value, says",
    [
        ("sarif", "expected FORMAT=PATH"),
        ("pdf=x.pdf", "unknown format 'pdf'"),
        ("json=", "expected FORMAT=PATH"),
    ],
)
def test_bad_outputs_are_usage_errors(workspace, value, says):
    write_findings(workspace, f"`{CONTEXT}:14` → `this.fiber`\n")
    run = run_cli("check", "--output", value)
    assert run.exit_code == 2 and says in run.stderr and len(run.stderr.splitlines()) == 1


def test_the_same_path_twice_is_refused(workspace):
    write_findings(workspace, f"`{CONTEXT}:14` → `this.fiber`\n")
    run = run_cli("check", "--output", "json=r", "--output", "sarif=r")
    assert run.exit_code == 2 and "already an output" in run.stderr
    assert not (workspace / "r").exists()


# -- lint and rebase in every format --------------------------------------------------------------


LINT_BODY = f"`{CONTEXT}:0`\n`{CONTEXT}:3`\n`claim: no.such-fact == 1`\n"


@pytest.mark.parametrize("fmt", DIAGNOSTIC_FORMATS)
def test_lint_renders_in_every_format(workspace, fmt):
    write_findings(workspace, LINT_BODY)
    run = run_cli("lint", "--format", fmt)
    assert run.exit_code == 1 and run.stderr == ""
    if fmt == "sarif":
        doc = json.loads(run.stdout)
        jsonschema.Draft4Validator(SCHEMA).validate(doc)
        results = doc["runs"][0]["results"]
        assert [(r["ruleId"], r["level"]) for r in results] == [
            ("dshaudit/invalid_citation", "error"),
            ("dshaudit/unanchored_citation", "warning"),
            ("dshaudit/unknown_fact", "error"),
        ]
        rules = {r["id"]: r for r in doc["runs"][0]["tool"]["driver"]["rules"]}
        assert rules["dshaudit/unanchored_citation"]["defaultConfiguration"]["level"] == "warning"
    elif fmt == "junit":
        assert 'tests="3" failures="2"' in run.stdout  # the warning is listed but does not fail
    elif fmt == "github":
        kinds = [line.split(" ", 1)[0] for line in run.stdout.splitlines()]
        assert kinds == ["::error", "::warning", "::error", "::notice"]
    elif fmt == "markdown":
        assert run.stdout.startswith("## dshaudit lint\n") and "`unanchored_citation` (warning)" in run.stdout
    elif fmt == "json":
        assert run.json["summary"] == {"files": 1, "errors": 2, "warnings": 1, "strict": False, "failed": True}
    else:
        assert run.stdout.splitlines()[-1] == "1 files linted: 2 errors, 1 warnings (warnings fail only with --strict)"


def test_lint_strict_turns_warnings_into_failures_in_every_format(workspace):
    write_findings(workspace, f"`{CONTEXT}:3`\n")
    assert run_cli("lint", "--format", "junit").stdout.count("<failure") == 0
    strict = run_cli("lint", "--strict", "--format", "junit", "--output", "github=a.txt")
    assert strict.exit_code == 1 and strict.stdout.count("<failure") == 1
    assert (workspace / "a.txt").read_text().startswith("::error ")


def test_rebase_sarif_lists_moves_as_notes_and_losses_as_errors(workspace):
    write_findings(workspace, f"`{CONTEXT}:14` → `this.fiber`\n`packages/ui/src/App.tsx:4` → `<div className`\n")
    run = run_cli("rebase", "--to", "v2", "--format", "sarif")
    assert run.exit_code == 1
    doc = json.loads(run.stdout)
    jsonschema.Draft4Validator(SCHEMA).validate(doc)
    assert [(r["ruleId"], r["level"]) for r in doc["runs"][0]["results"]] == [
        ("dshaudit/shifted", "note"),
        ("dshaudit/lost", "error"),
    ]


# -- a concurrent edit during rebase --write -------------------------------------------------------


def test_a_file_edited_while_rebase_runs_is_not_overwritten(workspace, monkeypatch):
    import dshaudit.moves.rebaser as rebase

    path = write_findings(workspace, f"`{CONTEXT}:14` → `this.fiber`\n")
    real = rebase.Rebaser.move

    def edit_meanwhile(self, c):
        with path.open("a") as f:
            f.write("A sentence someone typed while rebase ran.\n")
        return real(self, c)

    monkeypatch.setattr(rebase.Rebaser, "move", edit_meanwhile)
    run = run_cli("rebase", "--to", "v2", "--write")
    assert run.exit_code == 2
    assert run.stderr == (
        "dshaudit: findings/f.md: changed on disk while rebase ran; nothing was written to it: run rebase again\n"
    )
    assert path.read_text().endswith("A sentence someone typed while rebase ran.\n")
    assert f"`{CONTEXT}:14`" in path.read_text()
