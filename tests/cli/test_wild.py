"""Documents written in other people's forms: every citation form, path
resolution, inferred anchors and the `quoted:` marker, on the fixture repo."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import extend_fixture, run_cli, write_findings
from dshaudit.core.model import LineRange
from dshaudit.documents.grammar import find_citations

WEB = "https://example.invalid/dsh"  # the fixture config's upstream URL
CONTEXT = "vendor/cordis/src/context.ts"
AGENT = "packages/core/agent/src/index.ts"


def verdicts(workspace: Path, body: str, *args: str) -> list[dict]:
    write_findings(workspace, body)
    run = run_cli("check", "--format", "json", *args)
    assert run.exit_code in (0, 1), run.stderr
    return run.json["citations"]


def one(text: str):
    found = find_citations(text, WEB)
    assert len(found) == 1, found
    return found[0]


# -- the forms ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, form, path, lines, symbol, pin",
    [
        (f"{WEB}/blob/{'a' * 40}/{CONTEXT}#L75-L77", "permalink", CONTEXT, [(75, 77)], None, "a" * 40),
        (f"{WEB}/blob/v1/{CONTEXT}#L14", "permalink", CONTEXT, [(14, 14)], None, "v1"),
        (f"{WEB}/raw/main/{CONTEXT}?plain=1#L3", "permalink", CONTEXT, [(3, 3)], None, "main"),
        (f"see {CONTEXT} (line 12)", "line-phrase", CONTEXT, [(12, 12)], None, None),
        (f"see `{CONTEXT}` (lines 10–20)", "line-phrase", CONTEXT, [(10, 20)], None, None),
        (f"{CONTEXT}, lines 10-20, shows", "line-phrase", CONTEXT, [(10, 20)], None, None),
        (f"{CONTEXT} L10-L20", "line-phrase", CONTEXT, [(10, 20)], None, None),
        (f"`{AGENT}`（第 170–190 行）", "line-phrase", AGENT, [(170, 190)], None, None),
        (f"{AGENT}（第 35–78、240–345 行）", "line-phrase", AGENT, [(35, 78), (240, 345)], None, None),
        (
            "`agent/src/index.ts:AgentRegistry.setFactory`",
            "symbol",
            "agent/src/index.ts",
            [],
            "AgentRegistry.setFactory",
            None,
        ),
        (f"{CONTEXT}:14", "canonical", CONTEXT, [(14, 14)], None, None),
        (f"see `{CONTEXT}#L128-L136`", "line-fragment", CONTEXT, [(128, 136)], None, None),
        (f"{CONTEXT}#L7@v1.", "line-fragment", CONTEXT, [(7, 7)], None, "v1"),
    ],
)
def test_every_form_parses_into_one_model(text, form, path, lines, symbol, pin):
    c = one(text)
    assert (c.form, c.path, c.lines, c.symbol, c.pin) == (
        form,
        path,
        tuple(LineRange(a, b) for a, b in lines),
        symbol,
        pin,
    )


def test_quoted_code_after_a_path_is_text_expected_in_the_file():
    c = one(f"`{CONTEXT}`（`this.logger = new LoggerService(self)`）")
    assert (c.form, c.expected_code, c.lines) == ("quoted-code", ("this.logger = new LoggerService(self)",), ())
    # A citation in brackets after a path is a citation, not quoted code.
    assert [x.form for x in find_citations(f"`{CONTEXT}` (`{CONTEXT}:14` → `x`)", WEB)] == ["canonical"]


def test_lines_alone_after_a_citation_continue_its_file():
    found = find_citations(f"`{AGENT}:17@v1`, and the interface `:2-4`. ", WEB)
    assert [(c.form, c.path, c.lines, c.pin) for c in found] == [
        ("canonical", AGENT, (LineRange(17, 17),), "v1"),
        ("continuation", AGENT, (LineRange(2, 4),), "v1"),
    ]
    chinese = find_citations(f"定义于 `{AGENT}`（第 17–19 行），工厂接口见 `:2`。", WEB)
    assert [(c.form, c.lines) for c in chinese][1] == ("continuation", (LineRange(2, 2),))
    # Not across a sentence, not in other code, not a time or a ratio.
    for text in (
        f"`{AGENT}:17`. Then `:2` is",
        f"`{AGENT}:17` and `a ? b :2`",
        f"`{AGENT}:17` at 10:30",
        f"`{AGENT}:17`, ratio 3:2",
        f"{AGENT}:17 and :2.5 more",
    ):
        assert [c.form for c in find_citations(text, WEB)] == ["canonical"], text


@pytest.mark.parametrize(
    "text",
    [
        "https://elsewhere.invalid/blob/v1/a/b.ts#L3",  # not DSH
        f"https://elsewhere.invalid/go?u={WEB}/blob/v1/a/b.ts#L3",  # a DSH link inside another host's address
        f"https://elsewhere.invalid/{WEB}/blob/v1/a/b.ts#L3",
        "see [the design](design.md) and docs/x.md for more",
        f"{CONTEXT}: nothing",
        "the line 12 of nothing",
    ],
)
def test_links_and_prose_are_not_citations(text):
    assert find_citations(text, WEB) == []


@given(st.text(max_size=200))
def test_the_grammar_never_raises(text):
    for c in find_citations(text, WEB):
        assert 0 <= c.start < c.end <= len(text)


# -- permalinks ---------------------------------------------------------------------------------


def test_permalinks_at_a_commit_a_branch_and_a_missing_commit(workspace, fixture_repo):
    v1 = fixture_repo.shas["v1"]
    body = (
        f"Held: {WEB}/blob/{v1}/{CONTEXT}#L14 → `this.fiber`\n"
        f"Short: {WEB}/blob/{v1[:10]}/{CONTEXT}#L14 → `this.fiber`\n"
        f"Branch: {WEB}/blob/main/{CONTEXT}#L17 → `this.fiber`\n"
        f"Missing: {WEB}/blob/{'b' * 40}/{CONTEXT}#L14\n"
    )
    got = verdicts(workspace, body)
    assert [(c["form"], c["status"]) for c in got] == [
        ("permalink", "ok"),
        ("permalink", "ok"),
        ("permalink", "unpinned"),
        ("permalink", "unknown_pin"),
    ]
    assert got[0]["resolved"]["sha"] == v1 and got[1]["resolved"]["sha"] == v1
    assert "branch main" in got[2]["message"] and got[2]["resolved"]["sha"] == fixture_repo.shas["v3"]
    assert "b" * 40 in got[3]["message"] and "not in the DSH clone" in got[3]["message"]
    assert run_cli("check").exit_code == 1  # the missing commit fails; the branch only warns
    assert run_cli("check", "--pin=v1").exit_code == 1


def test_a_permalink_to_a_whole_file_or_a_folder_holds_when_it_is_there(workspace, fixture_repo):
    v1 = fixture_repo.shas["v1"]
    body = (
        f"A file: [context]({WEB}/blob/{v1}/{CONTEXT}).\n"
        f"In running text, see {WEB}/blob/{v1}/{AGENT}.\n"
        f"A binary file: {WEB}/raw/{v1}/assets/logo.bin?plain=1\n"
        f"A folder: [agent]({WEB}/tree/{v1}/packages/core/agent/)\n"
        f"Gone: {WEB}/blob/{v1}/packages/core/agent/src/nowhere.ts\n"
        f"Not a folder: {WEB}/tree/{v1}/{CONTEXT}\n"
        f"On a branch: {WEB}/blob/main/{CONTEXT}\n"
        f"Another repository: https://elsewhere.invalid/x/blob/{v1}/{CONTEXT}\n"
    )
    got = verdicts(workspace, body)
    assert [(c["form"], c["target"]["path"], c["status"]) for c in got] == [
        ("permalink", CONTEXT, "ok"),
        ("permalink", AGENT, "ok"),  # the full stop after it ends the sentence, not the path
        ("permalink", "assets/logo.bin", "ok"),
        ("tree-permalink", "packages/core/agent", "ok"),
        ("permalink", "packages/core/agent/src/nowhere.ts", "missing_path"),
        ("tree-permalink", CONTEXT, "missing_path"),
        ("permalink", CONTEXT, "unpinned"),
    ]
    assert got[3]["target"]["lines"] is None and "not a folder" in got[5]["message"]


@pytest.mark.parametrize(
    "text, form, path, pin",
    [
        ("https://github.com/o/r/blob/abc1234/src/a.ts", "permalink", "src/a.ts", "abc1234"),
        ("https://raw.githubusercontent.com/o/r/abc1234/src/a.ts", "permalink", "src/a.ts", "abc1234"),
        ("https://github.com/o/r/tree/abc1234/src", "tree-permalink", "src", "abc1234"),
        ("(https://github.com/o/r/blob/main/README.md)", "permalink", "README.md", "main"),
    ],
)
def test_every_permalink_into_the_repository_is_a_citation_at_its_own_ref(text, form, path, pin):
    (found,) = find_citations(text, "https://github.com/o/r")
    assert (found.form, found.path, found.lines, found.pin) == (form, path, (), pin)
    assert find_citations(text.replace("/o/r", "/o/other"), "https://github.com/o/r") == []


@pytest.mark.parametrize(
    "text, lines",
    [
        ("[a.ts](https://github.com/o/r/blob/abc1234/src/a.ts) (lines 700–725)", [(700, 725)]),
        ("[a.ts](https://github.com/o/r/blob/abc1234/src/a.ts) (line 158)", [(158, 158)]),
        ("https://github.com/o/r/blob/abc1234/src/a.ts, lines 51 to 60.", [(51, 60)]),
        ("https://github.com/o/r/blob/abc1234/src/a.ts（第 3–5 行）", [(3, 5)]),
        ("[a.ts](https://github.com/o/r/blob/abc1234/src/a.ts) holds it", []),
    ],
)
def test_a_line_phrase_beside_a_link_to_a_whole_file_cites_its_lines(text, lines):
    (found,) = find_citations(text, "https://github.com/o/r")
    assert (found.path, [(r.start, r.end) for r in found.lines]) == ("src/a.ts", lines)
    assert found.text == "https://github.com/o/r/blob/abc1234/src/a.ts"


def test_a_line_phrase_beside_a_link_is_checked_at_the_link_commit(workspace, fixture_repo):
    v1 = fixture_repo.shas["v1"]
    got = verdicts(workspace, f"See [context]({WEB}/blob/{v1}/{CONTEXT}) (lines 14-15) and (line 900) of nothing.\n")
    assert [(c["target"]["lines"], c["status"]) for c in got] == [("14-15", "ok")]


def test_a_permalink_checked_at_another_pin_is_carried_there_from_its_own_commit(workspace, fixture_repo):
    """v2 adds three comment lines inside Context above line 12: what line 14 held at v1 is at 17."""
    v1 = fixture_repo.shas["v1"]
    body = (
        f"Moved: {WEB}/blob/{v1}/{CONTEXT}#L14 → `this.fiber`\n"
        f"Kept: {WEB}/blob/{v1}/{CONTEXT}#L5 → `fiber: Fiber`\n"
        f"A file: {WEB}/blob/{v1}/{CONTEXT}\n"
        f"A file gone by v2: {WEB}/blob/{v1}/packages/core/agent/src/index.ts\n"
    )
    got = verdicts(workspace, body, "--pin", "v2")
    assert [(c["status"], c["target"]["pin"]) for c in got] == [
        ("moved_since", "v2"),
        ("ok", "v2"),
        ("ok", "v2"),
        ("missing_path", "v2"),  # moved to registry.ts at v2: the message names it
    ]
    assert "packages/core/agent/src/registry.ts" in got[3]["message"]
    assert f"{CONTEXT}:17 at v2" in got[0]["message"] and "cited at v1" in got[0]["message"]
    assert [c["status"] for c in verdicts(workspace, body)] == ["ok"] * 4  # at their own commit


# -- paths as people abbreviate them --------------------------------------------------------------


@pytest.fixture
def twins(workspace, fixture_repo, tmp_path, monkeypatch):
    """The fixture plus two files that share a tail (`src/util.ts`), pinned as `twins`."""
    extend_fixture(
        workspace,
        fixture_repo,
        tmp_path,
        monkeypatch,
        (
            "twins",
            {
                "packages/a/src/util.ts": "export const a = 'alpha'\n",
                "packages/b/src/util.ts": "export const b = 'beta'\n",
                "packages/b/src/other.ts": "export const other = 1\n",
            },
        ),
    )
    return workspace


def test_an_abbreviated_path_resolves_by_its_unique_tail(workspace):
    got = verdicts(workspace, "`context.ts:14` → `this.fiber`\n`agent/src/index.ts:AgentRegistry.setFactory`\n")
    assert [(c["status"], c["resolved"]["path"]) for c in got] == [("ok", CONTEXT), ("ok", AGENT)]
    assert got[0]["message"] == f"`context.ts` read as {CONTEXT} (the only file whose path ends so); ok"


def test_several_candidates_are_ambiguous_unless_the_section_names_one(twins):
    write_findings(
        twins,
        "# One\n\n`src/util.ts:1` → `export const`\n\n"
        "# Two\n\nSee `packages/b/src/other.ts:1` → `other`.\n\nThen `src/util.ts:1` → `beta`.\n",
        pin="twins",
    )
    got = run_cli("check", "--format", "json").json["citations"]
    assert [c["status"] for c in got] == ["ambiguous_path", "ok", "ok"]
    assert "packages/a/src/util.ts, packages/b/src/util.ts" in got[0]["message"]
    assert got[2]["resolved"]["path"] == "packages/b/src/util.ts" and "folder this section cites" in got[2]["message"]


def test_a_bare_relative_path_after_a_package_path_resolves_in_that_package(twins):
    write_findings(twins, "`packages/b/src/other.ts:1` → `other` and `src/util.ts:1` → `beta`\n", pin="twins")
    got = run_cli("check", "--format", "json").json["citations"]
    assert [c["status"] for c in got] == ["ok", "ok"]
    assert got[1]["resolved"]["path"] == "packages/b/src/util.ts" and "after the path before it" in got[1]["message"]


# -- inferred anchors ---------------------------------------------------------------------------


@pytest.mark.parametrize("line, status", [(17, "ok"), (2, "suspect"), (14, "suspect")])
def test_the_name_right_before_a_citation_is_its_subject(workspace, line, status):
    (got,) = verdicts(workspace, f"The factory is set through AgentRegistry.setFactory ({AGENT}:{line}).\n")
    assert got["status"] == status, got["message"]
    if status == "suspect":
        assert "`AgentRegistry.setFactory` is declared at lines 17-21" in got["message"]


def test_a_sentence_naming_nothing_checkable_gives_no_verdict(workspace):
    (got,) = verdicts(workspace, f"The core is small ({AGENT}:2), says the README.\n")
    assert got["status"] == "ok"


def test_names_of_the_sentence_and_a_key_that_holds_the_line(workspace):
    got = verdicts(
        workspace,
        "The default `maxDepth` is set here (`packages/core/agent/src/index.ts:7`).\n"
        "The default `maxDepth` is not here (`packages/core/agent/src/index.ts:10`).\n"
        "TypeScript is a `devDependencies` entry (`package.json:5`).\n",
    )
    assert [c["status"] for c in got] == ["ok", "suspect", "ok"]


def test_a_block_headed_by_a_citation_is_its_anchor(workspace):
    got = verdicts(
        workspace,
        f"// {CONTEXT}:14\nthis.fiber = new Fiber(self, {{}}, Object.create(null), null, () => [])\n\n"
        f"// {CONTEXT}:15\nthis.fiber = new Fiber(self, {{}}, Object.create(null), null, () => [])\n",
    )
    assert [c["status"] for c in got] == ["ok", "suspect"]
    assert "starts near line 14" in got[1]["message"]


def test_an_explicit_anchor_wins_over_the_sentence(workspace):
    (got,) = verdicts(workspace, f"AgentRegistry.setFactory ({AGENT}:7 → `maxDepth`)\n")
    assert got["status"] == "ok"


def test_a_doc_comment_belongs_to_its_declaration(workspace, fixture_repo):
    # v2 has three comment lines right above the constructor: citing one is citing the constructor.
    write_findings(workspace, f"`{CONTEXT}:12#Context.constructor` → `five services`\n", pin="v2")
    (got,) = run_cli("check", "--format", "json").json["citations"]
    assert got["status"] == "ok", got["message"]


@pytest.mark.parametrize(
    "cited, status, said",
    [
        (f"{AGENT}:13", "suspect", "line 13, where the citation starts, is blank"),
        (f"{AGENT}:21", "suspect", "line 21, where the citation starts, is only `}`"),
        (f"{AGENT}:19-22", "suspect", "line 21 closes a bracket opened before the cited lines"),
        (f"{AGENT}:17-21", "ok", ""),
        (f"{CONTEXT}:19-21", "suspect", "where the citation starts, is only `}`"),
        (f"{AGENT}:22-24", "suspect", ""),  # a closing line, then a blank: the numbers came from another version
    ],
)
def test_lines_nobody_would_cite_from_this_version_are_suspect(workspace, cited, status, said):
    (got,) = verdicts(workspace, f"The registry is kept here ({cited}).\n")
    assert got["status"] == status, got["message"]
    assert said in got["message"]


def test_a_first_line_that_closes_what_came_before_is_a_start(workspace, fixture_repo):
    # `} else {` or `}, {` begins a statement; only closers after the first line's start count.
    (got,) = verdicts(workspace, f"The registry is kept here ({CONTEXT}:19-23).\n")
    assert got["status"] == "suspect" and "only `}`" in got["message"]
    (got,) = verdicts(workspace, f"The name getter ({CONTEXT}:21-23).\n")
    assert got["status"] == "ok", got["message"]


GUIDE = "docs/guide.md"
GUIDE_TEXT = "".join(
    f"{line}\n"
    for line in [
        "# Guide",
        "",
        "Sessions start empty.",
        "Each turn appends events to the log.",
        "Compaction replaces old turns with a checkpoint summary.",
        "",
        "Persistence writes every session as JSONL, one event per line.",
        "Recovery tolerates a torn tail after a crash.",
        "Providers run out of process when configured so.",
        "",
        "Sandboxes restrict writes to the workspace roots.",
        "Reads pass through untouched.",
        *(f"Nothing more in paragraph {n}." for n in range(40)),  # a file of realistic length: rare words weigh more
    ]
)


@pytest.fixture
def guide(workspace, fixture_repo, tmp_path, monkeypatch):
    """The fixture plus a prose document, pinned as `guide`."""
    extend_fixture(workspace, fixture_repo, tmp_path, monkeypatch, ("guide", {GUIDE: GUIDE_TEXT}))
    return workspace


@pytest.mark.parametrize(
    "line, status, said",
    [
        (7, "ok", ""),
        (4, "ok", ""),  # it holds `events`: a line that shares a word with the sentence is never moved
        (8, "suspect", "the words of its sentence are not on the cited lines but 1 line above"),
        (12, "suspect", "the words of its sentence are not on the cited lines but 5 lines above"),
    ],
)
def test_the_words_of_the_sentence_find_lines_that_moved(guide, line, status, said):
    # No code-like name in the sentence; its plain words stand on line 7.
    (got,) = verdicts(
        guide, f"Every session is persisted as JSONL, one event per line ({GUIDE}:{line}).\n", "--pin", "guide"
    )
    assert got["status"] == status, got["message"]
    assert got["message"].startswith(said)
    if said:
        assert got["message"].endswith("at line 7") and "`jsonl`" in got["message"]


@pytest.mark.parametrize("first, second, statuses", [(7, 8, ["ok", "ok"]), (8, 7, ["suspect", "suspect"])])
def test_each_citation_of_a_sentence_is_judged_by_its_own_clause(guide, first, second, statuses):
    # The words before each citation are its own: swapped, each line holds only the other clause's words.
    got = verdicts(
        guide,
        f"Each session is written as JSONL per event ({GUIDE}:{first}), and a torn tail after "
        f"a crash is tolerated on recovery ({GUIDE}:{second}).\n",
        "--pin",
        "guide",
    )
    assert [c["status"] for c in got] == statuses, got


def test_suspect_is_a_warning_that_strict_turns_into_a_failure(workspace):
    write_findings(workspace, f"Set through AgentRegistry.setFactory ({AGENT}:2).\n")
    assert run_cli("check").exit_code == 0
    assert run_cli("check", "--strict").exit_code == 1
    assert "1 warnings" in run_cli("check").stdout


# -- quoted citations, and quoted code ------------------------------------------------------------


def test_a_quoted_citation_is_reported_never_failing(workspace):
    write_findings(workspace, f"The prior audit cited `quoted: {AGENT}:2` for AgentRegistry.setFactory.\n")
    run = run_cli("check", "--format", "json", "--strict")
    assert run.exit_code == 0
    (got,) = run.json["citations"]
    assert (got["quoted"], got["status"]) == (True, "suspect")
    assert run.json["summary"]["quoted"] == 1
    lint = run_cli("lint", "--strict")
    assert lint.exit_code == 0, lint.stdout  # no `unanchored_citation` for another document's citation


def test_quoted_code_must_stand_in_the_file(workspace):
    got = verdicts(
        workspace,
        f"`{CONTEXT}`（`this.logger = new LoggerService(self)`）\n`{CONTEXT}` (`this.logger = new ConsoleLogger()`)\n",
    )
    assert [c["status"] for c in got] == ["ok", "content_mismatch"]
    assert got[0]["form"] == "quoted-code"


# -- run anywhere ---------------------------------------------------------------------------------


def test_a_document_finds_its_configuration_from_its_own_folder(workspace, tmp_path, monkeypatch):
    doc = workspace / "notes" / "spec.md"
    doc.parent.mkdir()
    doc.write_text(f"See `{CONTEXT}:14` → `this.fiber`.\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    run = run_cli("check", str(doc), "--pin", "v1", "--format", "json")
    assert run.exit_code == 0, run.stderr
    assert run.json["citations"][0]["target"]["pin"] == "v1"  # a pin of the workspace's dshaudit.toml


def test_with_no_configuration_anywhere_the_packaged_one_names_the_audit_pins(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "doc.md").write_text("---\npin: rc7\n---\nSee `vendor/cordis/src/context.ts:77` → `this.fiber`.\n")
    assert run_cli("lint", "doc.md").exit_code == 0  # rc7 is known without any dshaudit.toml
    (tmp_path / "bare.md").write_text("See `vendor/cordis/src/context.ts:77`.\n")
    run = run_cli("check", "bare.md")
    assert run.exit_code == 2
    assert "no pin" in run.stderr and "--pin" in run.stderr and "pin: NAME" in run.stderr and "rc2, rc7" in run.stderr


# -- a corpus with code of its own -------------------------------------------------------------

COURSE_README = """\
# A course on DSH

