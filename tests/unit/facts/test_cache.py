"""The cache and the literal prefilter change how fast answers come, never the answers."""

from __future__ import annotations

import json

import pytest

from conftest import run_cli, write_findings
from dshaudit.core.errors import InputError
from dshaudit.core.model import Pin
from dshaudit.facts.book import measure
from dshaudit.git.repository import DshRepository
from dshaudit.platform.cache import FORMAT, Cache
from fixture_repo import write_config

CLAIMS = (
    "`claim: core.context-builtin-services.count >= 1`\n"
    "`claim: session.surface-op-kinds.kinds contains append`\n"
    "`claim: scale.markers.lines >= 0`\n"
)


@pytest.fixture
def facts_workspace(tmp_path, facts_repo, monkeypatch):
    write_config(tmp_path, facts_repo, default_pin="v1")
    (tmp_path / "findings").mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DSH_REPO", str(facts_repo.path))
    monkeypatch.setenv("DSHAUDIT_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path


def outputs(*args):
    return [run_cli(*a).stdout for a in args]


COMMANDS = (
    ("facts", "--format", "json", "--pin", "v1"),
    ("facts", "--format", "json", "--pin", "v4"),
    ("check", "--format", "json"),
)


def test_cold_warm_and_disabled_give_identical_output(facts_workspace, monkeypatch):
    write_findings(facts_workspace, CLAIMS)
    cold = outputs(*COMMANDS)
    assert list((facts_workspace / "cache").rglob("*.json")), "the cold run filled the cache"
    warm = outputs(*COMMANDS)
    monkeypatch.setenv("DSHAUDIT_NO_CACHE", "1")
    disabled = outputs(*COMMANDS)
    assert cold == warm == disabled
    assert json.loads(cold[2])["summary"]["claims"]["confirmed"] == 3


def test_prefilter_changes_nothing(facts_repo):
    repository = DshRepository.open(str(facts_repo.path), "unused")
    for tag in ("v1", "v3", "v4"):
        pin = Pin(tag, facts_repo.shas[tag])
        on = [f.as_dict() for f in measure(repository.snapshot(pin.sha), pin, prefilter=True)]
        off = [f.as_dict() for f in measure(repository.snapshot(pin.sha), pin, prefilter=False)]
        assert on == off, tag


def test_a_new_pin_reuses_per_blob_work(facts_repo, tmp_path):
    """At a new commit only the changed blobs are parsed again."""
    repository = DshRepository.open(str(facts_repo.path), "unused")
    cache = Cache(tmp_path / "c")
    measure(repository.snapshot(facts_repo.shas["v1"]), Pin("v1", facts_repo.shas["v1"]), cache=cache)
    parsed = []
    import dshaudit.lang.parsing as parsing

    original = parsing.parse
    parsing.parse = lambda path, source: parsed.append(path) or original(path, source)
    try:
        measure(
            repository.snapshot(facts_repo.shas["v2"]), Pin("v2", facts_repo.shas["v2"]), cache=Cache(tmp_path / "c")
        )
    finally:
        parsing.parse = original
    old, new = (
        repository.snapshot(facts_repo.shas["v1"]).blob_ids(),
        repository.snapshot(facts_repo.shas["v2"]).blob_ids(),
    )
    changed = {p for p, b in new.items() if old.get(p) != b}
    assert parsed, "v2 changes files the detectors parse"
    assert set(parsed) <= changed, set(parsed) - changed


def test_facts_measured_at_a_commit_before_are_read_back_without_the_clone(facts_repo, tmp_path):
    """A fact is a function of its commit's tree: measured once (by `check`, say), it is read
    back by the commit alone, with no tree listed and no clone opened."""
    from dshaudit.facts.book import FactBook, registry

    repository = DshRepository.open(str(facts_repo.path), "unused")
    pin = Pin("v1", facts_repo.shas["v1"])
    ids = sorted(registry())
    first = FactBook(lambda: repository, cache=Cache(tmp_path / "c"))
    measured = [f.as_dict() for f in first.many(ids, pin)]
    first.close()
    first.cache.flush()

    def no_clone() -> DshRepository:
        raise AssertionError("the clone was opened")

    again = FactBook(no_clone, cache=Cache(tmp_path / "c"))
    assert [f.as_dict() for f in again.many(ids, pin)] == measured
    other = Pin("v1-by-another-name", pin.sha)
    named = FactBook(no_clone, cache=Cache(tmp_path / "c")).many(ids, other)
    assert [f.pin for f in named] == [other] * len(ids), "a fact is the pin's it was asked at"
    with pytest.raises(AssertionError, match="the clone was opened"):
        again.many(ids, Pin("v2", facts_repo.shas["v2"]))  # another commit is measured


@pytest.mark.parametrize("damage", [b"", b"{not json", b'{"format": 1, "sha256": "0", "payload": {}}'])
def test_corrupt_or_truncated_entries_are_rebuilt_not_trusted(facts_workspace, damage):
    first = run_cli("facts", "--format", "json", "--pin", "v1").stdout
    shards = sorted((facts_workspace / "cache").rglob("*.json"))
    assert shards
    for shard in shards:
        shard.write_bytes(damage)
    again = run_cli("facts", "--format", "json", "--pin", "v1")
    assert again.exit_code == 0 and again.stdout == first
    # Rebuilt: each shard is valid JSON with a MAC again.
    for shard in sorted((facts_workspace / "cache").rglob("*.json")):
        doc = json.loads(shard.read_text())
        assert doc["format"] == FORMAT and doc["mac"] and doc["payload"]


def test_poisoned_entry_with_a_wrong_checksum_is_ignored(facts_workspace):
    first = run_cli("facts", "--format", "json", "--pin", "v1", "hooks.default-timeout-ms").stdout
    for shard in (facts_workspace / "cache" / "fact").rglob("*.json"):
        doc = json.loads(shard.read_text())
        for entry in doc["payload"].values():
            entry["value"] = 1  # a lie, with the old checksum left in place
        shard.write_text(json.dumps(doc))
    assert run_cli("facts", "--format", "json", "--pin", "v1", "hooks.default-timeout-ms").stdout == first


def test_no_cache_option_writes_nothing_and_verbose_says_what_it_does(facts_workspace):
    run = run_cli("--no-cache", "facts", "--pin", "v1", "scale.docs")
    assert run.exit_code == 0
    assert not (facts_workspace / "cache").exists()
    run = run_cli("--verbose", "facts", "--pin", "v1", "session.surface-op-kinds")
    assert "session.surface-op-kinds: " in run.stderr and "files not cached" in run.stderr
    assert (facts_workspace / "cache").exists()
    again = run_cli("--verbose", "facts", "--pin", "v1", "session.surface-op-kinds")
    assert "files not cached" not in again.stderr  # the second run read it all back
    quiet = run_cli("--quiet", "facts", "--pin", "v1", "session.surface-op-kinds")
    assert quiet.stderr == "" and quiet.stdout == again.stdout


def test_progress_only_on_a_terminal(facts_workspace, monkeypatch):
    from dshaudit.platform import ui

    monkeypatch.setattr("dshaudit.facts.parallel.MIN_FILES", 10**9)  # per-file work here, where the bar is
    plain = run_cli("--no-cache", "facts", "--pin", "v1", "session.surface-op-kinds")
    assert plain.stderr == ""
    monkeypatch.setattr(ui, "stderr_is_terminal", lambda: True)
    monkeypatch.setattr(ui, "MIN_ITEMS", 1)
    shown = run_cli("--no-cache", "facts", "--pin", "v1", "session.surface-op-kinds")
    assert "dshaudit: session.surface-op-kinds" in shown.stderr
    assert shown.stdout == plain.stdout
    quiet = run_cli("--quiet", "--no-cache", "facts", "--pin", "v1", "session.surface-op-kinds")
    assert quiet.stderr == ""


def test_one_or_two_worker_processes_give_identical_output(facts_workspace, monkeypatch):
    """The pool is used (its threshold lowered to the fixture's size) and changes nothing."""
    from dshaudit.facts import parallel

    monkeypatch.setattr(parallel, "MIN_FILES", 1)
    monkeypatch.setattr(parallel, "MIN_SCANS", 1)
    monkeypatch.setattr(parallel, "CHUNK", 3)
    used = []
    original = parallel.Pool.chunks
    monkeypatch.setattr(parallel.Pool, "chunks", lambda self, items: used.append(len(items)) or original(self, items))
    write_findings(facts_workspace, CLAIMS)
    monkeypatch.setenv("DSHAUDIT_WORKERS", "1")
    one = outputs(*(("--no-cache",) + c for c in COMMANDS))
    assert used == []
    monkeypatch.setenv("DSHAUDIT_WORKERS", "2")
    two = outputs(*(("--no-cache",) + c for c in COMMANDS))
    assert used, "the worker pool ran"
    assert one == two


def test_a_literal_hidden_inside_another_match_is_still_found(tmp_path):
    """git grep -o reports `maxDepth` in `maxDepthasOwn` and not the `hasOwn` that
    overlaps it; the prefilter must still see both, or a detector would undercount."""
    from dshaudit.facts.engine import FactContext
    from fixture_repo import _commit, _write, git

    root = tmp_path / "r"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    _write(root, "src/a.ts", "const x = maxDepthasOwn\n")
    _write(root, "src/b.ts", "const y = 1\n")
    sha = _commit(root, "c", "2026-08-01T10:00:00Z", "c")
    ctx = FactContext(DshRepository.open(str(root), "unused").snapshot(sha), Cache(tmp_path / "cache"))
    assert ctx.files_with("hasOwn", ["src/**"]) == ["src/a.ts"]
    assert ctx.files_with("maxDepth", ["src/**"]) == ["src/a.ts"]
    assert ctx.files_with("waterfall", ["src/**"]) == []


def test_fast_glob_shapes_agree_with_the_regex():
    from dshaudit.facts.engine import glob_predicate, glob_regex

    paths = [
        "a.ts",
        "x/a.ts",
        "x/y/a.tsx",
        "x/y/z/b.ts",
        "x/.ts",
        "x/",
        "docs/a.md",
        "docs/a/b.zh.md",
        "packages/core/a.ts",
        "packagesX/a.ts",
        "patches/p.patch",
        "patches",
        "package.json",
        "x/a.ts/b.md",
    ]
    for glob in [
        "**/*.ts",
        "**/*.tsx",
        "x/**/*.ts",
        "docs/**/*.md",
        "packages/**/*.ts",
        "patches/**",
        "**",
        "package.json",
        "x/a.ts",
        "vendor/*/package.json",
        "packages/*/*/src/**/*.ts",
    ]:
        for p in paths:
            assert bool(glob_predicate(glob)(p)) == bool(glob_regex(glob).match(p)), (glob, p)


def test_narrowing_pathspecs_let_git_search_every_file_the_globs_match(tmp_path):
    """A whole-tree detector's git grep may be narrowed to pathspecs: git must
    still search every file its globs match (what else it searches is filtered out)."""
    from dshaudit.facts.engine import glob_predicate, narrowing_pathspecs
    from fixture_repo import _commit, _write, git

    root = tmp_path / "r"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    paths = [
        "a.ts",
        "x/a.ts",
        "x/y/a.tsx",
        "x/y/z/b.ts",
        "x/.ts",
        "docs/a.md",
        "docs/a/b.zh.md",
        "packages/core/a.ts",
        "packagesX/a.ts",
        "patches/p.patch",
        "package.json",
        "x/a.ts.md/b.md",
        "packages/a/b/src/c/d.ts",
        "vendor/v/package.json",
    ]
    for p in paths:
        _write(root, p, "x\n")
    sha = _commit(root, "c", "2026-08-01T10:00:00Z", "c")
    for globs in (
        ["**/*.ts", "**/*.tsx"],
        ["x/**/*.ts"],
        ["docs/**/*.md"],
        ["packages/**"],
        ["package.json"],
        ["vendor/*/package.json"],
        ["packages/*/*/src/**/*.ts"],
        ["**"],
        ["x/{a,b}.ts"],
    ):
        specs = narrowing_pathspecs(globs)
        searched = set(git(root, "grep", "-l", "-e", "", sha, "--", *specs).replace(f"{sha}:", "").split())
        wanted = {p for p in paths if any(glob_predicate(g)(p) for g in globs)}
        assert wanted <= searched, (globs, specs)
    assert narrowing_pathspecs(["**/*.ts", "**/*.tsx"]) == ("*.ts", "*.tsx")
    assert narrowing_pathspecs(["**"]) == () and narrowing_pathspecs(["x/{a,b}.ts"]) == ()


def test_editing_a_detector_entry_invalidates_its_cached_fact(facts_repo, tmp_path, monkeypatch):
    """Every field of a registry entry is in the cache key, not only the query:
    here `paths`, which no per-file work depends on but the fact does."""
    import dataclasses

    import dshaudit.facts.book as facts

    repository = DshRepository.open(str(facts_repo.path), "unused")
    pin = Pin("v1", facts_repo.shas["v1"])
    snapshot = repository.snapshot(pin.sha)
    before = measure(snapshot, pin, ["scale.docs"], cache=Cache(tmp_path / "c"))[0]
    assert before.value == 5
    specs = dict(facts.registry())
    specs["scale.docs"] = dataclasses.replace(specs["scale.docs"], paths=("docs/guide/**/*.md",))
    monkeypatch.setattr(facts, "registry", lambda: specs)
    after = measure(snapshot, pin, ["scale.docs"], cache=Cache(tmp_path / "c"))[0]
    assert after.value == 3


@pytest.mark.parametrize(
    "field, value",
    [
        ("exclude_tests", True),
        ("reduce", "typescript_files"),
        ("definition", "other words"),
        ("needle", ("x",)),
        ("params", {"a": 1}),
    ],
)
def test_every_field_of_a_detector_entry_is_in_its_version(field, value):
    import dataclasses

    from dshaudit.facts.book import registry
    from dshaudit.facts.specs import detector_version

    spec = registry()["scale.docs"]
    assert detector_version(dataclasses.replace(spec, **{field: value})) != detector_version(spec)


def test_another_layout_changes_every_detector_version(monkeypatch):
    """Which files are tests and which folders packages decide facts too."""
    import dshaudit.facts.specs as facts

    spec = facts.load_specs()["session.surface-op-kinds"]
    before = facts.detector_version(spec)
    data = facts.registry_toml()
    changed = {**data, "layout": {**data["layout"], "test_dirs": ["tests"]}}
    monkeypatch.setattr(facts, "registry_toml", lambda: changed)
    assert facts.detector_version(spec) != before


def test_another_tree_sitter_version_changes_every_detector_version(monkeypatch):
    import dshaudit.facts.specs as facts

    spec = facts.load_specs()["core.context-builtin-services"]
    installed = facts.library_versions()
    assert "tree-sitter==" in installed and "tree-sitter-typescript==" in installed
    before = facts.detector_version(spec)
    monkeypatch.setattr(facts, "library_versions", lambda: installed.replace("tree-sitter==", "tree-sitter==0.0.1+"))
    assert facts.detector_version(spec) != before


def test_an_entry_is_checked_once_and_again_after_it_is_replaced(tmp_path):
    from dshaudit.platform.cache import Shard, shaped

    calls = []
    check = shaped([int])

    def counted(value):
        calls.append(value)
        return check(value)

    shard = Shard(None, shape=counted)
    shard.entries = {"a": [1, 2], "b": [1, "x"]}  # as read from disk
    assert shard.get("a") == [1, 2] and shard.get("a") == [1, 2] and len(calls) == 1
    assert shard.get("b") is None and "b" not in shard.entries  # the wrong shape is dropped
    shard.put("a", ["not", "ints"])
    shard.added = {}  # flushed: what is read next is checked again
    assert shard.get("a") is None


def test_claims_and_references_checked_in_the_background_give_what_one_job_gives(facts_workspace, monkeypatch):
    """check measures claims, and looks up names and quoted code, in forked processes
    beside the citations; in threads where a fork is unsafe; with one job (--jobs 1)
    here, in order: the same answers."""
    from dshaudit.platform import background

    write_findings(facts_workspace, CLAIMS + "`packages/core/agent/src/index.ts:1` → `export`; `AgentLoop` runs it.\n")
    monkeypatch.setenv("DSHAUDIT_WORKERS", "2")  # as on a machine with two processors
    started = []
    start = background.BackgroundJob.start.__func__

    def recorded(cls, work, where=None):
        job = start(cls, work, where)
        started.append(job.placement)
        return job

    monkeypatch.setattr(background.BackgroundJob, "start", classmethod(recorded))
    forked = outputs(("check", "--format", "json"))
    assert started == [background.Placement.PROCESS] * 2, "the claims and the references went to processes"
    monkeypatch.setenv("DSHAUDIT_NO_CACHE", "1")
    uncached = outputs(("check", "--format", "json"))
    started.clear()
    rule = background.placement
    monkeypatch.setattr(background, "placement", lambda: background.Placement.THREAD)
    threaded = outputs(("check", "--format", "json"))
    assert started == [background.Placement.THREAD] * 2
    monkeypatch.setattr(background, "placement", rule)
    started.clear()
    one_job = outputs(("--jobs", "1", "check", "--format", "json"))
    assert started == []
    assert forked == uncached == threaded == one_job
    report = json.loads(forked[0])
    assert report["summary"]["claims"]["confirmed"] == 3
    assert any(r["text"] == "AgentLoop" for r in report["references"]), "the names were looked up"


@pytest.mark.parametrize("step", ["_check_claims", "_check_references"])
@pytest.mark.parametrize(
    ("error", "code", "said"),
    [
        (
            InputError("the child fails", file="findings/f.md", line=3),
            2,
            "dshaudit: findings/f.md:3: the child fails\n",
        ),
        (ValueError("the child fails"), 4, "dshaudit: internal error: ValueError: the child fails"),
    ],
)
def test_a_failure_in_a_background_process_is_reported_and_not_done_again(
    facts_workspace, monkeypatch, step, error, code, said
):
    result, in_parent = _check_failing_in_the_child(facts_workspace, monkeypatch, step, error)
    assert result.exit_code == code and result.stderr.startswith(said)
    assert in_parent == []


@pytest.mark.parametrize("step", ["_check_claims", "_check_references"])
def test_ctrl_c_in_a_forked_process_stops_the_check_without_doing_its_work_again(facts_workspace, monkeypatch, step):
    result, in_parent = _check_failing_in_the_child(facts_workspace, monkeypatch, step, KeyboardInterrupt())
    assert result.exit_code == 130 and "interrupted" in result.stderr
    assert in_parent == []


def _check_failing_in_the_child(facts_workspace, monkeypatch, step: str, error: BaseException):
    """`check` with verify's `step` raising `error` in a forked process: the run, and
    each time the step ran in this process instead."""
    import os

    from dshaudit.checking import verify

    write_findings(facts_workspace, CLAIMS + "`AgentLoop` runs it.\n")
    monkeypatch.setenv("DSHAUDIT_WORKERS", "2")
    parent = os.getpid()
    original = getattr(verify, step)
    in_parent: list[int] = []

    def failing_in_the_child(*args, **kwargs):
        if os.getpid() != parent:
            raise error
        in_parent.append(1)
        return original(*args, **kwargs)

    monkeypatch.setattr(verify, step, failing_in_the_child)
    return run_cli("check", "--format", "json"), in_parent


def test_a_shard_file_is_what_json_makes_of_its_format_mac_and_payload(tmp_path):
    """The MAC is checked on the payload's text as the file holds it (not serialised
    again), and the file is still exactly what earlier versions wrote and read:
    json.dumps of {format, mac, payload}, the MAC of json.dumps(payload)."""
    import hashlib
    import hmac

    from dshaudit.platform.cache import Shard

    key = b"k" * 32
    payload = {"b": [1, 2], "a": {"x": "caf\u00e9 \u2192"}, "c": None}
    path = tmp_path / "s.json"
    shard = Shard(path, key)
    for k, v in payload.items():
        shard.put(k, v)
    shard.flush()
    mac = hmac.new(key, json.dumps(payload).encode(), hashlib.sha256).hexdigest()
    assert path.read_bytes() == json.dumps({"format": FORMAT, "mac": mac, "payload": payload}).encode()
    assert Shard(path, key).entries == payload
    assert Shard(path, b"other key" * 4).entries == {}
    # The same JSON written otherwise (other spacing) is not what the MAC is of: not used.
    path.write_text(json.dumps({"format": FORMAT, "mac": mac, "payload": payload}, indent=1))
    assert Shard(path, key).entries == {}


def test_a_shard_with_any_byte_changed_or_cut_is_not_used(tmp_path):
    from dshaudit.platform.cache import Shard

    key = b"k" * 32
    path = tmp_path / "s.json"
    shard = Shard(path, key)
    shard.put("n", [1, 22, 333])
    shard.flush()
    good = path.read_bytes()
    for i in range(len(good)):
        for changed in (good[:i] + bytes([good[i] ^ 1]) + good[i + 1 :], good[:i], good[:i] + good[i + 1 :]):
            path.write_bytes(changed)
            assert Shard(path, key).entries == {}, changed
    path.write_bytes(good)
    assert Shard(path, key).entries == {"n": [1, 22, 333]}
