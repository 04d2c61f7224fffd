"""What git wrote, as the git layer reads it (git/run.py): text, and the reason of a failure."""

from __future__ import annotations

import pytest

from dshaudit.core.errors import RepoError
from dshaudit.git import run
from dshaudit.git.diff import Diff
from dshaudit.git.grep import Grep
from fixture_repo import configure_shouting, git


def test_text_drops_one_last_newline_and_keeps_bytes_that_are_not_utf8():
    assert run.text(b"abc\n\n") == "abc\n"
    assert run.text(b"abc\n", keep_newline=True) == "abc\n"
    assert run.text(b"\xc3\xa9\xff") == "é\udcff"
    assert run.text(b"\xff.ts").encode("utf-8", "surrogateescape") == b"\xff.ts"


def _failed(stderr: bytes, code: int = 128) -> run.Finished:
    return run.Finished(("fetch", "origin"), code, b"", stderr)


def test_the_reason_is_gits_first_fatal_or_error_line():
    said = b"remote: counting\nwarning: a warning\n  error: 'first'  \nfatal: second\n"
    assert _failed(said).reason == "error: 'first"  # blanks and quotes at the ends dropped
    assert _failed(b"fatal: repository 'x' not found\n").reason == "fatal: repository 'x' not found"
    assert _failed(b"something else\n", 2).reason == "git exited with 2"
    assert _failed(b"").reason == "git exited with 128"


def test_output_text_runs_in_the_c_locale(make_repo, monkeypatch):
    built = make_repo({"a.txt": "a\n"})
    assert run.output_text(["rev-parse", "HEAD"], str(built.root / ".git")) == built.shas[0]
    seen: list[dict[str, str]] = []
    real = run.run

    def recording(args, git_dir=None, **kwargs):
        seen.append(dict(kwargs.get("env") or {}))
        return real(args, git_dir, **kwargs)

    monkeypatch.setattr(run, "run", recording)
    run.output_text(["rev-parse", "HEAD"], str(built.root / ".git"), env={"X": "1"})
    assert seen == [{"LANGUAGE": "C", "LC_ALL": "C", "X": "1"}]


def test_the_patch_of_a_path_that_is_not_ascii_is_found(make_repo):
    """git quotes such a path in a patch's headers unless core.quotePath is false, which
    run.py fixes: the patch is found under the path as the tree lists it."""
    built = make_repo({"src/é.ts": "const e = 1\n", "a.ts": "a\n"}, {"src/é.ts": "const e = 2\n", "a.ts": "b\n"})
    diff = Diff(built.repository(), built.shas[0], built.shas[1])
    patches = diff.patches([("src/é.ts", "src/é.ts"), ("a.ts", "a.ts")])
    assert "-const e = 1\n+const e = 2\n" in patches[("src/é.ts", "src/é.ts")]
    assert "-a\n+b\n" in patches[("a.ts", "a.ts")]


def test_git_failing_is_a_repo_error_in_its_words(make_repo):
    built = make_repo({"a.txt": "a\n"})
    git_dir, missing = str(built.root / ".git"), "1" * 40
    with pytest.raises(RepoError, match="^git grep failed at 111111111111: fatal: "):
        Grep(git_dir, missing).needles(["a"], ["a.txt"])
    with pytest.raises(RepoError, match=f"^git diff failed: fatal: bad object {missing}$"):
        Diff(built.repository(), built.shas[0], missing)
    assert Grep(git_dir, built.shas[0]).needles(["zzz"], ["a.txt"]) == {"a.txt": set()}  # no match is no failure


def test_a_patch_holds_the_lines_as_stored_whatever_text_conversion_the_clone_configures(make_repo):
    """`git diff` runs a configured textconv filter by default: the lines a citation is
    carried through are the blob's own lines, as `git grep` and `git show` read them."""
    built = make_repo({"a.ts": "one\ntwo\n"}, {"a.ts": "one\ntwo more\n"})
    configure_shouting(built.root)
    patch = Diff(built.repository(), built.shas[0], built.shas[1]).patches([("a.ts", "a.ts")])[("a.ts", "a.ts")]
    assert "-two\n+two more\n" in patch


