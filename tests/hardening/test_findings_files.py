"""Findings files that are malformed, very large, nested in HTML, or a symbolic
link out of the working directory."""

from __future__ import annotations

import time

import pytest

from conftest import run_cli, write_findings
from hardening.helpers import DSHAUDIT, one_line_error, run_measured


@pytest.mark.parametrize(
    "content, message",
    [
        (b"---\npin: [unclosed\n---\n", "findings/f.md:2: malformed front matter"),
        (b"---\npin: v1\n", "findings/f.md:1: front matter opened with '---' is never closed"),
        (b"---\npin: v9\n---\n", "findings/f.md:2: front matter: pin 'v9'"),
        (b"---\npin: 7\n---\n", "findings/f.md:2: front matter 'pin' must be a pin name"),
        (b"---\npin: v1\n---\ncaf\xe9\n", "findings/f.md:4: not UTF-8"),
        (b"---\n!!python/object:os.system ls\n---\n", "findings/f.md:"),
    ],
)
def test_malformed_findings_files(workspace, content, message):
    (workspace / "findings" / "f.md").write_bytes(content)
    one_line_error(run_cli("check"), 2, message)


def test_a_100000_citation_file_in_bounded_time_and_memory(workspace):
    body = "".join(f"- `vendor/cordis/src/context.ts:{14 + i % 5}` → `this.`\n" for i in range(100_000))
    write_findings(workspace, body)
    start = time.perf_counter()
    run = run_measured(DSHAUDIT, "--no-cache", "check", cwd=workspace)
    elapsed = time.perf_counter() - start
    assert run["code"] == 0, run["err"]
    assert run["out"].endswith("100000 citations in 1 files: 100000 ok, 0 failed\n")
    assert elapsed < 60
    assert run["peak"] < 1024 * 1024  # KiB: under 1 GiB


def test_citations_nested_in_html_are_checked_but_not_in_comments_or_pre(workspace):
    write_findings(
        workspace,
        "<details><summary>more</summary>\n\n"
        "<table><tr><td>`vendor/cordis/src/context.ts:14` → `this.fiber`</td></tr></table>\n"
        "<p>`vendor/cordis/src/context.ts:99`</p>\n\n</details>\n\n"
        "<!-- `vendor/cordis/src/context.ts:500` is a note to self -->\n\n"
        "<pre>\nvendor/cordis/src/context.ts:600\n</pre>\n",
    )
    run = run_cli("check", "--format", "json")
    got = [(c["target"]["lines"], c["status"]) for c in run.json["citations"]]
    assert got == [("14", "ok"), ("99", "out_of_range")]


def test_a_findings_symlink_out_of_the_repo_is_refused(workspace, tmp_path):
    outside = tmp_path.parent / f"{tmp_path.name}-outside.md"
    outside.write_text("---\npin: v1\n---\n`vendor/cordis/src/context.ts:14` → `this.fiber`\n")
    (workspace / "findings" / "link.md").symlink_to(outside)
    one_line_error(run_cli("check"), 2, "findings/link.md: is a symbolic link out of the working directory")


def test_a_claim_over_a_line_break_is_refused_not_dropped(workspace):
    write_findings(workspace, "Split `claim: core.context-builtin-services.count\n== 3` here.\n")
    for command in (("check",), ("lint", "--strict"), ("lint",)):
        run = run_cli(*command)
        assert run.exit_code == 1 and "runs over a line break" in run.stdout, (command, run.stdout, run.stderr)


def test_a_nul_or_a_line_break_in_a_search_is_an_invalid_claim_not_an_internal_error(workspace):
    write_findings(workspace, "`claim: search('a\0b').count == 0` and `claim: files('x\rb').count == 0`\n")
    run = run_cli("check")
    assert run.exit_code == 1 and run.stdout.count(": invalid_claim:") == 2, (run.stdout, run.stderr)
    assert "Traceback" not in run.stderr and "internal error" not in run.stderr
