"""Names and quoted code checked at a pin: every status, exemptions, absence
claims, the cache, and structural matching, on a tiny DSH-shaped repository."""

from __future__ import annotations

import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from dshaudit.checking.mentions import absent_claims, defined_in_code_blocks, document_exemptions, document_names
from dshaudit.checking.plans import classify
from dshaudit.checking.references import check_references
from dshaudit.core.model import LineRange, Pin, SourceLocation
from dshaudit.core.references import Reference, ReferenceStatus
from dshaudit.documents.names import CODE, DOTTED, IDENTIFIER, PACKAGE, STRING, Name
from dshaudit.git.grep import EMPTY_TREE
from dshaudit.git.repository import DshRepository
from dshaudit.index import namegrep, nameindex, quoted
from dshaudit.index.namehistory import NameHistory
from dshaudit.lang import matching
from dshaudit.lang.fragments import parse_fragment
from dshaudit.platform import cache
from fixture_repo import _commit, _write, git

AGENT = """\
export const LIMIT = 0
export const DEFAULT_TIMEOUT_MS = 10 * 60 * 1000

export interface AgentFactory {
  create(): void
  readonly timedOut: boolean
}

export class AgentRegistry {
  private factory?: AgentFactory

  setFactory(factory: AgentFactory): () => void {
    this.factory = factory
    return () => {
      this.factory = undefined
    }
  }
}

export const marker = Object.freeze({ kind: 'plugin', plugin: 'compact', extra: 1 } as const)

export function emit(session: Session, seq: number) {
  session.append("user/message", { surfaceOp: 'append', sourceEventSeqs: [seq] })
}
"""

LEGACY = "export function legacyHelper() {\n  return 'old'\n}\n"
GUIDE = "# Guide\n\nMount it with `ctx.plugin(Loader)`; the registry does the rest.\nA loader is a plugin.\n"
PACKAGE_JSON = '{\n  "name": "@dsh/agent",\n  "version": "1.0.0",\n  "private": true\n}\n'


@pytest.fixture(scope="module")
def dsh(tmp_path_factory):
    """Three commits: v1 has everything, v2 deletes legacy.ts, v3 adds a note. Pin: v3."""
    base = tmp_path_factory.mktemp("refs")
    root = base / "dsh"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    _write(root, "packages/core/agent/src/index.ts", AGENT)
    _write(root, "packages/core/agent/src/legacy.ts", LEGACY)
    _write(root, "packages/core/agent/package.json", PACKAGE_JSON)
    _write(root, "docs/guide.md", GUIDE)
    shas = {"v1": _commit(root, "v1: the agent package", "2026-08-01T10:00:00Z", "v1")}
    git(root, "rm", "-q", "packages/core/agent/src/legacy.ts")
    shas["v2"] = _commit(root, "drop the legacy helper", "2026-08-02T10:00:00Z", "v2")
    _write(root, "docs/notes.txt", "nothing to see\n")
    shas["v3"] = _commit(root, "v3: notes", "2026-08-03T10:00:00Z", "v3")
    return root, shas


@pytest.fixture
def snap(dsh, tmp_path, monkeypatch):
    """The v3 snapshot, with a fresh cache for this test and no index in memory."""
    root, shas = dsh
    monkeypatch.setenv("DSHAUDIT_CACHE_DIR", str(tmp_path / "cache"))
    nameindex.forget()
    cache.begin()
    yield DshRepository(root / ".git", "fixture").snapshot(shas["v3"])
    cache.end()
    nameindex.forget()


@pytest.fixture(params=["perl", "extended"])
def regexes(request, monkeypatch):
    """Run a test with git's Perl regexes, and again as with a git built without them."""
    if request.param == "extended":
        monkeypatch.setattr(namegrep.CommitGrep, "perl", lambda self: False)
    return request.param


def where(line: int = 1) -> SourceLocation:
    return SourceLocation("f.md", line, 1)


def check(
    snapshot,
    *texts: str,
    kind: str = CODE,
    exempt: set[str] | None = None,
    absent: list[str] | None = None,
    history: bool = True,
) -> list[Reference]:
    items = [(Name(t, kind, 0, len(t)), where(i + 1)) for i, t in enumerate(texts)]
    claims = [(a, where(100 + i)) for i, a in enumerate(absent or [])]
    return check_references(items, snapshot, exempt=exempt or set(), absent=claims, history=history)


def one(snapshot, text: str, **kw) -> Reference:
    refs = check(snapshot, text, **kw)
    assert len(refs) == 1, refs
    return refs[0]


# -- names -------------------------------------------------------------------------


def test_a_name_that_occurs_is_ok(snap):
    for text in ("AgentRegistry", "setFactory()", "AgentRegistry.setFactory", "'user/message'"):
        assert one(snap, text).status is ReferenceStatus.OK, text
    assert one(snap, "@dsh/agent@1.0.0", kind=PACKAGE).status is ReferenceStatus.OK


def test_a_name_found_only_inside_a_longer_one_is_phantom(snap):
    ref = one(snap, "Registry")
    assert ref.status is ReferenceStatus.PHANTOM
    assert one(snap, "agentregistry").status is ReferenceStatus.PHANTOM  # case-sensitive


def test_a_name_that_never_existed_is_phantom_and_says_what_was_searched(snap):
    ref = one(snap, "neverExistedName")
    assert ref.status is ReferenceStatus.PHANTOM
    assert "occurs nowhere at" in ref.message
    assert "any of the 3 first-parent commits" in ref.message
    assert not one(snap, "neverExistedName", history=False).message.endswith(")")


