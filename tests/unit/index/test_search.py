"""Searches as claims (search.py): `search(...)` and `files(...)` measured at the pin
on the fixture repository, the refusals, and lint's rule for stated searches."""

from __future__ import annotations

import os
import re
import subprocess

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from conftest import run_cli, write_findings
from dshaudit.core.model import SourceLocation
from dshaudit.documents import searches
from dshaudit.documents.claims import parse_claim, split_ref
from dshaudit.git import pathspec
from dshaudit.git import run as git_run
from dshaudit.index import derive, screen, search

HERE = SourceLocation("f.md", 1, 1)


def claims(workspace, *expressions: str, pin: str = "v1") -> list[dict]:
    write_findings(workspace, "".join(f"`claim: {e}`\n" for e in expressions), pin=pin)
    run = run_cli("check", "--format", "json")
    assert run.exit_code in (0, 1), run.stderr
    return run.json["claims"]


@pytest.mark.parametrize(
    "expression, measured",
    [
        # Basic regular expressions by default, as git grep: `[A-Z]` is a class, `+` a letter.
        ("search('new [A-Z]')", 6),
        ("search('new [A-Z]', 'vendor/**')", 5),
        ("search('new [A-Z]', ':!packages/**')", 5),  # exclusions alone: the rest of the tree
        ("search('new [A-Z]', 'packages/**', 'vendor/**', ':!*/agent/*')", 5),
        ("search('Servic+e')", 0),
        ("search(-E 'Servic+e')", 5),
        ("search(-F 'new Fiber(self')", 1),
        ("search('Service', 'vendor/cordis/src/context.ts')", 5),
        ("search(-w 'Service')", 0),  # `ReflectService` is one word
        ("search(-i 'reflectservice')", 2),
        ("search(-i -w 'REFLECTSERVICE')", 2),
        ("search('PNG')", 0),  # binary files are skipped
        ("search(-F '--help')", 0),  # a pattern that looks like an option is a pattern
        ("search(-F '-e')", 0),
        ("search('Service').files", 1),
        ("search('new [A-Z]').paths", ["packages/core/agent/src/index.ts", "vendor/cordis/src/context.ts"]),
        ("search('maxDepth').lines", ["packages/core/agent/src/index.ts:7"]),
        ("files('packages/**/*.ts')", 2),
        ("files('packages/core/')", 2),
        ("files('*.json', '*.md')", 2),
        ("files('packages/**', ':!*.ts')", 2),
        ("files('*.tsx').paths", ["packages/ui/src/App.tsx"]),
    ],
)
def test_a_search_is_measured_at_the_pin(workspace, expression, measured):
    (got,) = claims(workspace, f"{expression} == 0")
    assert got["measured"] == measured, got
    assert got["status"] == ("confirmed" if measured == 0 else "contradicted")


def test_a_search_follows_the_pin(workspace):
    # v2 renamed the registry's file: the same search at v2 finds it under its new name.
    (got,) = claims(workspace, "search('maxDepth').paths == [packages/core/agent/src/registry.ts]", pin="v2")
    assert got["status"] == "confirmed", got


