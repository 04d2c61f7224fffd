"""DSH's own documentation read from the tree (treedocs.py): relative links from
nested folders, `#L` forms, links leaving the tree, the generated-catalogue
idiom of a fence beside a `Source:` line, and documents checked at a later pin."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from conftest import extend_fixture, run_cli
from dshaudit.documents.grammar import find_citations
from fixture_repo import CONTEXT_V2

CONTEXT = "vendor/cordis/src/context.ts"

# A page three folders deep: every link climbs back to the root of the tree.
PAGE = """\
# A page

The fiber is built first ([fiber](../../../vendor/cordis/src/context.ts#L17)).
The reflect and registry services follow ([two](../../../vendor/cordis/src/context.ts#L18-L19)),
and a bare range form ([also](../../../vendor/cordis/src/context.ts#L18-19)).
A link to a whole file is a link ([file](../../../vendor/cordis/src/context.ts)), and so is a
heading ([up](#a-page)) or another page ([next](next.md)).
This one leaves the tree ([out](../../../../outside.ts#L1)).
"""

# The generated catalogues' idiom, in both orders and both languages.
CATALOG = """\
# Catalogue

```ts
/** The root context. */
export class Context {
  get name(): string
}
```

Source: [`vendor/cordis/src/context.ts:8`](../vendor/cordis/src/context.ts)

来源：[`vendor/cordis/src/context.ts:34`](../vendor/cordis/src/context.ts)

```ts
export interface Config {
```

```ts
export interface Config {
```

Source: [`vendor/cordis/src/context.ts:4`](../vendor/cordis/src/context.ts)
"""

# Text inserted above the constructor: everything below it moves down by three.
LATER = CONTEXT_V2.replace("export class Context {\n", "/**\n * The root.\n */\nexport class Context {\n")


@pytest.fixture
def docs_repo(workspace, fixture_repo, tmp_path, monkeypatch):
    """The fixture, plus docs at commit `docs`, plus a commit `later` that moves the cited code."""
    extend_fixture(
        workspace,
        fixture_repo,
        tmp_path,
        monkeypatch,
        (
            "docs",
            {
                "docs/guide/deep/page.md": PAGE,
                "docs/catalog.md": CATALOG,
                "packages/core/README.md": "See [the constructor](../../vendor/cordis/src/context.ts#L15).\n",
            },
        ),
        ("later", {CONTEXT: LATER}),
    )
    return workspace


def tree_check(*args: str) -> dict:
    run = run_cli("check", *args, "--format", "json")
    assert run.exit_code in (0, 1), run.stderr
    return run.json


def by_line(doc: dict, file: str) -> dict[int, list[dict]]:
    out: dict[int, list[dict]] = {}
    for c in doc["citations"]:
        if c["source"]["file"] == file:
            out.setdefault(c["source"]["line"], []).append(c)
    return out


def test_relative_links_resolve_from_the_documents_own_folder(docs_repo):
    doc = tree_check("--tree-docs", "docs:docs")
    page = by_line(doc, "docs/guide/deep/page.md")
    assert [(c["target"]["path"], c["target"]["lines"], c["form"]) for c in page[3]] == [
        (CONTEXT, "17", "relative-link")
    ]
    assert [c["target"]["lines"] for c in page[4]] == ["18-19"]
    assert [c["target"]["lines"] for c in page[5]] == ["18-19"]
    assert 6 not in page and 7 not in page  # a whole file, a heading, another page: links
    assert all(c["status"] == "ok" for line in (3, 4, 5) for c in page[line])
    # Only the folder asked for: packages/core/README.md is not under docs/.
    assert {c["source"]["file"] for c in doc["citations"]} == {"docs/guide/deep/page.md", "docs/catalog.md"}


def test_a_link_leaving_the_tree_is_an_error_and_nothing_is_read_outside(docs_repo, tmp_path):
    (tmp_path / "outside.ts").write_text("secret\n")
    doc = tree_check("--tree-docs", "docs:docs")
    (out,) = by_line(doc, "docs/guide/deep/page.md")[8]
    assert out["status"] == "invalid_citation"
    assert "leaves the tree" in out["message"] and "secret" not in str(doc)


def test_a_glob_of_readmes(docs_repo):
    doc = tree_check("--tree-docs", "docs:packages/**/README.md")
    (c,) = doc["citations"]
    assert (c["source"]["file"], c["target"]["path"], c["status"]) == ("packages/core/README.md", CONTEXT, "ok")


def test_a_fence_beside_a_source_line_is_the_declaration_it_cites(docs_repo):
    doc = tree_check("--tree-docs", "docs:docs")
    catalog = by_line(doc, "docs/catalog.md")
    # Before the Source line, a class cited at its first line: its member is in the class.
    assert catalog[10][0]["status"] == "ok", catalog[10]
    assert catalog[10][0]["anchor"] is not None
    # 来源 before the fence: line 34 opens `export interface Config {`.
    assert catalog[12][0]["status"] == "ok", catalog[12]
    # Source after the fence, at the wrong declaration: line 4 is `export interface Context {`.
    (wrong,) = catalog[22]
    assert wrong["status"] == "content_mismatch"
    assert "`export interface Config {`, quoted beside the citation, is not in the declaration" in wrong["message"]
    assert "it is at line 34" in wrong["message"]


def test_documents_checked_at_a_later_pin_say_what_moved(docs_repo):
    doc = tree_check("--tree-docs", "docs:docs", "--pin", "later")
    page = by_line(doc, "docs/guide/deep/page.md")
    (fiber,) = page[3]
    assert fiber["status"] == "moved_since"
    assert fiber["message"] == f"the text it cited at docs is at {CONTEXT}:20 at later"
    # Line 8 of the catalogue (`export class Context {`) was edited around: its text moved too.
    assert by_line(doc, "docs/catalog.md")[10][0]["status"] in ("moved_since", "changed_since")
    # Line 4 is above the insertion: unchanged, and still wrong as it was at docs.
    assert by_line(doc, "docs/catalog.md")[22][0]["status"] == "content_mismatch"
    # The same documents at their own pin: everything they cite still holds there.
    at_own = tree_check("--tree-docs", "docs:docs")
    assert by_line(at_own, "docs/guide/deep/page.md")[3][0]["status"] == "ok"


@pytest.mark.parametrize(
    "spec, said",
    [
        ("nosuchpin:docs", "--tree-docs PIN"),
        ("docs:nowhere", "no Markdown file there"),
        ("docs:../x", "'.' and '..' are not allowed"),
        (":docs", "expected PIN[:DIR]"),
    ],
)
def test_bad_tree_docs_are_one_line_errors(docs_repo, spec, said):
    run = run_cli("check", "--tree-docs", spec)
    assert run.exit_code == 2 and said in run.stderr, run.stderr
    assert "Traceback" not in run.stderr


def test_a_finding_states_the_docs_figures_as_claims(docs_repo):
    from conftest import write_findings

    write_findings(
        docs_repo,
        "`claim: tree-docs('docs').count == 7`\n"
        "`claim: tree-docs('docs').documents == 3`\n"
        "`claim: tree-docs('docs').failing_documents == [docs/catalog.md, docs/guide/deep/page.md]`\n"
        "`claim: tree-docs('docs', 'later').moved_since >= 1`\n"
        "`claim: tree-docs('docs:docs').held == tree`\n",
        pin="docs",
    )
    run = run_cli("check", "--format", "json")
    got = [(c["status"], c.get("measured")) for c in run.json["claims"]]
    assert got[:4] == [
        ("confirmed", 7),
        ("confirmed", 3),
        ("confirmed", ["docs/catalog.md", "docs/guide/deep/page.md"]),
        ("confirmed", got[3][1]),
    ]
    assert got[4] == ("contradicted", 5)  # 5 of the 7 hold: the link out of the tree and line 4 do not
    again = run_cli("check", "--format", "json")  # from the cache: the same figures
    assert [(c["status"], c.get("measured")) for c in again.json["claims"]] == got


def test_report_renders_tree_documents(docs_repo, tmp_path):
    out = tmp_path / "docs.html"
    run = run_cli("report", "--tree-docs", "docs:docs", "--pin", "later", "--output", str(out))
    assert run.exit_code == 1, run.stderr  # some cited text moved by `later`
    html = out.read_text()
    assert "docs/guide/deep/page.md" in html and "moved_since" in html


@given(st.text(max_size=120), st.sampled_from(["", "docs", "docs/a/b"]))
def test_relative_links_never_raise_and_never_leave_the_tree_unflagged(text, base):
    for raw in find_citations(text, link_base=base):
        if raw.form == "relative-link" and raw.problem is None:
            assert not raw.path.startswith(("/", "../")) and raw.path != ".."
            assert raw.lines


@pytest.mark.parametrize(
    "link, base, path, lines",
    [
        ("[a](../x.ts#L3)", "docs", "x.ts", [(3, 3)]),
        ("[a](./y/x.ts#L3-L9)", "docs", "docs/y/x.ts", [(3, 9)]),
        ("[a](<../../p/x.ts#L3-9>)", "docs/sub", "p/x.ts", [(3, 9)]),
        ('[a](../x.ts#L3 "title")', "docs", "x.ts", [(3, 3)]),
    ],
)
def test_relative_link_forms(link, base, path, lines):
    (raw,) = find_citations(link, link_base=base)
    assert (raw.path, [(r.start, r.end) for r in raw.lines], raw.problem) == (path, lines, None)
