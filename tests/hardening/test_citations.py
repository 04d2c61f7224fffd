"""Hostile citations get a verdict: paths out of the tree or the object database,
symbolic links, submodules, CRLF and non-UTF-8 blobs, and one very long line."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from conftest import run_cli, write_findings
from fixture_repo import _commit, _write, git
from hardening.helpers import one_verdict


@pytest.mark.parametrize(
    "citation, status",
    [
        ("`../../etc/passwd:1` → `root`", "invalid_citation"),
        ("`/etc/passwd:1` → `root`", "invalid_citation"),
        ("`vendor/./cordis/src/context.ts:1`", "invalid_citation"),
        ("`.git/config:1`", "invalid_citation"),
        ("`vendor/cordis/src/context.ts:0`", "invalid_citation"),
        ("`vendor/cordis/src/context.ts:5-3`", "invalid_citation"),
        ("`vendor/cordis/src/context.ts:99999999999999999999`", "invalid_citation"),
        ("`vendor/cordis/src:1`", "not_a_file"),
        ("`assets/logo.bin:1`", "binary"),
    ],
)
def test_hostile_citations_get_a_verdict(workspace, citation, status):
    assert one_verdict(workspace, citation)["status"] == status


def test_nothing_is_read_outside_the_object_database(workspace, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET\n")
    # Relative, absolute and through the work tree of the clone: none may be read.
    for cite in (f"`../{secret.name}:1` → `TOP SECRET`", f"`{secret}:1` → `TOP SECRET`"):
        v = one_verdict(workspace, cite)
        assert v["status"] == "invalid_citation"
    # A file in the clone's work tree but not committed does not exist at any pin.
    (Path(os.environ["DSH_REPO"]) / "untracked.ts").write_text("TOP SECRET\n")
    try:
        assert one_verdict(workspace, "`untracked.ts:1` → `TOP SECRET`")["status"] == "missing_path"
    finally:
        (Path(os.environ["DSH_REPO"]) / "untracked.ts").unlink()


def test_empty_line_list_is_not_a_citation_and_lint_says_so(workspace):
    write_findings(workspace, "See `vendor/cordis/src/context.ts:` here.\n")
    assert run_cli("check", "--format", "json").json["summary"]["total"] == 0
    run = run_cli("lint")
    assert run.exit_code == 1 and "invalid_citation" in run.stdout


def test_symlink_submodule_crlf_and_non_utf8_blobs(workspace):
    assert one_verdict(workspace, "`docs/context-link.ts:1@v3`")["status"] == "not_a_file"
    assert one_verdict(workspace, "`vendor/submodule:1@v3`")["status"] == "not_a_file"
    assert one_verdict(workspace, "`vendor/submodule/inner.ts:1@v3`")["status"] == "missing_path"
    assert one_verdict(workspace, "`packages/core/session/src/crlf.ts:1-3` → `export const c = 3`")["status"] == "ok"
    assert one_verdict(workspace, "`packages/core/session/src/crlf.ts:4`")["status"] == "out_of_range"
    v = one_verdict(workspace, "`packages/legacy/notes.txt:1` → `au lait`")
    assert v["status"] == "ok"


def test_a_50_mb_line_is_checked_in_bounded_time(tmp_path, monkeypatch):
    root = tmp_path / "big"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    _write(root, "src/big.ts", "export const x = '" + "a" * (50 * 1024 * 1024) + "'\nexport const tail = 1\n")
    sha = _commit(root, "big", "2026-08-01T10:00:00Z", "big")
    work = tmp_path / "w"
    (work / "findings").mkdir(parents=True)
    (work / "dshaudit.toml").write_text(f'[pins]\nbig = "{sha}"\n')
    (work / "findings" / "f.md").write_text(
        "---\npin: big\n---\n`src/big.ts:2` → `export const tail`\n`src/big.ts:1` → `not there`\n"
    )
    monkeypatch.chdir(work)
    start = time.perf_counter()
    run = run_cli("check", "--repo", str(root), "--format", "json")
    assert time.perf_counter() - start < 30
    assert [c["status"] for c in run.json["citations"]] == ["ok", "content_mismatch"]
