"""The code keeps one style: `ruff format --check` and `ruff check` under pyproject's
[tool.ruff] find nothing. The rules, and why, are in pyproject.toml.

ruff comes with the test extra (pinned, so that a new release's formatter does not
fail an unchanged tree); the tests skip only where it cannot be found, and say so."""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import REPO_ROOT


def _ruff(*args: str) -> subprocess.CompletedProcess[str]:
    pytest.importorskip("ruff", reason="ruff is not installed; pip install '.[test]' brings it")
    return subprocess.run(
        [sys.executable, "-m", "ruff", *args, "--no-cache", "."],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_the_code_is_formatted() -> None:
    result = _ruff("format", "--check")
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_lint_rules_find_nothing() -> None:
    result = _ruff("check")
    assert result.returncode == 0, result.stdout + result.stderr