The registry lives in [index.ts]({web}/blob/{sha}/packages/core/agent/src/index.ts):
`AgentRegistry` keeps the factories. Our port keeps them in `FactoryStore`, and
`compact_history` trims the log the way `compactLog` would in `packages/core/agent/src/index.ts`.
Set `npm_config_frobnicate` before you run it.

```python
def render_page(store):
    return store
```

`render_page` prints what `ctx.registry` holds.
"""


def test_the_names_a_document_s_own_repository_defines_are_not_claims_about_dsh(workspace, tmp_path, fixture_repo):
    """A course with its own Python code, linking DSH by permalink: the names its code (or its
    own code blocks) defines are its own; a name neither it nor DSH has is still a phantom."""
    from fixture_repo import _commit, _write, git

    course = workspace / "course"
    course.mkdir()
    git(course, "init", "-q", "-b", "main")
    _write(course, "port/store.py", "class FactoryStore:\n    pass\n\n\ndef compact_history(log):\n    return log\n")
    _commit(course, "the port", "2026-08-01T10:00:00Z", "port")
    readme = course / "README.md"
    readme.write_text(COURSE_README.format(web=WEB, sha=fixture_repo.shas["v1"]))
    run = run_cli("check", str(readme), "--pin", "v1", "--format", "json")
    assert run.exit_code == 1, run.stderr
    refs = {r["text"]: (r["status"], r["message"]) for r in run.json["references"]}
    assert refs["AgentRegistry"][0] == "ok"
    assert refs["FactoryStore"] == ("ok", "defined by the document's own repository, at port/store.py:1")
    assert refs["compact_history"] == ("ok", "defined by the document's own repository, at port/store.py:5")
    assert refs["render_page"] == ("ok", "introduced by this document")
    assert refs["compactLog"][0] == "phantom"
    assert "npm_config_frobnicate" not in refs  # nothing ties it to DSH: not a claim about it
    # Its code is an input of the check: renamed there, the name is no longer its own.
    (course / "port/store.py").write_text("class RegistryPort:\n    pass\n")
    again = run_cli("-v", "check", str(readme), "--pin", "v1", "--format", "json")
    assert "earlier run" not in again.stderr
    assert {r["text"]: r["status"] for r in again.json["references"]}["FactoryStore"] == "phantom"


def test_shape_alone_flags_only_in_a_document_written_for_dshaudit(workspace):
    """A citation that starts on a blank line looks moved; a finding (pinned) hears so,
    a document nobody wrote for dshaudit (no pin of its own) does not: shape is no evidence."""
    body = f"See `{CONTEXT}:7-9` for the setup.\n"
    assert [c["status"] for c in verdicts(workspace, body)] == ["suspect"]
    (workspace / "findings" / "f.md").write_text(body)  # the same text, with no front matter
    run = run_cli("check", "--pin", "v1", "--format", "json")
    assert [c["status"] for c in run.json["citations"]] == ["ok"]


# -- evidence, not shape, in a document not written for dshaudit ---------------------------------

BRIDGE = (
    "export function startBridge(conn) {\n"
    "  conn.on('prompt', (request) => {\n"
    "    return sendPrompt(request.text)\n"
    "  })\n"
    "\n"
    "  // Permission requests become one-shot choices for the client.\n"
    "  conn.on('approval', (request) => {\n"
    "    return conn.requestPermission({ options: ['allow_once', 'reject_once'] })\n"
    "  })\n"
    "}\n" + "".join(f"\nexport function helper{n}(value) {{\n  return value + {n}\n}}\n" for n in range(40))
)


def test_a_permalink_whose_lines_hold_other_code_names_where_its_description_is(
    workspace, fixture_repo, tmp_path, monkeypatch
):
    """Lines 2-4 hold the prompt handler; the link text speaks of permission choices, at 6-9.
    Carried to a later pin it says so too: the lines were wrong where the document was written."""
    shas = extend_fixture(
        workspace,
        fixture_repo,
        tmp_path,
        monkeypatch,
        ("bridged", {"packages/acp/src/bridge.ts": BRIDGE}),
        ("later", {"packages/acp/src/bridge.ts": "// a first line\n" + BRIDGE}),
    )
    link = f"{WEB}/blob/{shas['bridged']}/packages/acp/src/bridge.ts"
    body = f"- [Permission choices for the client]({link}#L2-L4)\n- [Permission choices, cited right]({link}#L6-L9)\n"
    page = workspace / "findings" / "f.md"
    page.write_text(body)  # no front matter: not written for dshaudit

    def checked(*args: str) -> list[dict]:
        run = run_cli("check", "--format", "json", *args)
        assert run.exit_code in (0, 1), run.stderr
        return run.json["citations"]

    got = checked()
    assert [c["status"] for c in got] == ["suspect", "ok"]
    assert "lines 6-8 (requestPermission, Permission, client) better than the cited 2-4" in got[0]["message"]
    later = checked("--pin", "later")
    assert later[0]["status"] == "suspect" and "already at" in later[0]["message"]
    assert later[1]["status"] == "moved_since" and "bridge.ts:7-10 at later" in later[1]["message"]


# A workflow whose `grid:` block says which runtimes a job runs on; the job's steps come after it.
WORKFLOW = """jobs:
  lint:
    runs-on: box
    steps:
      - run: make lint
  checks:
    strategy:
      grid:
        include:
          - runtime: '20'
          - runtime: '22'
    steps:
      - uses: setup@v1
        with:
          version: ${{ grid.runtime }}
      - run: make check
  docs:
    runs-on: box
    steps:
      - run: make docs
