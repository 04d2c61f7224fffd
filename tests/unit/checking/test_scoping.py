"""Which names of a document not written for dshaudit are claims about DSH (checking/scoping.py)."""

from dshaudit.checking.mentions import document_names
from dshaudit.checking.scoping import DshTies, owner_scope
from dshaudit.core.model import Citation, SourceLocation
from dshaudit.documents.stretches import outline

ROOTS = {"packages", "vendor"}


def _checked(text: str, citations: tuple[Citation, ...] = ()) -> set[str]:
    ties = DshTies(
        text, outline(text), citations, lambda p: p.split("/")[0] in ROOTS, "@acme", "https://example.invalid/acme/h"
    )
    return {n.text for n, _, _ in document_names(text) if ties.about_dsh(n)}


def test_a_name_is_checked_only_where_the_text_ties_it_to_dsh():
    text = (
        "The loop lives in `packages/core/loop.ts`: `runLoop` drives it.\n\n"
        "npm then prints `ERR_SOME_TOOL_CODE` and stops.\n\n"
        "The `ctx.session` service keeps `appendEvent`.\n\n"
        "Install `@acme/cli-tool` to get `startCli`.\n"
    )
    checked = _checked(text)
    assert {"packages/core/loop.ts", "runLoop", "ctx.session", "appendEvent", "@acme/cli-tool", "startCli"} <= checked
    assert "ERR_SOME_TOOL_CODE" not in checked


def test_a_citation_in_the_sentence_ties_it():
    text = "Here `makeThing` is built (see the link).\n"
    cited = Citation(
        path="x.ts", lines=(), symbol=None, pin_ref=None, anchors=(), source=SourceLocation("d.md", 1, 28), text="x"
    )
    assert _checked(text) == set()
    assert _checked(text, (cited,)) == {"makeThing"}


def test_a_heading_ties_its_section():
    text = "## Inside `packages/core`\n\nThe `buildIndex` step runs first.\n\n## Elsewhere\n\nThe `otherStep` runs.\n"
    checked = _checked(text)
    assert "buildIndex" in checked and "otherStep" not in checked


def test_names_the_text_calls_its_own_new_or_absent_are_not_claims():
    text = (
        "In `packages/core/loop.ts` add a new `retryBudget` option.\n\n"
        "In `packages/core/loop.ts` there is no `maxSteps` limit.\n\n"
        "Our `packages/core/loop.ts` wrapper, for example `myWrapper`, is our own.\n\n"
        "In `packages/core/loop.ts`, `realName` runs.\n"
    )
    checked = _checked(text)
    assert "realName" in checked
    assert not {"retryBudget", "maxSteps", "myWrapper"} & checked


def test_a_path_outside_dsh_roots_ties_nothing():
    assert _checked("In `src/app.ts`, `helperFn` runs.\n") == set()


def test_the_owner_scope_comes_from_the_web_address():
    assert owner_scope("https://github.com/acme-ai/harness") == "@acme-ai"
    assert owner_scope("https://github.com/acme-ai/harness/") == "@acme-ai"


def test_the_text_of_a_link_to_another_site_names_what_is_there():
    text = (
        "See [the npm page of `@acme/gone-pkg`](https://www.npmjs.com/package/@acme/gone-pkg) and "
        "[`@acme/kept`](https://example.invalid/acme/h/blob/abc1234/packages/kept/package.json).\n"
    )
    checked = _checked(text)
    assert "@acme/kept" in checked and "@acme/gone-pkg" not in checked