def test_a_deleted_name_names_the_commit_that_deleted_it(snap, dsh):
    _, shas = dsh
    ref = one(snap, "legacyHelper")
    assert ref.status is ReferenceStatus.DELETED
    assert f"deleted at {shas['v2'][:8]} 2026-08-02" in ref.message
    assert "drop the legacy helper" in ref.message


def test_a_history_is_read_ahead_only_for_a_missing_name_the_check_reports(snap, monkeypatch):
    """A name missing at the pin has its history read at once, beside the rest of the check,
    unless the check leaves it out (a word of the document's own shell blocks)."""
    started = []
    read_ahead = NameHistory.start
    monkeypatch.setattr(NameHistory, "start", lambda self, *a: (started.append(self.sha), read_ahead(self, *a))[1])
    items = [(Name("ShellOnlyField", CODE, 0, 14), where())]
    assert check_references(items, snap, exempt=set(), absent=[], commands=frozenset({"ShellOnlyField"})) == []
    assert started == []
    [ref] = check_references(items, snap, exempt=set(), absent=[], commands=frozenset())
    assert ref.status is ReferenceStatus.PHANTOM and started == [snap.sha]


def test_a_dotted_name_needs_every_component(snap):
    ref = one(snap, "AgentRegistry.nope", kind=DOTTED)
    assert ref.status is ReferenceStatus.PHANTOM
    assert "`nope`" in ref.message


def test_what_is_not_a_name_is_not_checked(snap):
    texts = (
        "git grep -n foo",
        "index.ts",
        "600_000",
        "rc7..rc2",
        "log-only prose",
        "{ts,tsx}",
        "session.events[seq]",
        "claim: x.y == 3",
        "1234567",  # a number, not a commit
    )
    assert check(snap, *texts) == []
    # In running prose a quoted plain word is a quotation, not code.
    assert check(snap, "deletes", "No privileged core", kind=STRING) == []
    assert one(snap, "user/message", kind=STRING).status is ReferenceStatus.OK


def test_classification():
    def plan(text, kind=CODE):
        p = classify(Name(text, kind, 0, len(text)))
        return None if p is None else (p.kind, p.lookups, p.fragment.kind if p.fragment else None)

    assert plan("AgentRegistry", IDENTIFIER) == ("identifier", ("AgentRegistry",), None)
    assert plan("ctx.plugin()") == ("dotted", ("ctx", "plugin"), None)
    assert plan("SubagentListEntry[]") == ("identifier", ("SubagentListEntry",), None)
    assert plan("@scope/name@1.2.3", PACKAGE) == ("package", ("@scope/name",), None)
    assert plan("dsh-compaction-basic") == ("string", ("dsh-compaction-basic",), None)
    assert plan('"tool/start"') == ("string", ("tool/start",), None)
    assert plan("LIMIT = 3") == ("fragment", (), "binding")
    assert plan("{ kind: 'x' }") == ("fragment", (), "object")
    assert plan("ctx.plugin(Loader)") == ("fragment", (), "expression")
    assert plan("absent: ollama") is None
    assert plan("wc -l") is None


def test_a_name_written_again_is_classified_once_and_a_path_keeps_its_own_folder() -> None:
    """The language server classifies every name of a document at each keystroke: the same
    text is one plan (its fragment one verdict), wherever it is written; a relative path's
    folder is its own."""
    quoted_code = "registry.get(name).start()"
    first = classify(Name(quoted_code, CODE, 0, len(quoted_code)))
    assert first is not None and first.fragment is not None
    assert classify(Name(quoted_code, CODE, 40, 40 + len(quoted_code))) is first
    in_a = classify(Name("src/x.ts", CODE, 0, 8, folder="packages/a"))
    in_b = classify(Name("src/x.ts", CODE, 0, 8, folder="packages/b"))
    assert in_a is not None and in_b is not None
    assert (in_a.folder, in_b.folder) == ("packages/a", "packages/b")


# -- fragments ---------------------------------------------------------------------


def test_a_binding_compares_with_the_declared_value(snap):
    ok = one(snap, "LIMIT = 0")
    assert ok.status is ReferenceStatus.OK
    assert ok.place == ("packages/core/agent/src/index.ts", LineRange(1, 1))
    assert one(snap, "const LIMIT = 0").status is ReferenceStatus.OK
    differs = one(snap, "LIMIT = 3")
    assert differs.status is ReferenceStatus.VALUE_DIFFERS
    assert differs.message == "`LIMIT` is 0 at packages/core/agent/src/index.ts:1, not 3"
    assert differs.place == ("packages/core/agent/src/index.ts", LineRange(1, 1))
    # Numbers compare by value: 600_000 is 10 * 60 * 1000.
    assert one(snap, "DEFAULT_TIMEOUT_MS = 600_000").status is ReferenceStatus.OK
    assert one(snap, "DEFAULT_TIMEOUT_MS = 60_000").status is ReferenceStatus.VALUE_DIFFERS


def test_a_binding_of_a_name_that_occurs_nowhere_is_phantom(snap):
    assert one(snap, "NO_SUCH_LIMIT = 3").status is ReferenceStatus.PHANTOM


