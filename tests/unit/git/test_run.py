"""The git runner (git/run.py): what git reads besides its arguments is fixed, and
each caller says what an exit code means."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from dshaudit.core.errors import RepoError
from dshaudit.git import run
from dshaudit.index import nameindex
from dshaudit.platform import cache

# A configuration that changes what git writes wherever it can: line numbers and
# columns, colour, quoted paths, patterns read as Perl, paths relative to the folder.
HOSTILE = """\
[grep]
    lineNumber = true
    column = true
    patternType = perl
    fullName = false
[color]
    ui = always
    grep = always
[core]
    quotePath = true
[diff]
    noprefix = true
    mnemonicPrefix = true
    indentHeuristic = false
    interHunkContext = 10
"""


@pytest.fixture
def hostile(tmp_path, monkeypatch):
    """The user's global configuration is HOSTILE."""
    config = tmp_path / "gitconfig"
    config.write_text(HOSTILE)
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")


def _greps(fixture_repo) -> list[bytes]:
    git_dir, sha = str(fixture_repo.bare), fixture_repo.shas["v3"]
    asked = [
        ["grep", "-o", "-z", "--heading", "--break", "-I", "-w", "-E", "-e", "Context|AgentRegistry", sha],
        ["grep", "-l", "-z", "-I", "-e", r"Contexts\|AgentRegistry", sha],  # basic: `\|` is GNU's alternation
        ["grep", "-n", "-z", "-I", "-F", "-e", "caf", sha],
    ]
    return [run.run(args, git_dir).output(no_match_ok=True) for args in asked]


def test_the_users_configuration_does_not_change_what_git_writes(fixture_repo, hostile, monkeypatch):
    found = _greps(fixture_repo)
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    assert found == _greps(fixture_repo)
    assert all(found)  # each search finds something: the comparison is not of empty outputs
    assert b"\x1b[" not in b"".join(found)


def test_patches_are_read_alike_whatever_the_users_configuration(fixture_repo, hostile, monkeypatch):
    from dshaudit.git.diff import Diff
    from dshaudit.git.repository import DshRepository

    def patches() -> dict[tuple[str, str], str]:
        repository = DshRepository(fixture_repo.bare, "fixture")
        try:
            diff = Diff(repository, fixture_repo.shas["v1"], fixture_repo.shas["v3"])
            paths = sorted(
                set(repository.snapshot(fixture_repo.shas["v1"]).blob_ids())
                & set(repository.snapshot(fixture_repo.shas["v3"]).blob_ids())
            )
            return diff.patches([(p, diff.renames.get(p, p)) for p in paths])
        finally:
            repository.close()

    found = patches()
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    assert found == patches()
    assert any(found.values())  # some file changed: the comparison is not of empty patches


def test_names_are_found_alike_whatever_the_users_configuration(fixture_repo, hostile, tmp_path, monkeypatch):
    from dshaudit.git.repository import DshRepository

    names = ["Context", "AgentRegistry", "@dsh/agent", "nowhere"]

    def lookup(folder: str) -> dict[str, frozenset[str]]:
        monkeypatch.setenv("DSHAUDIT_CACHE_DIR", str(tmp_path / folder))
        nameindex.forget()
        cache.begin()
        try:
            return nameindex.index_for(
                DshRepository(fixture_repo.bare, "fixture").snapshot(fixture_repo.shas["v3"])
            ).paths(names)
        finally:
            cache.end()
            nameindex.forget()

    found = lookup("hostile")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", "/dev/null")
    assert found == lookup("plain")
    assert found["Context"] and not found["nowhere"]


def test_variables_that_point_git_elsewhere_are_not_passed_on(fixture_repo, tmp_path, monkeypatch):
    """A hook of another repository runs with GIT_DIR, GIT_INDEX_FILE or a quarantined
    object store in its environment; the clone a call names is the one git reads."""
    empty = tmp_path / "objects"
    empty.mkdir()
    monkeypatch.setenv("GIT_OBJECT_DIRECTORY", str(empty))
    monkeypatch.setenv("GIT_DIR", str(tmp_path))
    monkeypatch.setenv("GIT_INDEX_FILE", str(tmp_path / "index"))
    done = run.run(["cat-file", "-t", fixture_repo.shas["v1"]], str(fixture_repo.bare))
    assert done.output() == b"commit\n"
    assert run.environment({"LC_ALL": "C"})["LC_ALL"] == "C"
    assert "GIT_OBJECT_DIRECTORY" not in run.environment()


