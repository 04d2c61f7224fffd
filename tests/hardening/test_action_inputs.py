"""The Action's inputs (action.yml): every input that reaches the run script does
so through `env:`, and each value, shell metacharacters and newlines included,
reaches dshaudit as one argument, is compared and nothing more, or is refused.
Nothing an input holds is executed. The script runs under bash with a stand-in
dshaudit that logs its arguments (tests/cli/test_workflow.py's `run_script`)."""

from __future__ import annotations

import re

import pytest

from cli.test_workflow import action_steps, load_action, run_script  # noqa: F401

HOSTILE = [
    "$(touch pwned)",
    "`touch pwned`",
    "x; touch pwned",
    "x && touch pwned #",
    "x\ntouch pwned",
    "x\r\n::error::forged",
    "--help",
    "-x",
    "'\"",
    "${IFS}touch${IFS}pwned",
    "x\x00y",
]
# Inputs whose value becomes one argument of dshaudit, and the option it follows.
ARGUMENTS = {"pin": "--pin", "config": "--config"}
# Inputs only compared with a word.
COMPARED = ["summary", "annotations", "strict", "lint", "mode"]


def _clean(value: str) -> str:
    return value.replace("\x00", "")  # an environment variable cannot hold a NUL; the runner drops it alike


def test_every_input_reaches_the_scripts_through_env_only():
    for step in action_steps():
        if "run" in step:
            assert "${{" not in step["run"]
            for value in step.get("env", {}).values():
                assert "inputs." not in value or re.fullmatch(r"\$\{\{ inputs\.[\w-]+ \}\}", value), value
    # The inputs used elsewhere are given to other actions' inputs or to expressions, never to a shell.
    declared = set(load_action()["inputs"])
    through_env = {m for s in action_steps() for m in re.findall(r"inputs\.([\w-]+)", str(s.get("env", {})))}
    elsewhere = declared - through_env
    assert elsewhere == {"python-version", "sarif", "sarif-category", "working-directory"}


@pytest.mark.parametrize("value", HOSTILE)
@pytest.mark.parametrize("name", sorted(ARGUMENTS))
def test_an_argument_input_reaches_dshaudit_as_one_argument(run_script, tmp_path, name, value):  # noqa: F811
    calls, outputs, _, _ = run_script(**{name: _clean(value)})
    assert not (tmp_path / "pwned").exists()
    assert [c[0] for c in calls] == ["lint", "check"]
    check = calls[-1]
    option = ARGUMENTS[name]
    assert check[check.index(option) + 1] == _clean(value), check
    assert outputs["exit-code"] == "0"


@pytest.mark.parametrize("value", HOSTILE)
def test_the_to_input_of_bump_reaches_dshaudit_as_one_argument(run_script, tmp_path, value):  # noqa: F811
    calls, outputs, _, _ = run_script(mode="bump", to=_clean(value))
    assert not (tmp_path / "pwned").exists()
    [bump] = calls
    assert bump[0] == "bump" and bump[bump.index("--to") + 1] == _clean(value)


@pytest.mark.parametrize("value", HOSTILE)
@pytest.mark.parametrize("name", COMPARED)
def test_a_compared_input_is_never_run_and_never_passed_on(run_script, tmp_path, name, value):  # noqa: F811
    calls, outputs, _, stdout = run_script(**{name: _clean(value)})
    assert not (tmp_path / "pwned").exists()
    assert not any(_clean(value) in arg for call in calls for arg in call if _clean(value) not in ("-x",))
    if name == "mode":  # neither check nor bump: refused, and nothing runs
        assert calls == [] and outputs == {"exit-code": "2"} and "::error title=dshaudit::the mode input" in stdout
        assert "forged" not in stdout


@pytest.mark.parametrize(
    "paths, words",
    [
        ('"$(touch pwned)" `touch pwned`', ["$(touch pwned)", "`touch", "pwned`"]),
        ("a;touch pwned b|c", ["a;touch", "pwned", "b|c"]),
        ('"with\nnewline" plain', ["with\nnewline", "plain"]),
        ("one\ntwo", ["one", "two"]),  # an unquoted newline separates words, as a space does
        ("--help -x", ["--help", "-x"]),  # after `--`: paths, not options
        ("'it''s' \"${HOME}\"", ["its", "${HOME}"]),
    ],
)
def test_paths_are_words_never_expanded(run_script, tmp_path, paths, words):  # noqa: F811
    calls, outputs, _, _ = run_script(paths=paths, lint="false")
    assert not (tmp_path / "pwned").exists()
    [check] = calls
    assert check[check.index("--") + 1 :] == words


@pytest.mark.parametrize("paths", ['"unclosed', "it's", 'a "b'])
def test_paths_that_do_not_split_are_refused_and_nothing_runs(run_script, paths):  # noqa: F811
    calls, outputs, _, stdout = run_script(paths=paths)
    assert calls == [] and outputs == {"exit-code": "2"} and stdout.startswith("::error ")
