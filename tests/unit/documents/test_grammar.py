"""The citation grammar: every form, where it stands, and what it must not take."""

from __future__ import annotations

import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from dshaudit.core.model import LineRange
from dshaudit.documents import grammar
from dshaudit.documents.grammar import find_citations
from dshaudit.documents.markdown import citations_in_markdown
from dshaudit.documents.paths import looks_like_path


def one(text: str):
    found = find_citations(text)
    assert len(found) == 1, found
    return found[0]


@pytest.mark.parametrize(
    "text, path, lines",
    [
        ("see a/b.ts:12 here", "a/b.ts", [(12, 12)]),
        ("a/b.ts:12-18", "a/b.ts", [(12, 18)]),
        ("a/b.ts:12–18", "a/b.ts", [(12, 18)]),
        ("a/b.ts:3,7,9", "a/b.ts", [(3, 3), (7, 7), (9, 9)]),
        (
            "packages/boot/app-boot/src/index.ts:15-16,492,510,771",
            "packages/boot/app-boot/src/index.ts",
            [(15, 16), (492, 492), (510, 510), (771, 771)],
        ),
        ("package.json:5", "package.json", [(5, 5)]),
        ("patches/node-pty@1.2.0-beta.15.patch:3", "patches/node-pty@1.2.0-beta.15.patch", [(3, 3)]),
        ("(x/y.md:4).", "x/y.md", [(4, 4)]),
        ("x/y.ts:4, and", "x/y.ts", [(4, 4)]),
    ],
)
def test_line_forms(text, path, lines):
    c = one(text)
    assert c.path == path
    assert c.lines == tuple(LineRange(a, b) for a, b in lines)
    assert c.problem is None


def test_symbol_and_pin_suffixes():
    c = one("`src/a.ts:12-20#Registry.setFactory@rc2`")
    assert (c.path, c.symbol, c.pin) == ("src/a.ts", "Registry.setFactory", "rc2")
    assert c.lines == (LineRange(12, 20),)
    c = one("src/a.ts#Context@" + "a" * 40)
    assert (c.symbol, c.pin, c.lines) == ("Context", "a" * 40, ())
    c = one("src/a.ts:9@rc7.")
    assert c.pin == "rc7"


@pytest.mark.parametrize(
    "text",
    [
        "at 10:30 on Monday",
        "https://github.com/deepseek-ai/deepseek-harness/blob/main/src/a.ts:12",
        "http://localhost:8080/a.ts:3",
        "served on localhost:8080 and example.com:443",
        "install package@1.2.3 now",
        r"C:\Users\x.ts",
        "a compiler message x/y.ts:3:7 is not a citation",
        "[the docs](docs/setup.md#install)",
        "file:///tmp/a.ts:3",
        "a ratio of 3:2",
        "the empty list x/y.ts: is nothing",
    ],
)
def test_not_fooled(text):
    assert find_citations(text) == []


def test_malformed_lines_are_kept_with_a_reason():
    assert one("a/b.ts:0").problem == "line numbers start at 1"
    assert "backwards" in one("a/b.ts:5-3").problem
    assert "beyond" in one("a/b.ts:99999999999999999999").problem
    assert "beyond" in one("a/b.ts:" + "9" * 5000).problem


def test_anchors_after_inline_code_and_in_prose():
    c = one("`a/b.ts:3` → `this.fiber = new Fiber`")
    assert c.anchors == ("this.fiber = new Fiber",)
    c = one("a/b.ts:3 -> `x` + `y` + `z` then prose `not an anchor`")
    assert c.anchors == ("x", "y", "z")
    c = one("`a/b.ts:3`\n→ `arrow opens the next line`")
    assert c.anchors == ("arrow opens the next line",)
    c = one("`a/b.ts:3` `no arrow, no anchor`")
    assert c.anchors == ()
    c = one("`a/b.ts:3` → `` a `tick` inside ``")
    assert c.anchors == ("a `tick` inside",)