"""


@pytest.mark.parametrize(
    "lines, status",
    [
        ("L8-L12", "ok"),  # the `grid:` block itself
        ("L7-L13", "ok"),  # around it
        ("L13-L18", "suspect"),  # the steps after it, and the next job: the grid is named, not cited
        ("L2-L6", "suspect"),  # another job
    ],
)
def test_a_key_a_description_names_must_be_among_the_cited_lines(
    workspace, fixture_repo, tmp_path, monkeypatch, lines, status
):
    """In a YAML or JSON file, a key the link text names by a word of its own is what it describes:
    cited lines apart from each of that key's blocks are suspect, and its block is offered instead."""
    shas = extend_fixture(workspace, fixture_repo, tmp_path, monkeypatch, ("ci", {".ci/workflow.yml": WORKFLOW}))
    link = f"{WEB}/blob/{shas['ci']}/.ci/workflow.yml#{lines}"
    (workspace / "findings" / "f.md").write_text(f"- [Runtime test grid]({link})\n")
    run = run_cli("check", "--format", "json")
    assert run.exit_code in (0, 1), run.stderr
    (got,) = run.json["citations"]
    assert got["status"] == status, got["message"]
    if status == "suspect":
        assert "names `grid`, the key of lines 8-11" in got["message"]
        assert got["suggested"] == "8-11"


