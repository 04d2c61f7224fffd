"""Which names occur at a commit (`NameIndex`): whole words, case-sensitive, in any text
file; absence claims in smart case; deleted names and paths found in the history."""

from __future__ import annotations

import pytest

from dshaudit.core.errors import RepoError
from dshaudit.git.snapshot import Snapshot
from dshaudit.index import namegrep
from dshaudit.index.namehistory import HistoryAnswer
from dshaudit.index.nameindex import NameIndex, forget, index_for
from dshaudit.index.namepass import Inside
from dshaudit.index.words import any_case
from dshaudit.platform import cache

REGISTRY = """\
export class AgentRegistry {
  setFactory(f: unknown) {}
}
export function useIt(reg: AgentRegistry, f: unknown) {
  reg.setFactory(f)
}
"""

FIRST = {
    "packages/agent/src/registry.ts": REGISTRY,
    "packages/agent/package.json": '{\n  "name": "@scope/dsh-base",\n  "main": "a/b/c"\n}\n',
    "docs/notes.md": "The Ollama backend is gone.\nollama\nOLLAMA\nno mention\nollama again\n",
    "docs/other.txt": "dsh-basement is a longer word\n",
    "assets/blob.bin": b"\x00\x01binaryName\x00",
    "src/pathonly.ts": "export const x = 1\n",
    "legacy/helper.ts": "export function legacyHelper() {}\nexport const fooBar = 1\n",
}
# commit 1 drops the legacy folder; commit 2 changes one file.
SECOND: dict[str, str | bytes | None] = {"legacy": None}
THIRD = {"src/pathonly.ts": "export const y = setFactory\n"}


def deleted_by(answer: HistoryAnswer) -> str:
    """The commit a history search found (it must have found one)."""
    assert answer.deletion is not None, answer
    return answer.deletion.sha


@pytest.fixture(autouse=True)
def _own_cache(fresh_cache):
    """Every test starts with an empty cache, and no index kept in memory from another."""
    forget()
    yield
    forget()


@pytest.fixture(params=["perl", "extended"])
def regexes(request, monkeypatch):
    """Run a test with git's Perl regexes, and again as with a git built without them (`-w -E`)."""
    if request.param == "extended":
        monkeypatch.setattr(namegrep.CommitGrep, "perl", lambda self: False)
    return request.param


@pytest.fixture
def history(make_repo):
    return make_repo(FIRST, SECOND, THIRD, subjects=("the agent", "drop the legacy helper", "touch"))


@pytest.fixture
def first(history) -> NameIndex:
    return NameIndex(history.snapshot(0))


# -- presence -------------------------------------------------------------------------------


def test_a_name_occurs_as_a_whole_word_only(first, regexes):
    """`Registry` is absent where the tree only says `AgentRegistry`; `setFactory` is present in `reg.setFactory(f)`."""
    assert first.present(["Registry", "Factory"]) == {"Registry": False, "Factory": False}
    assert first.present(["AgentRegistry", "setFactory"]) == {"AgentRegistry": True, "setFactory": True}


def test_a_name_is_looked_up_case_sensitively(first, regexes):
    assert first.present(["agentRegistry", "Ollama", "OLLAMA", "oLLama"]) == {
        "agentRegistry": False,
        "Ollama": True,
        "OLLAMA": True,
        "oLLama": False,
    }


def test_any_text_file_counts_but_binaries_and_paths_do_not(first, regexes):
    assert first.paths(["Ollama", "basement", "binaryName", "pathonly"]) == {
        "Ollama": frozenset({"docs/notes.md"}),
        "basement": frozenset({"docs/other.txt"}),  # a dash ends a word: `dsh-basement` holds `basement`
        "binaryName": frozenset(),  # in a binary file (a NUL in it): not searched
        "pathonly": frozenset(),  # a file name, not a word of any file's text
    }


