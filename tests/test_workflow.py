"""The CI workflow and the pre-commit hook name only commands and options the CLI has.

actionlint checks the workflow's syntax and expressions; it cannot know what
`dshaudit` accepts. These tests read every `dshaudit ...` command line out of
.github/workflows/audit.yml and .pre-commit-hooks.yaml and hold it against the
click commands themselves, so renaming an option breaks a test, not CI.
"""

from __future__ import annotations

import re
import shlex

import click
import pytest
import yaml
from conftest import REPO_ROOT

from dshaudit.cli import main
from dshaudit.formats import FORMATS

WORKFLOW = REPO_ROOT / ".github" / "workflows" / "audit.yml"
HOOKS = REPO_ROOT / ".pre-commit-hooks.yaml"

# The formats `check --format` has once issue 6 lands. Some are being added
# alongside this workflow; the workflow is written against the full list.
ISSUE6_CHECK_FORMATS = ["text", "json", "sarif", "junit", "github", "markdown"]

_SHELL_STOP = {">", ">>", "<", "|", "||", "&&", ";", "2>", "2>&1", "&"}


def load_workflow() -> dict:
    doc = yaml.safe_load(WORKFLOW.read_text())
    # YAML 1.1 reads the key `on` as the boolean true.
    doc["on"] = doc.pop(True, doc.get("on"))
    return doc


def steps() -> list[dict]:
    return load_workflow()["jobs"]["audit"]["steps"]


def dshaudit_commands(script: str) -> list[list[str]]:
    """Each `dshaudit ...` invocation in a shell script, cut at the first redirection or operator."""
    out = []
    for line in script.splitlines():
        tokens = shlex.split(line, comments=True)
        for i, tok in enumerate(tokens):
            if tok == "dshaudit" and (i == 0 or tokens[i - 1] in _SHELL_STOP):
                args = []
                for t in tokens[i + 1:]:
                    if t in _SHELL_STOP or t.startswith((">", "2>")):
                        break
                    args.append(t)
                out.append(args)
    return out


def assert_accepted(args: list[str]) -> None:
    """The subcommand exists and every option is one it declares, with an allowed value."""
    assert args, "bare `dshaudit`"
    name, rest = args[0], args[1:]
    assert name in main.commands, f"`dshaudit {name}`: no such command (have {sorted(main.commands)})"
    cmd = main.commands[name]
    options = {opt: p for p in cmd.params if isinstance(p, click.Option) for opt in p.opts + p.secondary_opts}
    i = 0
    while i < len(rest):
        tok = rest[i]
        if not tok.startswith("-"):
            i += 1  # a PATHS argument
            continue
        opt, eq, inline = tok.partition("=")
        assert opt in options, f"`dshaudit {name} {opt}`: no such option (have {sorted(options)})"
        param = options[opt]
        if param.is_flag:
            assert not eq, f"{opt} is a flag and takes no value"
            i += 1
            continue
        value = inline if eq else rest[i + 1]
        i += 1 if eq else 2
        if name == "check" and param.name == "fmt":
            assert value in ISSUE6_CHECK_FORMATS, f"`check --format {value}`: not a format of issue 6"
        elif isinstance(param.type, click.Choice):
            assert value in param.type.choices, f"`{name} {opt} {value}`: not one of {param.type.choices}"


def test_documented_formats_cover_the_ones_that_exist():
    # If a format lands that the list above lacks, the list is stale.
    assert set(FORMATS) <= set(ISSUE6_CHECK_FORMATS)


def test_triggers_are_pull_requests_and_pushes_to_main():
    on = load_workflow()["on"]
    assert "pull_request" in on
    assert on["push"]["branches"] == ["main"]


