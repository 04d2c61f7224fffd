"""Search claims (`claim: search(...)`): what reaches git is only what the claim
means, patterns whose cost git cannot bound are refused before git runs, and
every search that does run ends within its bound of time and output (past it,
cannot_evaluate: never a hang, never a pass)."""

from __future__ import annotations

import subprocess
import time

import pytest

from conftest import run_cli, write_findings
from dshaudit.documents.searches import MAX_REPEAT
from dshaudit.git import run as git_run
from dshaudit.index import search

CANARY = "CANARY-7f3a91-never-shown"


@pytest.fixture(autouse=True)
def _fresh_bounds():
    """Searches that reached their bound are remembered for the process's run: a test starts afresh."""
    search._over.clear()
    yield
    search._over.clear()


def claims(workspace, *expressions: str) -> list[dict]:
    write_findings(workspace, "".join(f"`claim: {e}`\n" for e in expressions))
    run = run_cli("check", "--format", "json")
    assert run.exit_code in (0, 1), run.stderr
    return run.json["claims"]


# -- what reaches git -------------------------------------------------------------------


@pytest.fixture
def canary(tmp_path):
    """A file outside the workspace holding CANARY; and where a command run by git would leave a mark."""
    secret = tmp_path.parent / f"{tmp_path.name}-secret.txt"
    secret.write_text(f"{CANARY}\n")
    yield secret
    secret.unlink()


@pytest.mark.parametrize(
    "expression, status, said",
    [
        # Options spelled as patterns are patterns: git is given them with -e.
        ("search('--open-files-in-pager=touch {mark}').count == 0", "confirmed", ""),
        ("search('-f{secret}').count == 0", "confirmed", ""),
        ("search(-F '--no-index').count == 0", "confirmed", ""),
        ("search('-O').count == 0", "confirmed", ""),
        # Options spelled as flags, or anything unquoted, never get as far as git.
        ("search(-O 'x').count == 0", "invalid_claim", "flag -O is not allowed"),
        ("search(-f 'x').count == 0", "invalid_claim", "flag -f is not allowed"),
        ("search(--no-index '{CANARY}').count == 1", "invalid_claim", "cannot read"),
        ("search('x', --open-files-in-pager).count == 0", "invalid_claim", "cannot read"),
        # Pathspecs: no magic but exclusion, nothing outside the tree.
        ("search('{CANARY}', '{secret}').count == 1", "invalid_claim", "relative to the tree's root"),
        ("search('{CANARY}', '../../{name}').count == 1", "invalid_claim", "'.' and '..' are not allowed"),
        ("search('{CANARY}', ':(top,icase)*').count == 1", "invalid_claim", "only ':!' and ':^'"),
        ("search('{CANARY}', ':(attr:diff)*').count == 1", "invalid_claim", "only ':!' and ':^'"),
        ("search('{CANARY}', ':!:(top)x').count == 1", "invalid_claim", "only ':!' and ':^'"),
        ("search('{CANARY}', ':/x').count == 1", "invalid_claim", "only ':!' and ':^'"),
        ("search('x', '--output={mark}').count == 0", "confirmed", ""),  # a pathspec, selecting nothing
        ("files('{secret}').count == 1", "invalid_claim", "relative to the tree's root"),
    ],
)
def test_injection_reaches_git_as_data_or_not_at_all(workspace, canary, expression, status, said):
    mark = workspace / "pwned"
    expression = expression.format(mark=mark, secret=canary, name=canary.name, CANARY=CANARY[:6] + "[-]" + CANARY[7:])
    write_findings(workspace, f"`claim: {expression}`\n")
    run = run_cli("check", "--format", "json")
    (got,) = run.json["claims"]
    assert got["status"] == status and said in (got.get("message") or ""), got
    assert not mark.exists()
    for command in (("check",), ("report", "--format", "html", "-o", "-"), ("lint",)):
        shown = run_cli(*command)
        assert CANARY not in shown.stdout + shown.stderr, command
        assert "Traceback" not in shown.stderr