def test_names_with_other_characters_are_whole_words_of_their_own(first, regexes):
    """`@scope/dsh-base` holds `dsh-base` and `dsh`; `dsh-basement` holds neither `dsh-base` nor `dsh-bas`."""
    assert first.paths(["dsh-base", "dsh", "dsh-bas", "dsh-basement", "scope/dsh"]) == {
        "dsh-base": frozenset({"packages/agent/package.json"}),
        "dsh": frozenset({"packages/agent/package.json", "docs/other.txt"}),
        "dsh-bas": frozenset(),
        "dsh-basement": frozenset({"docs/other.txt"}),
        "scope/dsh": frozenset({"packages/agent/package.json"}),
    }


def test_names_that_overlap_on_one_line_are_each_found(first, regexes):
    """`a/b` and `a/b/c` in one `"a/b/c"`: the shorter one is inside the longer match."""
    assert first.present(["a/b", "a/b/c", "b/c", "a/b/c/d"]) == {
        "a/b": True,
        "a/b/c": True,
        "b/c": True,
        "a/b/c/d": False,
    }


def test_names_the_pass_missed_are_looked_up_apart_in_one_grep(first, monkeypatch):
    """The pass misses no name here, so it is made to: each name with other characters is then
    looked up on its own, all of them in one git process, and found only as a whole word."""
    monkeypatch.setattr(Inside, "names", lambda self, match: ())
    calls = first.git_calls
    assert first.present(["a/b", "b/c", "dsh-base", "dsh-bas", "scope/dsh"]) == {
        "a/b": True,
        "b/c": True,
        "dsh-base": True,
        "dsh-bas": False,  # in `dsh-base` as a string, but no whole word
        "scope/dsh": True,
    }
    # The pass and the one grep for the names it missed: no name was said to be dated, so
    # `dsh-bas`, found nowhere, sets no read of the history going.
    assert first.git_calls - calls == 2


def test_the_history_is_read_ahead_only_for_a_missing_name_that_may_be_dated(first):
    """A name found nowhere sets the history's read going only when the caller may ask
    when it was deleted: an absence claim's text, or a commit's digits, never are."""
    calls = first.git_calls
    first.start(presence=["Registry", "deadbeef"], dated=["AgentRegistry"])
    first.present(["Registry", "deadbeef"])
    assert first.git_calls - calls == 1  # the pass alone: the names missing are not dated
    first.start(presence=["Factory"], dated=["Factory"])
    first.present(["Factory"])
    assert first.git_calls - calls == 3  # another pass, and the history's read it set going


def test_a_warm_lookup_runs_no_git(history):
    snapshot = history.snapshot(0)
    cold = NameIndex(snapshot)
    answer = cold.present(["setFactory", "Registry"])
    assert cold.git_calls > 0
    cache.end()  # written to disk, and read again by the next run
    cache.begin()
    warm = NameIndex(snapshot)
    assert warm.present(["setFactory", "Registry"]) == answer == {"setFactory": True, "Registry": False}
    assert warm.git_calls == 0


def test_a_new_commit_is_indexed_from_an_indexed_one_searching_only_changed_files(history):
    """Between commits 1 and 2 only src/pathonly.ts changed: `setFactory`, found by commit 1 in
    registry.ts, is kept there, and found anew in the changed file."""
    assert NameIndex(history.snapshot(1)).paths(["setFactory"]) == {
        "setFactory": frozenset({"packages/agent/src/registry.ts"})
    }
    later = NameIndex(history.snapshot(2))
    assert later.paths(["setFactory"]) == {
        "setFactory": frozenset({"packages/agent/src/registry.ts", "src/pathonly.ts"})
    }
    assert later.base == history.shas[1]


def test_start_runs_the_lookup_in_the_background_and_present_waits_for_it(first):
    first.start(presence=["setFactory"], paths=["Ollama"], absent=["ollama"])
    started = first.git_calls
    assert started > 0
    assert first.present(["setFactory"]) == {"setFactory": True}
    assert first.paths(["Ollama"]) == {"Ollama": frozenset({"docs/notes.md"})}
    assert first.git_calls == started  # all answered by the pass already running


