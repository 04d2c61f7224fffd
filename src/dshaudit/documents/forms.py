"""The forms people write citations in when they do not write for dshaudit
(grammar.py lists them), as patterns: a line phrase, `path:Symbol`, quoted
code, a permalink, a link's line fragment."""

from __future__ import annotations

import re
from functools import lru_cache

from dshaudit.documents.paths import SEGMENT

# A line phrase after a path (and the backtick closing its code span, if any).
_PARTS = r"\d+(?:[ \t]*[-–—~～][ \t]*L?\d+)?(?:[ \t]*[,，、][ \t]*\d+(?:[ \t]*[-–—~～][ \t]*L?\d+)?)*"
LINE_PHRASE_RE = re.compile(
    rf"""`?(?:
        [ \t]*[(（][ \t]*(?:lines?|L)[ \t]*(?P<p1>{_PARTS})[ \t]*[)）]     # (line 12), (lines 10-20), (L12)
      | [ \t]*[(（][ \t]*第[ \t]*(?P<p2>{_PARTS})[ \t]*行[ \t]*[)）]     # （第 170–190 行）
      | ,[ \t]*lines?[ \t]+(?P<p3>{_PARTS})                                # , lines 10-20
      | [ \t]+L(?P<p4>\d+(?:[-–]L?\d+)?)(?![\w-])                        #  L10-L20
    )""",
    re.VERBOSE,
)
# The lines a link to a whole file names beside it: after the link (its Markdown
# brackets closed), a line phrase, or `lines 51 to 60` with or without a comma or brackets.
LINK_LINES_RE = re.compile(
    rf"""(?:\)(?=[ \t,(（]))?(?:
        [ \t]*[,(（]?[ \t]*lines?[ \t]+(?P<p5a>\d+)[ \t]+to[ \t]+(?P<p5b>\d+)(?:[ \t]*[)）])?  # lines 51 to 60
      | {LINE_PHRASE_RE.pattern}
    )""",
    re.VERBOSE,
)
# `path:Name` or `path:Class.member`, for source files.
SYMBOL_COLON_RE = re.compile(r":(?P<symbol>[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*)(?![\w$(/.:-])")
# `` `path` (`text`) `` or `` `path`（`text`） ``: text expected in the file.
# The quoted text is bounded: an unclosed quote is looked for within a line's
# first few hundred characters, not to its end from every path on it.
MAX_QUOTED_CODE = 400
QUOTED_CODE_RE = re.compile(rf"`[ \t]*[(（][ \t]*(?P<tick>`+)(?P<code>.{{1,{MAX_QUOTED_CODE}}}?)(?P=tick)[ \t]*[)）]")
_PERMALINKS: dict[str, re.Pattern[str]] = {}


# What ends a whole-file permalink written in running text, not part of its path: `see URL.`
PERMALINK_TRAILING = ".,;:!?*_~"


def permalink_re(web_url: str) -> re.Pattern[str]:
    """A web link into DSH at a ref: `<web>/blob/REF/PATH` (or `/raw/`, with
    `?plain=1`), to lines with `#L10-L20` or to the whole file; `<web>/tree/REF/DIR`,
    a folder (`kind` says which); and, for a GitHub repository, the same file on
    raw.githubusercontent.com. Links to any other repository are not DSH's, and
    neither is a DSH link inside another address (a redirect's parameter)."""
    if web_url not in _PERMALINKS:
        web = web_url.rstrip("/")
        hosts = [re.escape(web) + r"/(?P<kind>blob|raw|tree)"]
        if web.startswith("https://github.com/"):
            hosts.append(re.escape("https://raw.githubusercontent.com/" + web.removeprefix("https://github.com/")))
        _PERMALINKS[web_url] = re.compile(
            # A link of its own, not one embedded in another host's address (`?u=https://...`, `/https://...`).
            r"(?<![\w/:?=&%.~+@#-])"
            "(?:"
            + "|".join(hosts)
            + ")"
            + r"/(?P<ref>[A-Za-z0-9][\w.\-]*)/(?P<path>[^\s#?()\[\]<>\"'`（）]+)"
            # A query (`?plain=1`, `?raw=true&x=y`) comes before the lines; `C` columns are GitHub's.
            + r"(?:\?[\w.~%+=&;:/-]*(?=#L\d)|\?[\w.~%+=&;:/-]+)?"
            + r"(?:#L(?P<a>\d+)(?:C\d+)?(?:-L(?P<b>\d+)(?:C\d+)?)?)?"
        )
    return _PERMALINKS[web_url]


def may_hold_permalink(text: str, web_url: str) -> bool:
    """Whether `text` holds the start of an address `permalink_re` reads (a link to the
    repository's issues or its front page is none): a cheap test that spares the pattern
    a scan of text with no permalink into DSH."""
    return any(start in text for start in _permalink_starts(web_url))


@lru_cache(maxsize=16)
def _permalink_starts(web_url: str) -> tuple[str, ...]:
    web = web_url.rstrip("/")
    starts = tuple(f"{web}/{kind}/" for kind in ("blob", "raw", "tree"))
    if web.startswith("https://github.com/"):
        starts += ("https://raw.githubusercontent.com/" + web.removeprefix("https://github.com/") + "/",)
    return starts


def normalise_parts(spec: str) -> str:
    """`35–78、240–345` or `10 - L20` as the canonical `35-78,240-345`."""
    spec = re.sub(r"[ \t]*[,，、][ \t]*", ",", spec)
    return re.sub(r"[ \t]*[-–—~～][ \t]*L?", "-", spec)


# A Markdown link's target: `[text](target)`, `[text](<target>)`, and its line fragment (`L10-L20`).
LINK_TARGET_RE = re.compile(r"\]\(<?(?P<target>[^)\s<>]+)>?(?:\s+\"[^\"]*\")?\)")
LINE_FRAGMENT_RE = re.compile(r"L(?P<a>\d+)(?:-L?(?P<b>\d+))?(?:C\d+)?")
# The same fragment written on a bare path: `path#L10-L20`.
FRAGMENT_CITATION_RE = re.compile(
    rf"(?<![\w./:@\\\-+])(?P<path>(?:{SEGMENT}/)*{SEGMENT})#{LINE_FRAGMENT_RE.pattern}"
    r"(?:@(?P<pin>[A-Za-z0-9](?:[\w.\-]*[A-Za-z0-9])?))?(?![\w/\\])"
)
