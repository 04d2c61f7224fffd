"""Resource limits on untrusted text: front matter, claims, brackets, citations,
line numbers and pins beyond the limits are refused with their line, in bounded
time, and never reach git."""

from __future__ import annotations

import pytest

from conftest import run_cli, write_findings
from hardening.helpers import GOOD, one_line_error, timed


@pytest.mark.parametrize(
    "front, line, message",
    [
        ("x: " + "[" * 5000 + "]" * 5000, 3, "malformed front matter: nested more than 16 levels deep"),
        ("x: " + "{a: " * 3000 + "1" + "}" * 3000, 3, "malformed front matter: nested more than 16 levels deep"),
        ("x:\n" + "".join("  " * i + "-\n" for i in range(1, 40)), 19, "malformed front matter: nested more"),
        (
            "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: [*b, *b, *b]",
            4,
            "malformed front matter: YAML aliases (*name) are not allowed",
        ),
        ("x: " + "9" * 5000, 3, "malformed front matter: a number of 5000 digits"),
        ("x: '" + "a" * 200_000 + "'", 3, "front matter is longer than the 65536 characters"),
        ("x: 2026-13-45", 3, "malformed front matter: month must be in 1..12"),
    ],
)
def test_front_matter_beyond_the_limits_is_refused_with_its_line(workspace, front, line, message):
    (workspace / "findings" / "f.md").write_text(f"---\npin: v1\n{front}\n---\n{GOOD}")
    run, elapsed = timed("check")
    one_line_error(run, 2, f"findings/f.md:{line}: {message}")
    assert elapsed < 10
    lint = run_cli("lint", "--format", "json")
    assert lint.exit_code == 1 and lint.json["problems"][0]["code"] == "malformed_front_matter"


@pytest.mark.parametrize(
    "claim, message",
    [
        ("core.x == " + "9" * 5000, "a claim of 5010 characters is longer than the 1000 dshaudit reads"),
        ("core.x == " + "9" * 100, "a number of more than 64 digits"),
        ("core.x == " + "[" * 40 + "]" * 40, "values nested 40 deep; at most 8"),
        ("core.x" + " " * 200_000 + "== 1", "a claim of 200010 characters"),
        ("core.x == {a, [b, {c, [d, {e, [f, {g, [h, {i}]}]}]}]}", "values nested 9 deep"),
    ],
)
def test_claims_beyond_the_limits_are_refused_with_their_line(workspace, claim, message):
    write_findings(workspace, f"text\n\n`claim: {claim}`\n")
    run, elapsed = timed("check")
    one_line_error(run, 2, f"findings/f.md:6: `claim:` {message}")
    assert elapsed < 10


def test_claim_patterns_take_linear_time(workspace):
    # Unclosed spans and runs of spaces: patterns that could try every split of them must not.
    body = (
        "`claim:"
        + " " * 100_000
        + "x\n\n"
        + "`absent: x"
        + " " * 100_000
        + "y\n\n"
        + "`claim: core.x =="
        + " " * 500
        + "`\n"
    )
    write_findings(workspace, body)
    run, elapsed = timed("check", "--format", "json")
    assert elapsed < 10
    assert run.exit_code == 1 and [c["status"] for c in run.json["claims"]] == ["invalid_claim"]


@pytest.mark.parametrize(
    "unit",
    ["[", "![", "[a](", "[`", "(", "<", "``x` ", "```x`` ", "*a ", "_a_", "&#", "<a ", "> ", "- "],
)
def test_markdown_of_pathological_brackets_in_bounded_time(workspace, unit):
    write_findings(workspace, unit * (400_000 // len(unit)) + "\n\n" + GOOD)
    run, elapsed = timed("check", "--format", "json")
    assert elapsed < 20, elapsed
    # The brackets hold no citation; a code span of them may be a name DSH lacks (exit 1).
    assert run.exit_code in (0, 1) and [c["status"] for c in run.json["citations"]] == ["ok"]


@pytest.mark.parametrize(
    "unit",
    [
        "`vendor/cordis/src/context.ts:14` ",  # one sentence of thousands of citations
        "- `vendor/cordis/src/context.ts:14`\n",  # a list of them, none naming anything
        "| `vendor/cordis/src/context.ts:14` ",  # a table row of them
        "`vendor/cordis/src/context.ts`, lines 14,",  # line phrases run together
        "`vendor/cordis/src/context.ts` (`",  # quoted code never closed
        "`vendor/cordis/src/context.ts:14` → ``x ",  # anchors never closed
        "// vendor/cordis/src/context.ts:14\n",  # each heading a block
    ],
)
def test_thousands_of_citations_in_one_paragraph_in_bounded_time(workspace, unit):
    write_findings(workspace, unit * 8000 + "\n\n" + GOOD)
    run, elapsed = timed("--no-cache", "check", "--format", "json")
    assert elapsed < 60, elapsed
    assert run.exit_code in (0, 1) and run.json["citations"][-1]["status"] == "ok"


def test_bisect_with_an_absurd_line_number_is_an_input_error(workspace):
    write_findings(workspace, GOOD)
    for line, message in (
        ("9" * 5000, "line 99999999999999999999… is not a line of findings/f.md (4 lines)"),
        ("99999999999", "line 99999999999 is not a line"),
        ("0", "line 0 is not a line"),
        ("50", "line 50 is past the end of findings/f.md (4 lines)"),
        ("4:" + "7" * 4000, "column 77777777777777777777… is not a column"),
    ):
        run = run_cli("bisect", f"findings/f.md:{line}", "--good", "v1", "--bad", "v2")
        assert run.exit_code == 2 and message in run.stderr and len(run.stderr.splitlines()) == 1, run.stderr


def test_an_absence_claim_of_a_huge_name_is_refused_with_its_line(workspace):
    write_findings(workspace, "`absent: " + "a" * 300_000 + "`\n\n" + GOOD)
    one_line_error(run_cli("check"), 2, "findings/f.md:4: `absent:` names 300000 characters")


def test_pins_of_absurd_length_never_reach_git(workspace):
    long = "a" * 200_000
    write_findings(
        workspace,
        f"`vendor/cordis/src/context.ts:14@{long}` → `this.fiber`\n"
        f"https://example.invalid/dsh/blob/{long}/vendor/cordis/src/context.ts#L14\n",
    )
    run = run_cli("check", "--format", "json")
    assert run.exit_code == 1 and [c["status"] for c in run.json["citations"]] == ["unknown_pin", "unknown_pin"]
    assert "200000 characters long" in run.json["citations"][0]["message"]
    write_findings(workspace, GOOD, pin=long[:60_000])
    run = run_cli("check")
    one_line_error(run, 2, "findings/f.md:2: front matter: pin 'aaaa")
    assert len(run.stderr) < 300


def test_too_many_line_ranges_in_one_citation_are_malformed(workspace):
    write_findings(workspace, "`vendor/cordis/src/context.ts:" + ",".join(["14"] * 5000) + "` → `this.fiber`\n")
    run, elapsed = timed("check", "--format", "json")
    assert elapsed < 10
    (v,) = run.json["citations"]
    assert v["status"] == "invalid_citation" and "5000 line ranges" in v["message"]