def test_an_index_needs_a_full_commit_sha(history):
    with pytest.raises(RepoError, match="not a full commit SHA"):
        NameIndex(Snapshot(history.repository(), "main"))


def test_index_for_keeps_one_index_per_commit_until_forgotten(history):
    snapshot = history.snapshot(0)
    index = index_for(snapshot)
    assert index_for(history.repository().snapshot(history.shas[0])) is index
    assert index_for(history.snapshot(1)) is not index
    forget()
    assert index_for(snapshot) is not index


# -- absence claims ---------------------------------------------------------------------------


def test_any_case_is_smart_case():
    assert any_case("ollama") and any_case("log-only")
    assert not any_case("Ollama")


def test_a_claim_without_capitals_is_found_in_any_case_and_one_with_capitals_exactly(first):
    assert first.occurrences("ollama") == [("docs/notes.md", 1), ("docs/notes.md", 2), ("docs/notes.md", 3)]
    assert first.occurrences("OLLAMA") == [("docs/notes.md", 3)]


def test_a_claim_names_at_most_its_limit_of_places(first):
    assert first.occurrences("ollama", limit=2) == [("docs/notes.md", 1), ("docs/notes.md", 2)]


def test_a_path_that_holds_a_claim_is_a_place_with_line_zero(first):
    assert first.occurrences("pathonly") == [("src/pathonly.ts", 0)]
    assert first.occurrences("backend") == [("docs/notes.md", 1)]
    assert first.occurrences("nowhere") == []


def test_a_claim_with_other_characters_is_a_whole_word_too(first):
    assert first.occurrences("dsh-base") == [("packages/agent/package.json", 2)]
    assert first.occurrences("scope/dsh-base") == [("packages/agent/package.json", 2)]


# -- history ----------------------------------------------------------------------------------


def test_deletion_finds_the_commit_that_removed_a_name(history):
    answer = NameIndex(history.snapshot(2)).deletion("legacyHelper")
    assert answer.deletion is not None
    assert (answer.deletion.sha, answer.deletion.subject) == (history.shas[1], "drop the legacy helper")
    assert answer.deletion.date.startswith("2026-08-02T10:00:00")
    assert str(answer.deletion) == f'{history.shas[1][:8]} 2026-08-02 "drop the legacy helper"'
    assert (answer.commits, answer.reached_root) == (3, True)


def test_deletion_is_found_whatever_colours_the_clone_gives_patches(history):
    """`color.diff=always` colours the patches of `git log -p`, which the removed lines are read
    from, unless the call turns it off: `color.ui` does not, as `color.diff` is the nearer setting."""
    from fixture_repo import git

    git(history.root, "config", "color.diff", "always")
    answer = NameIndex(history.snapshot(2)).deletion("legacyHelper")
    assert answer.deletion is not None and answer.deletion.sha == history.shas[1]


def test_deletion_is_none_for_a_name_never_there(history):
    answer = NameIndex(history.snapshot(2)).deletion("neverThere")
    assert (answer.deletion, answer.commits, answer.reached_root) == (None, 3, True)


def test_deletion_passes_over_a_commit_that_removed_only_a_longer_name(history):
    """`fooBar` went in commit 1, but `foo` was never a whole word: no deletion of `foo`."""
    assert NameIndex(history.snapshot(2)).deletion("foo").deletion is None


def test_deletion_looks_back_only_over_the_commits_it_is_given(history):
    answer = NameIndex(history.snapshot(2)).deletion("legacyHelper", commits=1)
    assert (answer.deletion, answer.commits, answer.reached_root) == (None, 1, False)


def test_path_deletion_finds_the_commit_that_removed_a_file_or_folder(history):
    index = NameIndex(history.snapshot(2))
    assert deleted_by(index.path_deletion("legacy/helper.ts")) == history.shas[1]
    assert deleted_by(index.path_deletion("legacy")) == history.shas[1]
    assert index.path_deletion("src/pathonly.ts").deletion is None  # changed, never removed