def test_key_value_compares_with_object_entries_and_typed_properties(snap):
    assert one(snap, "surfaceOp: 'append'").status is ReferenceStatus.OK
    assert one(snap, 'surfaceOp: "append",').status is ReferenceStatus.OK
    differs = one(snap, "surfaceOp: 'replace'")
    assert differs.status is ReferenceStatus.VALUE_DIFFERS
    assert "`surfaceOp` is 'append' at packages/core/agent/src/index.ts:23" in differs.message
    assert one(snap, "timedOut: boolean").status is ReferenceStatus.OK
    assert one(snap, '"private": true').status is ReferenceStatus.OK  # JSON


def test_objects_match_as_subsets_whatever_the_spelling(snap):
    for text in (
        "{ kind: 'plugin', plugin: 'compact' }",
        '{plugin:"compact",kind:"plugin",}',
        "{ kind: 'plugin',\n   plugin: 'compact', … }",
        "kind: 'plugin', plugin: 'compact'",
    ):
        ref = one(snap, text)
        assert ref.status is ReferenceStatus.OK, text
        assert ref.place == ("packages/core/agent/src/index.ts", LineRange(20, 20))


def test_an_object_with_a_key_the_code_lacks_matches_nothing(snap):
    ref = one(snap, "{ kind: 'plugin', plugin: 'compact', nope: 2 }")
    assert ref.status is ReferenceStatus.NO_MATCH
    assert "`nope`" in ref.message
    assert one(snap, "{ kind: 'plugin', plugin: 'other' }").status is ReferenceStatus.NO_MATCH
    assert one(snap, "{ kind: 'plugin', extra: 2 }").status is ReferenceStatus.NO_MATCH


def test_calls_and_assignments_match_by_structure(snap):
    assert one(snap, "session.append('user/message', X)").status is ReferenceStatus.OK
    assert one(snap, "session.append('user/message')").status is ReferenceStatus.OK  # leading arguments
    assert one(snap, "append('user/message', { surfaceOp: 'append' })").status is ReferenceStatus.OK
    assert one(snap, "session.append('assistant/message', X)").status is ReferenceStatus.NO_MATCH
    assert one(snap, "this.factory = factory").status is ReferenceStatus.OK
    assert one(snap, "this.factory = null").status is ReferenceStatus.VALUE_DIFFERS


def test_code_quoted_from_a_document_matches_its_text(snap):
    ref = one(snap, "ctx.plugin(Loader)")
    assert ref.status is ReferenceStatus.OK
    assert ref.place == ("docs/guide.md", LineRange(3, 3))


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=120))
def test_the_fragment_parser_never_raises(text):
    fragment = parse_fragment(text)
    assert fragment is None or fragment.kind in ("object", "binding", "expression")


@settings(max_examples=100, deadline=None)
@given(st.from_regex(r"[{(\[]?[ a-z:'\",=.()\[\]{}0-9_…-]{0,40}", fullmatch=True))
def test_the_fragment_parser_never_raises_on_code_like_text(text):
    parse_fragment(text)


# -- exemptions and absence claims -------------------------------------------------------


def test_names_the_document_introduces_are_ok(snap):
    ref = one(snap, "myTool", exempt={"myTool"})
    assert ref.status is ReferenceStatus.OK
    assert ref.message == "introduced by this document"
    assert one(snap, "myTool.run", kind=DOTTED, exempt={"myTool"}).status is ReferenceStatus.OK
    assert one(snap, "MY_LIMIT = 3", exempt={"MY_LIMIT"}).status is ReferenceStatus.OK


def test_exemptions_from_front_matter_and_code_blocks():
    text = (
        "---\npin: v1\nintroduces: [my_tool, otherName]\n---\n\nProse.\n\n"
        "```ts\nexport const HELPER_LIMIT = 3\nclass Widget { render() {} }\n```\n\n"
        "```yaml\nnot_code: 1\n```\n"
    )
    assert defined_in_code_blocks(text) >= {"HELPER_LIMIT", "Widget", "Widget.render", "render"}
    assert "not_code" not in defined_in_code_blocks(text)
    assert document_exemptions(text) >= {"my_tool", "otherName", "HELPER_LIMIT"}


def test_absence_claims_are_verified(snap, regexes):
    refs = check(snap, absent=["ollama", "Loader", "loader", "registry"])
    by_text = {r.text: r for r in refs}
    assert by_text["ollama"].status is ReferenceStatus.ABSENT_CONFIRMED
    assert by_text["ollama"].kind == "absence"
    # Smart case: a capital makes the claim exact; none makes it any case.
    assert by_text["Loader"].status is ReferenceStatus.PRESENT  # `ctx.plugin(Loader)` in the guide
    assert by_text["loader"].status is ReferenceStatus.PRESENT
    present = by_text["registry"]
    assert present.status is ReferenceStatus.PRESENT
    assert present.message == "`registry` occurs at docs/guide.md:3"
    assert present.place == ("docs/guide.md", LineRange(3, 3))
    # A path that holds the name refutes the claim too: the first three of them, then lines.
    by_text = {r.text: r for r in check(snap, absent=["notes", "agent"])}
    assert by_text["notes"].message == "`notes` occurs at docs/notes.txt (path)"
    assert by_text["agent"].message == (
        "`agent` occurs at packages/core/agent/package.json (path), "
        "packages/core/agent/package.json:2, packages/core/agent/src/index.ts (path)"
    )


