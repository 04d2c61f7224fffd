"""The package keeps its layers (docs/architecture.md): import-linter's contracts in
pyproject.toml hold, and no two modules import each other, even through others,
counting the imports inside functions and under TYPE_CHECKING.

import-linter comes with the test extra; the tests skip only where it cannot be
imported, and then say so."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from conftest import REPO_ROOT


def test_the_import_contracts_hold() -> None:
    pytest.importorskip("importlinter", reason="import-linter is not installed; pip install '.[test]' brings it")
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "from importlinter.cli import lint_imports_command; lint_imports_command(['--no-cache'])",
        ],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "Contracts: 3 kept, 0 broken." in output, output


def test_the_contract_has_at_least_five_layers() -> None:
    import tomllib

    config = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    (layers,) = [c["layers"] for c in contracts if c["type"] == "layers"]
    assert len(layers) >= 5


def strongly_connected(edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's components of the import graph, iteratively: the groups of modules
    that import one another, directly or not."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(edges):
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                found.append(sorted(group))
    return found


def test_strongly_connected_finds_a_circle_and_only_it() -> None:
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert [g for g in strongly_connected(edges) if len(g) > 1] == [["a", "b", "c"]]


# The import graph, built in a child process: grimp builds it on a pool of native threads
# that outlive the call, and a test process holding them would fork later tests' workers
# beside threads it cannot see (Python 3.12 warns of it; a fork there can deadlock).
_GRAPH = """
import json, grimp
graph = grimp.build_graph("dshaudit", cache_dir=None)
modules = set(graph.modules)
print(json.dumps({m: sorted(set(graph.find_modules_directly_imported_by(m)) & modules) for m in sorted(modules)}))
"""


def test_no_module_is_part_of_an_import_circle() -> None:
    pytest.importorskip("grimp", reason="import-linter is not installed; pip install '.[test]' brings it")
    result = subprocess.run([sys.executable, "-c", _GRAPH], cwd=REPO_ROOT, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    edges = {m: set(imported) for m, imported in json.loads(result.stdout).items()}
    assert len(edges) > 50, "the graph holds the whole package"
    circles = [g for g in strongly_connected(edges) if len(g) > 1]
    assert circles == []
