"""How one citation is judged at a pin (`Verifier`), and how a file's lines are read
and searched (`FileText`), on a small repository built for the tests."""

from __future__ import annotations

import pytest

from dshaudit.checking.citations import FileText, Verifier, contiguous
from dshaudit.core.model import Citation, LineRange, Pin, SourceLocation, Status
from dshaudit.git.pins import PinResolver
from dshaudit.git.repository import DshRepository
from dshaudit.platform.config import Config

REGISTRY = """\
export interface AgentFactory {
  create(): void
}

export class AgentRegistry {
  private factory?: AgentFactory

  setFactory(factory: AgentFactory) {
    if (this.factory) throw new Error('already registered')
    this.factory = factory
  }

  clear() {
    this.factory = undefined
  }
}
"""

FILES: dict[str, str | bytes | None] = {
    "packages/core/src/registry.ts": REGISTRY,
    "a/util.ts": "export const a = 1\n",
    "b/util.ts": "export const b = 2\n",
    "docs/guide.md": "# Guide\n\nThe registry holds one factory.\n",
    "assets/logo.bin": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
}
REGISTRY_PATH = "packages/core/src/registry.ts"
WRITTEN_AT = SourceLocation("f.md", 1, 1)


def cite(
    path: str = REGISTRY_PATH,
    *ranges: tuple[int, int],
    symbol: str | None = None,
    anchors: tuple[str, ...] = (),
    at: SourceLocation = WRITTEN_AT,
    **more,
) -> Citation:
    """A citation of `path` at these (start, end) line ranges, as the grammar would build it."""
    lines = tuple(LineRange(a, b) for a, b in ranges)
    return Citation(path, lines, symbol, None, anchors, at, text=path, **more)


def resolver(pins: dict[str, Pin] | None = None) -> PinResolver:
    """A resolver that knows these pins and no tags (the verifier asks it only why a pin is unknown)."""
    return PinResolver(Config(None, "https://example.invalid/dsh", "https://example.invalid/dsh", pins or {}))


@pytest.fixture
def built(make_repo):
    return make_repo(FILES)


@pytest.fixture
def pin(built) -> Pin:
    return Pin("v1", built.shas[0])


@pytest.fixture
def verifier(built, pin) -> Verifier:
    repository = built.repository()
    return Verifier(resolver({"v1": pin}), lambda: repository)


def no_repository() -> DshRepository:
    """A repository opener for checks that must not need the clone."""
    raise AssertionError("the repository was opened")


# -- FileText ---------------------------------------------------------------------------


def test_file_text_splits_lines_without_a_phantom_last_line_or_carriage_returns():
    assert FileText.from_bytes(b"a\r\nb\r\nc").lines == ["a", "b", "c"]
    assert FileText.from_bytes(b"a\nb\n").lines == ["a", "b"]
    assert FileText.from_bytes(b"a\n\n").lines == ["a", ""]
    assert FileText.from_bytes(b"").lines == []


def test_file_text_decodes_invalid_utf8_with_replacement_characters():
    assert FileText.from_bytes(b"caf\xe9\n").lines == ["caf\ufffd"]


def test_file_text_cited_text_joins_the_lines_of_every_range():
    text = FileText([f"line {n}" for n in range(1, 7)])
    assert text.cited_text((LineRange(2, 3), LineRange(5, 5))) == "line 2\nline 3\nline 5"


def test_file_text_find_ignores_whitespace_and_spans_lines():
    text = FileText(["const x =", "  compute( a,", "b )", "compute(a, b)", "compute(a,b); compute(a,b)"])
    assert text.find("compute(a, b)") == [2, 4, 5]  # each line once, however often it holds the anchor
    assert text.find("x = compute") == [1]  # found where it starts
    assert text.find("   ") == [] and text.find("absent") == []


def test_contiguous_merges_ranges_that_touch_or_overlap():
    ranges = (LineRange(10, 12), LineRange(1, 2), LineRange(3, 4), LineRange(11, 15), LineRange(17, 17))
    assert contiguous(ranges) == [LineRange(1, 4), LineRange(10, 15), LineRange(17, 17)]


# -- the levels of a citation: ok, and each failure -----------------------------------------


def test_an_anchor_on_the_cited_lines_is_ok(verifier, pin):
    verdict = verifier.verify(cite(REGISTRY_PATH, (8, 11), anchors=("setFactory(factory",)), pin, "v1")
    assert (verdict.status, verdict.message) == (Status.OK, "ok")
    assert verdict.resolved_lines == (LineRange(8, 11),) and verdict.path == REGISTRY_PATH