@pytest.mark.parametrize("text", ["agent", "packages", "core", "ts", "nowhere", "Agent"])
@pytest.mark.parametrize("limit", [0, 1, 3, 50])
@pytest.mark.parametrize("fold", [True, False])
def test_the_paths_that_refute_an_absence_claim_are_the_first_of_all_that_hold_it(snap, text, limit, fold):
    """The search over the paths stops once it has `limit` of them: the same paths, in
    the same order, as every path that holds the word, cut there."""
    import re

    index = nameindex.index_for(snap)
    word = re.compile(rf"(?<![A-Za-z0-9_]){re.escape(text)}(?![A-Za-z0-9_])", re.IGNORECASE if fold else 0)
    every = [p for p in snap.paths() if word.search(p)]
    assert index.absences.paths_holding(text, fold, limit) == every[:limit]


class _Listed:
    """A snapshot that only lists paths: all `paths_holding` asks of one."""

    sha = "0" * 40
    repository = SimpleNamespace(git_dir=".")

    def __init__(self, paths: list[str]):
        self._list = paths

    def paths(self) -> list[str]:
        return self._list


_ASCII_CHARS = list("aAkKsS_-./0i")
_PATH_CHARS = st.sampled_from(_ASCII_CHARS + list("\u212a\u017f\u0130\u00e9"))


@settings(max_examples=400, deadline=None)
@given(
    paths=st.one_of(
        st.lists(st.text(st.sampled_from(_ASCII_CHARS), min_size=1, max_size=8), max_size=8, unique=True),
        st.lists(st.text(_PATH_CHARS, min_size=1, max_size=8), max_size=8, unique=True),
    ),
    text=st.text(_PATH_CHARS, min_size=1, max_size=3),
    fold=st.booleans(),
    limit=st.integers(0, 4),
)
@example(paths=["ba-a-a"], text="a-a", fold=False, limit=3)  # the first place is no word, the one inside it is
@example(paths=["s", "x"], text="\u017f", fold=True, limit=3)  # long s folds to s, though it has no lower case
def test_the_paths_holding_a_word_are_those_its_pattern_finds_in_each_path(paths, text, fold, limit):
    """Found as a plain string first, the word is held by the same paths as its
    pattern finds one path at a time: overlapping places (`aa` in `aaa_aa`),
    words at a path's edges, and letters that fold to ASCII ones under the
    pattern's case folding (the Kelvin sign, long s, dotted capital I)."""
    import re

    index = nameindex.NameIndex(_Listed(sorted(paths)))  # type: ignore[arg-type]
    word = re.compile(rf"(?<![A-Za-z0-9_]){re.escape(text)}(?![A-Za-z0-9_])", re.IGNORECASE if fold else 0)
    every = [p for p in sorted(paths) if word.search(p)]
    assert index.absences.paths_holding(text, fold, limit) == every[:limit]


def test_an_absence_claim_with_no_capital_is_found_in_any_case(snap, regexes):
    """`loader` is refuted by `Loader` on line 3 as by `loader` on line 4: the pass
    looks for it in any case, not only for the case the claim is written in."""
    [claim] = check(snap, absent=["loader"])
    assert claim.message == "`loader` occurs at docs/guide.md:3, docs/guide.md:4"


def test_a_name_the_document_claims_absent_is_not_a_phantom(snap, regexes):
    refs = check(snap, "ollamaClient", "ollama", absent=["ollama"])
    assert [(r.text, r.status) for r in refs] == [
        ("ollamaClient", ReferenceStatus.PHANTOM),
        ("ollama", ReferenceStatus.OK),
        ("ollama", ReferenceStatus.ABSENT_CONFIRMED),
    ]


def test_absence_claims_in_a_document():
    text = "---\npin: v1\n---\n\nThere is no `absent: ollama` support.\n\n```md\n`absent: hidden`\n```\n"
    assert absent_claims(text) == [("ollama", 5, 13)]


# -- documents ------------------------------------------------------------------------


def test_document_names_skip_citations_anchors_claims_and_absence_claims():
    text = (
        "---\npin: v1\n---\n\n# Title\n\n"
        "`AgentRegistry.setFactory` is set (`packages/a.ts:3` → `setFactory(f)` + `more`),\n"
        "see `claim: x.count == 3` and `absent: ollama`; persist_session is a name.\n\n"
        "```ts\nconst inBlock = 1\n```\n"
    )
    names = [(n.text, n.kind, line, col) for n, line, col in document_names(text)]
    assert names == [
        ("AgentRegistry.setFactory", CODE, 7, 1),
        ("persist_session", IDENTIFIER, 8, 49),
    ]
    n = document_names(text)[1][0]
    assert text[n.start : n.end] == "persist_session"


# -- the cache --------------------------------------------------------------------------


def test_a_second_lookup_reads_nothing_from_git(snap, dsh, monkeypatch, tmp_path):
    texts = (
        "AgentRegistry",
        "neverExistedName",
        "legacyHelper",
        "LIMIT = 3",
        "{ kind: 'plugin' }",
        "ctx.plugin(Loader)",
    )
    first = check(snap, *texts, absent=["ollama", "registry"])
    cache.end()  # written to disk
    nameindex.forget()
    cache.begin()
    root, shas = dsh
    snapshot = DshRepository(root / ".git", "fixture").snapshot(shas["v3"])
    snapshot.index()  # the tree's listing, by which the cache finds each file's blob, is no lookup

    def no_git(*args, **kwargs):
        raise AssertionError(f"git was run: {args}")

    monkeypatch.setattr(subprocess, "run", no_git)
    monkeypatch.setattr(subprocess, "Popen", no_git)
    monkeypatch.setattr(type(snapshot), "read_many", no_git)
    second = check(snapshot, *texts, absent=["ollama", "registry"])
    assert second == first