# -- patterns whose cost explodes ---------------------------------------------------------


@pytest.mark.parametrize(
    "expression, said",
    [
        (r"search(-E '(ab)x\1')", "a back-reference (\\1)"),
        (r"search('\(x\)\2')", "a back-reference (\\2)"),
        (r"search(-i -E '^(x+x+)+y')", "a repeated part that holds a repetition"),
        (r"search(-E '(a*)*$')", "a repeated part that holds a repetition"),
        (r"search('\(a*\)*$')", "a repeated part that holds a repetition"),
        (r"search(-E '((ab)+c)+')", "a repeated part that holds a repetition"),
        (r"search(-E '(x{1,20}){1,20}')", "a repeated part that holds a repetition"),
        (r"search('\(x\{2\}\)\{3\}')", "a repeated part that holds a repetition"),
        (r"search(-E 'x{1,32767}')", f"a search allows {MAX_REPEAT} in all"),
        (r"search(-E 'a{99999999999999999999}')", f"a search allows {MAX_REPEAT} in all"),
        (r"search('x\{1,300\}')", f"a search allows {MAX_REPEAT} in all"),
        ("search(-E '" + "[a-z]{0,40}" * 8 + "')", f"a search allows {MAX_REPEAT} in all"),
    ],
)
def test_a_pattern_whose_cost_cannot_be_bounded_is_refused_before_git_runs(workspace, monkeypatch, expression, said):
    started = []
    real = git_run.bounded
    monkeypatch.setattr(git_run, "bounded", lambda *a, **k: started.append(a) or real(*a, **k))
    begin = time.monotonic()
    (got,) = claims(workspace, f"{expression}.count == 0")
    assert got["status"] == "invalid_claim" and said in got["message"], got
    assert started == [] and time.monotonic() - begin < 10
    run = run_cli("lint")
    assert run.exit_code == 1 and said in run.stdout


@pytest.mark.parametrize(
    "expression, measured",
    [
        # The same features, bounded, are searched: a fixed string is never a regex; a group
        # repeated at most once, a repetition not repeated, counts within the bound.
        (r"search(-F '(a*)*\1')", 0),
        (r"search(-E '(new|this)\.[a-z]+')", 9),
        (r"search(-E '(Reflect)?Service{1,2}')", 5),
        (r"search(-E '[(]+)*x')", 0),  # a bracket is one character; `)` unopened is a letter
        (r"search('\\1')", 0),  # an escaped backslash, then a digit
        ("search(-E '[a-z]{0,40}" + "x{1,5}" * 40 + "')", 0),
    ],
)
def test_bounded_uses_of_those_features_are_searched(workspace, expression, measured):
    (got,) = claims(workspace, f"{expression}.count == {measured}")
    assert got["status"] == "confirmed", got


# -- control characters ------------------------------------------------------------------


@pytest.mark.parametrize("ch", ["\x1b", "\x07", "\x08", "\x7f", "\x85", "\x0b", "\x0c"])
def test_a_control_character_in_a_pattern_or_pathspec_is_refused_and_named(workspace, ch):
    write_findings(workspace, f"`claim: search('a{ch}b').count == 0` and `claim: search('x', 'a{ch}').count == 0`\n")
    run = run_cli("check", "--format", "json")
    assert run.exit_code == 1, run.stderr
    messages = [c["message"] for c in run.json["claims"]]
    assert [c["status"] for c in run.json["claims"]] == ["invalid_claim"] * 2
    assert all(repr(ch) in m and "control character" in m for m in messages), messages
    shown = run_cli("check")
    assert ch not in shown.stdout and repr(ch)[1:-1] in shown.stdout


def test_a_tab_in_a_pattern_is_searched(workspace):
    (got,) = claims(workspace, "search('\tthis.fiber').count == 0")
    assert got["status"] == "confirmed", got


