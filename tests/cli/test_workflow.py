"""The CI workflow, the action it uses and the pre-commit hook name only commands and options the CLI has.

actionlint checks the workflow's syntax and expressions; it cannot know what
`dshaudit` accepts, and it does not read action.yml's run scripts. These tests
read every `dshaudit ...` command line out of action.yml, .github/workflows/audit.yml
and .pre-commit-hooks.yaml and hold it against the click commands themselves,
so renaming an option breaks a test, not CI. They also hold the action's
inputs, the workflow's `with:` and the README's table to each other, and run
the action's main script under bash with a stand-in `dshaudit`.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import click
import pytest
import yaml

from conftest import REPO_ROOT
from dshaudit.cli import main
from dshaudit.output.formats import DIAGNOSTIC_FORMATS

WORKFLOW = REPO_ROOT / ".github" / "workflows" / "audit.yml"
ACTION = REPO_ROOT / "action.yml"
HOOKS = REPO_ROOT / ".pre-commit-hooks.yaml"
README = REPO_ROOT / "README.md"

# The formats `check --format` has once issue 6 lands. Some are being added
# alongside this workflow; the workflow is written against the full list.
ISSUE6_CHECK_FORMATS = ["text", "json", "sarif", "junit", "github", "markdown"]

_SHELL_STOP = {">", ">>", "<", "|", "||", "&&", ";", "2>", "2>&1", "&"}
# `name=(...)` or `name+=(...)`: a bash array the script builds its options in.
_ARRAY_RE = re.compile(r"\b(\w+)\+?=\(([^()]*)\)")
_EXPANSION_RE = re.compile(r"^\$\{(\w+)\[@\]\}$")


def load_workflow() -> dict:
    doc = yaml.safe_load(WORKFLOW.read_text())
    # YAML 1.1 reads the key `on` as the boolean true.
    doc["on"] = doc.pop(True, doc.get("on"))
    return doc


def steps() -> list[dict]:
    return load_workflow()["jobs"]["audit"]["steps"]


def load_action() -> dict:
    return yaml.safe_load(ACTION.read_text())


def action_steps() -> list[dict]:
    return load_action()["runs"]["steps"]


def action_step(step_id: str) -> dict:
    return next(s for s in action_steps() if s.get("id") == step_id)


def dshaudit_commands(script: str) -> list[list[str]]:
    """Each `dshaudit ...` invocation in a shell script, cut at the first redirection or operator.

    `"${name[@]}"` stands for every word the script ever puts in the array
    `name` (all branches at once), so options built in arrays are checked too.
    """
    lines = script.replace("\\\n", " ").splitlines()
    arrays: dict[str, list[str]] = {}
    for line in lines:
        for name, words in _ARRAY_RE.findall(line):
            arrays.setdefault(name, []).extend(shlex.split(words))
    out = []
    for line in lines:
        tokens = shlex.split(line, comments=True)
        for i, tok in enumerate(tokens):
            if tok == "dshaudit" and (i == 0 or tokens[i - 1] in _SHELL_STOP or tokens[i - 1] == "then"):
                args = []
                for t in tokens[i + 1 :]:
                    if t in _SHELL_STOP or t.startswith((">", "2>")):
                        break
                    m = _EXPANSION_RE.match(t)
                    args.extend(arrays.get(m.group(1), []) if m else [t])
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
        if tok == "--":
            break  # the rest are PATHS
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
        elif opt == "--output":
            fmt, _, path = value.partition("=")
            assert fmt in ISSUE6_CHECK_FORMATS and path, f"`{name} --output {value}`: not FORMAT=PATH"
        elif isinstance(param.type, click.Choice):
            assert value in param.type.choices, f"`{name} {opt} {value}`: not one of {param.type.choices}"


def test_documented_formats_cover_the_ones_that_exist():
    # If a format lands that the list above lacks, the list is stale.
    assert set(DIAGNOSTIC_FORMATS) <= set(ISSUE6_CHECK_FORMATS)


def test_triggers_are_pull_requests_and_pushes_to_main():
    on = load_workflow()["on"]
    assert "pull_request" in on
    assert on["push"]["branches"] == ["main"]


def test_the_workflow_runs_the_action_of_its_own_checkout():
    doc = load_workflow()
    assert doc["permissions"] == {"contents": "read"}
    assert doc["jobs"]["audit"]["permissions"] == {"contents": "read", "security-events": "write"}
    assert doc["concurrency"]["cancel-in-progress"] is True
    uses = [s.get("uses", "").split("@")[0] for s in steps()]
    assert uses[0] == "actions/checkout"
    assert uses.count("./") == 1  # ... after the checkout that holds it
    # dshaudit runs only through the action, so `check` runs once.
    assert [c for s in steps() if "run" in s for c in dshaudit_commands(s["run"])] == []


def test_the_workflow_passes_the_action_only_inputs_it_declares():
    inputs = load_action()["inputs"]
    local = next(s for s in steps() if s.get("uses") == "./")
    given = local.get("with", {})
    assert set(given) <= set(inputs), f"undeclared inputs: {set(given) - set(inputs)}"
    assert {k for k, v in inputs.items() if v.get("required")} <= set(given)


def test_every_dshaudit_command_in_the_action_is_accepted_by_the_cli():
    # Needs `check --output` and `check --strict` (the CLI contract the action is written against).
    commands = [c for s in action_steps() if "run" in s for c in dshaudit_commands(s["run"])]
    # bump in its own mode; else lint first (no DSH needed), then check once, writing every output in that one run.
    assert [c[0] for c in commands] == ["bump", "lint", "check"]
    check = commands[2]
    assert {"sarif=", "markdown="} <= {v.split("$")[0] for v in check if "=" in v}
    assert "--strict" in check and "--strict" in commands[1]
    for c in commands:
        assert_accepted(c)


def test_the_checker_rejects_what_the_cli_would_reject():
    # The tests above are only as good as this: unknown commands, options and formats fail it.
    for bad in (
        ["chek"],
        ["check", "--formt", "sarif"],
        ["check", "--format", "pdf"],
        ["lint", "--format", "pdf"],
        ["lint", "--strict=yes"],
        ["check", "--output", "pdf=x"],
        ["lint", "--output", "x"],
    ):
        with pytest.raises(AssertionError):
            assert_accepted(bad)
    assert_accepted(["lint", "--", "--format"])  # after `--`, a path
    assert dshaudit_commands("dshaudit check --format sarif > out.sarif || true") == [["check", "--format", "sarif"]]
    assert dshaudit_commands("echo dshaudit lint") == []
    script = 'a=(--pin "$P")\nif x; then a+=(--format github); fi\nx=$(y)\ndshaudit check "${a[@]}" -- "${p[@]}"'
    assert dshaudit_commands(script) == [["check", "--pin", "$P", "--format", "github", "--"]]


def test_every_input_is_declared_documented_and_used():
    action = load_action()
    declared = action["inputs"]
    used = set(re.findall(r"\binputs\.([A-Za-z_][\w-]*)", yaml.safe_dump([action["runs"], action["outputs"]])))
    assert used - set(declared) == set(), "used but not declared"
    assert set(declared) - used == set(), "declared but never used"
    for name, spec in declared.items():
        assert spec["description"] and isinstance(spec["default"], str), name
    readme_rows = set(re.findall(r"^\| `([\w-]+)` \|", README.read_text(), re.M))
    assert set(declared) <= readme_rows, "inputs missing from the README's table"


def test_no_expression_inside_a_run_script():
    # Inputs, and anything else, reach a script through `env:`: an expression
    # there would be pasted into the script before bash reads it.
    for s in action_steps() + steps():
        if "run" in s:
            assert "${{" not in s["run"], s.get("name")
    # A composite action's run step must name its shell; bash is what the scripts are written in.
    assert {s["shell"] for s in action_steps() if "run" in s} == {"bash"}


def test_install_python_and_cache():
    by_use = {s["uses"].split("@")[0]: s for s in action_steps() if "uses" in s}
    assert by_use["actions/setup-python"]["with"]["python-version"] == "${{ inputs.python-version }}"
    assert load_action()["inputs"]["python-version"]["default"] == "3.11"
    # dshaudit comes from the action's own checkout, at the ref the caller pinned.
    install = next(s for s in action_steps() if "pip install" in s.get("run", ""))
    assert '"$GITHUB_ACTION_PATH"' in install["run"]
    cache = by_use["actions/cache"]["with"]
    # actions/cache keeps the folder dshaudit clones DSH into, keyed on the pins.
    assert action_step("run")["env"]["DSHAUDIT_CACHE_DIR"] == cache["path"]
    assert cache["path"].startswith("${{ github.workspace }}/")
    assert "hashFiles(" in cache["key"] and "inputs.config || 'dshaudit.toml'" in cache["key"]
    assert cache["key"].startswith(cache["restore-keys"].strip())
    # The cache is restored before the first command that reads DSH.
    order = [s.get("uses", "").split("@")[0] or s.get("id", s.get("name")) for s in action_steps()]
    assert order.index("actions/setup-python") < order.index("actions/cache") < order.index("run")


def test_sarif_is_uploaded_even_when_check_fails_and_the_action_still_fails():
    action = load_action()
    run = action_step("run")
    assert "|| status=$?" in run["run"]  # the step itself never fails ...
    assert 'echo "exit-code=$status" >> "$GITHUB_OUTPUT"' in run["run"]
    assert action["outputs"]["exit-code"]["value"] == "${{ steps.run.outputs.exit-code }}"
    assert action["outputs"]["sarif-file"]["value"] == "${{ steps.run.outputs.sarif-file }}"
    upload = next(s for s in action_steps() if s.get("uses", "").startswith("github/codeql-action/upload-sarif@"))
    assert upload["with"] == {
        "sarif_file": "${{ steps.run.outputs.sarif-file }}",
        "category": "${{ inputs.sarif-category }}",
    }
    assert "inputs.sarif == 'true'" in upload["if"]
    assert "steps.run.outputs.sarif-file != ''" in upload["if"]
    # A fork's pull request has a read-only token.
    assert "github.event.pull_request.head.repo.full_name == github.repository" in upload["if"]
    last = action_steps()[-1]  # ... and the last step fails the action with dshaudit's exit code.
    # Except a bump that needs a person: its pull request is still to be opened.
    assert last["if"] == (
        "steps.run.outputs.exit-code != '0' && !(inputs.mode == 'bump' && steps.run.outputs.exit-code == '1')"
    )
    assert last["env"]["EXIT_CODE"] == "${{ steps.run.outputs.exit-code }}"
    assert 'exit "$EXIT_CODE"' in last["run"]


def test_conditions_are_expressions_not_yaml_tags():
    # `if: !cancelled()` unquoted is a YAML tag, not an expression.
    for s in steps() + action_steps():
        if "if" in s:
            assert isinstance(s["if"], str), s


# The action's main script under bash, with a stand-in for dshaudit that logs
# its arguments, writes every --output FORMAT=PATH and exits as told.
FAKE_DSHAUDIT = """\
import json, os, sys
args = sys.argv[1:]
with open(os.environ["FAKE_LOG"], "a") as log:
    log.write(json.dumps(args) + "\\n")