def test_one_pass_looks_up_every_name(snap, regexes):
    index = nameindex.index_for(snap)
    check(snap, "AgentRegistry", "setFactory", "LIMIT", "'user/message'", "@dsh/agent", kind=CODE, history=False)
    assert index.git_calls == 1  # names with other characters share the word names' pass


def test_one_pass_finds_each_name_where_a_search_for_it_alone_does(tmp_path, monkeypatch, regexes):
    """Names that overlap in the text (`dsh`, `dsh-base`, `@scope/dsh-base`,
    `scope`) are found in every file a `git grep -w` for each alone finds."""
    root, sha = _repository(
        tmp_path,
        {
            "docs/x.md": "Try dsh-basement now, or dsh-base.\n",
            "src/y.ts": "import z from '@scope/dsh-base'\n",
            "src/w.ts": "const dshBase = 'scope:dsh-base-2'\n",
            "src/v.ts": "// subagent-reports, workspace:^1, tool/start/x\n",
            "src/u.ts": "// subagent-report: workspace:^ tool/start\n",
        },
    )
    snapshot = _at(root, sha, tmp_path / "cache", monkeypatch)
    names = [
        "dsh",
        "dsh-base",
        "@scope/dsh-base",
        "scope",
        "base",
        "dsh-basement",
        "subagent",
        "subagent-report",
        "workspace",
        "workspace:^",
        "tool/start",
        "start",
        "tool",
    ]

    def agrees(snapshot, sha):
        found = nameindex.index_for(snapshot).paths(names)
        cache.end()
        for name in names:
            alone = (
                subprocess.run(
                    ["git", "-C", str(root), "grep", "-l", "-w", "-F", "-e", name, sha], capture_output=True, text=True
                )
                .stdout.replace(f"{sha}:", "")
                .split()
            )
            assert found[name] == set(alone), name

    agrees(snapshot, sha)
    # The same at a next commit, indexed from this one: only the changed files are searched.
    _write(root, "src/v.ts", "// subagent-reports; dsh-basement\n")
    _write(root, "src/t.ts", "// subagent-report, @scope/dsh-base-x, tool/start\n")
    (root / "src/u.ts").unlink()
    c2 = _commit(root, "c2", "2026-08-02T10:00:00Z", "c2")
    snapshot = _at(root, c2, tmp_path / "cache", monkeypatch)
    agrees(snapshot, c2)
    assert nameindex.index_for(snapshot).base == sha


# -- a new commit, from one already indexed ----------------------------------------------

KEEP = "export const epsilon = 1\nexport const marker = { kind: 'kept', extra: 2 }\n"


@pytest.fixture(scope="module")
def moving(tmp_path_factory):
    """Two commits: c2 edits a.ts (beta goes, alpha stays), adds c.ts (zeta, newword)
    and leaves keep.ts and docs/guide.md as they were."""
    root = tmp_path_factory.mktemp("moving") / "dsh"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    _write(root, "src/a.ts", "export const alpha = 1\nexport const beta = { kind: 'moved' }\n")
    _write(root, "src/keep.ts", KEEP)
    _write(root, "docs/guide.md", "Send tool/start first.\n")
    c1 = _commit(root, "c1", "2026-08-01T10:00:00Z", "c1")
    _write(root, "src/a.ts", "export const alpha = 2\nexport const moved = { kind: 'moved' }\n")
    _write(root, "src/c.ts", "export const zeta = 'newword'\n")
    c2 = _commit(root, "c2", "2026-08-02T10:00:00Z", "c2")
    return root, c1, c2


MOVING_TEXTS = (
    "epsilon",
    "alpha",
    "beta",
    "zeta",
    "'tool/start'",
    "{ kind: 'kept' }",
    "{ kind: 'moved' }",
    "alpha = 2",
    "marker = 3",
)
MOVING_ABSENT = ["ollama", "newword", "Epsilon"]


def _at(root, sha, cache_dir, monkeypatch):
    monkeypatch.setenv("DSHAUDIT_CACHE_DIR", str(cache_dir))
    nameindex.forget()
    cache.begin()
    return DshRepository(root / ".git", "fixture").snapshot(sha)


def _repository(tmp_path, files: dict[str, str]) -> tuple[Path, str]:
    """A repository with these files in one commit: its folder and the commit."""
    root = tmp_path / "dsh"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    for rel, text in files.items():
        _write(root, rel, text)
    return root, _commit(root, "c", "2026-08-01T10:00:00Z", "c")


def _reads(snapshot, monkeypatch) -> list[str]:
    """The blob ids read through snapshots from here on, one at a time or in batches."""
    read: list[str] = []
    read_many, read_one = type(snapshot).read_many, type(snapshot).read
    monkeypatch.setattr(type(snapshot), "read_many", lambda self, ids: read.extend(ids) or read_many(self, ids))
    monkeypatch.setattr(type(snapshot), "read", lambda self, blob: read.append(blob) or read_one(self, blob))
    return read


def _results(refs):
    return [(r.text, r.status, r.message, r.place) for r in refs]