# -- the bound of each search --------------------------------------------------------------


def test_a_search_past_its_time_bound_is_cannot_evaluate_and_is_not_cached(workspace, monkeypatch):
    monkeypatch.setattr(search, "SEARCH_SECONDS", 0.0)
    got = claims(workspace, "search(-E 'thi[s]').count == 10", "search('Reflect[S]ervice').count == 2")
    assert [c["status"] for c in got] == ["cannot_evaluate"] * 2, got
    assert all("stopped at its bound: the search ran past 0 s" in c["message"] for c in got), got
    run = run_cli("check")
    assert (
        run.exit_code == 1
        and "stopped at its bound: the search ran past 0 s" in run.stdout
        and "Traceback" not in run.stderr
    )
    monkeypatch.setattr(search, "SEARCH_SECONDS", 20.0)
    search._over.clear()  # a new run: nothing of the stopped search was kept
    got = claims(workspace, "search(-E 'thi[s]').count == 10", "search('Reflect[S]ervice').count == 2")
    assert [c["status"] for c in got] == ["confirmed", "confirmed"], [c.get("message") for c in got]


def test_a_search_past_its_output_bound_is_cannot_evaluate(workspace, monkeypatch):
    monkeypatch.setattr(search, "SEARCH_OUTPUT_BYTES", 100)
    got = claims(workspace, "search('[e]').count == 1", "search(-E 'NoSuch[T]extAnywhere').count == 0")
    assert [c["status"] for c in got] == ["cannot_evaluate", "confirmed"], got
    assert "stopped at its bound: the search's matches ran past 0 MiB of output" in got[0]["message"], got


def test_a_search_past_its_bound_in_a_history_walk_is_cannot_evaluate(workspace, monkeypatch):
    write_findings(workspace, "`claim: search(-E 'thi[s]').count == 9`\n")
    monkeypatch.setattr(search, "SEARCH_SECONDS", 0.0)
    run = run_cli("history", "--format", "json", "--from", "v1", "--to", "v3")
    assert run.exit_code in (0, 1) and "Traceback" not in run.stderr, run.stderr
    assert "cannot_evaluate" in run.stdout


def test_git_running_away_is_stopped_at_the_bound(tmp_path):
    """What the bound protects against, with the parser's refusal bypassed: git on a
    back-reference over a long line, and git writing without end."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "long.txt").write_text("x" * 5000 + "\n" + "line\n" * 200_000)
    subprocess.run(["git", "-C", str(tmp_path), "add", "."], check=True)
    subprocess.run(
        ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"], check=True
    )
    git_dir = str(tmp_path / ".git")
    begin = time.monotonic()
    with pytest.raises(git_run.Exceeded) as slow:
        git_run.bounded(["grep", "-c", "-E", "-e", r"(x*)*\1y", "HEAD"], git_dir, seconds=1.0, max_output=1 << 20)
    assert slow.value.what == "time" and time.monotonic() - begin < 5
    with pytest.raises(git_run.Exceeded) as loud:
        git_run.bounded(["grep", "-n", "-e", "line", "HEAD"], git_dir, seconds=30.0, max_output=10_000)
    assert loud.value.what == "output"
    done = git_run.bounded(["grep", "-c", "-e", "line", "HEAD"], git_dir, seconds=30.0, max_output=10_000)
    assert done.returncode == 0 and done.stdout == b"HEAD:long.txt:200000\n"


def test_thousands_of_search_claims_in_one_file_in_bounded_time(workspace):
    count = 2000
    write_findings(workspace, "".join(f"`claim: search(-E '[.]{i}qq|word{i}x').count == 0`\n" for i in range(count)))
    begin = time.monotonic()
    run = run_cli("check", "--format", "json")
    took = time.monotonic() - begin
    assert run.exit_code == 0, run.stdout[-2000:]
    assert len(run.json["claims"]) == count and {c["status"] for c in run.json["claims"]} == {"confirmed"}
    assert took < 120, took
