"""Cache integrity: an entry of the wrong shape, a forged entry, a cache others
could write, and a lock that is a symbolic link are never trusted."""

from __future__ import annotations

import json
import os

import pytest

from conftest import run_cli, write_findings
from fixture_repo import write_config


@pytest.fixture
def cached_workspace(tmp_path, facts_repo, fixture_repo, monkeypatch):
    """A workspace on the facts repository (claims and citations), its cache filled by one run."""
    write_config(tmp_path, facts_repo, default_pin="v1")
    (tmp_path / "findings").mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DSH_REPO", str(facts_repo.path))
    monkeypatch.setenv("DSHAUDIT_CACHE_DIR", str(tmp_path / "cache"))
    write_findings(
        tmp_path,
        "`claim: core.context-builtin-services.count >= 1`\n"
        "`packages/core/agent/src/index.ts:1` → `export`\n`AgentRegistry` and `LIMIT = 3`\n",
    )
    return tmp_path


CACHED_COMMANDS = (("check", "--format", "json"), ("facts", "--format", "json", "--pin", "v1"))


@pytest.mark.parametrize(
    "wrong",
    [
        [],
        "x",
        1.5,
        True,
        {"a": 1},
        [[1, 2, 3]],
        {"chunks": "x", "fences": []},
        {"status": "nonsense", "message": "", "value": 1, "fields": {}, "evidence": []},
    ],
)
def test_a_cache_entry_of_the_wrong_shape_with_a_valid_mac_is_discarded_and_rebuilt(cached_workspace, wrong):
    from dshaudit.platform.cache import FORMAT, Cache

    first = [run_cli(*c) for c in CACHED_COMMANDS]
    root = cached_workspace / "cache" / f"cache-v{FORMAT}"
    shards = sorted(root.rglob("*.json"))
    assert {s.parent.name for s in shards} >= {"markdown-blocks", "fact", "partial", "needles"}
    cache = Cache(root)
    for path in shards:
        if path.parent.name == "searches" and wrong == []:
            continue  # a search that matched nothing: [] is the right shape there, and is used
        shard = cache.shard(path.parent.name, path.stem)
        for key in list(shard.entries):
            shard.put(key, wrong)  # signed with the user's own key: only the shape is wrong
        shard.flush()
    again = [run_cli(*c) for c in CACHED_COMMANDS]
    assert [(r.exit_code, r.stdout) for r in again] == [(r.exit_code, r.stdout) for r in first]
    assert all(r.exit_code in (0, 1) and "internal error" not in r.stderr for r in again)
    rebuilt = Cache(root)
    for kind in ("markdown-blocks", "fact"):  # read by every run: computed again and written back
        for path in (root / kind).glob("*.json"):
            assert wrong not in rebuilt.shard(kind, path.stem).entries.values()
    assert [(r.exit_code, r.stdout) for r in (run_cli(*c) for c in CACHED_COMMANDS)] == [
        (r.exit_code, r.stdout) for r in first
    ]


def test_a_forged_cache_entry_cannot_turn_a_failing_run_into_a_passing_one(cached_workspace):
    import hashlib

    from dshaudit.platform.cache import FORMAT

    write_findings(cached_workspace, "`claim: core.context-builtin-services.count == 999`\n")
    failing = run_cli("check", "--format", "json")
    assert failing.exit_code == 1
    for shard in (cached_workspace / "cache" / f"cache-v{FORMAT}" / "fact").rglob("*.json"):
        doc = json.loads(shard.read_text())
        for entry in doc["payload"].values():
            entry["value"] = 999  # the lie, sealed every way a forger could without the user's key
        body = json.dumps(doc["payload"])
        for mac in (
            hashlib.sha256((body + "\0").encode()).hexdigest(),
            hashlib.sha256(body.encode()).hexdigest(),
            "0" * 64,
        ):
            shard.write_text(json.dumps({**doc, "mac": mac, "sha256": mac}))
            assert run_cli("check", "--format", "json").stdout == failing.stdout


@pytest.mark.parametrize(
    "damage",
    [
        "folder writable by others",
        "key readable by others",
        "key is a link",
        "folder is a link",
        "folder of another user",
    ],
)
def test_a_cache_others_could_write_is_not_used(cached_workspace, tmp_path, damage):
    from dshaudit.platform.cache import FORMAT

    first = run_cli("check", "--format", "json")
    root = cached_workspace / "cache" / f"cache-v{FORMAT}"
    if damage == "folder writable by others":
        root.chmod(0o777)
    elif damage == "key readable by others":
        (root / "key").chmod(0o644)
    elif damage == "key is a link":
        elsewhere = tmp_path / "planted-key"
        elsewhere.write_text("f" * 64)
        (root / "key").unlink()
        (root / "key").symlink_to(elsewhere)
    elif damage == "folder is a link":
        moved = tmp_path / "planted-cache"
        root.rename(moved)
        root.symlink_to(moved)
    else:
        if os.geteuid() != 0:
            pytest.skip("needs root to give the folder away")
        os.chown(root, 65534, 65534)
    run = run_cli("check", "--format", "json")
    assert run.exit_code == first.exit_code and run.stdout == first.stdout
    assert "not using the cache at" in run.stderr and "internal error" not in run.stderr


def test_the_cache_lock_is_opened_without_following_a_symlink(cached_workspace, tmp_path):
    from dshaudit.platform.cache import FORMAT

    root = cached_workspace / "cache" / f"cache-v{FORMAT}"
    target = tmp_path / "created-outside"
    for lock in root.rglob("*.lock"):
        lock.unlink()
        lock.symlink_to(target)
    for shard in root.rglob("*.json"):
        shard.unlink()  # so the next run has entries to write, and takes the locks
    run = run_cli("check", "--format", "json")
    assert run.exit_code in (0, 1) and "internal error" not in run.stderr and not target.exists()