def test_the_users_git_configuration_does_not_change_a_search(workspace, monkeypatch, tmp_path):
    config = tmp_path / "gitconfig"
    config.write_text("[grep]\n\tpatternType = perl\n\textendedRegexp = true\n\tlineNumber = false\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(config))
    (got,) = claims(workspace, "search('Servic+e') == 0")
    assert got["status"] == "confirmed", got


@pytest.mark.parametrize(
    "expression, said",
    [
        ("search(-n 'x')", "flag -n is not allowed"),
        ("search(--no-index 'x')", "cannot read"),
        ("search('x', '../secret')", "'.' and '..' are not allowed"),
        ("search('x', 'a/../../b')", "'.' and '..' are not allowed"),
        ("search('x', '/etc/passwd')", "relative to the tree's root"),
        ("search('x', ':(top)x')", "only ':!' and ':^'"),
        ("search('x', ':(attr:a)x')", "only ':!' and ':^'"),
        ("search('x', ':!')", "is empty"),
        ("search(-E -F 'x')", "-E and -F cannot go together"),
        ("search('x' -i)", "flags come first"),
        ("search('')", "non-empty pattern"),
        ("search(x)", "quote patterns and pathspecs"),
        ("files(-i 'x')", "flag -i is not allowed (allowed: none)"),
        ("files()", "at least one pathspec"),
    ],
)
def test_anything_else_is_refused_before_git_runs(workspace, expression, said):
    (got,) = claims(workspace, f"{expression}.count == 0")
    assert got["status"] == "invalid_claim" and said in got["message"], got
    run = run_cli("lint")
    assert run.exit_code == 1 and said in run.stdout


def test_an_unknown_field_of_a_search_is_named(workspace):
    (got,) = claims(workspace, "search('x').bogus == 0")
    assert got["status"] == "unknown_fact" and "fields: count, files, lines, paths" in got["message"]


def test_a_claims_value_is_not_a_citation(workspace):
    write_findings(workspace, "`claim: search('maxDepth').lines == ['packages/core/agent/src/index.ts:7']`\n")
    run = run_cli("check", "--format", "json")
    assert run.exit_code == 0, run.stdout
    assert run.json["citations"] == [] and run.json["claims"][0]["status"] == "confirmed"


@pytest.mark.parametrize(
    "body, warned",
    [
        ("`git grep -n maxDepth` gives 3 lines.\n", True),
        ("Counting rule: `git grep -n -i foo 99f6f02f -- 'x/**'`\nreturns nothing, so it is absent.\n", True),
        ("`git ls-tree -r HEAD | grep -c x` lists 12.\n", True),
        ("`git grep -n maxDepth` gives one line (`claim: search('maxDepth').count == 1`).\n", False),
        ("`git grep -n maxDepth` finds the default.\n", False),  # no count is stated
        ("The loop gives 3 retries.\n", False),  # a count, but no search
    ],
)
def test_lint_warns_on_a_stated_search_that_no_claim_backs(workspace, body, warned):
    write_findings(workspace, body)
    run = run_cli("lint", "--format", "json")
    codes = [p["code"] for p in run.json["problems"]]
    assert ("unbacked_search" in codes) == warned, run.json


@given(st.text(max_size=80))
def test_reading_a_search_never_raises_anything_but_its_syntax_error(text):
    for candidate in (text, f"search({text})", f"files({text})"):
        try:
            parsed = searches.parse(candidate)
        except searches.SearchSyntaxError:
            continue
        assert parsed.kind in searches.KINDS
        assert all(".." not in p.split("/") for p in parsed.pathspecs)
        parse_claim("claim", f"{candidate}.count == 1", HERE)  # and as a claim, it reads


def test_a_search_ref_splits_at_its_closing_parenthesis():
    assert split_ref("search('a.b', 'c.d').files", set()) == ("search('a.b', 'c.d')", "files")
    assert split_ref("search('a)b')", set()) == ("search('a)b')", None)
    assert split_ref("searchx('a')", set()) == (None, None)


# -- many files at many commits in one git grep (history), and the screen before it --------


@pytest.fixture(scope="module")
def odd_repo(tmp_path_factory):
    """Two commits with what a tree grep skips or reads specially: a link to a matching
    file, a binary file, a Chinese line, upper and lower case, words inside words."""
    from fixture_repo import _commit, _write, git

    root = tmp_path_factory.mktemp("odd")
    git(root, "init", "-q", "-b", "main")
    _write(root, "src/a.ts", "// TODO: one\nconst TodoList = 1;\nconst x = todo_item;\n")
    _write(root, "src/b.md", "## Notes\nSee [x](../src/a.ts#L2) and 待办 TODO\n")
    _write(root, "bin/blob.dat", b"TODO\x00\x01binary")
    _write(root, "docs/case.txt", "Ollama OLLAMA ollama\nnothing here\n")
    (root / "src").joinpath("link.ts").symlink_to("a.ts")
    first = _commit(root, "one", "2026-01-01T00:00:00Z", "one")
    _write(root, "src/a.ts", "// FIXME later\n// HACK: two\nconst TodoList = 2;\n")
    _write(root, "docs/case.txt", "no match\n")
    _write(root, "docs/new.md", "## Heading\nA link [y](a.ts#L9)\n")
    second = _commit(root, "two", "2026-01-02T00:00:00Z", "two")
    from dshaudit.git.repository import DshRepository

    return DshRepository(root / ".git", str(root / ".git")), (first, second)


SEARCHES = [
    "search(-i -w -E 'TODO|FIXME|HACK')",
    "search(-w -E 'TODO|FIXME|HACK')",
    "search('TODO')",
    "search(-i 'ollama')",
    "search(-F 'TodoList =')",
    "search(-E 'Todo(List)? =')",
    "search('^## ')",
    "search(-E '\\]\\([^)]*#L[0-9]')",
    "search('Todo*List')",
    "search(-i '待办')",
    "search('待办')",
    "search(-F 'nowhere')",
    "search(-i -E 'todo(list|s)? =|fixme')",
    "search(-E 'Todo(List|Item) =')",
]


@pytest.mark.parametrize("expression", SEARCHES)
def test_one_grep_of_many_files_at_many_commits_is_each_commits_grep(odd_repo, expression):
    repository, commits = odd_repo
    spec = searches.parse(expression)
    git_dir = str(repository.repo.git_dir)
    places = [
        (sha, p)
        for sha in commits
        for p in repository.snapshot(sha).paths()
        if (e := repository.snapshot(sha).entry(p)) is not None and e.kind == "blob"
    ]
    found = derive.regrep(spec, git_dir, places)
    for sha in commits:
        snapshot = repository.snapshot(sha)
        whole = search.grep_matches(spec, snapshot, ["."])  # the tree's grep: the link and the binary file skipped
        assert sorted((p, n) for (s, p), ns in found.items() if s == sha for n in ns) == sorted(whole)
        # The screen never drops a file that has a match.
        words = screen.literals(spec)
        for path in {p for p, _ in whole}:
            entry = snapshot.entry(path)
            assert entry is not None and entry.blob_sha is not None
            data = snapshot.read(entry.blob_sha)
            assert screen.may_match(words, "-i" in spec.flags, screen.Screen(data)), (expression, path)


@pytest.mark.parametrize(
    "expression, words",
    [
        ("search(-F 'a.b|c')", (b"a.b|c",)),
        ("search(-i -E 'TODO|Fixme')", (b"todo", b"fixme")),
        ("search(-E 'agents\\.(create|resume)')", (b"agent",)),  # an alternation inside a group: the beginning
        ("search(-E 'await approv(al|al\\.approver)\\.request\\(')", (b"await approv",)),
        ("search(-E 'a(b|c)|d')", None),  # an alternation at the top level, one side a group
        ("search(-E 'ab(c|d')", None),  # unbalanced: not read
        ("search(-E 'ab[|]c')", None),  # a bracket expression: not read
        ("search(-E 'ab\\|c|d')", None),  # an escaped bar: not read
        ("search(-E 'await approv(al)')", (b"await approv",)),
        ("search(-E 'Servic+e')", (b"Servi",)),  # `c+` may be one c: the letter before a quantifier is dropped
        ("search('new [A-Z]')", (b"new ",)),
        ("search('ab*c')", (b"a",)),
        ("search('^## ')", None),
        ("search(-E 'a||b')", None),  # an empty alternative matches every line
        ("search(-i '待办')", None),  # case folding beyond ASCII is the locale's
        ("search('待办')", ("待办".encode(),)),
    ],
)
def test_the_screen_keeps_only_what_every_match_holds(expression, words):
    assert screen.literals(searches.parse(expression)) == words


def test_under_ignore_case_a_character_that_may_fold_to_ascii_is_grepped(monkeypatch):
    def may(words, ignore_case, data):
        return screen.may_match(words, ignore_case, screen.Screen(data))

    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    assert may((b"k",), True, "\u212a".encode())  # KELVIN SIGN may fold to k
    assert may((b"s",), True, "\u017f".encode())  # LONG S to s
    assert not may((b"k",), True, "xyz \u5f85\u529e".encode())  # Chinese folds to nothing
    assert not may((b"k",), True, b"xyz")
    assert may((b"k",), True, b"XKZ")
    assert not may((b"k",), False, b"XKZ")
    monkeypatch.setenv("LC_ALL", "tr_TR.ISO-8859-9")  # a single-byte locale: any byte past ASCII may fold
    assert may((b"i",), True, b"\xdd")


@given(st.text(alphabet="ab/*.?[]!x", max_size=12), st.lists(st.text(alphabet="ab/*?x:!^", max_size=8), max_size=3))
def test_compiled_pathspecs_select_as_git_does(path, specs):
    """Git's tree walk: a spec selects the path it names and what lies under it, and one
    with wildcards also what it matches as a pattern (without brackets, fnmatch's rule;
    brackets are compared with git itself in the diff-tree test below)."""
    import fnmatch

    def matches(spec: str) -> bool:
        named = path == spec.rstrip("/") or path.startswith(spec.rstrip("/") + "/")
        return named or (any(c in spec for c in "*?[") and fnmatch.fnmatchcase(path, spec))

    includes = [s for s in specs if not s.startswith((":!", ":^"))]
    excludes = [s[2:] for s in specs if s.startswith((":!", ":^"))]
    expected = (not includes or any(matches(s) for s in includes)) and not any(matches(s) for s in excludes)
    assert pathspec.selected(path, tuple(specs)) == expected


@given(st.lists(st.binary(min_size=1, max_size=3), min_size=1, max_size=8), st.binary(max_size=12))
def test_a_trie_of_byte_strings_finds_where_one_of_them_is(sequences, data):
    found = re.compile(screen.alternation(sequences, lambda b: f"\\x{b:02x}").encode()).search(data) is not None
    assert found == any(s in data for s in sequences)


@given(
    st.lists(st.text(alphabet="ab_-/\u00e9", min_size=1, max_size=4), min_size=1, max_size=8),
    st.text(alphabet="ab_-/ A\u00e9", max_size=24),
)
def test_a_trie_of_words_matches_what_the_longest_first_alternation_matches(words, text):
    # The names pass wraps the words in whole-word tests: where a longer word is no whole
    # word, a shorter one at the same place must be tried next, as longest first does.
    def whole(pattern: str) -> re.Pattern[str]:
        return re.compile(rf"(?<![A-Za-z0-9_])(?:{pattern})(?![A-Za-z0-9_])")

    longest_first = "|".join(re.escape(w) for w in sorted(set(words), key=len, reverse=True))
    trie = screen.alternation(words, re.escape)
    assert [m.group() for m in whole(trie).finditer(text)] == [m.group() for m in whole(longest_first).finditer(text)]


def test_a_trie_shares_beginnings_and_brackets_only_single_bytes():
    assert (
        screen.alternation(["start", "snapshot", "seq", "op", "opts"], re.escape)
        == "(?:op(?:ts)?|s(?:eq|napshot|tart))"
    )
    assert screen.alternation(["ab", "ac"], re.escape) == "a[bc]"
    # git greps these as bytes (the C locale): a bracket of two-byte characters would match one byte.
    assert screen.alternation(["x\u00e9", "x\u00e8"], re.escape) == "x(?:\u00e8|\u00e9)"


def test_the_folding_characters_regex_is_the_list_of_them():
    folding = re.compile(screen._FOLDING_PERL.encode())
    assert all(folding.fullmatch(f) for f in screen._FOLDING)
    assert screen._FOLDING_PERL.count("|") < len(screen._FOLDING) - 1  # brackets, not one alternative each


@given(
    st.lists(st.text(alphabet="ab/.x", min_size=1, max_size=8), max_size=30),
    st.lists(st.text(alphabet="ab/*x:!^?[]", max_size=8), max_size=3),
)
def test_selecting_from_a_sorted_tree_by_literal_starts_selects_what_each_path_test_does(paths, specs):
    tree = sorted(set(paths))
    assert pathspec.select(tree, tuple(specs)) == [p for p in tree if pathspec.selected(p, tuple(specs))]


@pytest.mark.parametrize("expression", SEARCHES + ["search(-i 'todo', 'src/**')", "search('x', ':!docs/**')"])
def test_a_search_derived_from_another_commits_matches_is_the_commits_grep(odd_repo, expression, tmp_path, monkeypatch):
    from dshaudit.core.model import Pin
    from dshaudit.platform import cache

    repository, (first, second) = odd_repo
    spec = searches.parse(expression)
    monkeypatch.setenv("DSHAUDIT_CACHE_DIR", str(tmp_path / "derived"))
    cache.begin()
    try:
        search.measure(spec, repository.snapshot(first), Pin("one", first))  # cached at the first commit
        derive.derive_many([spec], repository.snapshot(second), [second, first])
        shard = cache.current().shard("searches", search.VERSION, search._SHAPE)
        derived = shard.get(cache.digest(second, spec.kind, spec.text))
    finally:
        cache.end()
    assert derived is not None
    monkeypatch.setenv("DSHAUDIT_CACHE_DIR", str(tmp_path / "fresh"))
    cache.begin()
    try:
        fresh = search.measure(spec, repository.snapshot(second), Pin("two", second))
    finally:
        cache.end()
    assert [f"{p}:{n}" for p, n in sorted((p, int(n)) for p, n in derived)] == list(fresh.fields["lines"])


def test_searches_measured_together_are_each_the_trees_grep(odd_repo, tmp_path, monkeypatch):
    """Cold searches are screened in one pass over the tree and grepped on the printed
    lines (derive.grep_together): each result is what git grep over the tree says,
    binary and linked files skipped, and no search is grepped over the whole tree."""
    from dshaudit.platform import cache

    repository, (_, second) = odd_repo
    specs = [searches.parse(e) for e in [*SEARCHES, "search(-i 'todo', 'src/**')", "search('x', ':!docs/**')"]]
    snapshot = repository.snapshot(second)
    monkeypatch.setenv("DSHAUDIT_CACHE_DIR", str(tmp_path / "together"))
    cache.begin()
    try:
        with monkeypatch.context() as m:
            m.setattr(search, "grep_matches", lambda *a: pytest.fail("a search was grepped over the whole tree"))
            derive.grep_together(specs, snapshot)
        shard = search.searches_shard()
        stored = {s: shard.get(search.cache_key(s, second)) for s in specs}
    finally:
        cache.end()
    assert all(hits is not None for hits in stored.values()), "grep_together left a search unmeasured"
    together = {s: [(p, int(n)) for p, n in hits] for s, hits in stored.items()}
    for s in specs:
        assert together[s] == sorted(search.grep_matches(s, snapshot, pathspec.git_pathspecs(s.pathspecs))), s.text
    assert any(together.values())


@pytest.mark.parametrize("alone_from", [0, screen._SCREEN_GROUP])  # each group its own process; small ones shared
def test_the_screen_git_runs_passes_what_the_screen_of_the_read_files_passes(
    odd_repo, tmp_path, monkeypatch, alone_from
):
    """grep_screened (git prints the lines with a literal) against screened (Python reads
    each file): the same files, but for binary ones, which a search skips anyway; a
    character that may fold to ASCII passes an -i search, as in the file read whole."""
    from dshaudit.git.repository import DshRepository
    from fixture_repo import _commit, _write, git

    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    monkeypatch.setattr(screen, "_SCREEN_GROUP", alone_from)
    root = tmp_path / "fold"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    _write(root, "a.txt", "a \u212aelvin line\nplain\n")  # KELVIN SIGN: may fold to k under -i
    _write(root, "b.txt", "TODO: x\nnetwork\n")
    _write(root, "c.txt", "nothing to see\n")
    folded = _commit(root, "one", "2026-01-01T00:00:00Z", "one")
    cases = [(odd_repo[0], sha) for sha in odd_repo[1]] + [(DshRepository(root / ".git", str(root / ".git")), folded)]
    specs = [
        searches.parse(e) for e in SEARCHES + ["search(-i 'kelvin')", "search('kelvin')", "search(-i -E 'x|network')"]
    ]
    specs = [s for s in specs if screen.literals(s) is not None]
    for repository, sha in cases:
        snapshot = repository.snapshot(sha)
        files = {
            p: e.blob_sha
            for p in snapshot.paths()
            if (e := snapshot.entry(p)) is not None and e.kind == "blob" and e.blob_sha
        }
        text = {p for p, blob in files.items() if b"\0" not in snapshot.read(blob)[:8000]}
        # Searches want different files (as their pathspecs make them): a file is screened
        # for the literals of the searches that want it, in a process with the files wanted alike.
        paths = sorted(files)
        wanted = {s: [p for j, p in enumerate(paths) if i % 2 == 0 or (i + j) % 3] for i, s in enumerate(specs)}
        printed = screen.grep_screened(wanted, str(repository.repo.git_dir), sha)
        by_blob = screen.screened({s: sorted({files[p] for p in ps}) for s, ps in wanted.items()}, snapshot.read_many)
        assert printed is not None
        by_git = printed.passed
        for s in specs:
            assert by_git[s] == {p for p in text & set(wanted[s]) if files[p] in by_blob[s]}, (s.text, sha)
        # The lines printed of a file that passed are its own lines, under their numbers.
        for p in set().union(*by_git.values()):
            lines = snapshot.read(files[p]).split(b"\n")
            assert printed.lines[p] and all(lines[n - 1] == text for n, text in printed.lines[p]), p
        # The same files named COMMIT:PATH (history's places, of many commits at once): the same answer.
        by_name = screen.grep_screened(
            {s: [f"{sha}:{p}" for p in ps] for s, ps in wanted.items()}, str(repository.repo.git_dir), None
        )
        assert by_name is not None
        assert {s: {n.split(":", 1)[1] for n in names} for s, names in by_name.passed.items()} == by_git
    kelvin = searches.parse("search(-i 'kelvin')")
    found = screen.grep_screened({kelvin: ["a.txt", "c.txt"]}, str(root / ".git"), folded)
    assert found is not None and "a.txt" in found.passed[kelvin]
    monkeypatch.setenv("LC_ALL", "tr_TR.ISO-8859-9")  # any byte past ASCII may fold: the caller reads the files
    assert screen.grep_screened({kelvin: ["a.txt"]}, str(root / ".git"), folded) is None


def test_a_search_made_from_parts_reads_as_written_and_has_an_extended_form():
    made = searches.of(("-w", "-E"), "TODO|FIXME", ("*.ts", "*.tsx"))
    assert made == searches.parse("search(-w -E 'TODO|FIXME', '*.ts', '*.tsx')")
    assert searches.of(("-F",), "it's").text == 'search(-F "it\'s")'
    with pytest.raises(searches.SearchSyntaxError):
        searches.of(("-F",), 'it\'s "quoted"')
    assert searches.extended(made) == "TODO|FIXME"
    assert searches.extended(searches.of(("-i", "-F"), "a.b(c)|d")) == r"a\.b\(c\)\|d"
    assert searches.extended(searches.of(("-i",), "a+b|c")) == r"a\+b\|c"  # a basic regex of plain characters
    with pytest.raises(ValueError):
        searches.extended(searches.of((), "a.b"))  # a basic regex: no extended form is made up


# -- which files changed, for a search derived from another commit ------------------------

CHANGES_SPECS = [
    (),
    ("a",),
    ("a/",),
    ("src/**",),
    ("**/*.ts",),
    ("*.md",),
    ("a?b/*",),
    ("src/*.ts",),
    ("a/c",),
    ("src", ":!src/tests/**"),
    (":!docs/**",),
    (":^*.md", ":!a-b"),
    ("nowhere/",),
    ("docs/*", "*.ts"),
    ("[ab]/*",),
    ("[^a]*",),
    ("[!a]*",),
    ("src/[[:alpha:]]*.ts",),
    ("*",),
    ("a*",),
    ("[x].ts",),
    ("[]x]*",),
    ("*[[:digit:]]*",),
    ("[[:upper:]]*",),
    ("[a-c]/*",),
    ("[c-a]*",),
    ("[-a]*",),
    ("[a-]*",),
    ("a[b",),
    ("[[:nope:]]*",),
    ("[[:alpha]*",),
    ("docs/[!z]*", ":![[:lower:]]*.md"),
]


def test_the_files_a_search_derives_anew_are_those_git_diff_tree_gives_for_its_pathspecs(tmp_path):
    """One `git diff-tree` lists every change; each search's share is picked out in
    Python as git's pathspecs pick it (`select`): the same files as `git diff-tree
    BASE TARGET -- PATHSPECS`, in the same order, for many shapes, brackets too."""
    from fixture_repo import _commit, _write, git

    root = tmp_path / "changes"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    paths = [
        "a.md",
        "a-b/x.ts",
        "a/b.ts",
        "a/c/d.md",
        "a/cd.ts",
        "aXb/y.ts",
        "b/z.ts",
        "src/x.ts",
        "src/tests/y.ts",
        "src/deep/er/w.ts",
        "docs/z.md",
        "docs/sub/q.ts",
        "top.ts",
        "c.md",
    ]
    for p in paths:
        _write(root, p, f"{p} one\n")
    first = _commit(root, "one", "2026-01-01T00:00:00Z", "one")
    for p in paths[::2]:
        _write(root, p, f"{p} two\n")
    for p in (
        "a/c/new.md",
        "src/tests/new.ts",
        "docs/new.ts",
        "new.md",
        "[x].ts",
        "x.ts",
        "]y.md",
        "-z.ts",
        "A9.md",
        "a[b",
        "[c.md",
        ":x.md",
    ):
        _write(root, p, "new\n")
    for p in ("b/z.ts", "docs/z.md"):
        (root / p).unlink()
    second = _commit(root, "two", "2026-01-02T00:00:00Z", "two")
    git_dir = str(root / ".git")
    wanted = {searches.parse("search('x'" + "".join(f", '{p}'" for p in specs) + ")"): first for specs in CHANGES_SPECS}
    changed = derive._changes(wanted, git_dir, second)
    for spec, base in wanted.items():
        out = git(
            root,
            "diff-tree",
            "-r",
            "-z",
            "--raw",
            "--no-renames",
            "--no-abbrev",
            base,
            second,
            "--",
            *pathspec.git_pathspecs(spec.pathspecs),
        )
        fields = out.split("\0")
        expected = [
            (path, meta.split(" ")[1], meta.split(" ")[3]) for meta, path in zip(fields[0::2], fields[1::2]) if meta
        ]
        assert changed[spec] == expected, spec.pathspecs
    assert any(changed.values()) and not all(changed[s] == changed[next(iter(wanted))] for s in wanted)


_line = st.text("aAbB_-. 9é\u212a", max_size=24)  # é: not ASCII; K (Kelvin sign) folds to k
_word = st.text("abAB_ ", min_size=1, max_size=4)


@settings(max_examples=150, deadline=None)
@given(
    mode=st.sampled_from(["-F", "-E", "basic"]),
    flags=st.sets(st.sampled_from(["-i", "-w"])),
    words=st.lists(_word, min_size=1, max_size=3),
    lines=st.lists(_line, min_size=1, max_size=12),
)
@example(mode="-E", flags={"-w"}, words=["ab", "ab_x"], lines=["ab_xy ab", "ab_x", "xab ab_x"])
@example(mode="-E", flags={"-w", "-i"}, words=["a", "ab"], lines=["ab-", "Aba a", "b_A"])
@example(mode="-E", flags={"-w"}, words=["a", "a b"], lines=["a bc", "a b"])  # git never tries `a` at 0
def test_a_search_of_plain_words_matches_the_lines_git_grep_matches(mode, flags, words, lines, tmp_path_factory):
    """line_test answers for the lines of ASCII that git grep is asked about after a
    screen; here it is compared with git itself, -w's retries after a rejected
    place (`ab_x` in `ab_xy ab`) and case folding included. Under -w a line can hold
    a whole word git does not match: in `a bc` it rejects `a b` and moves past `a`."""
    pattern = words[0] if mode != "-E" else "|".join(words)
    asked = searches.Search("search", tuple(sorted(flags)) + ((mode,) if mode != "basic" else ()), pattern, (), "s")
    found = screen.line_test(asked)
    assert found is not None
    folder = tmp_path_factory.mktemp("lines")
    (folder / "f").write_bytes(b"".join(line.encode() + b"\n" for line in lines))
    command, *options = search.grep_args(asked)
    proc = subprocess.run(
        git_run.command([command, "--no-index", *options, "--", "f"]),
        cwd=folder,
        capture_output=True,
        env={**os.environ, "LC_ALL": "C.UTF-8"},
    )
    assert proc.returncode in (0, 1), proc.stderr
    by_git = [int(record.split(b"\0")[1]) for record in proc.stdout.split(b"\n") if record]
    answers = [found(line.encode()) for line in lines]
    if "-i" in flags:
        assert all(a is None for a, line in zip(answers, lines) if "\u212a" in line)
    assert [n for n, a in enumerate(answers, 1) if a] == [n for n in by_git if answers[n - 1] is not None]


def test_only_plain_words_are_answered_without_git(monkeypatch):
    def test(flags, pattern):
        return screen.line_test(searches.Search("search", flags, pattern, (), "s"))

    assert test(("-E",), "agents\\.(create|resume)") is None
    assert test(("-E",), "a||b") is None  # an empty alternative matches every line
    assert test((), "a.b") is None and test((), "a\\|b") is None
    assert test((), "a|b+{c}") is not None  # all plain characters in a basic regex
    assert test(("-F",), "café") is None
    assert test((), "x")(b"\xffx") is None  # not UTF-8: git is asked
    assert test(("-i",), "x") is not None
    monkeypatch.setenv("LC_ALL", "tr_TR.UTF-8")  # `i` and `I` are no pair there
    assert test(("-i",), "x") is None and test((), "x") is not None
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    assert test(("-i",), "k")("\u212a".encode()) is None and test(("-i",), "k")("é K".encode()) is True


@pytest.mark.parametrize("attribute", ["-diff", "binary"])
def test_a_search_reads_text_files_as_text_whatever_attributes_the_user_configures(
    make_repo, fresh_cache, tmp_path, attribute
):
    """git grep -I skips a file whose diff attribute says binary, and a user's attributes file
    (`core.attributesFile`, read in a bare clone too) may say so of any file: a search's count
    would then hang on who runs it. Only what the files hold makes one binary."""
    from dshaudit.core.model import Pin
    from fixture_repo import git

    built = make_repo({"a.ts": "const needle = 1;\n", "b.md": "the needle\n", "c.bin": b"needle\0"})
    attributes = tmp_path / "user-attributes"
    attributes.write_text(f"*.ts {attribute}\n*.md {attribute}\n")
    git(built.root, "config", "core.attributesFile", str(attributes))
    snapshot = built.repository().snapshot(built.shas[0])
    fact = search.measure(searches.parse("search('needle')"), snapshot, Pin("one", built.shas[0]))
    assert list(fact.fields["lines"]) == ["a.ts:1", "b.md:1"]


@pytest.mark.parametrize(
    "variable", ["GIT_LITERAL_PATHSPECS", "GIT_GLOB_PATHSPECS", "GIT_NOGLOB_PATHSPECS", "GIT_ICASE_PATHSPECS"]
)
def test_a_search_selects_the_same_files_whatever_pathspec_variables_the_environment_sets(
    make_repo, fresh_cache, monkeypatch, variable
):
    """Each of these variables changes what every pathspec of a git command means (all
    literal, `*` stopping at `/`, no wildcards at all, any case): a search's pathspecs
    would select other files on the machine of a user who sets one."""
    from dshaudit.core.model import Pin

    built = make_repo({"a.ts": "needle\n", "src/deep/b.ts": "needle\n", "Src/c.ts": "needle\n", "d.md": "needle\n"})
    snapshot = built.repository().snapshot(built.shas[0])
    monkeypatch.setenv(variable, "1")
    fact = search.measure(searches.parse("search('needle', '*.ts', ':!Src/**')"), snapshot, Pin("one", built.shas[0]))
    assert list(fact.fields["lines"]) == ["a.ts:1", "src/deep/b.ts:1"]
