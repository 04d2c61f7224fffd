from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import settings

# Property tests judge what a parser returns, not how fast: a machine busy with
# other work must not turn a slow example into a failure.
settings.register_profile("dshaudit", deadline=None)
settings.load_profile("dshaudit")

sys.path.insert(0, str(Path(__file__).parent))

from dshaudit.cli import main  # noqa: E402
from fixture_facts import build_facts_repo  # noqa: E402
from fixture_repo import build_fixture_repo, write_config  # noqa: E402

REPO_ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def fixture_repo(tmp_path_factory):
    return build_fixture_repo(tmp_path_factory.mktemp("fixture"))


@pytest.fixture(scope="session")
def facts_repo(tmp_path_factory):
    """The DSH-shaped repository of tests/fixture_facts.py (tags v1..v4), built once."""
    return build_facts_repo(tmp_path_factory.mktemp("facts"))


@dataclass
class Run:
    exit_code: int
    stdout: str
    stderr: str

    @property
    def json(self):
        return json.loads(self.stdout)


@pytest.fixture
def workspace(tmp_path, fixture_repo, monkeypatch):
    """A folder holding dshaudit.toml (pins v1..v3) and an empty findings/; the cwd."""
    write_config(tmp_path, fixture_repo)
    (tmp_path / "findings").mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DSH_REPO", str(fixture_repo.path))
    monkeypatch.setenv("DSHAUDIT_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path


@pytest.fixture(autouse=True)
def _cache_switch_reset():
    """`--no-cache` and `--jobs` are set anew by every command line; one run in-process
    (run_cli) must not leave the cache off, or the jobs counted, for the tests after it."""
    yield
    from dshaudit.platform import background, cache

    cache.configure(enabled=True)
    background.configure(None)


@pytest.fixture(autouse=True)
def _repositories_closed(monkeypatch):
    """Every clone a test opens is closed when the test ends. A handle that has read a
    blob keeps a `git cat-file` running; its pipes, left to the garbage collector,
    surface as a ResourceWarning in whichever test runs when it collects them."""
    from dshaudit.git.repository import DshRepository

    opened: list[DshRepository] = []
    init = DshRepository.__init__

    def recording(self, *args, **kwargs):
        init(self, *args, **kwargs)
        opened.append(self)

    monkeypatch.setattr(DshRepository, "__init__", recording)
    yield
    for repository in opened:
        repository.close()


def run_cli(*args: str, env: dict | None = None) -> Run:
    result = CliRunner().invoke(main, list(args), env=env, catch_exceptions=False)
    return Run(result.exit_code, result.stdout, result.stderr)


def write_findings(folder: Path, body: str, pin: str = "v1", name: str = "f.md") -> Path:
    path = folder / "findings" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    front = f"---\npin: {pin}\n---\n" if pin is not None else ""
    path.write_text(front + body)
    return path


def _named_clone(variable: str, why: str) -> Path:
    """The clone the environment variable names; the test skips, saying so, without one."""
    path = os.environ.get(variable)
    if not path:
        pytest.skip(f"{variable} is not set: {why}")
    if not Path(path).exists():
        pytest.skip(f"{variable}={path} does not exist")
    return Path(path)


@pytest.fixture(scope="session")
def dsh_repo():
    """A real DSH clone from $DSH_REPO; the tests that need it skip without one."""
    return _named_clone("DSH_REPO", "real-DSH tests need a clone of deepseek-ai/deepseek-harness")


@pytest.fixture(scope="session")
def handbook_repo():
    """A clone of the community handbook of DSH from $HANDBOOK_REPO (bare or not): a corpus
    nobody wrote for dshaudit. The tests that need it skip without one."""
    return _named_clone("HANDBOOK_REPO", "the handbook tests need a clone of sandbaseai/deepseek-harness-handbook")


def extend_fixture(
    workspace: Path, fixture_repo, tmp_path: Path, monkeypatch, *commits: tuple[str, dict[str, str]]
) -> dict[str, str]:
    """A clone of the fixture repository with more commits on top, each a pin
    name and the files it writes; DSH_REPO points at it and each commit is a
    pin of the workspace's dshaudit.toml. Returns the pins' SHAs."""
    import subprocess

    from fixture_repo import _commit, _write, git

    work = tmp_path / "extended"
    subprocess.run(["git", "clone", "-q", str(fixture_repo.path), str(work)], check=True)
    git(work, "config", "user.name", "t")
    git(work, "config", "user.email", "t@example.invalid")
    shas = {}
    for day, (name, files) in enumerate(commits, start=4):
        for rel, content in files.items():
            _write(work, rel, content)
        shas[name] = _commit(work, name, f"2026-08-{day:02d}T10:00:00Z", name)
    monkeypatch.setenv("DSH_REPO", str(work))
    with (workspace / "dshaudit.toml").open("a") as config:
        config.writelines(f'{name} = "{sha}"\n' for name, sha in shas.items())
    return shas