def test_a_document_whose_permalinks_agree_has_its_names_checked_at_that_commit(workspace, fixture_repo):
    v1, v2 = fixture_repo.shas["v1"], fixture_repo.shas["v2"]
    page = workspace / "findings" / "f.md"
    page.write_text(
        f"The [context]({WEB}/blob/{v1}/{CONTEXT}) keeps `fiber` and `noSuchFiberName`.\n"
        f"So does [it again]({WEB}/blob/{v1}/{CONTEXT}#L5).\n"
    )
    run = run_cli("check", "--format", "json")
    assert run.exit_code == 1, run.stderr
    refs = {r["text"]: r for r in run.json["references"]}
    assert refs["noSuchFiberName"]["status"] == "phantom" and v1[:8] in refs["noSuchFiberName"]["message"]
    assert refs["fiber"]["status"] == "ok"
    # Links at two commits: no default, and stderr says why the names went unchecked.
    page.write_text(page.read_text().replace(f"blob/{v1}/{CONTEXT}#L5", f"blob/{v2}/{CONTEXT}#L5"))
    run = run_cli("check", "--format", "json")
    assert run.exit_code == 0, run.stderr
    assert run.json["references"] == []
    assert "link DSH at several commits" in run.stderr and "findings/f.md" in run.stderr


