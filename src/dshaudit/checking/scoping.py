"""Which names of a document not written for dshaudit are claims about DSH.

Such a document names much besides DSH's code: error codes of other tools
(`ETARGET`), products, its own examples and the code of its own repository.
Its names are checked only where the text ties them to DSH: where the
sentence, list item or table row holding the name (documents/stretches.py),
or the heading of its section,

- cites DSH (any citation, permalinks to whole files and folders included);
- names a path under a folder DSH's tree has at its root;
- names a package in the npm scope of DSH's owner (`@<owner>/...`);
- or speaks of a `ctx.` service.

A name that ties itself is checked wherever it stands: a commit, a path under
one of DSH's root folders, a package of that scope. A name in the text of a
link to another site (an npm page of a package, say)
speaks of what that link points at, never of DSH. A name the text calls new,
proposed, hypothetical or its own, or one it says is not there (`no X`,
`nonexistent X`), is never a claim that DSH has it. A document with a pin in
its front matter was written for dshaudit: every name of it is checked.

In a document not written for dshaudit, a slashed name of lowercase words under no root folder of
the tree (`turn/end`) is an event's or channel's name: it is looked up as the
string it is, where a path under no root folder would not be looked up at all.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Callable

from dshaudit.core.model import Citation, SourceLocation
from dshaudit.documents.inference import NEGATION, NEGATION_ARTICLE
from dshaudit.documents.names import COMMIT, PACKAGE, PATH, Name
from dshaudit.documents.stretches import Outline

_CTX_RE = re.compile(r"\bctx\.[A-Za-z_$]")
# An event's or channel's name: lowercase words joined by slashes (`turn/end`, `loader/entry-init`).
EVENT_RE = re.compile(r"[a-z][a-z0-9-]*(?:/[a-z][a-z0-9-]*)+")
_LINK_RE = re.compile(r"\[((?:[^\[\]\n]|\[[^\[\]\n]*\])*)\]\(\s*<?(https?://[^\s)>]+)")
_PATHISH_RE = re.compile(r"(?<![\w.@/:-])(?:\./)?([\w@][\w.@-]*/[\w./@-]*)")
# Words that make a name the text's own: said within this many characters before it, in its stretch.
OWN_REACH = 60
_OWN_RE = re.compile(
    r"\b(?:new|proposed|proposal|hypothetical|planned|future|invented|imaginary|fictional|example|"
    r"out-of-tree|third-party|your\s+own|our\s+own|its\s+own|custom|non-?existent|would-be)\b",
    re.IGNORECASE,
)
# Right before the name: the text says it is not there.
# (inference.py's negations, and `missing`, `nonexistent`, with a word between: `no documented X`).
_NOT_THERE_RE = re.compile(
    rf"(?:{NEGATION}|\b(?:missing|non-?existent))\s+{NEGATION_ARTICLE}(?:\w+\s+)?[`'\"“]?$",
    re.IGNORECASE,
)


def owner_scope(web_url: str) -> str | None:
    """The npm scope of DSH's owner, from its web address: `@deepseek-ai` for github.com/deepseek-ai/..."""
    parts = web_url.rstrip("/").split("/")
    return f"@{parts[-2].lower()}" if len(parts) >= 2 and parts[-2] else None


class DshTies:
    """Where one document is about DSH."""

    def __init__(
        self,
        text: str,
        outline: Outline,
        citations: tuple[Citation, ...],
        in_tree: Callable[[str], bool],
        scope: str | None,
        web_url: str | None = None,
    ):
        self.text = text
        # The text of each link to another site: [start, end) of what is between the brackets.
        home = (web_url or "").rstrip("/").lower()
        self.elsewhere = sorted(
            (m.start(1), m.end(1))
            for m in _LINK_RE.finditer(text)
            if not (home and m.group(2).lower().startswith(home + "/"))
        )
        self.outline = outline
        self.in_tree = in_tree
        self.scope = scope
        self.cited = sorted(
            at
            for c in citations
            if not c.problem and (at := outline.offset(c.source.line, c.source.column)) is not None
        )
        self._tied: dict[tuple[int, int], bool] = {}

    def _cites(self, a: int, b: int) -> bool:
        k = bisect_right(self.cited, a - 1)
        return k < len(self.cited) and self.cited[k] < b

    def _dsh_path(self, word: str) -> bool:
        return "://" not in word and self.in_tree(word.rstrip("/"))

    def tied(self, a: int, b: int) -> bool:
        """Whether the text at [a, b) ties what it says to DSH."""
        key = (a, b)
        if key not in self._tied:
            part = self.text[a:b]
            self._tied[key] = (
                self._cites(a, b)
                or bool(_CTX_RE.search(part))
                or (self.scope is not None and f"{self.scope}/" in part.lower())
                or any(self._dsh_path(m.group(1)) for m in _PATHISH_RE.finditer(part))
            )
        return self._tied[key]

    def self_tied(self, name: Name) -> bool:
        if name.kind == COMMIT:
            return True
        if name.kind == PATH:
            return self._dsh_path(name.text)
        return name.kind == PACKAGE and self.scope is not None and name.text.lower().startswith(f"{self.scope}/")

    def about_dsh(self, name: Name) -> bool:
        """Whether the document claims `name` of DSH."""
        stretch = self.outline.around(name.start)
        before = self.text[max(stretch.start if stretch else 0, name.start - OWN_REACH) : name.start]
        if _NOT_THERE_RE.search(before) or _OWN_RE.search(before):
            return False
        k = bisect_right(self.elsewhere, (name.start, len(self.text))) - 1
        if k >= 0 and self.elsewhere[k][0] <= name.start < self.elsewhere[k][1]:
            return False  # the text of a link to another site: it names what is there
        if self.self_tied(name):
            return True
        if stretch is None:
            return False
        if self.tied(stretch.start, stretch.end):
            return True
        if stretch.section >= 0:
            return self.tied(*self.outline.headings[stretch.section])
        return False


def about_dsh(items: list[tuple[Name, SourceLocation]], ties: DshTies) -> list[tuple[Name, SourceLocation]]:
    """The names of `items` that the document claims of DSH."""
    return [(n, where) for n, where in items if ties.about_dsh(n)]