def test_a_new_commit_is_indexed_from_one_in_the_cache(moving, tmp_path, monkeypatch, regexes):
    root, c1, c2 = moving
    cold = _results(check(_at(root, c2, tmp_path / "cold", monkeypatch), *MOVING_TEXTS, absent=MOVING_ABSENT))
    cache.end()
    check(_at(root, c1, tmp_path / "warm", monkeypatch), *MOVING_TEXTS, absent=MOVING_ABSENT)
    cache.end()
    snapshot = _at(root, c2, tmp_path / "warm", monkeypatch)
    started: list[list[str]] = []
    popen = subprocess.Popen

    def recording(args, *a, **kw):
        args = list(args)
        if "grep" in args and "--cached" in args:  # the files an index lists: recorded as pathspecs
            lister = popen(["git", args[1], "ls-files", "-z"], env=kw["env"], stdout=subprocess.PIPE)
            started.append([*args, "--", *lister.communicate()[0].decode().split("\0")[:-1]])
        else:
            started.append(args)
        return popen(args, *a, **kw)

    monkeypatch.setattr(subprocess, "Popen", recording)
    derived = _results(check(snapshot, *MOVING_TEXTS, absent=MOVING_ABSENT))
    cache.end()
    assert derived == cold
    assert nameindex.index_for(snapshot).base == c1
    # Only the changed files were searched, and `epsilon`, found by c1 in an
    # unchanged file, was not searched for at all.
    # -q is the history search; the empty tree, the probe for -P
    greps = [args for args in started if "grep" in args and "-q" not in args and EMPTY_TREE not in args]
    assert greps and all(args[args.index("--") + 1 :] == ["src/a.ts", "src/c.ts"] for args in greps)
    assert not any("epsilon" in a for args in greps for a in args)
    by_text = {r[0]: r[1] for r in derived}
    assert by_text["beta"] is ReferenceStatus.DELETED and by_text["zeta"] is ReferenceStatus.OK
    assert by_text["newword"] is ReferenceStatus.PRESENT and by_text["ollama"] is ReferenceStatus.ABSENT_CONFIRMED


def test_fragments_at_a_new_commit_read_only_the_files_that_changed(moving, tmp_path, monkeypatch):
    root, c1, c2 = moving
    check(_at(root, c1, tmp_path / "cache", monkeypatch), "{ kind: 'kept' }", "{ kind: 'moved' }")
    cache.end()
    snapshot = _at(root, c2, tmp_path / "cache", monkeypatch)
    blobs = snapshot.blob_ids()
    read = _reads(snapshot, monkeypatch)
    kept, moved = check(snapshot, "{ kind: 'kept' }", "{ kind: 'moved' }")
    cache.end()
    assert kept.message == "matches src/keep.ts:2" and moved.message == "matches src/a.ts:2"
    assert blobs["src/keep.ts"] not in read  # its answer for `{ kind: 'kept' }` is cached by blob
    assert blobs["src/a.ts"] in read


# -- output -------------------------------------------------------------------------------


def test_a_reference_as_json_and_as_a_diagnostic(snap):
    ref = one(snap, "LIMIT = 3")
    assert ref.as_dict() == {
        "source": {"file": "f.md", "line": 1, "column": 1},
        "text": "LIMIT = 3",
        "kind": "fragment",
        "status": "value_differs",
        "message": "`LIMIT` is 0 at packages/core/agent/src/index.ts:1, not 3",
    }
    pin = Pin("v3", snap.sha)
    d = ref.diagnostic(pin, "https://example.invalid/dsh")
    assert d.kind == "reference"
    assert d.target == "`LIMIT = 3`@v3"
    assert d.identity == ("reference", "LIMIT = 3")
    assert d.payload == ref.as_dict()
    assert d.fails()
    assert [p.url for p in d.places] == [
        f"https://example.invalid/dsh/blob/{snap.sha}/packages/core/agent/src/index.ts#L1"
    ]
    assert one(snap, "neverExisted_name").diagnostic(pin, "https://x.invalid").places == ()


def test_statuses_know_their_behaviour():
    failing = {s for s in ReferenceStatus if s.severity.fails()}
    assert failing == {
        ReferenceStatus.PHANTOM,
        ReferenceStatus.DELETED,
        ReferenceStatus.VALUE_DIFFERS,
        ReferenceStatus.NO_MATCH,
        ReferenceStatus.PRESENT,
        ReferenceStatus.DECLARED_ELSEWHERE,
    }
    assert not ReferenceStatus.NOT_DECLARED.fails() and ReferenceStatus.NOT_DECLARED.is_rule  # a warning
    for s in failing:
        assert s.short and s.help and s.is_rule
        assert s.family == "reference"
    assert not ReferenceStatus.OK.fails() and not ReferenceStatus.ABSENT_CONFIRMED.fails()
    assert {s.value for s in ReferenceStatus} >= {"ok", "phantom", "deleted", "value_differs", "no_match"}


def test_document_text_never_reaches_git_as_an_option(snap, tmp_path):
    out = tmp_path / "written"
    for text in (f"--output={out}", "-S--all", "--exec=touch", "--open-files-in-pager=touch"):
        refs = check(snap, f"'{text}'") + check(snap, absent=[text])
        assert [r.status for r in refs] == [ReferenceStatus.PHANTOM, ReferenceStatus.ABSENT_CONFIRMED]
    assert not out.exists()


# -- paths -------------------------------------------------------------------------


def test_a_path_of_the_tree_is_ok_as_a_file_or_a_folder(snap):
    ref = one(snap, "packages/core/agent/src/index.ts")
    assert (ref.status, ref.kind) == (ReferenceStatus.OK, "path") and "a file at" in ref.message
    assert "a folder at" in one(snap, "packages/core/agent/").message


def test_a_path_removed_before_the_pin_names_the_commit(snap, dsh):
    _, shas = dsh
    ref = one(snap, "packages/core/agent/src/legacy.ts")
    assert ref.status is ReferenceStatus.DELETED
    assert f"removed at {shas['v2'][:8]} 2026-08-02" in ref.message and "drop the legacy helper" in ref.message


