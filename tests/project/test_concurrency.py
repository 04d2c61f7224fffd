"""Work runs beside the caller by one rule, in platform/background.py: no other
module starts threads or processes for work of its own. The two that start a
thread anyway are plumbing, each named here with why."""

from __future__ import annotations

import ast

from conftest import REPO_ROOT

PACKAGE = REPO_ROOT / "src" / "dshaudit"
# What starts a thread or a process, by the module it comes from.
_STARTERS = {
    "threading": {"Thread", "Timer"},
    "concurrent.futures": {"ThreadPoolExecutor", "ProcessPoolExecutor"},
    "multiprocessing": {"Process", "Pool"},
    "os": {"fork", "forkpty"},
}
_POLICY = "platform/background.py"
_PLUMBING = {
    "lsp/server.py": "the editor's requests, checked one at a time off the protocol's loop",
    "git/repository.py": "a pipe feeder, so that git's answers are read while its questions are written",
}


def _dotted(node: ast.expr) -> str:
    """`a.b.c` of an attribute chain, '' for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and (base := _dotted(node.value)):
        return f"{base}.{node.attr}"
    return ""


def _starters(source: str) -> set[str]:
    """The thread and process starters a module calls, as `module.Name`, however it imported them."""
    tree = ast.parse(source)
    known: dict[str, str] = {}  # a name in the module -> what it stands for
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                known[alias.asname or alias.name.split(".")[0]] = (
                    alias.name if alias.asname else alias.name.split(".")[0]
                )
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                known[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and (name := _dotted(node.func)):
            head, _, rest = name.partition(".")
            full = known.get(head, head) + (f".{rest}" if rest else "")
            module, _, called = full.rpartition(".")
            if called in _STARTERS.get(module, ()):
                found.add(full)
    return found


def test_only_the_policy_module_and_named_plumbing_start_threads_or_processes() -> None:
    starting = {
        path.relative_to(PACKAGE).as_posix(): found
        for path in sorted(PACKAGE.rglob("*.py"))
        if (found := _starters(path.read_text(encoding="utf-8")))
    }
    assert _POLICY in starting  # the scan finds what it looks for
    assert set(starting) - {_POLICY} == set(_PLUMBING), starting


def test_the_scan_sees_a_starter_however_it_is_imported() -> None:
    pool = "concurrent.futures.ThreadPoolExecutor"
    assert _starters("from concurrent.futures import ThreadPoolExecutor\nThreadPoolExecutor(4)") == {pool}
    assert _starters("import concurrent.futures as f\nwith f.ThreadPoolExecutor(1) as p: pass") == {pool}
    assert _starters("import concurrent.futures\nconcurrent.futures.ThreadPoolExecutor(2)") == {pool}
    assert _starters("from multiprocessing import Pool as P\nP(2)") == {"multiprocessing.Pool"}
    assert _starters("import os\nos.fork()") == {"os.fork"}
    assert _starters("import threading\nthreading.Lock()\nfrom x import parallel\nparallel.Pool(1)") == set()