for i, a in enumerate(args[:-1]):
    if a == "--output":
        fmt, _, path = args[i + 1].partition("=")
        open(path, "w").write("fake " + fmt + "\\n")
sys.exit(int(os.environ.get("FAKE_EXIT_" + args[0].upper(), "0")))
"""


@pytest.fixture
def run_script(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "dshaudit"
    fake.write_text(f"#!{sys.executable}\n" + FAKE_DSHAUDIT)
    fake.chmod(0o755)
    (bin_dir / "python").symlink_to(sys.executable)
    step = action_step("run")
    defaults = {name: spec["default"] for name, spec in load_action()["inputs"].items()}

    def run(**inputs):
        for f in ("log", "output", "summary"):
            (tmp_path / f).write_text("")
        (tmp_path / "temp").mkdir(exist_ok=True)
        env = {
            "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
            "RUNNER_TEMP": str(tmp_path / "temp"),
            "GITHUB_OUTPUT": str(tmp_path / "output"),
            "GITHUB_STEP_SUMMARY": str(tmp_path / "summary"),
            "FAKE_LOG": str(tmp_path / "log"),
        }
        given = {**defaults, **{k.replace("_", "-"): v for k, v in inputs.items() if not k.startswith("FAKE")}}
        for var, value in step["env"].items():
            m = re.fullmatch(r"\$\{\{ inputs\.([\w-]+) \}\}", value)
            if m:
                env[var] = given[m.group(1)]
        env.update({k: v for k, v in inputs.items() if k.startswith("FAKE")})
        proc = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert proc.returncode == 0, proc.stderr  # the step never fails by itself
        outputs = dict(line.split("=", 1) for line in (tmp_path / "output").read_text().splitlines())
        calls = [json.loads(line) for line in (tmp_path / "log").read_text().splitlines()]
        return calls, outputs, (tmp_path / "summary").read_text(), proc.stdout

    return run


def test_action_script_lints_then_checks_once_with_every_output(run_script):
    calls, outputs, summary, _ = run_script(paths='findings "audit notes/x.md"')
    assert calls[0] == ["lint", "--", "findings", "audit notes/x.md"]
    check = calls[1]
    assert check[0] == "check" and len(calls) == 2
    assert check[check.index("--format") + 1] == "github"
    assert check[-3:] == ["--", "findings", "audit notes/x.md"]
    assert outputs["exit-code"] == "0"
    assert f"sarif={outputs['sarif-file']}" in check and Path(outputs["sarif-file"]).read_text() == "fake sarif\n"
    assert summary == "fake markdown\n"


def test_action_script_passes_pin_config_strict_and_plain_text(run_script):
    calls, outputs, summary, _ = run_script(
        pin="rc2",
        config="ci/dshaudit.toml",
        strict="true",
        lint="false",
        summary="false",
        annotations="false",
        paths="",
    )
    [check] = calls
    assert check[0] == "check" and check[-1] == "--"
    for pair in (["--pin", "rc2"], ["--config", "ci/dshaudit.toml"], ["--format", "text"]):
        assert pair[1] == check[check.index(pair[0]) + 1]
    assert "--strict" in check and not any(a.startswith("markdown=") for a in check)
    assert summary == "" and outputs["exit-code"] == "0"


def test_action_script_keeps_the_exit_code_and_the_sarif_of_a_failing_check(run_script):
    calls, outputs, _, _ = run_script(FAKE_EXIT_CHECK="1")
    assert [c[0] for c in calls] == ["lint", "check"]
    assert outputs["exit-code"] == "1" and outputs["sarif-file"]
    # A lint failure stops before check: no SARIF, lint's exit code.
    calls, outputs, _, _ = run_script(FAKE_EXIT_LINT="2")
    assert [c[0] for c in calls] == ["lint"]
    assert outputs == {"exit-code": "2"}


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


def test_the_tests_run_on_every_supported_python():
    import tomllib

    job = load_workflow()["jobs"]["tests"]
    versions = job["strategy"]["matrix"]["python-version"]
    assert versions == ["3.11", "3.12", "3.13"]
    assert [s["run"] for s in job["steps"] if "run" in s] == ["bash .ci/run"]
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]
    said = {
        c.rsplit(" ", 1)[1]
        for c in project["classifiers"]
        if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)
    }
    assert sorted(said) == versions and project["requires-python"] == ">=3.11"


def test_action_script_bumps_in_mode_bump_and_keeps_the_body(run_script):
    calls, outputs, summary, _ = run_script(mode="bump", to="rc2", paths="docs", config="ci/dshaudit.toml")
    assert calls == [["bump", "--to", "rc2", "--output", calls[0][4], "--config", "ci/dshaudit.toml", "--", "docs"]]
    assert calls[0][4].startswith("text=") and outputs["pr-body"] == calls[0][4].removeprefix("text=")
    assert Path(outputs["pr-body"]).read_text() == "fake text\n" and outputs["exit-code"] == "0"
    # A move that needs a person keeps its body and its exit code; the next step opens the pull request.
    calls, outputs, _, _ = run_script(mode="bump", to="rc2", FAKE_EXIT_BUMP="1")
    assert outputs["exit-code"] == "1" and outputs["pr-body"]


def test_action_script_in_mode_bump_runs_nothing_an_input_holds(run_script, tmp_path):
    calls, outputs, _, _ = run_script(mode="bump", to="$(touch pwned)`touch pwned`", paths="$(touch pwned)")
    assert not (tmp_path / "pwned").exists()
    assert calls[0][calls[0].index("--to") + 1] == "$(touch pwned)`touch pwned`"
    # No release, or another mode: a usage error, and nothing runs.
    for inputs in ({"mode": "bump", "to": ""}, {"mode": "$(touch pwned)"}):
        calls, outputs, _, stdout = run_script(**inputs)
        assert calls == [] and outputs["exit-code"] == "2" and stdout.startswith("::error ")
    assert not (tmp_path / "pwned").exists()


def test_the_bump_example_gives_the_release_to_the_action_not_to_a_shell():
    example = re.search(r"```yaml\n(name: move the docs.*?)```", README.read_text(), re.S)
    assert example is not None
    doc = yaml.safe_load(example.group(1))
    steps = doc["jobs"]["bump"]["steps"]
    assert not any("run" in step for step in steps)  # no shell at all: inputs go through `with:`
    bump = next(step for step in steps if step.get("id") == "bump")
    assert bump["with"]["mode"] == "bump" and set(bump["with"]) <= set(load_action()["inputs"])
    opener = steps[-1]
    assert opener["uses"].startswith("peter-evans/create-pull-request@")
    assert opener["with"]["body-path"] == "${{ steps.bump.outputs.pr-body }}"