def test_a_large_file_has_a_patch_whatever_size_limit_the_clone_configures(make_repo):
    """Past `core.bigFileThreshold` git diffs a file as binary (no lines): a user's small
    limit would leave a large cited file with no patch to carry its citations through."""
    lines = "".join(f"line {i}\n" for i in range(400))
    built = make_repo({"big.ts": lines}, {"big.ts": lines.replace("line 100\n", "line one hundred\n")})
    git(built.root, "config", "core.bigFileThreshold", "1k")
    patch = Diff(built.repository(), built.shas[0], built.shas[1]).patches([("big.ts", "big.ts")])[("big.ts", "big.ts")]
    assert "-line 100\n+line one hundred\n" in patch


def test_a_file_is_read_as_stored_whatever_replace_refs_the_clone_holds(make_repo):
    """`git replace OLD NEW` makes git read NEW wherever OLD is named, in a tree or by id:
    a clone holding such a ref would show a pinned commit's file with lines it never had."""
    built = make_repo({"a.ts": "export const stored = 1;\n"})
    blob = git(built.root, "rev-parse", f"{built.shas[0]}:a.ts")
    (built.root / "other.txt").write_text("export const replaced = 2;\n")
    other = git(built.root, "hash-object", "-w", "other.txt")
    git(built.root, "replace", blob, other)
    assert git(built.root, "cat-file", "blob", blob) == "export const replaced = 2;"  # git itself now reads NEW
    snapshot = built.repository().snapshot(built.shas[0])
    assert snapshot.read_many([blob]) == {blob: b"export const stored = 1;\n"}
    git_dir = str(built.root / ".git")
    assert Grep(git_dir, built.shas[0]).needles(["stored", "replaced"], ["a.ts"]) == {"a.ts": {"stored"}}


def test_a_patch_has_no_context_lines_whatever_git_diff_opts_the_environment_sets(make_repo, monkeypatch):
    """GIT_DIFF_OPTS=--unified=N takes precedence over the -U0 a patch is asked with: lines
    around each change would be read as part of the hunks a citation is carried through."""
    lines = "".join(f"line {i}\n" for i in range(10))
    built = make_repo({"a.ts": lines}, {"a.ts": lines.replace("line 5\n", "line five\n")})
    monkeypatch.setenv("GIT_DIFF_OPTS", "--unified=3")
    patch = Diff(built.repository(), built.shas[0], built.shas[1]).patches([("a.ts", "a.ts")])[("a.ts", "a.ts")]
    assert "-line 5\n+line five\n" in patch
    assert not [line for line in patch.splitlines() if line.startswith(" ")]  # no context line


def test_a_patch_holds_the_lines_whatever_binary_attribute_the_user_configures(make_repo, tmp_path):
    """An attributes file that says `-diff` of a file makes git diff print `Binary files differ`
    for it, with no hunks: a cited file would be carried as if none of its lines had moved."""
    built = make_repo({"a.ts": "one\ntwo\n"}, {"a.ts": "one\ntwo more\n"})
    attributes = tmp_path / "user-attributes"
    attributes.write_text("*.ts -diff\n")
    git(built.root, "config", "core.attributesFile", str(attributes))
    patch = Diff(built.repository(), built.shas[0], built.shas[1]).patches([("a.ts", "a.ts")])[("a.ts", "a.ts")]
    assert "-two\n+two more\n" in patch


def _git_version() -> tuple[int, ...]:
    said = run.output_text(["version"], None)  # `git version 2.45.1`, and more after it on some builds
    return tuple(int(n) for n in said.split()[2].split(".")[:2] if n.isdigit())


@pytest.mark.skipif(_git_version() < (2, 45), reason="diff.srcPrefix and diff.dstPrefix came in git 2.45")
def test_a_patch_is_found_whatever_prefixes_the_clone_configures(make_repo):
    """diff.srcPrefix and diff.dstPrefix replace the a/ and b/ a patch's file names are read by."""
    built = make_repo({"a.ts": "one\ntwo\n"}, {"a.ts": "one\ntwo more\n"})
    git(built.root, "config", "diff.srcPrefix", "old/")
    git(built.root, "config", "diff.dstPrefix", "new/")
    patch = Diff(built.repository(), built.shas[0], built.shas[1]).patches([("a.ts", "a.ts")])[("a.ts", "a.ts")]
    assert "-two\n+two more\n" in patch
