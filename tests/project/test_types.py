"""The type annotations hold: `mypy src` under pyproject's [tool.mypy] finds nothing.

mypy comes with the test extra (pip install '.[test]'); the test skips only
where it cannot be imported, and then says so.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from conftest import REPO_ROOT


def test_mypy_finds_no_errors() -> None:
    pytest.importorskip("mypy", reason="mypy is not installed; pip install '.[test]' brings it")
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", "pyproject.toml", "src"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "Success" in result.stdout, output