def test_the_caller_says_what_an_exit_code_means(fixture_repo):
    git_dir, sha = str(fixture_repo.bare), fixture_repo.shas["v1"]
    nothing = run.run(["grep", "-e", "no such text anywhere", sha], git_dir)
    assert nothing.returncode == 1 and nothing.found_nothing
    assert nothing.output(no_match_ok=True) == b""
    assert nothing.output(ok=(0, 1)) == b""
    with pytest.raises(RepoError, match=rf"^git grep failed at {sha[:12]}: $"):
        nothing.output(commit=sha)  # no match is a failure to a caller that does not allow it
    broken = run.run(["--literal-pathspecs", "grep", "-e", "x", "no-such-revision"], git_dir)
    assert broken.returncode not in (0, 1)
    with pytest.raises(RepoError, match=r"^git grep failed: fatal: .{0,10}$"):
        broken.output(no_match_ok=True, limit=17)  # git's own words, cut at the limit


def test_a_started_git_is_stopped_and_its_spooled_output_read(fixture_repo):
    git_dir = str(fixture_repo.bare)
    waiting = run.Started(["cat-file", "--batch"], git_dir, stdin=True)  # reads stdin until it ends
    waiting.stop()
    assert waiting._proc.returncode is not None
    spooled = run.Started(["rev-parse", "--verify", fixture_repo.shas["v2"]], git_dir, spool=True)
    assert spooled.finish().output() == fixture_repo.shas["v2"].encode() + b"\n"
    spooled.stop()  # after the end: nothing to do


# Runs a Python program as its child, adopting the child's orphans (a subreaper, as a
# container's first process may be), and says whether the git process whose id the program
# printed was still there, running or unreaped, when the program had ended.
ADOPTER = textwrap.dedent(
    """
    import ctypes, os, subprocess, sys
    ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    done = subprocess.run([sys.executable, "-c", sys.argv[1]], capture_output=True, text=True, check=True)
    pid = int(done.stdout)
    left = os.path.exists(f"/proc/{pid}")
    if left:
        os.waitpid(pid, 0)
    print("left behind" if left else "ended")
    """
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="adopting orphans (a subreaper) is Linux's")
def test_no_git_process_outlives_the_run(fixture_repo):
    """A git process still running when the interpreter exits (the `git cat-file` a handle keeps
    for the whole run) is ended and waited for then, not left for the system to adopt."""
    program = (
        "from dshaudit.git import run\n"
        f"kept = run.Started(['cat-file', '--batch-check'], {str(fixture_repo.bare)!r}, stdin=True, stderr=False)\n"
        "print(kept._proc.pid)\n"
    )
    said = subprocess.run([sys.executable, "-c", ADOPTER, program], capture_output=True, text=True, check=True)
    assert said.stdout.strip() == "ended"


def test_a_question_without_an_answer_is_none(fixture_repo, tmp_path):
    assert run.ask(["rev-parse", "--show-toplevel"], cwd=str(fixture_repo.path), timeout=10) == str(fixture_repo.path)
    assert run.ask(["remote", "get-url", "origin"], cwd=str(fixture_repo.path), timeout=10) is None  # no origin
    assert run.ask(["rev-parse", "--show-toplevel"], cwd=str(tmp_path / "missing"), timeout=10) is None


def test_output_formats_are_parsed():
    assert list(run.grep_lines(b"c0ffee:a b\x003\x00x\x00y\nc0ffee:c\x0012\x00\n", "c0ffee:")) == [
        ("a b", 3, b"x\x00y"),
        ("c", 12, b""),
    ]
    assert run.nul_fields(b"M\x00a\x00") == ["M", "a", ""]
    assert run.nul_terminated(["a\tb", "c"]) == b"a\tb\x00c\x00"
