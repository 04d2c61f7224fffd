"""`dshaudit anchor`: documents turned into findings, every other byte kept."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from conftest import run_cli, write_findings
from dshaudit.documents.grammar import find_citations

WEB = "https://example.invalid/dsh"
CONTEXT = "vendor/cordis/src/context.ts"
AGENT = "packages/core/agent/src/index.ts"

BODY = f"""# A spec

The fiber comes first (`{CONTEXT}:14`), then the reflect service at {CONTEXT}:15.
The registry is filled through `setFactory` in `{AGENT}`（第 17 行）, see also {AGENT} (line 19).
Permalinked: {WEB}/blob/v1/{CONTEXT}#L16 and a symbol `agent/src/index.ts:AgentRegistry.setFactory`.
Suspect: the factory is set by AgentRegistry.setFactory ({AGENT}:2).
Anchored already: `{CONTEXT}:14` → `this.fiber`.
"""


def test_anchor_lists_then_writes_and_the_result_holds(workspace, fixture_repo):
    path = write_findings(workspace, BODY)
    before = path.read_bytes()
    listed = run_cli("anchor", str(path.relative_to(workspace)))
    assert listed.exit_code == 0 and path.read_bytes() == before  # listing writes nothing
    run = run_cli("anchor", str(path.relative_to(workspace)), "--write", "--format", "json")
    assert run.exit_code == 0, run.stderr
    after = path.read_text()
    lines = after.split("\n")
    # No name in the sentence is on line 14: the rarest token of the line (`Object` is on no other).
    assert (
        lines[5] == f"The fiber comes first (`{CONTEXT}:14` → `Object`), then the reflect service at "
        f"{CONTEXT}:15 → `ReflectService`."
    )
    # `setFactory`, named in the sentence, is on line 17; line 19 gets its rarest token.
    assert re.fullmatch(
        rf"The registry is filled through `setFactory` in `{AGENT}:17` → `setFactory`, "
        rf"see also `{AGENT}:19` → `[^`]+`\.",
        lines[6],
    ), lines[6]
    # The permalink's ref is the file's own pin: no @ suffix is needed.
    assert lines[7].startswith(f"Permalinked: `{CONTEXT}:16` → `RegistryService` and")
    assert lines[7].endswith("and a symbol `agent/src/index.ts:AgentRegistry.setFactory`.")  # a symbol is an anchor
    assert lines[8] == f"Suspect: the factory is set by AgentRegistry.setFactory ({AGENT}:2)."  # never touched
    assert lines[:5] == before.decode().split("\n")[:5] and lines[9:] == before.decode().split("\n")[9:]
    checked = run_cli("check", "--format", "json").json["citations"]
    assert [c["status"] for c in checked if c["form"] == "canonical" and c["anchor"]] == ["ok"] * 6
    again = run_cli("anchor", str(path.relative_to(workspace)))
    assert again.stdout.startswith("0 citations to anchor")  # idempotent


def test_anchor_never_writes_a_file_that_changed_meanwhile(workspace, monkeypatch):
    import dshaudit.checking.anchoring as anchoring

    path = write_findings(workspace, f"The fiber comes first (`{CONTEXT}:14`).\n")
    real = anchoring.propose

    def edit_meanwhile(*args, **kwargs):
        path.write_text(path.read_text() + "typed meanwhile\n")
        return real(*args, **kwargs)

    monkeypatch.setattr(anchoring, "propose", edit_meanwhile)
    run = run_cli("anchor", "findings/f.md", "--write")
    assert run.exit_code == 2 and "changed on disk" in run.stderr
    assert path.read_text().endswith("typed meanwhile\n") and "→" not in path.read_text()


PATHS = st.from_regex(r"[a-z]{1,8}(/[a-z]{1,8}){0,3}/[a-z]{1,8}\.ts", fullmatch=True)
PARTS = st.lists(st.tuples(st.integers(1, 5000), st.integers(0, 40)), min_size=1, max_size=3)


@given(PATHS, PARTS, st.sampled_from(["（第 {} 行）", " (lines {})", ", lines {}"]))
def test_a_wild_form_and_its_canonical_rewrite_name_the_same_lines(path, parts, phrase):
    spec = ",".join(f"{a}-{a + n}" if n else str(a) for a, n in parts)
    wild = find_citations(f"see {path}" + phrase.format(spec.replace(",", "、" if "第" in phrase else ", ")) + " here")
    canonical = find_citations(f"see `{path}:{spec}` here")
    assert [(c.path, c.lines) for c in wild] == [(c.path, c.lines) for c in canonical]


@given(PATHS, st.integers(1, 5000), st.integers(0, 40), st.integers(1, 5000))
def test_a_fragment_and_a_continuation_name_the_lines_their_rewrites_do(path, a, n, b):
    lines = f"{a}-{a + n}" if n else str(a)
    wild = find_citations(f"see `{path}#L{a}" + (f"-L{a + n}" if n else "") + f"` and `:{b}` here")
    canonical = find_citations(f"see `{path}:{lines}` and `{path}:{b}` here")
    assert [(c.path, c.lines) for c in wild] == [(c.path, c.lines) for c in canonical]
    assert [c.form for c in wild] == ["line-fragment", "continuation"]


def test_a_fragment_and_a_continuation_are_rewritten_with_the_file_they_name(workspace):
    path = write_findings(
        workspace, f"# Notes\n\nThe fiber is made at `{CONTEXT}#L14-L15`, the reflect service `:15`.\n"
    )
    run = run_cli("anchor", str(path.relative_to(workspace)), "--write")
    assert run.exit_code == 0, run.stderr
    line = path.read_text().split("\n")[5]
    assert re.fullmatch(
        rf"The fiber is made at `{CONTEXT}:14-15` → `[^`]+`, the reflect service "
        rf"`{CONTEXT}:15` → `[^`]+`\.",
        line,
    ), line
    checked = run_cli("check", "--format", "json").json["citations"]
    assert [(c["form"], c["status"]) for c in checked] == [("canonical", "ok"), ("canonical", "ok")]
