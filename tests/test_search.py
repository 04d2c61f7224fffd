"""Searches as claims (search.py): `search(...)` and `files(...)` measured at the pin
on the fixture repository, the refusals, and lint's rule for stated searches."""

from __future__ import annotations

import pytest
from conftest import run_cli, write_findings
from hypothesis import given
from hypothesis import strategies as st

from dshaudit import search
from dshaudit.claims import parse_claim, split_ref
from dshaudit.model import SourceLocation

HERE = SourceLocation("f.md", 1, 1)


def claims(workspace, *expressions: str, pin: str = "v1") -> list[dict]:
    write_findings(workspace, "".join(f"`claim: {e}`\n" for e in expressions), pin=pin)
    run = run_cli("check", "--format", "json")
    assert run.exit_code in (0, 1), run.stderr
    return run.json["claims"]


@pytest.mark.parametrize("expression, measured", [
    # Basic regular expressions by default, as git grep: `[A-Z]` is a class, `+` a letter.
    ("search('new [A-Z]')", 6),
    ("search('new [A-Z]', 'vendor/**')", 5),
    ("search('new [A-Z]', ':!packages/**')", 5),  # exclusions alone: the rest of the tree
    ("search('new [A-Z]', 'packages/**', 'vendor/**', ':!*/agent/*')", 5),
    ("search('Servic+e')", 0),
    ("search(-E 'Servic+e')", 5),
    ("search(-F 'new Fiber(self')", 1),
    ("search('Service', 'vendor/cordis/src/context.ts')", 5),
    ("search(-w 'Service')", 0),  # `ReflectService` is one word
    ("search(-i 'reflectservice')", 2),
    ("search(-i -w 'REFLECTSERVICE')", 2),
    ("search('PNG')", 0),  # binary files are skipped
    ("search(-F '--help')", 0),  # a pattern that looks like an option is a pattern
    ("search(-F '-e')", 0),
    ("search('Service').files", 1),
    ("search('new [A-Z]').paths", ["packages/core/agent/src/index.ts", "vendor/cordis/src/context.ts"]),
    ("search('maxDepth').lines", ["packages/core/agent/src/index.ts:7"]),
    ("files('packages/**/*.ts')", 2),
    ("files('packages/core/')", 2),
    ("files('*.json', '*.md')", 2),
    ("files('packages/**', ':!*.ts')", 2),
    ("files('*.tsx').paths", ["packages/ui/src/App.tsx"]),
])
def test_a_search_is_measured_at_the_pin(workspace, expression, measured):
    (got,) = claims(workspace, f"{expression} == 0")
    assert got["measured"] == measured, got
    assert got["status"] == ("confirmed" if measured == 0 else "contradicted")


def test_a_search_follows_the_pin(workspace):
    # v2 renamed the registry's file: the same search at v2 finds it under its new name.
    (got,) = claims(workspace, "search('maxDepth').paths == [packages/core/agent/src/registry.ts]", pin="v2")
    assert got["status"] == "confirmed", got


def test_the_users_git_configuration_does_not_change_a_search(workspace, monkeypatch, tmp_path):
    config = tmp_path / "gitconfig"
    config.write_text("[grep]\n\tpatternType = perl\n\textendedRegexp = true\n\tlineNumber = false\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    (got,) = claims(workspace, "search('Servic+e') == 0")
    assert got["status"] == "confirmed", got


@pytest.mark.parametrize("expression, said", [
    ("search(-n 'x')", "flag -n is not allowed"),
    ("search(--no-index 'x')", "cannot read"),
    ("search('x', '../secret')", "'.' and '..' are not allowed"),
    ("search('x', 'a/../../b')", "'.' and '..' are not allowed"),
    ("search('x', '/etc/passwd')", "relative to the tree's root"),
    ("search('x', ':(top)x')", "only ':!' and ':^'"),
    ("search('x', ':(attr:a)x')", "only ':!' and ':^'"),
    ("search('x', ':!')", "is empty"),
    ("search(-E -F 'x')", "-E and -F cannot go together"),
    ("search('x' -i)", "flags come first"),
    ("search('')", "non-empty pattern"),
    ("search(x)", "quote patterns and pathspecs"),
    ("files(-i 'x')", "flag -i is not allowed (allowed: none)"),
    ("files()", "at least one pathspec"),
])
def test_anything_else_is_refused_before_git_runs(workspace, expression, said):
    (got,) = claims(workspace, f"{expression}.count == 0")
    assert got["status"] == "invalid_claim" and said in got["message"], got
    run = run_cli("lint")
    assert run.exit_code == 1 and said in run.stdout


def test_an_unknown_field_of_a_search_is_named(workspace):
    (got,) = claims(workspace, "search('x').bogus == 0")
    assert got["status"] == "unknown_fact" and "fields: count, files, lines, paths" in got["message"]


def test_a_claims_value_is_not_a_citation(workspace):
    write_findings(workspace, "`claim: search('maxDepth').lines == ['packages/core/agent/src/index.ts:7']`\n")
    run = run_cli("check", "--format", "json")
    assert run.exit_code == 0, run.stdout
    assert run.json["citations"] == [] and run.json["claims"][0]["status"] == "confirmed"


@pytest.mark.parametrize("body, warned", [
    ("`git grep -n maxDepth` gives 3 lines.\n", True),
    ("Counting rule: `git grep -n -i foo 99f6f02f -- 'x/**'`\nreturns nothing, so it is absent.\n", True),
    ("`git ls-tree -r HEAD | grep -c x` lists 12.\n", True),
    ("`git grep -n maxDepth` gives one line (`claim: search('maxDepth').count == 1`).\n", False),
    ("`git grep -n maxDepth` finds the default.\n", False),  # no count is stated
    ("The loop gives 3 retries.\n", False),  # a count, but no search
])
def test_lint_warns_on_a_stated_search_that_no_claim_backs(workspace, body, warned):
    write_findings(workspace, body)
    run = run_cli("lint", "--format", "json")
    codes = [p["code"] for p in run.json["problems"]]
    assert ("unbacked_search" in codes) == warned, run.json


@given(st.text(max_size=80))
def test_reading_a_search_never_raises_anything_but_its_syntax_error(text):
    for candidate in (text, f"search({text})", f"files({text})"):
        try:
            parsed = search.parse(candidate)
        except search.SearchSyntaxError:
            continue
        assert parsed.kind in search.KINDS
        assert all(".." not in p.split("/") for p in parsed.pathspecs)
        parse_claim("claim", f"{candidate}.count == 1", HERE)  # and as a claim, it reads


def test_a_search_ref_splits_at_its_closing_parenthesis():
    assert split_ref("search('a.b', 'c.d').files", set()) == ("search('a.b', 'c.d')", "files")
    assert split_ref("search('a)b')", set()) == ("search('a)b')", None)
    assert split_ref("searchx('a')", set()) == (None, None)