def test_deletions_answers_every_name_from_one_read_of_the_history(history):
    index = NameIndex(history.snapshot(2))
    answers = index.deletions(["legacyHelper", "neverThere", "fooBar"])
    assert deleted_by(answers["legacyHelper"]) == history.shas[1] and answers["neverThere"].deletion is None
    assert deleted_by(answers["fooBar"]) == history.shas[1]
    assert index.grep.calls == 1


def test_deletion_reads_only_the_lines_a_patch_removes(make_repo):
    """A name moved within a file is not deleted there; a file named like a name holds no line of it;
    a removed line that itself starts with `-- a/` is still a removed line."""
    repo = make_repo(
        {
            "src/moved.ts": "const keep = 1\nexport const movedName = 2\n",
            "src/headerName.ts": "export const other = 3\n",
            "notes.txt": "-- a/b dashName\nstays\n",
        },
        {
            "src/moved.ts": "export const movedName = 2\nconst keep = 1\n",
            "src/headerName.ts": None,
            "notes.txt": "stays\n",
        },
        {"src/moved.ts": "const keep = 1\n"},
        subjects=("start", "move a line, drop a file", "drop the name"),
    )
    index = NameIndex(repo.snapshot(2))
    answers = index.deletions(["movedName", "headerName", "dashName", "keep"])
    assert deleted_by(answers["movedName"]) == repo.shas[2]
    assert deleted_by(answers["dashName"]) == repo.shas[1]
    assert answers["headerName"].deletion is None
    assert (answers["keep"].commits, answers["keep"].reached_root) == (3, True)


def test_a_patch_line_that_holds_nuls_ends_no_commit(make_repo):
    """git reads a file as text by its first 8,000 bytes: a NUL further on reaches the patch,
    and the lines after it are still the commit's removed lines."""
    text = "filler line\n" * 800 + "a\0\0b\nendName\n"
    repo = make_repo({"notes.txt": text.encode()}, {"notes.txt": None}, subjects=("add", "drop the notes"))
    answer = NameIndex(repo.snapshot(1)).deletion("endName")
    assert deleted_by(answer) == repo.shas[1]


def test_a_name_is_dated_only_by_a_whole_word_on_a_removed_line_of_a_hunk():
    """In the window's log, a file header (`--- a/Name.ts`), an added line, a longer word and the
    commit's own line never date a name; a removed line does, in the newest commit that has one."""
    from dshaudit.index.namehistory import _removed_lines

    def commit(sha: str, subject: str, patch: str) -> bytes:
        return f"\0\0{sha}\0 2026-08-0{sha[0]}T00:00:00Z\0{'f' * 40}\0{subject}\n\n{patch}".encode()

    newer = commit(
        "1" * 40,
        "Gone mentions Gone",
        "diff --git a/Gone.ts b/Gone.ts\nindex 1..2 100644\n--- a/Gone.ts\n+++ b/Gone.ts\n"
        "@@ -3 +3 @@\n-const GoneAway = 1\n+const Gone = 2\n",
    )
    older = commit(
        "2" * 40,
        "drop it",
        "diff --git a/x.ts b/x.ts\nindex 3..4 100644\n--- a/x.ts\n+++ b/x.ts\n"
        "@@ -1,2 +1 @@\n-keep()\n\\ No newline at end of file\n-Gone()\n+kept()\n",
    )
    window = _removed_lines(newer + older, 200)
    assert [c.sha[0] for c in window.commits] == ["1", "2"] and window.reached_root
    assert window.deletion("Gone").sha == "2" * 40
    assert window.deletion("GoneAway").sha == "1" * 40
    assert window.deletion("newline") is None  # git's own line, not the file's
    assert window.deletion("mentions") is None  # the commit's subject
