"""`dshaudit anchor`: turn a document into a finding.

For every citation that holds but carries no anchor, propose one: the first
name its own sentence gives that stands on the cited lines, else the most
distinctive token of its first cited line (an identifier or string literal
found on the fewest lines of the file). A citation written in another form
(`path (line 12)`, `path:Name`, a permalink) is rewritten into the canonical
`path:lines` → `anchor`. A citation that is suspect, unresolved or failing is
never touched: an anchor proposed for the wrong lines would make a wrong
citation look verified. Every other byte of the file stays as it was.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from dshaudit.checking.citations import FileText
from dshaudit.core.model import Citation, LineRange, Pin, Status, Verdict, format_lines
from dshaudit.core.status import DiagnosticStatus, Severity
from dshaudit.documents.findings import join_raw_lines, raw_lines
from dshaudit.documents.grammar import relinked
from dshaudit.documents.matching import squash

_TOKEN_RE = re.compile(r"""'[^'\n]{2,60}'|"[^"\n]{2,60}"|[A-Za-z_$][\w$]{2,}""")
_WORD_RE = re.compile(r"[A-Za-z][\w-]{3,}")
_COMMON = frozenset(
    "const let var function return export import from class interface type this new true false null undefined "
    "async await public private protected readonly static void string number boolean extends implements "
    "default if else for while".split()
)
REWRITTEN_FORMS = frozenset({"line-phrase", "symbol", "permalink", "line-fragment", "continuation"})


class Anchored(DiagnosticStatus):
    """What `dshaudit anchor` did, or would do, to a citation."""

    @property
    def family(self) -> str:
        return "anchor"

    PROPOSED = ("proposed", Severity.NOTE, "An anchor is proposed.", "Run with --write to make the edit.")
    WRITTEN = ("written", Severity.NOTE, "The citation was anchored.", "Review the edit in the diff.")


@dataclass(frozen=True)
class Edit:
    """Replace `old` at (line, column) of the document with `new`."""

    line: int  # 1-based
    column: int  # 1-based
    old: str
    new: str
    why: str
    anchor: str = ""  # the anchor the edit writes

    def as_dict(self, file: str) -> dict[str, object]:
        return {
            "source": {"file": file, "line": self.line, "column": self.column},
            "old": self.old,
            "new": self.new,
            "why": self.why,
        }


def best_token(text: FileText, line: int, code: bool) -> str | None:
    """The most distinctive token on `line`: found on the fewest lines of the file,
    string literals and identifiers preferred (words, for prose files), longest first."""
    source = text.lines[line - 1]
    pattern = _TOKEN_RE if code else _WORD_RE
    tokens = [t for t in dict.fromkeys(pattern.findall(source)) if t.strip("'\"") not in _COMMON]
    if not tokens:
        return None

    def rarity(token: str) -> tuple[int, int]:
        return (sum(1 for ln in text.lines if token in ln), -len(token))

    return min(tokens, key=rarity)


def propose(
    citations: list[Citation],
    verdicts: dict[int, Verdict],
    texts: dict[int, FileText | None],
    file_pin: str | None,
    document: list[str],
) -> list[Edit]:
    """Edits for the citations that hold and have no anchor (verdicts and cited
    files by the citation's index); `document` is the file's lines."""
    edits = []
    for i, c in enumerate(citations):
        v, text = verdicts.get(i), texts.get(i)
        if v is not None and v.status is Status.SUSPECT and v.suggested and not c.quoted:
            moved = _relinked(c, v.suggested[0])
            if moved is not None:
                edits.append(moved)
            continue
        if v is None or text is None or v.status is not Status.OK or c.quoted or c.anchors or c.symbol:
            continue
        if not c.lines:
            continue
        anchor = choose_anchor(c, v, text)
        if anchor is None:
            continue
        old = c.written or c.text
        line = document[c.source.line - 1]
        col = c.source.column - 1
        in_span = line[col - 1 : col] == "`" and line[col + len(old) : col + len(old) + 1] == "`"
        if c.form in REWRITTEN_FORMS:
            canonical = _canonical(c, v, v.pin, file_pin)
            if old[len(c.path) :].startswith("`"):  # `path`（第 3 行）: the phrase is outside the code span
                new = canonical + f"` → `{anchor}`"
            elif in_span:
                new = canonical + f"` → `{anchor}"
            else:
                new = f"`{canonical}` → `{anchor}`"
            why = f"{c.form} citation rewritten, anchored on `{anchor}`"
        elif c.form == "canonical":
            new = old + (f"` → `{anchor}" if in_span else f" → `{anchor}`")
            why = f"anchored on `{anchor}`"
        else:
            continue
        edits.append(Edit(c.source.line, c.source.column, old, new, why, anchor))
    return edits


def _relinked(c: Citation, place: LineRange) -> Edit | None:
    """A permalink to lines that hold other code than its text describes, pointed at `place`,
    the lines of the same file at the same commit that hold it."""
    old = c.text
    new = relinked(old, place.start, place.end) if c.form == "permalink" and c.lines else None
    if new is None:
        return None
    return Edit(
        c.source.line, c.source.column, old, new, f"permalink pointed at lines {place}, where its text's code is", ""
    )


def choose_anchor(c: Citation, v: Verdict, text: FileText) -> str | None:
    """The anchor for a citation that holds (`v`) in `text`: the first name its
    sentence gives that stands on the cited lines, else the most distinctive
    token of its first cited line (or the next line that has one). None when
    there is none, or when it holds a backtick (it could not be written in a code span)."""
    cited = squash(text.cited_text(v.resolved_lines or c.lines))
    for name in c.inferred:
        if squash(name) and squash(name) in cited:
            return _writable(name)
    first = (v.resolved_lines or c.lines)[0]
    code = v.path.rsplit(".", 1)[-1] in {"ts", "tsx", "js", "jsx", "mjs", "cjs", "mts", "cts", "json"}
    for line in range(first.start, first.end + 1):
        token = best_token(text, line, code)
        if token:
            return _writable(token)
    return None


def _writable(anchor: str) -> str | None:
    return None if "`" in anchor else anchor


def _canonical(c: Citation, v: Verdict, pin: Pin | None, file_pin: str | None) -> str:
    out = v.path + ":" + format_lines(c.lines)
    # The pin a permalink names, or a continuation takes from the citation before it, is written out.
    if pin is not None and (c.form == "permalink" or c.pin_ref) and pin.ref != file_pin:
        out += "@" + pin.ref
    return out


def apply(text: str, edits: list[Edit]) -> str:
    """The document with the edits made, right to left on each line; nothing
    else changes (its byte order mark and line ends included)."""
    bom, lines = raw_lines(text)
    for e in sorted(edits, key=lambda e: (e.line, e.column), reverse=True):
        line, end = lines[e.line - 1]
        col = e.column - 1
        if line[col : col + len(e.old)] != e.old:
            raise ValueError(f"line {e.line}: {e.old!r} is not at column {e.column}")
        lines[e.line - 1] = (line[:col] + e.new + line[col + len(e.old) :], end)
    return join_raw_lines(bom, lines)