MARKDOWN = """\
---
pin: v1
---
# Heading with vendor/x.ts:1 → `h`

Prose cites `vendor/cordis/src/context.ts:14` → `this.fiber`
and wraps across lines: `docs/a.md:2-3` →
`anchor on the next line`.

| claim | evidence |
|---|---|
| five services | `vendor/cordis/src/context.ts:14-18` → `this.logger` |

- a list item cites packages/x.ts:7 → `seven`
> a quote cites packages/q.ts:8

```ts
// vendor/cordis/src/context.ts:14
this.fiber = new Fiber
```

```
not/a/citation.ts:12 inside a plain block
```

    indented/code.ts:3 is code

<!-- html/comment.ts:4 is hidden -->
"""


def test_markdown_positions_and_blocks():
    cs = citations_in_markdown(MARKDOWN, "f.md", skip_lines=3)
    got = [(c.source.line, c.source.column, c.text, c.anchors) for c in cs]
    assert got == [
        (4, 16, "vendor/x.ts:1", ("h",)),
        (6, 14, "vendor/cordis/src/context.ts:14", ("this.fiber",)),
        (7, 26, "docs/a.md:2-3", ("anchor on the next line",)),
        (12, 20, "vendor/cordis/src/context.ts:14-18", ("this.logger",)),
        (14, 21, "packages/x.ts:7", ("seven",)),
        (15, 17, "packages/q.ts:8", ()),
        (18, 4, "vendor/cordis/src/context.ts:14", ("this.fiber = new Fiber",)),
    ]
    assert all(c.source.file == "f.md" for c in cs)
    lines = MARKDOWN.split("\n")
    for c in cs:  # each position points at the citation's first character
        assert lines[c.source.line - 1][c.source.column - 1 :].startswith(c.text)


# -- the plain-word screen of CITATION_RE ----------------------------------------------------

# The pattern as it reads without its plain-word screen: the screen must change no match.
_UNSCREENED_RE = re.compile(grammar.CITATION_RE.pattern.replace(grammar.PLAIN_WORD_SCREEN, ""), re.VERBOSE)
# Text made of the pieces paths, lines and symbols are made of, so that paths with a known ending come up.
_PIECES = ["a", "b.ts", "util", ".ts", ".", "/", "#", ":", "12", "3-4", ",", "-", "@", "+", "\\", " ", "\n", "`", "é"]
_PATHLIKE = st.lists(st.sampled_from(_PIECES), max_size=16).map("".join)


@given(_PATHLIKE)
@example("see a#b.ts here")
@example("a:12#b.ts")
@example("a\\b.ts:3 and a-b.ts")
@settings(max_examples=500)
def test_the_plain_word_screen_changes_no_citation_the_pattern_finds(text):
    """A plain word (no dot, slash, `#` or `:` after it) can never be a path: skipping it
    leaves every match the pattern makes, and every one it rejects, as they were."""
    assert grammar.PLAIN_WORD_SCREEN in grammar.CITATION_RE.pattern
    assert [m.span() for m in grammar.CITATION_RE.finditer(text) if looks_like_path(m.group("path"))] == [
        m.span() for m in _UNSCREENED_RE.finditer(text) if looks_like_path(m.group("path"))
    ]


def test_a_word_before_a_symbol_is_not_skipped_into_a_citation():
    """`word#util.ts:12` and `word:1#util.ts:3` are one token each, never a citation of `util.ts`."""
    assert find_citations("see word#util.ts:12 and word:1#util.ts:3 here") == []


_WEB = "https://github.com/owner/dsh"
_LINKISH = st.lists(
    st.sampled_from(
        [
            "https://",
            "github.com/",
            "owner/dsh",
            "raw.githubusercontent.com/",
            "/blob/",
            "/raw/",
            "/tree/",
            "/issues/",
            "x",
            " ",
        ]
    ),
    max_size=10,
).map("".join)


@given(_LINKISH)
@example(f"{_WEB}/blob/abc/a.ts")
@example("https://raw.githubusercontent.com/owner/dsh/abc/a.ts")
def test_text_the_permalink_screen_passes_over_holds_no_permalink(text):
    from dshaudit.documents.forms import may_hold_permalink, permalink_re

    if not may_hold_permalink(text, _WEB):
        assert permalink_re(_WEB).search(text) is None
    assert may_hold_permalink(f"see {_WEB}/blob/abc/a.ts", _WEB)