def test_a_path_that_never_was_is_phantom_and_names_files_of_its_name(snap):
    ref = one(snap, "packages/agent/src/index.ts")
    assert ref.status is ReferenceStatus.PHANTOM
    assert "a file of that name is at packages/core/agent/src/index.ts" in ref.message
    assert "any of the 3 first-parent commits" in ref.message


def test_paths_outside_the_trees_root_folders_and_counted_paths_are_not_flagged(snap):
    # `src/` and `~/.config` are no folder at the root of this tree: not taken as its paths.
    assert check(snap, "src/other.ts", "internal/plugin", "~/.config/dsh/config.json", "../shared/x.md") == []
    doc = "The UI is gone: `packages/ui/` (`claim: files('packages/ui/').count == 0`)."
    ref = one(snap, "packages/ui/", exempt=document_exemptions(doc))
    assert ref.status is ReferenceStatus.OK and "files(...)" in ref.message
    assert one(snap, "packages/ui/").status is ReferenceStatus.PHANTOM


def test_a_relative_path_after_a_package_path_is_looked_for_in_that_package(snap):
    doc = (
        "Both live in the agent package: `packages/core/agent/src/index.ts` and `src/legacy.ts`, "
        "and `packages/core/agent/package.json` 与 `src/index.ts`.\n"
    )
    items = [(n, where(line)) for n, line, _ in document_names(doc)]
    refs = {r.text + str(r.source.column): r for r in check_references(items, snap, exempt=set(), absent=[])}
    statuses = [(r.text, r.status) for r in sorted(refs.values(), key=lambda r: r.source.column)]
    assert [s for _, s in statuses] == [
        ReferenceStatus.OK,
        ReferenceStatus.PHANTOM,
        ReferenceStatus.OK,
        ReferenceStatus.OK,
    ]
    gone = next(r for r in refs.values() if r.status is ReferenceStatus.PHANTOM)
    assert "in no folder of `packages/core/agent/src`" in gone.message and "removed" not in gone.message
    found = [r for r in refs.values() if r.text == "src/index.ts"][0]
    assert "read as packages/core/agent/src/index.ts" in found.message
    # Not joined to a path before it: not taken as DSH's.
    lone = [(n, where(1)) for n, _, _ in document_names("See `src/legacy.ts` for how.\n")]
    assert check_references(lone, snap, exempt=set(), absent=[]) == []


@pytest.mark.parametrize("path", ["a.ts", "a.tsx"])
def test_quoted_code_is_looked_for_among_the_nodes_a_walk_of_the_tree_would_visit(path):
    """Candidate nodes come from a tree-sitter query, not a walk in Python: the same
    nodes, in the same order, for a type that is also a keyword (`string`, `object`),
    for the types a binding is declared by, and inside code that does not parse."""
    from dshaudit.lang.symbols import parse, walk

    source = (
        b"type T = { a: string; b?: object };\n"
        b"const x: T = { a: 'string', b: { c: 1, d } };\n"
        b"class K { e: number = 2; f(g: string, h?: object) { this.i = [g, h]; } }\n"
        b"enum E { J = 1 }\n"
        b"let broken = { k: (1, };\n"
        b"export default () => <div data-x={'y'}>{x.a}</div>;\n"
        if path.endswith(".tsx")
        else b"type T = { a: string; b?: object };\n"
        b"const x: T = { a: 'string', b: { c: 1, d } };\n"
        b"class K { e: number = 2; f(g: string, h?: object) { this.i = [g, h]; } }\n"
        b"enum E { J = 1 }\n"
        b"let broken = { k: (1, };\n"
    )
    root = parse(path, source).root_node
    assert root.has_error
    tsx = path.endswith(".tsx")
    for types in [matching.DECLARING] + [
        frozenset({t}) for t in ("string", "object", "pair", "identifier", "ERROR", "true", "program")
    ]:
        walked = [n.id for n in walk(root) if n.type in types]
        assert [n.id for n in matching.nodes_of(root, types, tsx)] == walked, sorted(types)
    assert len([n for n in matching.nodes_of(root, frozenset({"string"}), tsx) if not n.is_named]) == 2
    assert matching._type_query(tsx, frozenset({"no_such_node"})) is None


def test_quoted_code_is_compared_first_where_its_text_is_as_written_and_no_file_after_its_match_is_read(
    tmp_path, monkeypatch
):
    """`a.ts` matches `foo(1, 2)` by structure only (a comment between the arguments),
    `b.ts` and `c.ts` hold it as written: `b.ts`, the first that holds the text, is
    the answer, though `a.ts` comes before it; `c.ts`, after the match, is never read."""
    root, sha = _repository(
        tmp_path,
        {
            "src/a.ts": "export const x = foo(1, /* two */ 2)\n",
            "src/b.ts": "\n\nexport const y = foo(1, 2)\n",
            "src/c.ts": "export const z = foo(1, 2)\n",
        },
    )
    snapshot = _at(root, sha, tmp_path / "cache", monkeypatch)
    blobs = snapshot.blob_ids()
    read = _reads(snapshot, monkeypatch)
    [found] = check(snapshot, "foo(1, 2)")
    cache.end()
    assert found.message == "matches src/b.ts:3"
    assert blobs["src/a.ts"] in read and blobs["src/b.ts"] in read
    assert blobs["src/c.ts"] not in read
    # Where no file holds the text as written, the one that matches by structure is the answer.
    (root / "src/b.ts").unlink()
    (root / "src/c.ts").unlink()
    alone = _commit(root, "c2", "2026-08-02T10:00:00Z", "c2")
    [found] = check(_at(root, alone, tmp_path / "cache", monkeypatch), "foo(1, 2)")
    cache.end()
    assert found.message == "matches src/a.ts:1"


