"""The rules that judge an unanchored citation (inference.py), each on a small
file written here: what makes cited lines `suspect`, and what keeps them."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dshaudit.checking.suspect import FileView, suspect
from dshaudit.core.model import LineRange
from dshaudit.documents.inference import Inferred, infer
from dshaudit.documents.matching import WordIndex

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


def judge(
    lines: str, names: tuple[str, ...] = (), words: tuple[str, ...] = (), file: FileView | None = None
) -> str | None:
    a, _, b = lines.partition("-")
    return suspect(Inferred(names, (), words), (LineRange(int(a), int(b or a)),), file or view())


@pytest.mark.parametrize(
    "lines, said",
    [
        ("3-4", "where the citation starts, is only `*/`"),
        ("4-5", None),  # a declaration and its member's comment: fine
        ("18", "is only `try {`"),  # a line with nothing of its own
        ("23", "is only `} finally {`"),
        ("6-7", None),  # ends on a one-line doc comment: it is closed
        ("19-20", "ends inside the comment that line 20 opens"),  # code, then the first line of a longer comment
        ("20-21", None),  # the whole comment: fine
    ],
)
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
    assert judge("20-22") is None
    paragraph = ["The loader (which boots the", "app) reads the config.", "", "More."]
    assert judge("2", words=("config",), file=view(paragraph, prose=True)) is None
    # The same lines as code do leave a bracket they did not open.
    assert "closes a bracket" in (judge("2", file=view(paragraph)) or "")


def test_an_event_name_with_a_slash_is_a_name_and_can_accuse():
    got = judge("5", names=("internal/status",))
    assert got and "`internal/status` is at line 8" in got
    assert judge("8", names=("internal/status",)) is None


def test_a_phrase_the_lines_spell_out_word_by_word_is_on_them():
    lines = [
        "/** Starts `codex app-server --stdio`. */",
        "export function argv() {",
        "  return ['codex', 'app-server', '--stdio']",
        "}",
    ]
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
    decl = FileView(
        EVENTS, {"Events": (LineRange(1, 9),), "Events.internal/status": (LineRange(7, 8),)}, WordIndex(EVENTS)
    )
    got = suspect(Inferred(("Events.internal/status",), (), ()), (LineRange(4, 4),), decl)
    assert got and "declared at lines 7-8" in got


class _Unread(dict):
    """Declarations that fail the test when read: the file would have been parsed for them."""

    def get(self, *args):
        raise AssertionError("the declarations were read")

    def items(self):
        raise AssertionError("the declarations were read")


def test_a_line_of_code_that_holds_the_name_needs_no_declarations():
    # `start` on line 17, a line of code: held, without the file's declarations.
    assert suspect(Inferred(("start",), (), ()), (LineRange(17, 17),), FileView(EVENTS, _Unread())) is None
    # On a comment line (20 names `handle`) the declarations decide: a comment about a thing
    # declared elsewhere is not the thing.
    with pytest.raises(AssertionError, match="declarations were read"):
        suspect(Inferred(("handle",), (), ()), (LineRange(20, 20),), FileView(EVENTS, _Unread()))
    declared = FileView(EVENTS, {"handle": (LineRange(19, 19),)}, WordIndex(EVENTS))
    got = suspect(Inferred(("handle",), (), ()), (LineRange(20, 20),), declared)
    assert got and "declared at line 19" in got


def test_a_citation_set_after_a_full_stop_belongs_to_the_sentence_before():
    chunk = "- `internal/status` — A fiber changed state. ([`events.ts:8`](../events.ts))\n"
    (got,) = infer(chunk, [(chunk.index("events.ts:8"), chunk.index("events.ts:8") + 11)], [])
    assert "internal/status" in got.names
    # Not after a semicolon: `a:1` `x`; `b:2` `y` keeps each clause apart.
    chunk2 = "(`a.ts:1` `alpha_one`; `b.ts:2` `beta_two`)"
    spans = [(chunk2.index("a.ts"), chunk2.index("a.ts") + 6), (chunk2.index("b.ts"), chunk2.index("b.ts") + 6)]
    got_a, got_b = infer(chunk2, spans, spans, spans)
    assert "alpha_one" not in got_b.names


@given(
    st.lists(st.text(alphabet="{}()[] /*abc;\n'", max_size=12), min_size=1, max_size=12),
    st.integers(1, 12),
    st.integers(0, 4),
)
def test_the_shape_rules_never_raise(lines, start, length):
    if start + length > len(lines):
        return
    got = judge(f"{start}-{start + length}", file=view(lines))
    assert got is None or isinstance(got, str)


def test_a_marker_label_in_a_table_row_is_what_its_citation_holds():
    chunk = "| file | marker |\n|---|---|\n| `a.ts:3` | TODO |\n"
    start = chunk.index("a.ts:3")
    (got,) = infer(chunk, [(start, start + 6)], [(start, start + 6)])
    assert "TODO" in got.names
    lines = ["const a = 1", "const b = 2", "// TODO(cache): drop this", "const c = 3", "const d = 4", "const e = 5"]
    assert suspect(got, (LineRange(3, 3),), view(lines)) is None
    said = suspect(got, (LineRange(6, 6),), view(lines))
    assert said and "`TODO` is at line 3" in said


COMMENT = """\
/**
 * The registry keeps one factory for the whole process, and the loop
 * registers itself there when it is mounted, and nothing else may do so
 * Tests replace it through a scope of their own.
 */
