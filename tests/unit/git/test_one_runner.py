"""Only git/run.py starts a process: no other module of dshaudit imports subprocess,
calls an `os` function that starts a program, or asks GitPython to run git (a Repo's
`.git` command wrapper, its object database `.odb`, `clone_from`, the `Git` class).
GitPython may open a repository (`git.Repo(path)`), which starts nothing."""

from __future__ import annotations

import ast
from pathlib import Path

import dshaudit

SOURCE = Path(dshaudit.__file__).parent
RUNNER = SOURCE / "git" / "run.py"

# Attributes through which GitPython starts git: a Repo's command wrapper and object database,
# the clone, and its command class.
GITPYTHON_STARTERS = frozenset({"git", "odb", "clone_from", "Git"})
# `os` functions that run a program.
OS_STARTERS = ("system", "popen", "spawn", "exec", "posix_spawn")


def starts(tree: ast.AST) -> list[str]:
    """Where the code of `tree` starts a process, or could (line: what)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [f"{node.lineno}: import {a.name}" for a in node.names if a.name.split(".")[0] == "subprocess"]
            found += [f"{node.lineno}: import {a.name}" for a in node.names if a.name in ("git.cmd", "pty")]
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            top = node.module.split(".")[0]
            names = {a.name for a in node.names}
            if top in ("subprocess", "pty") or node.module == "git.cmd":
                found.append(f"{node.lineno}: from {node.module} import ...")
            elif top == "git" and names & GITPYTHON_STARTERS:
                found.append(f"{node.lineno}: from {node.module} import {', '.join(sorted(names))}")
            elif node.module == "os" and any(n.startswith(OS_STARTERS) for n in names):
                found.append(f"{node.lineno}: from os import {', '.join(sorted(names))}")
        elif isinstance(node, ast.Attribute):
            if node.attr in GITPYTHON_STARTERS:
                found.append(f"{node.lineno}: .{node.attr}")
            elif isinstance(node.value, ast.Name) and node.value.id == "os" and node.attr.startswith(OS_STARTERS):
                found.append(f"{node.lineno}: os.{node.attr}")
            elif node.attr.startswith("create_subprocess"):
                found.append(f"{node.lineno}: .{node.attr}")
    return found


def _modules() -> list[Path]:
    return sorted(SOURCE.rglob("*.py"))


def test_no_module_but_the_runner_starts_a_process():
    found = {
        str(path.relative_to(SOURCE)): where
        for path in _modules()
        if path != RUNNER and (where := starts(ast.parse(path.read_text(), str(path))))
    }
    assert not found, f"start git through dshaudit.git.run instead: {found}"


def test_the_scan_reads_every_module_and_sees_the_runner():
    modules = _modules()
    assert RUNNER in modules and len(modules) > 50
    assert starts(ast.parse(RUNNER.read_text())), "run.py imports subprocess: the scan must see it"


def test_each_way_of_starting_git_is_found():
    for code in (
        "import subprocess",
        "import subprocess as sp",
        "from subprocess import Popen",
        "repo.git.grep('-e', 'x')",
        "self.repo.git.update_environment(GIT_DIR='x')",
        "git = repository.repo.git\ngit.rev_list('a..b')",
        "repository.repo.odb.stream(b'0' * 20)",
        "git.Repo.clone_from(url, path, bare=True)",
        "git.Git().version()",
        "from git import Git",
        "from git.cmd import Git",
        "os.system('git status')",
        "os.execvp('git', ['git'])",
        "os.posix_spawnp('git', ['git'], {})",
        "from os import popen",
        "asyncio.create_subprocess_exec('git')",
    ):
        assert starts(ast.parse(code)), code


def test_what_starts_nothing_is_not_found():
    code = """
import git
from git.exc import InvalidGitRepositoryError
from dshaudit.git import run
repo = git.Repo(path)
where = repo.git_dir
done = run.run(["status"], where)
os.path.join(a, b)
os.environ.get("X")
"""
    assert starts(ast.parse(code)) == []
