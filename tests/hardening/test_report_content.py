"""Code that holds markup, template syntax and terminal escapes: the reports escape
all of it and evaluate none of it, and the terminal gets no raw control character."""

from __future__ import annotations

import pytest

from conftest import run_cli
from fixture_repo import _commit, _write, git


@pytest.fixture
def hostile_repo(tmp_path, monkeypatch):
    """A repository whose code holds markup, template syntax and terminal escapes."""
    root = tmp_path / "hostile"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    _write(
        root,
        "src/evil.ts",
        "const a = '<script>alert(1)</script> {{ 7*7 }} {% if x %}'\nconst b = '\x1b[31mred\x1b]0;title\x07'\n",
    )
    sha = _commit(root, "evil", "2026-08-01T10:00:00Z", "evil")
    work = tmp_path / "w"
    (work / "findings").mkdir(parents=True)
    (work / "dshaudit.toml").write_text(f'[upstream]\nurl = "https://example.invalid/dsh"\n\n[pins]\nevil = "{sha}"\n')
    (work / "findings" / "f.md").write_text(
        '---\npin: evil\ntitle: "[click](javascript:alert(1)) <img src=x onerror=alert(1)>"\n---\n'
        "`src/evil.ts:1` → `<script>`\n`src/evil.ts:2` → `\x1b[31mred`\n`src/evil.ts:1` → `\x1b[2Jgone`\n"
    )
    monkeypatch.chdir(work)
    monkeypatch.setenv("DSH_REPO", str(root))
    return work


def test_report_escapes_everything_and_evaluates_nothing(hostile_repo):
    html = run_cli("report", "--format", "html").stdout
    assert "<script>alert" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<img" not in html and 'href="javascript' not in html
    assert "{{ 7*7 }}" in html and "{% if x %}" in html
    md = run_cli("report", "--format", "markdown").stdout
    import re

    outside_code = re.sub(r"(`+).*?\1", "", md)  # inside code spans, GitHub shows markup as text
    assert "<script" not in outside_code and "<img" not in outside_code
    assert not re.search(r"(?<!\\)\]\(javascript:", md)  # `\](` is text, not a link
    assert "\x1b" not in md and "\x1b" not in html and "\\x1b[31mred" in md


def test_terminal_output_has_no_raw_control_characters(hostile_repo):
    run = run_cli("check")
    assert "\x1b" not in run.stdout and "\\x1b[2Jgone" in run.stdout
    shown = run_cli("show", "src/evil.ts:2@evil")
    assert "\x1b" not in shown.stdout and "\x07" not in shown.stdout and "\\x1b[31mred" in shown.stdout