def test_shell_output_fields_and_run_time_folders_are_not_claims_about_dsh(workspace, fixture_repo):
    """A page someone else wrote: a field of a PowerShell cmdlet's output, and a state folder a
    run makes in a user's project, are not DSH's; a name and a path it lacks still are flagged."""
    v1 = fixture_repo.shas["v1"]
    page = workspace / "findings" / "f.md"
    page.write_text(
        f"See [the context]({WEB}/blob/{v1}/{CONTEXT}).\n\n"
        "```powershell\nGet-CimInstance Win32_Process | Select-Object ProcessId,ImageFullPath\n```\n\n"
        f"Match the process that runs `{AGENT}` to its `ImageFullPath`.\n\n"
        f"The `{AGENT}` module keeps `NoSuchContextName`.\n\n"
        "A file under `packages/demo/.tool/cache` is kept, unlike `packages/demo/src/ghost.ts`.\n"
    )
    run = run_cli("check", "--format", "json")
    assert run.exit_code == 1, run.stderr
    refs = {r["text"]: r["status"] for r in run.json["references"]}
    assert "ImageFullPath" not in refs and "packages/demo/.tool/cache" not in refs, refs
    assert refs["NoSuchContextName"] == "phantom" and refs["packages/demo/src/ghost.ts"] == "phantom", refs


