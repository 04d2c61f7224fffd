"""Nothing passes unchecked: a hidden character in a citation fails and lint names
it, lone carriage returns count lines as Markdown does, and a run that checked
nothing says so."""

from __future__ import annotations

import pytest

from conftest import run_cli, write_findings
from hardening.helpers import GOOD

HIDDEN = [
    "\u200b",
    "\u200c",
    "\u200d",
    "\u00ad",
    "\u2060",
    "\ufeff",
    "\u0301",
    "\u034f",
    "\u180e",
    "\u2062",
    "\ue000",
    "\u3164",
    "\x07",
    "\u2028",
]


@pytest.mark.parametrize("ch", HIDDEN)
@pytest.mark.parametrize(
    "where",
    [
        "vendor/cordis/src/con{}text.ts:14",
        "vendor/cordis/src/context{}.ts:14",
        "vendor/cordis{}/src/context.ts:14",
        "vendor/cordis/src/context.ts:1{}4",
        "vendor/cordis/src/context.ts:14-1{}5",
        "vendor/cordis/src/context.ts{}:14",
    ],
)
def test_a_citation_with_a_hidden_character_fails_and_lint_names_it(workspace, ch, where):
    import unicodedata

    cited = where.format(ch)
    write_findings(workspace, f"`{cited}` → `this.fiber`\n")
    run = run_cli("check", "--format", "json")
    assert run.exit_code == 1, run.stdout
    (v,) = run.json["citations"]
    assert v["status"] == "invalid_citation" and f"U+{ord(ch):04X}" in v["message"]
    lint = run_cli("lint", "--format", "json")
    assert lint.exit_code == 1
    (p,) = [p for p in lint.json["problems"] if p["severity"] == "error"]
    assert p["code"] == "invalid_citation" and f"U+{ord(ch):04X}" in p["message"]
    if unicodedata.name(ch, ""):
        assert unicodedata.name(ch) in p["message"]
    text = run_cli("check")
    assert ch not in text.stdout  # shown as an escape or named, never as itself


def test_a_hidden_character_in_a_line_phrase_or_a_pin_is_found_too(workspace):
    write_findings(
        workspace,
        "`vendor/cordis/src/context.ts` (line 1\u200b4) holds it\n\n"
        "`vendor/cordis/src/context.ts:14@v\u200d2` → `this.fiber`\n",
    )
    run = run_cli("check", "--format", "json")
    assert run.exit_code == 1
    assert [c["status"] for c in run.json["citations"]] == ["invalid_citation", "invalid_citation"]


@pytest.mark.parametrize("newline", ["\r", "\r\n", "\n"])
def test_lone_carriage_returns_count_lines_as_markdown_does(workspace, newline):
    body = (
        "```\nfenced `vendor/cordis/src/context.ts:99`\n```\n"
        + GOOD
        + "\n`vendor/cordis/src/context.ts:15` → `nothing`\n"
    )
    path = workspace / "findings" / "f.md"
    path.write_bytes(("---\npin: v1\n---\n" + body).replace("\n", newline).encode())
    run = run_cli("check", "--format", "json")
    got = [(c["source"]["line"], c["status"]) for c in run.json["citations"]]
    assert got == [(7, "ok"), (9, "content_mismatch")] and run.exit_code == 1
    assert run_cli("anchor", "findings/f.md").exit_code in (0, 1)


def test_citation_shaped_text_with_no_citation_is_a_warning_that_fails_under_strict(workspace):
    for body in (
        "```\nvendor/cordis/src/context.ts:14\n```\n",
        "<!-- vendor/cordis/src/context.ts:14 -->\n",
        "see vendor/cordis/src/context.ts\u00a0(line 14)\n",
        "see context.ts:14:3 in a stack\n",
    ):
        write_findings(workspace, body)
        run = run_cli("check", "--format", "json")
        assert run.exit_code == 0 and [c["status"] for c in run.json["coverage"]][0] == "no_citations", body
        assert "no_citations" in run_cli("check").stdout
        assert run_cli("check", "--strict").exit_code == 1
        lint = run_cli("lint", "--strict", "--format", "json")
        assert lint.exit_code == 1 and "no_citations" in [p["code"] for p in lint.json["problems"]]


def test_no_citation_at_all_in_the_paths_given_is_said_and_fails_under_strict(workspace):
    write_findings(workspace, "Prose only, nothing cited.\n")
    (workspace / "empty").mkdir()
    for paths in (["findings"], ["findings/f.md"], ["empty"]):
        run = run_cli("check", *paths)
        assert run.exit_code == 0 and "nothing_checked" in run.stdout, run.stdout
        assert run_cli("check", "--strict", *paths).exit_code == 1
    write_findings(workspace, GOOD, name="g.md")
    assert run_cli("check", "--strict", "findings").exit_code == 0


def test_a_document_with_names_but_no_citation_was_checked(workspace, fixture_repo):
    write_findings(workspace, "The registry is `AgentRegistry`, filled by `setFactoryNowhere`.\n")
    run = run_cli("check", "findings")
    assert run.exit_code == 1 and "nothing_checked" not in run.stdout and "phantom" in run.stdout, run.stdout