def test_an_anchor_off_the_cited_lines_says_where_it_is_now(verifier, pin):
    verdict = verifier.verify(cite(REGISTRY_PATH, (9, 9), anchors=("this.factory = undefined",)), pin, "v1")
    assert verdict.status is Status.CONTENT_MISMATCH
    assert verdict.message == "`this.factory = undefined` is not on line 9; now at line 14"
    nowhere = verifier.verify(cite(REGISTRY_PATH, (1, 3), anchors=("deleteFactory",)), pin, "v1")
    assert nowhere.message == "`deleteFactory` is not on lines 1-3; not found anywhere in the file"


def test_a_status_alone_does_not_search_the_file_and_leaves_verify_its_message(verifier, pin, monkeypatch):
    """history's walk reads a verdict's status and path at every commit: where an anchor stands
    now is worked out only for a verdict whose message is read."""
    moved = cite(REGISTRY_PATH, (9, 9), anchors=("this.factory = undefined",))
    held = cite(REGISTRY_PATH, (8, 11), anchors=("setFactory(factory",))
    searched = []
    find = FileText.find
    monkeypatch.setattr(FileText, "find", lambda self, anchor: searched.append(anchor) or find(self, anchor))
    brief = verifier.status_at(moved, pin)
    assert (brief.status, brief.path, brief.resolved_lines) == (
        Status.CONTENT_MISMATCH,
        REGISTRY_PATH,
        (LineRange(9, 9),),
    )
    assert searched == [] and verifier.status_at(held, pin).status is Status.OK
    full = verifier.verify(moved, pin, "v1")
    assert full.message == "`this.factory = undefined` is not on line 9; now at line 14"
    assert searched == ["this.factory = undefined"]
    assert verifier.status_at(moved, pin).message == full.message  # a verdict with its message answers too


def test_an_anchor_must_stand_within_one_contiguous_part_of_the_cited_lines(verifier, pin):
    """Lines 9 and 11 are two parts: an anchor spanning them, across the uncited line 10, does not hold."""
    anchor = ("registered')this.factory",)
    split = verifier.verify(cite(REGISTRY_PATH, (9, 9), (11, 11), anchors=anchor), pin, "v1")
    assert split.status is Status.CONTENT_MISMATCH
    joined = verifier.verify(cite(REGISTRY_PATH, (9, 9), (10, 10), anchors=anchor), pin, "v1")
    assert joined.status is Status.OK


def test_lines_past_the_end_are_out_of_range(verifier, pin):
    one = verifier.verify(cite(REGISTRY_PATH, (17, 17)), pin, "v1")
    assert (one.status, one.message) == (Status.OUT_OF_RANGE, "line 17 is past the end of the file (16 lines at v1)")
    span = verifier.verify(cite(REGISTRY_PATH, (10, 40)), pin, "v1")
    assert span.message == "range 10-40 ends past the end of the file (16 lines at v1)"


def test_a_missing_file_names_the_closest_existing_path(verifier, pin):
    verdict = verifier.verify(cite("packages/core/src/registri.ts", (1, 1)), pin, "v1")
    assert verdict.status is Status.MISSING_PATH
    assert verdict.message == f"no such file at v1; closest existing path: {REGISTRY_PATH}"


def test_a_binary_file_and_a_directory_are_not_cited_by_line(verifier, pin):
    binary = verifier.verify(cite("assets/logo.bin", (1, 1)), pin, "v1")
    assert (binary.status, binary.message) == (Status.BINARY, "assets/logo.bin is binary at v1; cite text files only")
    folder = verifier.verify(cite("packages/core/src", (1, 1)), pin, "v1")
    assert (folder.status, folder.message) == (Status.NOT_A_FILE, "packages/core/src is a directory at v1, not a file")


def test_a_symbolic_link_and_a_submodule_are_not_files(fixture_repo):
    """tests/fixture_repo.py's v3 holds a link (docs/context-link.ts) and a gitlink (vendor/submodule)."""
    repository = DshRepository(fixture_repo.path / ".git", "fixture")
    v3 = Pin("v3", fixture_repo.shas["v3"])
    verifier = Verifier(resolver({"v3": v3}), lambda: repository)
    link = verifier.verify(cite("docs/context-link.ts", (1, 1)), v3, "v3")
    assert (link.status, link.message) == (
        Status.NOT_A_FILE,
        "docs/context-link.ts is a symbolic link at v3, not a file",
    )
    gitlink = verifier.verify(cite("vendor/submodule"), v3, "v3")
    assert gitlink.status is Status.NOT_A_FILE and "a submodule" in gitlink.message


def test_a_malformed_citation_is_invalid_without_opening_the_repository(pin):
    verifier = Verifier(resolver({"v1": pin}), no_repository)
    broken = verifier.verify(cite(REGISTRY_PATH, problem="line numbers start at 1"), pin, "v1")
    assert (broken.status, broken.message) == (Status.INVALID_CITATION, "line numbers start at 1")
    upward = verifier.verify(cite("../etc/passwd", (1, 1)), pin, "v1")
    assert upward.status is Status.INVALID_CITATION and "'..'" in upward.message
    assert verifier.verify(cite("/abs/x.ts"), pin, "v1").message == "absolute paths are not repository paths"


