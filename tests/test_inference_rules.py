"""The rules that judge an unanchored citation (inference.py), each on a small
file written here: what makes cited lines `suspect`, and what keeps them."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dshaudit.inference import FileView, Inferred, WordIndex, infer, suspect
from dshaudit.model import LineRange

EVENTS = """\
/**
 * Events the core emits.
 */
export interface Events {
  /** A plugin was created. */
  'internal/plugin'(fiber: Fiber): void
  /** A fiber changed state. */
  'internal/status'(fiber: Fiber): void
}

declare module './context.ts' {
  interface Context {
    effect(run: () => void): void
  }
}

export function start(config: Config) {
  try {
    const handle = open(config.path)
    // Open the handle first, then read: a missing file (or a
    // directory) fails here, before anything is written.
    return read(handle)
  } finally {
    close()
  }
}
""".splitlines()


def view(lines: list[str] = EVENTS, prose: bool = False) -> FileView:
    return FileView(lines, {}, WordIndex(lines), prose)


def judge(lines: str, names: tuple[str, ...] = (), words: tuple[str, ...] = (), file: FileView | None = None) -> str | None:
    a, _, b = lines.partition("-")
    return suspect(Inferred(names, (), words), (LineRange(int(a), int(b or a)),), file or view())


@pytest.mark.parametrize("lines, said", [
    ("3-4", "where the citation starts, is only `*/`"),
    ("4-5", None),                                         # a declaration and its member's comment: fine
    ("18", "is only `try {`"),                             # a line with nothing of its own
    ("23", "is only `} finally {`"),
    ("6-7", None),                                         # ends on a one-line doc comment: it is closed
    ("19-20", "ends inside the comment that line 20 opens"),  # code, then the first line of a longer comment
    ("20-21", None),                                       # the whole comment: fine
])
def test_shape_rules(lines, said):
    got = judge(lines)
    assert (got is None) if said is None else (said in (got or "")), got


def test_a_range_ending_on_a_comment_opener_is_suspect():
    lines = ["const a = 1", "const b = 2", "/**", " * About c.", " */", "const c = 3"]
    got = judge("1-3", file=view(lines))
    assert got and "only opens a comment" in got
    assert judge("1-2", file=view(lines)) is None


def test_brackets_in_comments_and_prose_are_not_structure():
    # "(a missing file, or a\n directory)" in a comment: line 21 closes nothing of the code's.
    assert judge("21-22") is None
    paragraph = ["The loader (which boots the", "app) reads the config.", "", "More."]
    assert judge("2", file=view(paragraph, prose=True)) is None
    # The same lines as code do leave a bracket they did not open.
    assert "closes a bracket" in (judge("2", file=view(paragraph)) or "")


def test_an_event_name_with_a_slash_is_a_name_and_can_accuse():
    got = judge("5", names=("internal/status",))
    assert got and "`internal/status` is at line 8" in got
    assert judge("8", names=("internal/status",)) is None


def test_a_phrase_the_lines_spell_out_word_by_word_is_on_them():
    lines = ["/** Starts `codex app-server --stdio`. */", "export function argv() {",
             "  return ['codex', 'app-server', '--stdio']", "}"]
    assert judge("3", names=("codex app-server --stdio",), file=view(lines)) is None
    # Not when a word of it is missing from the lines: then the phrase is elsewhere.
    got = judge("3", names=("codex app-server --listen",), file=view(lines + ["// codex app-server --listen"]))
    assert got and "at line 5" in got


def test_a_path_is_not_a_name():
    chunk = "Boot reads `packages/core` first (src/index.ts:3)."
    (got,) = infer(chunk, [(chunk.index("src/"), chunk.index(")"))], [])
    assert "packages/core" not in got.names


def test_the_head_of_a_block_speaks_for_its_body():
    # `declare module './context.ts' {` cited for `ctx.effect`, a member declared in its block.
    assert judge("11", names=("ctx.effect",)) is None
    # But a member declared in the file is looked for where it is declared, not in any block around it.
    decl = FileView(EVENTS, {"Events": (LineRange(1, 9),), "Events.internal/status": (LineRange(7, 8),)},
                    WordIndex(EVENTS))
    got = suspect(Inferred(("Events.internal/status",), (), ()), (LineRange(4, 4),), decl)
    assert got and "declared at lines 7-8" in got


def test_a_citation_set_after_a_full_stop_belongs_to_the_sentence_before():
    chunk = "- `internal/status` — A fiber changed state. ([`events.ts:8`](../events.ts))\n"
    (got,) = infer(chunk, [(chunk.index("events.ts:8"), chunk.index("events.ts:8") + 11)], [])
    assert "internal/status" in got.names
    # Not after a semicolon: `a:1` `x`; `b:2` `y` keeps each clause apart.
    chunk2 = "(`a.ts:1` `alpha_one`; `b.ts:2` `beta_two`)"
    spans = [(chunk2.index("a.ts"), chunk2.index("a.ts") + 6), (chunk2.index("b.ts"), chunk2.index("b.ts") + 6)]
    got_a, got_b = infer(chunk2, spans, spans, spans)
    assert "alpha_one" not in got_b.names


@given(st.lists(st.text(alphabet="{}()[] /*abc;\n'", max_size=12), min_size=1, max_size=12),
       st.integers(1, 12), st.integers(0, 4))
def test_the_shape_rules_never_raise(lines, start, length):
    if start + length > len(lines):
        return
    got = judge(f"{start}-{start + length}", file=view(lines))
    assert got is None or isinstance(got, str)