def test_names_listed_beside_a_linked_file_must_be_declared_there(workspace, fixture_repo):
    """A course's table of files, each with what it declares (as teaching repositories list them)."""
    v1 = fixture_repo.shas["v1"]
    agent = f"{WEB}/blob/{v1}/{AGENT}"
    context = f"{WEB}/blob/{v1}/{CONTEXT}"
    page = workspace / "findings" / "f.md"
    page.write_text(
        "| File | Declares |\n|---|---|\n"
        f"| [`agent/src/index.ts`]({agent}) | `class AgentRegistry`, `AgentRegistry.setFactory` |\n"
        f"| [`context.ts`]({context}) | `class Context`, `createAgent()` |\n"
        f"| [`context.ts`]({context}) | `class Fiber` |\n"
        "\nThe `createAgent` helper, named in prose with no link, is not listed.\n"
    )
    run = run_cli("check", "--format", "json")
    assert run.exit_code == 1, run.stderr
    got = {(r["source"]["line"], r["text"]): (r["status"], r["message"]) for r in run.json["references"]}
    assert got[(3, "class AgentRegistry")][0] == "ok"
    assert got[(3, "AgentRegistry.setFactory")] == (
        "ok",
        f"`AgentRegistry.setFactory` is declared at {AGENT}:17",
    )
    assert got[(4, "class Context")][0] == "ok"
    status, message = got[(4, "createAgent()")]
    assert status == "declared_elsewhere" and f"it is declared at {AGENT}:24" in message
    status, message = got[(5, "class Fiber")]
    assert status == "not_declared" and "`Fiber` is used in" in message and "no file declares it" in message


def test_a_count_stated_beside_a_file_a_fact_measures_is_compared_with_the_fact(workspace, fixture_repo):
    """`core.context-builtin-services` measures context.ts alone; a count of its services beside a
    link to that file is compared with it, and a count of something else is left alone."""
    v1 = fixture_repo.shas["v1"]
    page = workspace / "findings" / "f.md"

    def stated(count: int) -> list[dict]:
        page.write_text(
            f"The root [context]({WEB}/blob/{v1}/{CONTEXT}) builds {count} builtin services, in 3 lines of setup.\n"
        )
        run = run_cli("check", "--format", "json")
        assert run.exit_code in (0, 1), run.stderr
        return [r for r in run.json["references"] if r["kind"] == "stated"]

    (right,) = [r for r in stated(2) if r["status"] == "ok"] or stated(2)
    measured = int(right["message"].split(" is ")[1].split()[0])
    assert [r["status"] for r in stated(measured)] == ["ok"]
    (wrong,) = stated(measured + 1)
    assert wrong["status"] == "value_differs"
    assert f"the text says {measured + 1}; `core.context-builtin-services` is {measured}" in wrong["message"]
    assert "counting rule: Services the Cordis root" in wrong["message"]