export class Registry {}
""".splitlines()


def test_a_citation_starting_inside_a_sentence_that_shares_no_word_with_its_text_is_suspect():
    got = suspect(Inferred((), (), ("timeout", "retries")), (LineRange(3, 3),), view(COMMENT))
    assert got and "goes on with a sentence that line 2 begins" in got
    # A word of the text on the lines: someone chose them for it.
    assert suspect(Inferred((), (), ("mounted",)), (LineRange(3, 3),), view(COMMENT)) is None
    # A line where a sentence starts may be cited for that sentence; so may a sentence's first line.
    assert suspect(Inferred((), (), ("timeout",)), (LineRange(4, 4),), view(COMMENT)) is None
    assert suspect(Inferred((), (), ("timeout",)), (LineRange(2, 2),), view(COMMENT)) is None


def test_words_between_two_citations_make_a_clause_of_their_own():
    def spans_of(chunk: str, *cited: str) -> list[tuple[int, int]]:
        return [(chunk.index(f"`{c}`"), chunk.index(f"`{c}`") + len(c) + 2) for c in cited]

    chunk = "Items under the `Local modifications` heading (`r.md:29`), up to the next heading (`r.md:52`)."
    spans = spans_of(chunk, "r.md:29", "r.md:52")
    first, second = infer(chunk, spans, spans, spans)
    assert "Local modifications" in first.names and "Local modifications" not in second.names
    # With nothing between them, the two share the sentence's names.
    chunk2 = "The `AgentLoop` is mounted (`b.ts:3`, `b.ts:9`)."
    spans2 = spans_of(chunk2, "b.ts:3", "b.ts:9")
    assert all("AgentLoop" in i.names for i in infer(chunk2, spans2, spans2, spans2))


def test_a_sentence_cited_from_its_start_on_a_line_to_its_end_is_cited_whole():
    lines = [
        "/**",
        " * The registry keeps one factory for the whole",
        " * process. Tests replace it through a scope",
        " * of their own.",
        " */",
    ]
    assert suspect(Inferred((), (), ("timeout",)), (LineRange(3, 4),), view(lines)) is None
    got = suspect(Inferred((), (), ("timeout",)), (LineRange(3, 3),), view(lines))
    assert got and "goes on with a sentence that line 2 begins" in got


def test_words_after_a_citation_belong_to_the_next_one():
    chunk = (
        "The capability is one boolean per provider (`t.ts:86`), documented as the counterpart "
        "of `maxDepth` (`t.ts:83`)."
    )
    spans = [(chunk.index(f"`{c}`"), chunk.index(f"`{c}`") + len(c) + 2) for c in ("t.ts:86", "t.ts:83")]
    first, second = infer(chunk, spans, spans, spans)
    assert "maxDepth" not in first.names and "maxDepth" in second.names


def test_code_right_after_a_citation_is_said_of_it():
    chunk = "Both are set (`t.ts:86` `depthLimit: true` and then `t.ts:90` `maxDepth: 2`)."
    spans = [(chunk.index(f"`{c}`"), chunk.index(f"`{c}`") + len(c) + 2) for c in ("t.ts:86", "t.ts:90")]
    first, second = infer(chunk, spans, spans, spans)
    assert "depthLimit: true" in first.names and "maxDepth: 2" in second.names


def test_a_name_the_text_says_is_absent_is_not_expected_on_the_lines():
    chunk = "The server creates the session with `sessionCwd` only: no `delegationDepth`, without `parentOrigin` (`s.ts:223`)."
    start = chunk.index("`s.ts:223`")
    (got,) = infer(chunk, [(start, start + 10)], [(start, start + 10)])
    assert "sessionCwd" in got.names and "delegationDepth" not in got.names and "parentOrigin" not in got.names


# -- relevance: a document not written for dshaudit -------------------------------------------

SERVER = """\
/**
 * A bridge between clients and sessions: permissions, prompts and events.
 */