def test_every_dshaudit_command_in_the_workflow_is_accepted_by_the_cli():
    commands = [c for s in steps() if "run" in s for c in dshaudit_commands(s["run"])]
    names = [c[0] for c in commands]
    # lint first (no DSH needed), then check in three formats.
    assert names[0] == "lint"
    assert [c for c in commands if c[0] == "check"] == [
        ["check", "--format", "sarif"],
        ["check", "--format", "markdown"],
        ["check", "--format", "github"],
    ]
    for c in commands:
        assert_accepted(c)


def test_the_checker_rejects_what_the_cli_would_reject():
    # The test above is only as good as this: unknown commands, options and formats fail it.
    for bad in (["chek"], ["check", "--formt", "sarif"], ["check", "--format", "pdf"],
                ["lint", "--format", "pdf"], ["lint", "--strict=yes"]):
        with pytest.raises(AssertionError):
            assert_accepted(bad)
    assert dshaudit_commands('dshaudit check --format sarif > out.sarif || true') == [["check", "--format", "sarif"]]
    assert dshaudit_commands('echo dshaudit lint') == []


def test_install_python_and_cache():
    by_use = {s["uses"].split("@")[0]: s for s in steps() if "uses" in s}
    assert by_use["actions/setup-python"]["with"]["python-version"] == "3.11"
    runs = [s["run"] for s in steps() if "run" in s]
    assert "pip install ." in runs
    env = load_workflow()["jobs"]["audit"]["env"]
    cache = by_use["actions/cache"]["with"]
    # actions/cache keeps the folder dshaudit clones DSH into, keyed on the pins.
    assert env["DSHAUDIT_CACHE_DIR"] == "${{ github.workspace }}/" + cache["path"]
    assert "hashFiles('dshaudit.toml')" in cache["key"]
    # The cache is restored before the first command that reads DSH.
    order = [s.get("uses", "").split("@")[0] or s.get("id", s.get("name")) for s in steps()]
    assert order.index("actions/cache") < order.index("check")


def test_sarif_is_uploaded_even_when_check_fails_and_the_job_still_fails():
    check = next(s for s in steps() if s.get("id") == "check")
    assert "set +e" in check["run"]  # the step itself never fails ...
    assert "> dshaudit.sarif" in check["run"]
    assert 'echo "status=$status" >> "$GITHUB_OUTPUT"' in check["run"]
    upload = next(s for s in steps() if s.get("uses", "").startswith("github/codeql-action/upload-sarif@"))
    assert upload["with"]["sarif_file"] == "dshaudit.sarif"
    assert "!cancelled()" in upload["if"]
    summary = next(s for s in steps() if "GITHUB_STEP_SUMMARY" in s.get("run", ""))
    assert re.search(r'dshaudit check --format markdown >> "\$GITHUB_STEP_SUMMARY"', summary["run"])
    last = steps()[-1]  # ... and the last step fails the job with check's exit code.
    assert "steps.check.outputs.status != '0'" in last["if"]
    assert last["env"]["STATUS"] == "${{ steps.check.outputs.status }}"
    assert 'exit "$STATUS"' in last["run"]
    permissions = load_workflow()["jobs"]["audit"]["permissions"]
    assert permissions["security-events"] == "write"


def test_conditions_are_expressions_not_yaml_tags():
    # `if: !cancelled()` unquoted is a YAML tag, not an expression.
    for s in steps():
        if "if" in s:
            assert isinstance(s["if"], str) and s["if"].strip().startswith("${{"), s


def test_pre_commit_hook_names_a_real_command():
    hooks = yaml.safe_load(HOOKS.read_text())
    assert [h["id"] for h in hooks] == ["dshaudit-lint"]
    hook = hooks[0]
    assert hook["language"] == "python"
    assert hook["name"]
    entry = shlex.split(hook["entry"])
    assert entry == ["dshaudit", "lint"]
    assert_accepted(entry[1:])
    files = re.compile(hook["files"])
    assert files.search("findings/01-core.md")
    assert files.search("findings/sub/x.md")
    assert not files.search("README.md")
    assert not files.search("findings/notes.txt")
    assert not files.search("docs/findings/x.md")