def test_no_pin_is_an_unknown_pin_saying_why(pin):
    verifier = Verifier(resolver({"v1": pin}), no_repository)
    named = verifier.verify(cite(REGISTRY_PATH, (1, 1)), None, "v9")
    assert named.status is Status.UNKNOWN_PIN and named.message.startswith("pin 'v9' is not in dshaudit.toml (v1)")
    unnamed = verifier.verify(cite(REGISTRY_PATH, (1, 1)), None, None)
    assert unnamed.message == "no pin: the findings file names none in its front matter"


def test_a_permalink_to_a_commit_the_clone_lacks_is_an_unknown_pin(verifier):
    absent = Pin("0123456789ab", "0123456789abcdef0123456789abcdef01234567", named=False)
    verdict = verifier.verify(cite(REGISTRY_PATH, (1, 1), form="permalink"), absent, None)
    assert verdict.status is Status.UNKNOWN_PIN
    assert verdict.message == f"the permalink's commit {absent.sha} is not in the DSH clone"


def test_a_citation_at_a_branch_holds_but_is_unpinned(verifier, pin):
    branch = Pin("main", pin.sha, named=False, branch=True)
    verdict = verifier.verify(cite(REGISTRY_PATH, (8, 8), anchors=("setFactory",)), branch, "main")
    assert verdict.status is Status.UNPINNED and verdict.message.startswith("holds at branch main")


# -- symbols -----------------------------------------------------------------------------


def test_a_symbol_citation_resolves_to_the_declarations_lines(verifier, pin):
    verdict = verifier.verify(cite(REGISTRY_PATH, symbol="AgentRegistry.setFactory"), pin, "v1")
    assert verdict.status is Status.OK and verdict.resolved_lines == (LineRange(8, 11),)
    inside = verifier.verify(cite(REGISTRY_PATH, (10, 10), symbol="setFactory"), pin, "v1")  # a unique tail
    assert inside.status is Status.OK and inside.resolved_lines == (LineRange(10, 10),)


def test_an_unknown_symbol_names_the_closest_declaration(verifier, pin):
    verdict = verifier.verify(cite(REGISTRY_PATH, symbol="AgentRegistry.setFactori"), pin, "v1")
    assert verdict.status is Status.UNKNOWN_SYMBOL
    assert verdict.message == (
        "no declaration named AgentRegistry.setFactori; closest: AgentRegistry.setFactory at line 8"
    )


def test_lines_outside_the_cited_symbol_are_reported_with_its_span(verifier, pin):
    verdict = verifier.verify(cite(REGISTRY_PATH, (13, 14), symbol="AgentRegistry.setFactory"), pin, "v1")
    assert verdict.status is Status.OUTSIDE_SYMBOL
    assert verdict.message == "lines 13-14 are outside AgentRegistry.setFactory (declared at 8-11)"
    assert verdict.resolved_lines == (LineRange(8, 11),)


# -- quoted code ----------------------------------------------------------------------------


def test_code_quoted_beside_a_citation_must_be_in_the_declaration_holding_it(verifier, pin):
    held = verifier.verify(cite(REGISTRY_PATH, (9, 9), declared=("this.factory = factory",)), pin, "v1")
    assert held.status is Status.OK
    # On another line of the declaration that holds the cited one: found there by its span.
    inside = verifier.verify(cite(REGISTRY_PATH, (8, 8), declared=("this.factory = factory",)), pin, "v1")
    assert inside.status is Status.OK
    other = verifier.verify(cite(REGISTRY_PATH, (9, 9), declared=("this.factory = undefined",)), pin, "v1")
    assert other.status is Status.CONTENT_MISMATCH
    assert other.message == (
        "`this.factory = undefined`, quoted beside the citation, is not in the declaration at lines 8-11; "
        "it is at line 14"
    )


def test_expected_code_must_be_somewhere_in_the_file(verifier, pin):
    """The quoted-code form compares letters and digits only: lost quotes and spacing do not matter."""
    held = verifier.verify(
        cite(REGISTRY_PATH, (1, 1), expected_code=('throw new Error("already registered")',)), pin, "v1"
    )
    assert held.status is Status.OK
    gone = verifier.verify(cite(REGISTRY_PATH, (1, 1), expected_code=("registry.reset()",)), pin, "v1")
    assert (gone.status, gone.message) == (
        Status.CONTENT_MISMATCH,
        f"`registry.reset()` is nowhere in {REGISTRY_PATH} at v1",
    )