COURSE_LESSON = """\
# Lesson 2: the registry

| File | What it holds |
|---|---|
| [`agent/src/index.ts`]({web}/blob/{sha}/packages/core/agent/src/index.ts) | `class AgentRegistry`, `createAgent()` |
| [`cordis/src/context.ts`]({web}/blob/{sha}/vendor/cordis/src/context.ts) | `AgentRegistry.setFactory` |

The root [context]({web}/blob/{sha}/vendor/cordis/src/context.ts) builds {count} builtin services.
Our Python port keeps them in `ServiceTable`, built by `build_services`.
"""


def test_a_teaching_corpus_is_judged_on_what_it_says_of_dsh(workspace, tmp_path, fixture_repo):
    """A course repository with its own Python code, linking DSH by permalink at one commit and
    listing each file's names beside it: its own names are never flagged; a name listed beside the
    wrong file is caught, with the right file; a count one too high is caught against its fact."""
    from fixture_repo import _commit, _write, git

    course = workspace / "course"
    course.mkdir()
    git(course, "init", "-q", "-b", "main")
    _write(course, "port/services.py", "class ServiceTable:\n    pass\n\n\ndef build_services():\n    return {}\n")
    _commit(course, "the port", "2026-08-01T10:00:00Z", "port")
    lesson = course / "lesson.md"
    v1 = fixture_repo.shas["v1"]

    def checked(count: int) -> dict[str, tuple[str, str]]:
        lesson.write_text(COURSE_LESSON.format(web=WEB, sha=v1, count=count))
        run = run_cli("check", str(lesson), "--format", "json")
        assert run.exit_code in (0, 1), run.stderr
        return {r["text"]: (r["status"], r["message"]) for r in run.json["references"]}

    first = checked(0)
    measured = int(next(m for t, (s, m) in first.items() if t.startswith("0 ")).split(" is ")[1].split()[0])
    refs = checked(measured + 1)
    assert refs["class AgentRegistry"][0] == "ok"
    assert refs["createAgent()"][0] == "ok"
    status, message = refs["AgentRegistry.setFactory"]
    assert status == "declared_elsewhere" and "packages/core/agent/src/index.ts:17" in message
    (stated,) = [v for t, v in refs.items() if t.startswith(f"{measured + 1} ")]
    assert stated[0] == "value_differs" and f"is {measured}" in stated[1]
    assert all(s == "ok" for t, (s, _) in refs.items() if t in ("ServiceTable", "build_services"))
    assert [t for t, (s, _) in refs.items() if s != "ok"] == [
        "AgentRegistry.setFactory",
        f"{measured + 1} builtin services.",
    ]


TABLE_TS = """\
export function createSchema(db) {
  db.exec(`
    CREATE TABLE IF NOT EXISTS events (
      session_id TEXT NOT NULL,
      sequence_number INTEGER NOT NULL,
      payload_text TEXT NOT NULL,
      PRIMARY KEY (session_id, sequence_number)
    )
  `)
}
"""


def test_an_unanchored_citation_whose_lines_were_edited_is_followed_to_where_its_text_went(
    workspace, fixture_repo, tmp_path, monkeypatch
):
    """At `moved`, the table's text leaves schema.ts for schema.sql, spaced otherwise; at `edited`,
    back in schema.ts, it is edited in place (a column renamed) and shifted down."""
    shas = extend_fixture(
        workspace,
        fixture_repo,
        tmp_path,
        monkeypatch,
        ("start", {"packages/store/src/schema.ts": TABLE_TS}),
        (
            "moved",
            {
                "packages/store/src/schema.ts": "export function createSchema(db) {\n  db.exec(readSql())\n}\n",
                "packages/store/sql/schema.sql": "-- the schema\n\n"
                + "\n".join(line.strip() for line in TABLE_TS.split("\n")[2:8])
                + ";\n",
            },
        ),
        ("edited", {"packages/store/src/schema.ts": "// the schema\n\n\n" + TABLE_TS.replace("payload_text", "body")}),
    )
    link = f"{WEB}/blob/{shas['start']}/packages/store/src/schema.ts#L3-L8"
    page = workspace / "findings" / "f.md"
    page.write_text(f"- [The events table and its key]({link})\n")
    run = run_cli("check", "--pin", "moved", "--format", "json")
    (gone,) = run.json["citations"]
    assert gone["status"] == "gone_since", gone["message"]
    assert "it is at packages/store/sql/schema.sql:3-7 at moved" in gone["message"]
    run = run_cli("check", "--pin", "edited", "--format", "json")
    (changed,) = run.json["citations"]
    assert changed["status"] == "changed_since", changed["message"]
    assert "most of their text is at packages/store/src/schema.ts:6-10 at edited" in changed["message"]


def _bridge_link_checked(
    workspace, fixture_repo, tmp_path, monkeypatch, later: tuple[str, str], lines: str, text: str
) -> tuple[dict[str, str], dict]:
    """The bridge at `bridged`, then as `later` has it; one link at `later` to `lines`, with
    `text`, checked: the commits and the citation's verdict."""
    name, content = later
    shas = extend_fixture(
        workspace,
        fixture_repo,
        tmp_path,
        monkeypatch,
        ("bridged", {"packages/acp/src/bridge.ts": BRIDGE}),
        (name, {"packages/acp/src/bridge.ts": content}),
    )
    link = f"{WEB}/blob/{shas[name]}/packages/acp/src/bridge.ts#{lines}"
    (workspace / "findings" / "f.md").write_text(f"- [{text}]({link})\n")
    run = run_cli("check", "--format", "json")
    assert run.exit_code in (0, 1), run.stderr
    (got,) = run.json["citations"]
    return shas, got