def test_the_nodes_of_a_type_are_found_once_a_file_for_every_fragment_that_looks_for_them(tmp_path, monkeypatch):
    root, sha = _repository(tmp_path, {"src/a.ts": "export const x = foo(1, 2)\nexport const y = foo(3, 4)\n"})
    found: list[tuple[int, frozenset[str]]] = []
    nodes_of = matching.nodes_of
    monkeypatch.setattr(quoted, "nodes_of", lambda root, types, tsx: found.append(types) or nodes_of(root, types, tsx))
    first, second, third = check(_at(root, sha, tmp_path / "cache", monkeypatch), "foo(1, 2)", "foo(3, 4)", "foo(5, 6)")
    cache.end()
    assert (first.message, second.message) == ("matches src/a.ts:1", "matches src/a.ts:2")
    assert third.status is not ReferenceStatus.OK
    assert found == [frozenset({"call_expression"})]


def test_a_new_commit_with_odd_paths_is_indexed_from_a_base_as_a_cold_pass_finds(tmp_path, monkeypatch, regexes):
    """The changed files go to git listed in an index, not named as pathspecs: paths
    with a space, a tab, quotes, a leading dash, glob characters, a colon or letters
    past ASCII are searched like any other, and a `.gitattributes` among them too."""
    odd = [
        "src/with space.ts",
        "src/tab\there.ts",
        "src/'quoted\".ts",
        "-leading.ts",
        "src/[x].ts",
        "src/*.ts",
        "src/a:b.ts",
        "src/\u00e9t\u00e9.ts",
        "docs/.gitattributes",
    ]
    kept = {f"src/kept{i}.ts": f"export const alpha{i} = {i}\n" for i in range(30)}  # most of the tree stays
    root, base = _repository(
        tmp_path, {**kept, "src/keep.ts": "export const alpha = 1\n", "src/old.ts": "const beta = 2\n"}
    )
    for i, path in enumerate(odd):
        _write(root, path, f"// alpha beta gamma{i}\n")
    (root / "src/old.ts").unlink()
    target = _commit(root, "c2", "2026-08-02T10:00:00Z", "c2")
    names = ["alpha", "beta", "gamma3", "gamma8", "delta"]
    cold = nameindex.index_for(_at(root, target, tmp_path / "cold", monkeypatch)).paths(names)
    cache.end()
    nameindex.index_for(_at(root, base, tmp_path / "warm", monkeypatch)).paths(names)
    cache.end()
    snapshot = _at(root, target, tmp_path / "warm", monkeypatch)
    derived = nameindex.index_for(snapshot).paths(names)
    cache.end()
    assert nameindex.index_for(snapshot).base == base
    assert derived == cold
    assert cold["beta"] == frozenset(odd) and cold["gamma3"] == {"-leading.ts"} and cold["delta"] == frozenset()


# -- commits --------------------------------------------------------------------------


def test_digits_quoted_from_the_tree_are_found_in_the_one_pass_from_a_base(make_repo, fresh_cache):
    """At a commit indexed from an earlier one, the files that hold digits naming no commit of
    the clone are found by the same pass as the other names, not by one of their own after it."""
    upstream = "0a1b2c3d4e5f60718293"
    repo = make_repo({"vendor/manifest.txt": f"upstream: {upstream}\n"}, {"notes.txt": "laterName\n"})
    check(repo.snapshot(0), upstream, "laterName")
    snapshot = repo.snapshot(1)
    index = nameindex.index_for(snapshot)
    quoted, later = check(snapshot, upstream, "laterName")
    assert index.base == repo.shas[0]
    assert quoted.status is ReferenceStatus.OK and "vendor/manifest.txt" in quoted.message
    assert later.status is ReferenceStatus.OK
    assert index.git_calls == 1


@pytest.mark.parametrize(
    ("text", "kind"),
    [("99f6f02f", "commit"), ("99f6f02fecdb7dff40c3fbc9470f5907c29f74ca", "commit"), ("deadbeef", "identifier")],
)
def test_hex_digits_and_letters_in_backticks_are_a_commit(text, kind):
    from dshaudit.checking.plans import classify

    plan = classify(Name(text, CODE, 0, len(text)))
    assert plan is not None and plan.kind == kind


def test_a_commit_named_in_the_text_is_one_of_the_clone(make_repo, fresh_cache):
    """Its tags are named, and whether it is the commit checked at; digits the tree holds
    as a word (a manifest pinning another repository's commit) are quoted from it."""
    upstream = "0a1b2c3d4e5f60718293"
    repo = make_repo({"vendor/manifest.txt": f"upstream: {upstream}\n"}, {"notes.txt": "later\n"})
    first, second = repo.shas
    got = {
        r.text: (r.kind, r.status.value, r.message)
        for r in check(repo.snapshot(1), first[:9], second, upstream, "d00dfeed1234")
    }
    assert got[first[:9]] == ("commit", "ok", f"commit {first[:12]}, tagged c0")
    assert got[second] == ("commit", "ok", f"commit {second[:12]}, tagged c1: the pin")
    assert got[upstream][:2] == ("commit", "ok") and "vendor/manifest.txt" in got[upstream][2]
    assert got["d00dfeed1234"][:2] == ("commit", "unknown_commit")