def test_an_unanchored_citation_is_suspect_when_its_sentence_names_code_elsewhere(verifier, pin):
    verdict = verifier.verify(cite(REGISTRY_PATH, (8, 11), inferred=("clear",)), pin, "v1")
    assert verdict.status is Status.SUSPECT
    assert verdict.message == "the lines cited hold none of the names the text gives them: `clear` is at line 13"
    named = verifier.verify(cite(REGISTRY_PATH, (8, 11), inferred=("setFactory",)), pin, "v1")
    assert named.status is Status.OK


def test_a_citation_its_names_settle_never_has_the_file_s_words_indexed(verifier, pin, monkeypatch):
    """The words of a cited file are indexed when a rule reads them: a name on the cited lines, or
    one standing elsewhere, settles the check first (and time travel tries versions so)."""
    from dshaudit.documents import matching

    indexed = []
    build = matching.WordIndex.__init__
    monkeypatch.setattr(matching.WordIndex, "__init__", lambda self, lines: indexed.append(1) or build(self, lines))
    for by_shape in (True, False):
        held = verifier.verify(cite(REGISTRY_PATH, (8, 11), inferred=("setFactory",), by_shape=by_shape), pin, "v1")
        moved = verifier.verify(cite(REGISTRY_PATH, (8, 11), inferred=("clear",), by_shape=by_shape), pin, "v1")
        assert (held.status, moved.status) == (Status.OK, Status.SUSPECT)
    assert indexed == []
    worded = verifier.verify(cite(REGISTRY_PATH, (8, 11), words=("factory", "registered")), pin, "v1")
    assert worded.status is Status.OK and indexed  # the words rule reads them, and they are built then


# -- abbreviated paths ------------------------------------------------------------------------


def test_a_path_that_only_one_file_ends_with_is_read_as_that_file(verifier, pin):
    verdict = verifier.verify(cite("src/registry.ts", (8, 8), anchors=("setFactory",)), pin, "v1")
    assert verdict.status is Status.OK and verdict.path == REGISTRY_PATH
    assert verdict.message == f"`src/registry.ts` read as {REGISTRY_PATH} (the only file whose path ends so); ok"


def test_a_path_several_files_end_with_is_ambiguous_unless_its_context_decides(verifier, pin):
    ambiguous = verifier.verify(cite("util.ts", (1, 1)), pin, "v1")
    assert ambiguous.status is Status.AMBIGUOUS_PATH
    assert ambiguous.message == "`util.ts` could be any of 2 files: a/util.ts, b/util.ts"
    near = verifier.verify(cite("util.ts", (1, 1), anchors=("b = 2",), nearby=("b",)), pin, "v1")
    assert near.status is Status.OK and near.path == "b/util.ts"
    after = verifier.verify(cite("util.ts", (1, 1), anchors=("a = 1",), context_dir="a"), pin, "v1")
    assert after.status is Status.OK and after.message.startswith(
        "`util.ts` read as a/util.ts (after the path before it)"
    )


# -- what the verifier keeps ---------------------------------------------------------------------


def test_a_verdict_is_remembered_by_what_was_cited_wherever_it_was_written(built, pin):
    repository = built.repository()
    opened: list[int] = []

    def counted() -> DshRepository:
        opened.append(1)
        return repository

    verifier = Verifier(resolver({"v1": pin}), counted)
    first = verifier.verify(cite(REGISTRY_PATH, (8, 8), anchors=("setFactory",)), pin, "v1")
    calls = len(opened)
    elsewhere = SourceLocation("other.md", 40, 2)
    again = verifier.verify(cite(REGISTRY_PATH, (8, 8), anchors=("setFactory",), at=elsewhere), pin, "v1")
    assert len(opened) == calls  # answered from memory
    assert again.citation.source == elsewhere and (again.status, again.message) == (first.status, first.message)


def test_text_is_none_for_anything_but_a_text_file(verifier, built, pin):
    snap = built.repository().snapshot(pin.sha)
    assert verifier.text(snap, "docs/guide.md").lines[-1] == "The registry holds one factory."
    assert verifier.text(snap, "assets/logo.bin") is None
    assert verifier.text(snap, "packages") is None
    assert verifier.text(snap, "no/such.ts") is None


def test_forget_lets_go_of_a_blob_read_ahead(verifier, built, pin, monkeypatch):
    snap = built.repository().snapshot(pin.sha)
    verifier.read_ahead(snap, ["docs/guide.md"])
    reads: list[str] = []

    def read(self, blob: str) -> bytes:
        reads.append(blob)
        return b"x\n"

    monkeypatch.setattr(type(snap), "read", read)
    assert verifier.text(snap, "docs/guide.md").lines[0] == "# Guide"  # read ahead: no read of its own
    assert reads == []
    blob = snap.entry("docs/guide.md").blob_sha
    verifier.forget({blob})
    assert verifier.text(snap, "docs/guide.md").lines == ["x"] and reads == [blob]