import {
  PermissionRequest,
  PromptRequest,
} from './protocol.ts'

export function startBridge(conn: Connection) {
  conn.on('prompt', (request) => {
    const text = request.text
    return sendPrompt(text)
  })

  conn.on('event', (event) => {
    log(event)
  })

  // Permission requests become one-shot choices for the client.
  conn.on('approval', (request) => {
    return conn.requestPermission({ options: ['allow_once', 'reject_once'] })
  })
}
""" + "".join(f"\nexport function helper{n}(value: number) {{\n  return value + {n}\n}}\n" for n in range(40))


def _relevance(words: tuple[str, ...], start: int, end: int, names: tuple[str, ...] = ()) -> str | None:
    from dshaudit.checking.suspect import relevance_index
    from dshaudit.documents.matching import words_of

    lines = SERVER.split("\n")
    stems = tuple(w for phrase in words for w in words_of(phrase))
    view = FileView(lines, {}, WordIndex(lines), False, relevance_index(lines, WordIndex(lines)))
    return suspect(Inferred(names, (), stems), (LineRange(start, end),), view, by_shape=False)


def test_words_that_stand_clearly_better_elsewhere_flag_and_name_the_place():
    said = _relevance(("permission choices",), 10, 13)
    assert said is not None
    assert "lines 19-22" in said and "requestPermission" in said and "better than the cited 10-13" in said


def test_the_lines_that_hold_the_words_are_not_flagged():
    assert _relevance(("permission choices",), 20, 23) is None
    assert _relevance(("prompt text",), 10, 13) is None


def test_imports_and_the_opening_comment_are_no_place_a_description_points_at():
    # The imports and the file's opening comment name permissions too; the place named is the code.
    said = _relevance(("permission request",), 15, 17)
    assert said is not None and "lines 19-21" in said
    # and a citation of the opening comment holds its own words
    assert _relevance(("bridge between clients and sessions",), 1, 3) is None


def test_shape_alone_never_flags_without_a_pin_of_its_own():
    lines = SERVER.split("\n")
    view = FileView(lines, {}, WordIndex(lines), False, None)
    assert suspect(Inferred((), (), ()), (LineRange(18, 19),), view, by_shape=False) is None  # ends on a blank line
    assert suspect(Inferred((), (), ()), (LineRange(18, 19),), view, by_shape=True) is not None


def test_a_dotted_call_names_the_member_declared_in_its_owner():
    view = FileView(
        SERVER.split("\n"),
        {"createProxy.sessions.cancel": (LineRange(15, 17),), "createProxy.sessions": (LineRange(9, 24),)},
        WordIndex(SERVER.split("\n")),
    )
    said = suspect(Inferred(("session.cancel",), (), ()), (LineRange(20, 23),), view)
    assert said is not None and "`session.cancel` is declared at lines 15-17" in said


def test_a_key_in_many_places_is_a_common_word_and_its_blocks_are_not_measured(monkeypatch):
    """A lockfile repeats `dependencies` in every entry: the key names nothing in particular,
    and measuring each of its thousands of blocks would be quadratic in the file."""
    import dshaudit.checking.suspect as suspect_module

    lines = []
    for n in range(1000):
        lines += [f'  "pkg{n}": {{', '    "dependencies": {', '      "x": "1"', "    }", "  },"]
    lines += ['  "engines": {', '    "node": ">=22"', "  }"]
    measured = []
    real = suspect_module._key_block
    monkeypatch.setattr(suspect_module, "_key_block", lambda *a: measured.append(a) or real(*a))
    view = FileView(lines, {}, WordIndex(lines), False, None, True)
    common = Inferred((), (), ("dependencies",))
    assert suspect(common, (LineRange(10, 12),), view, by_shape=False) is None
    assert measured == []
    rare = Inferred((), (), ("engines",))
    assert "names `engines`, the key of lines 5001-5003" in suspect(rare, (LineRange(10, 12),), view, by_shape=False)
    assert len(measured) == 1


def _best_place_trying_every_start(words, region, view):
    """The best place as its definition reads: every window of the region's size, one start at a time."""
    from bisect import bisect_left, bisect_right

    from dshaudit.checking.suspect import RELEVANCE_MIN, RELEVANCE_SHARE

    index, whole = view.relevance, view.words
    stems = [w for w in dict.fromkeys(words) if whole.lines_of.get(w)]
    if not stems:
        return None
    lo, hi = min(r.start for r in region), max(r.end for r in region)
    size = hi - lo
    here = sum(whole.weight(w) for w in stems if any(whole.present(w, r.start, r.end) for r in region))
    best = (0.0, 0, 0, [])
    for start in range(1, index.size - size + 1):
        if start <= hi and start + size >= lo:
            continue
        there = [w for w in stems if index.present(w, start, start + size)]
        score = sum(whole.weight(w) for w in there)
        often = sum(
            bisect_right(index.lines_of[w], start + size) - bisect_left(index.lines_of[w], start) for w in there
        )
        if score > best[0] + 1e-9 or (score > 0 and abs(score - best[0]) <= 1e-9 and often > best[2]):
            best = (score, start, often, there)
    score, start, _, there = best
    if score < RELEVANCE_MIN or here > RELEVANCE_SHARE * score:
        return None
    first = min(n for w in there for n in index.lines_of[w] if start <= n <= start + size)
    return LineRange(first, min(first + size, index.size)), there


@st.composite
def _sparse_files(draw) -> list[str]:
    """A file of filler lines where each word looked for stands on a line or two: rare words weigh
    enough for a place to be found."""
    size = draw(st.integers(1, 80))
    lines = [["filler"] for _ in range(size)]
    for word in ("alpha", "beta", "gamma", "delta"):
        for at in draw(st.lists(st.integers(0, size - 1), max_size=2)):
            lines[at].append(word)
    return [" ".join(words) for words in lines]


@given(
    text=_sparse_files(),
    start=st.integers(1, 80),
    length=st.integers(0, 6),
    words=st.lists(st.sampled_from(["alpha", "beta", "gamma", "delta", "missing"]), min_size=1, max_size=4),
)
@settings(max_examples=300)
def test_the_best_place_is_the_one_every_start_would_find(text, start, length, words):
    from dshaudit.checking.suspect import _find_best_place

    index = WordIndex(text)
    view = FileView(text, {}, index, False, index)
    region = (LineRange(start, start + length),)
    assert _find_best_place(tuple(words), region, view) == _best_place_trying_every_start(tuple(words), region, view)