def test_numbers_read_from_another_version_of_the_file_are_traced_to_it(workspace, fixture_repo, tmp_path, monkeypatch):
    """The link names `grown`, where ten lines came above the code; its numbers are those of `bridged`."""
    grown = "".join(f"// note {n}\n" for n in range(10)) + BRIDGE
    shas, got = _bridge_link_checked(
        workspace, fixture_repo, tmp_path, monkeypatch, ("grown", grown), "L6-L8", "Permission choices for the client"
    )
    assert got["status"] == "suspect", got["message"]
    assert "match lines 16-18" in got["message"]
    assert (
        f"these numbers match the file from {shas['bridged'][:12]} until {shas['grown'][:12]}, the commit cited"
    ) in got["message"]


def test_a_range_past_the_end_is_traced_to_a_longer_version(workspace, fixture_repo, tmp_path, monkeypatch):
    """The link names `trimmed`, where the helpers went; its range is the file as `bridged` had it."""
    trimmed = BRIDGE.split("\nexport function helper0")[0]
    lines = f"L1-L{BRIDGE.count(chr(10))}"
    shas, got = _bridge_link_checked(
        workspace,
        fixture_repo,
        tmp_path,
        monkeypatch,
        ("trimmed", trimmed),
        lines,
        "Prompt, permission and client wiring",
    )
    assert got["status"] == "out_of_range", got["message"]
    assert f"these numbers match the file from {shas['bridged'][:12]} until {shas['trimmed'][:12]}" in got["message"]


def test_anchor_offers_the_lines_a_suspect_permalink_s_text_describes(workspace, fixture_repo, tmp_path, monkeypatch):
    shas = extend_fixture(
        workspace, fixture_repo, tmp_path, monkeypatch, ("bridged", {"packages/acp/src/bridge.ts": BRIDGE})
    )
    page = workspace / "findings" / "f.md"
    link = f"{WEB}/blob/{shas['bridged']}/packages/acp/src/bridge.ts"
    page.write_text(f"- [Permission choices for the client]({link}#L2-L4)\n")
    run = run_cli("check", "--format", "json")
    assert run.json["citations"][0]["suggested"] == "6-8"
    assert run_cli("anchor", str(page), "--write").exit_code == 0
    assert page.read_text() == f"- [Permission choices for the client]({link}#L6-L8)\n"
    assert run_cli("check", "--format", "json").json["citations"][0]["status"] == "ok"


def test_rebase_carries_a_document_pinned_by_its_permalinks(workspace, fixture_repo):
    """No front matter: the commit its permalinks agree on is where it is carried from, and each
    permalink is rewritten to the new commit, its lines moved with the code."""
    v1, v2 = fixture_repo.shas["v1"], fixture_repo.shas["v2"]
    page = workspace / "findings" / "f.md"
    page.write_text(f"The fiber: [context]({WEB}/blob/{v1}/{CONTEXT}#L14), in [a file]({WEB}/blob/{v1}/{CONTEXT}).\n")
    run = run_cli("rebase", "--to", "v2")
    assert run.exit_code == 0, run.stderr
    assert f"{WEB}/blob/{v2}/{CONTEXT}#L17: shifted" in run.stdout
    assert run_cli("rebase", "--to", "v2", "--write").exit_code == 0
    assert (
        page.read_text()
        == f"The fiber: [context]({WEB}/blob/{v2}/{CONTEXT}#L17), in [a file]({WEB}/blob/{v2}/{CONTEXT}).\n"
    )
    # Links at two commits: each is carried from its own, and the file is written once.
    v3 = fixture_repo.shas["v3"]
    page.write_text(f"[a]({WEB}/blob/{v1}/{CONTEXT}#L14) and [b]({WEB}/blob/{v2}/{CONTEXT}#L17).\n")
    run = run_cli("rebase", "--to", "v3", "--format", "json")
    assert sorted(c["status"] for c in run.json["citations"]) == ["shifted", "unchanged"], run.json["citations"]
    assert run_cli("rebase", "--to", "v3", "--write").exit_code == 0
    assert page.read_text() == f"[a]({WEB}/blob/{v3}/{CONTEXT}#L17) and [b]({WEB}/blob/{v3}/{CONTEXT}#L17).\n"


def test_history_walks_a_permalink_from_its_commit(workspace, fixture_repo):
    """A permalink at the walk's first commit is carried through every commit, as a citation of
    the document's pin is; one at another commit keeps its verdict there."""
    v1, v2 = fixture_repo.shas["v1"], fixture_repo.shas["v2"]
    page = workspace / "findings" / "f.md"
    page.write_text(f"The fiber: [context]({WEB}/blob/{v1}/{CONTEXT}#L14) → `this.fiber`.\n")
    run = run_cli("history", "--from", "v1", "--to", "v2", "--format", "json")
    assert run.exit_code in (0, 1), run.stderr
    (walked,) = run.json["citations"]
    assert walked["now_at"] == f"{CONTEXT}:17"
    page.write_text(f"The fiber: [context]({WEB}/blob/{v2}/{CONTEXT}#L17) → `this.fiber`.\n")
    run = run_cli("history", "--from", "v1", "--to", "v2", "--format", "json")
    (fixed,) = run.json["citations"]
    assert fixed["now_at"] is None and fixed["status_at_to"] == "ok"  # read at v2, its own commit


def test_an_event_name_beside_a_dsh_file_is_looked_up_as_a_string(workspace, fixture_repo, tmp_path, monkeypatch):
    shas = extend_fixture(
        workspace,
        fixture_repo,
        tmp_path,
        monkeypatch,
        ("events", {"packages/core/session/src/events.ts": "export const TURN_END = 'turn/end'\n"}),
    )
    link = f"{WEB}/blob/{shas['events']}/packages/core/session/src/events.ts"
    page = workspace / "findings" / "f.md"
    page.write_text(f"The [events]({link}) file names `turn/end` and `turn/lost`.\n")
    run = run_cli("check", "--format", "json")
    got = {r["text"]: (r["kind"], r["status"]) for r in run.json["references"]}
    assert got["turn/end"] == ("string", "ok")
    assert got["turn/lost"] == ("string", "phantom")
