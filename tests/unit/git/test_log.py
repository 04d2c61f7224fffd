"""The first-parent history as git/log.py reads it: the path between two commits, each
commit's description and changes, and the commits whose diff touches a matching line."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dshaudit.core.errors import InputError, RepoError
from dshaudit.git.log import Change, Commit, Pickaxe, describe, first_parent_path, nearby_versions, read_steps
from dshaudit.git.repository import DshRepository
from dshaudit.git.snapshot import Snapshot
from fixture_repo import _commit, _write, configure_shouting, git

LINES = "".join(f"line {i}\n" for i in range(20))
ODD_PATH = "src/\udcff.ts"  # the file name is the byte 0xff, which is not UTF-8


@pytest.fixture
def merged(tmp_path: Path) -> tuple[DshRepository, dict[str, str]]:
    """main: c0, c1, a merge of a side branch (s1) made with --no-ff, then c2."""
    root = tmp_path / "merged"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    _write(root, "a.txt", "0\n")
    shas = {"c0": _commit(root, "c0", "2026-08-01T10:00:00Z", "c0")}
    git(root, "checkout", "-q", "-b", "side")
    _write(root, "side.txt", "s\n")
    shas["s1"] = _commit(root, "s1", "2026-08-02T10:00:00Z", "s1")
    git(root, "checkout", "-q", "main")
    _write(root, "a.txt", "1\n")
    shas["c1"] = _commit(root, "c1", "2026-08-03T10:00:00Z", "c1")
    env = {"GIT_AUTHOR_DATE": "2026-08-04T10:00:00Z", "GIT_COMMITTER_DATE": "2026-08-04T10:00:00Z"}
    git(root, "merge", "-q", "--no-ff", "-m", "merge side", "side", env=env)
    shas["merge"] = git(root, "rev-parse", "HEAD")
    _write(root, "a.txt", "2\n")
    shas["c2"] = _commit(root, "c2", "2026-08-05T10:00:00Z", "c2")
    return DshRepository(root / ".git", "merged"), shas


@pytest.fixture
def changing(tmp_path: Path) -> tuple[DshRepository, list[str]]:
    """c0 holds a few files; c1 renames, deletes, adds, edits and makes one executable;
    c2 adds a file whose name is not UTF-8."""
    root = tmp_path / "changing"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    _write(root, "src/a.ts", LINES)
    _write(root, "docs/x.md", "hello\n")
    _write(root, "tool.sh", "echo\n")
    _write(root, "keep.txt", "kept\n")
    shas = [_commit(root, "first ünïcode subject\n\nbody line", "2026-08-01T10:00:00+02:00", "c0")]
    (root / "src/a.ts").rename(root / "src/b.ts")
    _write(root, "src/b.ts", LINES.replace("line 3\n", "line three\n"))
    (root / "docs/x.md").unlink()
    _write(root, "docs/y.md", "new\n")
    _write(root, "tool.sh", "echo 2\n")
    (root / "keep.txt").chmod(0o755)
    shas.append(_commit(root, "second", "2026-08-02T10:00:00Z", "c1"))
    _write(root, ODD_PATH, "odd\n")
    shas.append(_commit(root, "third", "2026-08-03T10:00:00Z", "c2"))
    return DshRepository(root / ".git", "changing"), shas


def test_the_first_parent_path_leaves_the_merged_branch_out(merged):
    repository, shas = merged
    assert first_parent_path(repository, shas["c0"], shas["c2"]) == [shas["c1"], shas["merge"], shas["c2"]]
    assert first_parent_path(repository, shas["c2"], shas["c2"]) == []


def test_a_later_commit_first_is_an_input_error_that_names_the_order(merged):
    repository, shas = merged
    with pytest.raises(InputError) as raised:
        first_parent_path(repository, shas["c2"], shas["c0"], "history needs --from before --to")
    assert (
        str(raised.value) == f"{shas['c2'][:12]} is not an ancestor of {shas['c0'][:12]} "
        "(it comes after it: the two are the other way round): history needs --from before --to"
    )


def test_a_commit_git_cannot_read_is_a_repo_error_in_gits_words(merged):
    repository, shas = merged
    with pytest.raises(RepoError) as raised:
        first_parent_path(repository, shas["c0"], "1" * 40)
    assert str(raised.value) == (
        f"cannot tell whether {shas['c0'][:12]} is an ancestor of 111111111111: "
        "fatal: Not a valid commit name 1111111111111111111111111111111111111111"
    )


def test_describe_gives_the_full_sha_the_committer_date_and_the_subject_line(changing):
    repository, shas = changing
    assert describe(repository, shas[0][:10]) == Commit(shas[0], "2026-08-01T10:00:00+02:00", "first ünïcode subject")
    with pytest.raises(RepoError, match=r"^cannot read commit 000000000000: fatal: bad object 0{40}$"):
        describe(repository, "0" * 40)


def test_read_steps_lists_each_commit_and_what_it_changed(changing):
    repository, shas = changing
    first, second = read_steps(repository, shas[0], shas[2])
    assert first.commit == Commit(shas[1], "2026-08-02T10:00:00+00:00", "second")
    assert first.parent == shas[0]
    by_path = {c.new_path or c.old_path: c for c in first.changes}
    assert set(by_path) == {"docs/x.md", "docs/y.md", "src/b.ts", "tool.sh", "keep.txt"}
    blob = repository.snapshot(shas[0]).index()
    assert by_path["docs/x.md"] == Change("D", "docs/x.md", None, blob["docs/x.md"][2], None, "000000")
    assert by_path["src/b.ts"].status == "R" and by_path["src/b.ts"].old_path == "src/a.ts"
    assert by_path["src/b.ts"].old_blob == blob["src/a.ts"][2]
    assert by_path["docs/y.md"].status == "A" and by_path["docs/y.md"].old_path is None
    assert by_path["tool.sh"].status == "M" and by_path["tool.sh"].new_mode == "100644"
    assert by_path["keep.txt"].status == "M" and by_path["keep.txt"].new_mode == "100755"
    assert (first.renames, first.deleted) == ({"src/a.ts": "src/b.ts"}, {"docs/x.md"})
    # A name that is not UTF-8 reads as the bytes it is (surrogateescape), as the tree lists it.
    assert [c.new_path for c in second.changes] == [ODD_PATH]
    assert ODD_PATH in repository.snapshot(shas[2]).index()
    assert read_steps(repository, shas[2], shas[2]) == []


def test_renames_are_found_whatever_rename_limit_the_clone_configures(make_repo):
    """Each file renamed and edited in one commit is a rename: a small `diff.renameLimit` in the
    configuration would have git skip the search for them (a file that keeps its name in
    another folder is paired by its name first, whatever the limit) and list deletions and
    additions."""
    text = {name: "".join(f"{name} line {i}\n" for i in range(40)) for name in ("a", "b", "c")}
    built = make_repo(
        {f"{name}.txt": body for name, body in text.items()},
        {
            **{f"{name}.txt": None for name in text},
            **{f"{name}2.txt": body + "more\n" for name, body in text.items()},
        },
    )
    git(built.root, "config", "diff.renameLimit", "1")
    (step,) = read_steps(built.repository(), built.shas[0], built.shas[1])
    assert sorted((c.status, c.old_path, c.new_path) for c in step.changes) == [
        ("R", f"{name}.txt", f"{name}2.txt") for name in ("a", "b", "c")
    ]


def test_a_step_derives_the_tree_git_lists(changing):
    repository, shas = changing
    tree = repository.snapshot(shas[0])
    for step in read_steps(repository, shas[0], shas[2]):
        tree.blob_ids()  # known before the step: the derived tree's are the parent's, changed
        tree = step.tree(tree)
        listed = DshRepository(Path(repository.git_dir), "again").snapshot(step.commit.sha)
        assert {p: e for p, e in tree.index().items() if e[1] != "tree"} == {
            p: e for p, e in listed.index().items() if e[1] != "tree"
        }
        assert list(tree.blob_ids().items()) == list(listed.blob_ids().items())


def test_a_derived_tree_lists_the_regular_files_a_fresh_listing_gives_in_order(changing):
    """A file that becomes a link or a submodule leaves the regular files; one that comes
    takes its place in path order."""
    repository, shas = changing
    tree = repository.snapshot(shas[0])
    before = tree.blob_ids()
    some, other = sorted(before)[:2]
    changed = tree.derive(
        "e" * 40,
        [other],
        [(some, "120000", "1" * 40), ("a/first.ts", "100644", "2" * 40), ("zz/sub", "160000", "3" * 40)],
    )
    fresh = Snapshot(repository, "e" * 40)
    fresh._index = changed.index()
    assert list(changed.blob_ids().items()) == list(fresh.blob_ids().items())
    assert some not in changed.blob_ids() and other not in changed.blob_ids()
    assert changed.blob_ids()["a/first.ts"] == "2" * 40 and "zz/sub" not in changed.blob_ids()
    assert before == tree.blob_ids() and len(before) == len(changed.blob_ids()) + 1


def test_trees_derived_one_from_another_list_their_files_in_order_when_asked(changing):
    """A walk derives tree after tree and asks for their files at few of them: a file added at
    one commit, not yet put in order when the next commit is derived, is in order there."""
    repository, shas = changing
    tree = repository.snapshot(shas[0])
    tree.blob_ids()
    first = tree.derive("e" * 40, [], [("a/first.ts", "100644", "2" * 40)])
    second = first.derive("f" * 40, [], [("a/first.ts", "100644", "3" * 40)])  # changed in place
    fresh = Snapshot(repository, "f" * 40)
    fresh._index = second.index()
    assert list(second.blob_ids().items()) == list(fresh.blob_ids().items())
    assert second.blob_ids()["a/first.ts"] == "3" * 40
    assert list(first.blob_ids()) == sorted(first.blob_ids())


def test_a_file_changed_in_place_keeps_the_folders_above_it(changing):
    """A commit that changes a file's content lists it on both sides: the folders above it
    stay, and so does its place among the files."""
    repository, shas = changing
    tree = repository.snapshot(shas[0])
    tree.blob_ids()
    (path, (mode, _, _)), *_ = [(p, e) for p, e in tree.index().items() if "/" in p and e[1] == "blob"]
    folder = path.rsplit("/", 1)[0]
    edited = tree.derive("e" * 40, [path], [(path, mode, "0" * 40)])
    assert edited.entry(folder) is not None and edited.entry(folder).kind == "tree"
    assert edited.blob_ids()[path] == "0" * 40
    assert list(edited.blob_ids()) == list(tree.blob_ids())
    gone = edited.derive("f" * 40, [p for p in edited.blob_ids() if p.startswith(folder + "/")], [])
    assert gone.entry(folder) is None


def test_a_derived_tree_shares_what_depends_on_its_files_only_when_they_are_the_same(changing):
    """Which paths a glob selects is worked out once for trees that hold the same files
    (Snapshot.by_paths); a commit that adds, removes or re-modes a file starts afresh."""
    repository, shas = changing
    tree = repository.snapshot(shas[0])
    tree.by_paths["globs"] = {"src/**": {"src/a.ts"}}
    edited = tree.derive("e" * 40, [], [("src/a.ts", "100644", "0" * 40)])  # new content, same file
    assert edited.by_paths is tree.by_paths
    for removed, added in (
        (["src/a.ts"], []),
        ([], [("src/new.ts", "100644", "0" * 40)]),
        ([], [("src/a.ts", "100755", "0" * 40)]),  # the same path, another mode
    ):
        assert tree.derive("f" * 40, removed, added).by_paths == {}


def test_blobs_read_one_by_one_can_be_left_before_the_end(changing):
    """A reader that stops early does not wait on git, whose output pipe may be full."""
    repository, shas = changing
    blobs = [e[2] for e in repository.snapshot(shas[0]).index().values() if e[1] == "blob"]
    reading = repository.each_blob(blobs)
    first = next(reading)
    assert first[0] in blobs
    reading.close()  # ends git; a hang here would be the bug
    assert dict(repository.each_blob(blobs)) == repository.read_blobs(blobs)


@pytest.fixture
def pickaxed(make_repo):
    """c1 adds `alpha` to src/a.ts, c2 to docs/x.md, c3 removes it from src/a.ts,
    c4 renames src/b.ts (which holds `alpha`) and c5 changes another line of it."""
    built = make_repo(
        {"src/a.ts": "one\n", "src/b.ts": "alpha here\nbeta\n", "docs/x.md": "x\n"},
        {"src/a.ts": "one\nalpha\n"},
        {"docs/x.md": "x\nalpha\n"},
        {"src/a.ts": "one\n"},
        {"src/b.ts": None, "src/c.ts": "alpha here\nbeta\n"},
        {"src/c.ts": "alpha here\ngamma\n"},
    )
    return built.repository(), built.shas


def _pickaxe(repository, shas, pattern, ignore_case=False, globs=("src/**",)) -> set[str]:
    pickaxe = Pickaxe(repository, shas[0], shas[-1], pattern, ignore_case, globs)
    try:
        return pickaxe.commits()
    finally:
        pickaxe.close()


def test_the_pickaxe_finds_the_commits_that_add_or_remove_a_matching_line_in_the_globs(pickaxed):
    repository, shas = pickaxed
    assert _pickaxe(repository, shas, "alpha") == {shas[1], shas[3], shas[4]}  # a rename is a deletion and an addition
    assert _pickaxe(repository, shas, "alpha", globs=("docs/**",)) == {shas[2]}
    assert _pickaxe(repository, shas, "ALPHA") == set()
    assert _pickaxe(repository, shas, "ALPHA", ignore_case=True) == {shas[1], shas[3], shas[4]}
    assert _pickaxe(repository, shas, "al+pha|gamma") == {shas[1], shas[3], shas[4], shas[5]}  # an extended regex


def test_a_pickaxe_given_paths_reads_those_files_only_and_none_asks_nothing_of_git(pickaxed):
    repository, shas = pickaxed
    only_b = Pickaxe(repository, shas[0], shas[-1], "alpha", False, ("src/**",), ["src/b.ts"])
    try:
        assert only_b.commits() == {shas[4]}  # the rename deletes src/b.ts; src/a.ts is not read
    finally:
        only_b.close()
    before = _children()
    none = Pickaxe(repository, shas[0], shas[-1], "alpha", False, ("src/**",), [])
    assert not _children() - before
    assert none.commits() == set()
    none.close()


def test_the_pickaxe_reads_the_lines_as_stored_whatever_text_conversion_the_clone_configures(make_repo):
    """`git log -G` runs a textconv filter the clone's configuration sets (`configure_shouting`): the
    pickaxe reads the stored lines instead, which the searches it stands for grep."""
    built = make_repo({"a.ts": "one\n"}, {"a.ts": "one\ntwo\n"})
    configure_shouting(built.root)
    repository, shas = built.repository(), built.shas
    assert _pickaxe(repository, shas, "two", globs=("**",)) == {shas[1]}
    assert _pickaxe(repository, shas, "TWO", globs=("**",)) == set()


def test_a_pattern_git_refuses_is_a_repo_error(pickaxed):
    repository, shas = pickaxed
    with pytest.raises(RepoError, match=r"^git log -G failed: fatal: "):
        _pickaxe(repository, shas, "x[")


def _children() -> set[int]:
    """The processes this one started and has not reaped, from /proc."""
    children = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:  # ended meanwhile
            continue
        if int(fields[1]) == os.getpid():
            children.add(int(stat.parent.name))
    return children


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads the processes from /proc")
def test_a_pickaxe_closed_unasked_ends_its_git(pickaxed):
    repository, shas = pickaxed
    repository.snapshot(shas[0])  # the handle's own git processes start before the count
    before = _children()
    pickaxe = Pickaxe(repository, shas[0], shas[-1], "alpha", False, ("**",))
    started = _children() - before
    assert started
    pickaxe.close()
    assert not _children() & started
    pickaxe.close()  # closing again is nothing


def test_a_pickaxe_answers_once_and_closes_after(pickaxed):
    repository, shas = pickaxed
    pickaxe = Pickaxe(repository, shas[0], shas[-1], "alpha", False, ("**",))
    assert pickaxe.commits() == pickaxe.commits() == {shas[1], shas[2], shas[3], shas[4]}
    pickaxe.close()


@pytest.mark.parametrize("how", ["replace ref", "graft file"])
def test_the_first_parent_path_is_the_stored_one_whatever_the_clone_grafts(make_repo, how):
    """`git replace --graft` (a ref under refs/replace/) and the older info/grafts file both make
    git read a commit with other parents than it stores: a clone holding either would cut the
    path between two pins short, or say one is no ancestor of the other."""
    built = make_repo({"a.ts": "a\n"}, {"a.ts": "b\n"}, {"a.ts": "c\n"})
    if how == "replace ref":
        git(built.root, "replace", "--graft", built.shas[2])
    else:
        (built.root / ".git" / "info").mkdir(exist_ok=True)
        (built.root / ".git" / "info" / "grafts").write_text(built.shas[2] + "\n")
    assert git(built.root, "rev-list", "--count", built.shas[2]) == "1"  # git itself now sees no parent
    assert first_parent_path(built.repository(), built.shas[0], built.shas[2]) == built.shas[1:]


def test_the_versions_near_a_commit_reach_the_first_commit_whatever_the_clone_shows_of_it(make_repo):
    """With `log.showRoot` false, git lists no changes for the first commit of a history: the
    version of a file it made would be missing among those a citation's numbers are looked for in."""
    built = make_repo({"a.ts": "one\n"}, {"a.ts": "two\n"}, {"a.ts": "three\n"})
    git(built.root, "config", "log.showRoot", "false")
    versions = nearby_versions(built.repository(), built.shas[1], "a.ts", 5)
    made = {v.commit.sha: v.distance for v in versions}
    assert made == {built.shas[0]: -1, built.shas[1]: 0, built.shas[2]: 1}


def test_the_first_parent_path_is_whole_whatever_shallow_file_the_environment_names(make_repo, tmp_path, monkeypatch):
    """GIT_SHALLOW_FILE makes git read the commits it lists as having no parents, as a
    shallow clone's own file does: the path between two pins would be cut short."""
    built = make_repo({"a.ts": "a\n"}, {"a.ts": "b\n"}, {"a.ts": "c\n"})
    listed = tmp_path / "shallow-list"
    listed.write_text(built.shas[1] + "\n")
    monkeypatch.setenv("GIT_SHALLOW_FILE", str(listed))
    assert first_parent_path(built.repository(), built.shas[0], built.shas[2]) == built.shas[1:]
