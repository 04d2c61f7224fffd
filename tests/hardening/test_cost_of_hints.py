"""The cost of hints: the closest existing paths for many missing paths in a
large tree come in bounded time, alone and through `dshaudit check`."""

from __future__ import annotations

import os
import subprocess
import time

import pytest

from hardening.helpers import timed


@pytest.fixture(scope="module")
def big_tree(tmp_path_factory):
    """A repository of 8,000 files in 1,000 folders (one blob under every name), built in one commit."""
    root = tmp_path_factory.mktemp("bigtree")
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    blob = (
        subprocess.run(
            ["git", "-C", str(root), "hash-object", "-w", "--stdin"],
            input=b"export const x = 1\n",
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .strip()
    )
    names = ["index.ts", "types.ts", "package.json", "README.md", "service.ts", "client.tsx", "utils.ts", "spec.ts"]
    paths = [
        f"packages/group{g % 10}/pkg{g}/src/{n}" if n != "package.json" else f"packages/group{g % 10}/pkg{g}/{n}"
        for g in range(1000)
        for n in names
    ]
    index = "".join(f"100644 {blob}\t{p}\n" for p in paths).encode()
    env = {**os.environ, "GIT_INDEX_FILE": str(root / "tmp-index")}
    subprocess.run(["git", "-C", str(root), "update-index", "--add", "--index-info"], input=index, env=env, check=True)
    tree = subprocess.run(["git", "-C", str(root), "write-tree"], env=env, capture_output=True, check=True).stdout
    commit = (
        subprocess.run(
            [
                "git",
                "-C",
                str(root),
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "commit-tree",
                tree.decode().strip(),
                "-m",
                "big",
            ],
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .strip()
    )
    return root, commit, paths


def _missing(paths: list[str]) -> list[str]:
    import random

    rnd = random.Random(15)
    out = []
    for i in range(1000):
        p = rnd.choice(paths)
        folder, _, name = p.rpartition("/")
        out.append(
            [
                f"{folder}/x{name}",
                f"moved/{p}",
                f"{folder}/invented{i}.ts",
                f"zz{i}/yy/qq{i}.ts",
                f"packages/group{i % 10}/none{i}/src/{name}",
            ][i % 5]
        )
    return out


def test_1000_missing_paths_get_their_hints_in_two_seconds(big_tree):
    from dshaudit.git.repository import DshRepository

    root, commit, paths = big_tree
    snap = DshRepository.open(str(root), "big").snapshot(commit)
    missing = _missing(paths)
    start = time.perf_counter()
    hints = [snap.closest_paths(m) for m in missing]
    elapsed = time.perf_counter() - start
    assert elapsed < 2.0, elapsed
    assert all(h and h[0] in set(paths) for h, m in zip(hints, missing) if not m.startswith("zz"))
    # A file of the same name, in the folder the path names when it has one.
    assert snap.closest_paths("packages/group3/pkg13/src/xindex.ts") == ["packages/group3/pkg13/src/index.ts"]
    assert snap.closest_paths("moved/packages/group3/pkg13/src/service.ts")[0].endswith("/service.ts")


def test_1000_missing_paths_checked_in_bounded_time(big_tree, tmp_path, monkeypatch):
    root, commit, paths = big_tree
    (tmp_path / "findings").mkdir()
    (tmp_path / "dshaudit.toml").write_text(f'[pins]\nbig = "{commit}"\n')
    body = "".join(f"- `{m}:1` → `x`\n" for m in _missing(paths))
    (tmp_path / "findings" / "f.md").write_text("---\npin: big\n---\n" + body)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DSH_REPO", str(root))
    monkeypatch.setenv("DSHAUDIT_NO_CACHE", "1")
    run, elapsed = timed("check", "--format", "json")
    assert run.exit_code == 1 and elapsed < 10, elapsed
    statuses = {c["status"] for c in run.json["citations"]}
    assert statuses <= {"missing_path", "ambiguous_path", "content_mismatch", "ok"}
    assert sum("closest existing path" in c["message"] for c in run.json["citations"]) >= 700
