"""Hover, completion, code actions and go to definition, from a document's analysis.

Each answer is built from what `check` found (the analysis's verdicts) and
from the modules that own each rule: the cited lines are numbered as `show`
numbers them, anchors are chosen as `anchor` chooses them (anchoring.py), a
citation is carried to another pin by rebase.py's Rebaser, and every new place
is taken only when the full check passes there.
"""

from __future__ import annotations

import re
from dataclasses import replace

from lsprotocol import types

from dshaudit.app.commands import numbered
from dshaudit.checking.anchoring import propose
from dshaudit.checking.citations import SYMBOL_FILE_ENDINGS
from dshaudit.core.diagnostics import permalink
from dshaudit.core.model import (
    Citation,
    Claim,
    ClaimVerdict,
    FactStatus,
    LineRange,
    Pin,
    Status,
    Verdict,
    format_lines,
    merge_evidence,
)
from dshaudit.core.status import Reach
from dshaudit.documents.claims import CLAIM_SPAN_RE, split_ref
from dshaudit.documents.claims import show as show_value
from dshaudit.lsp.engine import Analysis, Engine, Lines, Scope, blob_uri
from dshaudit.moves.rebaser import Move, MoveStatus

MAX_HOVER_LINES = 40  # cited lines shown in a hover; a long declaration is cut
MAX_EVIDENCE = 10  # places of a fact's evidence listed in a hover
MAX_VALUE_CHARS = 600
MAX_RELOCATIONS = 200  # places tried for a citation whose anchor moved
LANGUAGES = {
    "ts": "typescript",
    "mts": "typescript",
    "cts": "typescript",
    "tsx": "tsx",
    "js": "javascript",
    "mjs": "javascript",
    "cjs": "javascript",
    "jsx": "jsx",
    "json": "json",
    "md": "markdown",
    "yml": "yaml",
    "yaml": "yaml",
    "toml": "toml",
    "sh": "bash",
    "py": "python",
    "css": "css",
    "html": "html",
}

# -- what is under the cursor ----------------------------------------------------


def citation_at(a: Analysis, position: types.Position) -> Citation | None:
    """The citation written at `position` (its path, lines, symbol and pin)."""
    if a.file is None:
        return None
    column = a.lines.column(position)
    for c in a.file.citations:
        start = c.source.column - 1
        if c.source.line - 1 == position.line and start <= column <= start + len(c.written or c.text):
            return c
    return None


def claim_at(a: Analysis, position: types.Position) -> Claim | None:
    """The claim whose code span holds `position`."""
    if a.file is None:
        return None
    column = a.lines.column(position)
    line = a.lines.line(position.line)
    for claim in a.file.claims:
        if claim.source.line - 1 != position.line:
            continue
        m = CLAIM_SPAN_RE.match(line, claim.source.column - 1)
        if m and m.start() <= column <= m.end():
            return claim
    return None


def _range(a: Analysis, line: int, column: int, length: int) -> types.Range:
    """The client's range of `length` code points at 1-based `line` and `column`."""
    return a.lines.range(line - 1, column - 1, column - 1 + length)


def _code(text: str) -> str:
    """`text` as a Markdown code span, whatever backticks it holds."""
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


# -- hover -----------------------------------------------------------------------


def hover(a: Analysis, position: types.Position) -> types.Hover | None:
    """On a citation: its verdict and the cited lines at its pin, numbered, with
    the declaration that holds them and a permalink. On a claim: its verdict,
    the measured value, the counting rule and the evidence."""
    c = citation_at(a, position)
    v = a.verdict(c) if c is not None else None
    if c is not None and v is not None and a.scope is not None:
        text = citation_markdown(a.scope, v)
        where = _range(a, c.source.line, c.source.column, len(c.written or c.text))
    else:
        claim = claim_at(a, position)
        cv = a.claim_verdict(claim) if claim is not None else None
        if claim is None or cv is None or a.scope is None:
            return None
        text = claim_markdown(a.scope, cv)
        m = CLAIM_SPAN_RE.match(a.lines.line(claim.source.line - 1), claim.source.column - 1)
        where = _range(a, claim.source.line, claim.source.column, m.end() - m.start() if m else 0)
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text), range=where)


def citation_markdown(scope: Scope, v: Verdict) -> str:
    c, pin = v.citation, v.pin
    target = v.path + (":" + format_lines(c.lines) if c.lines else "") + ("#" + c.symbol if c.symbol else "")
    head = f"**{_code(target)}**"
    if pin is not None:
        head += f" at {pin.name} (`{pin.sha[:12]}`)"
    head += f": {v.status}" + ("" if v.ok else f": {v.message}")
    parts = [head]
    ranges = v.resolved_lines or c.lines
    text = scope.text(pin, v.path) if pin is not None and v.status.reach is Reach.LINES else None
    if pin is None or text is None or not ranges:
        return "\n\n".join(parts)
    extension = v.path.rsplit(".", 1)[-1]
    if extension in SYMBOL_FILE_ENDINGS:
        first = ranges[0]
        enclosing = scope.verifier.symbols(scope.snapshot(pin), v.path).enclosing(first)
        if enclosing is not None:
            name, span = enclosing
            parts.append(f"In `{name}` ({'line' if span.start == span.end else 'lines'} {span})")
    shown, cut = _clip(ranges)
    body = "\n".join(numbered(text.lines, shown, 0))
    fence = "`" * max(3, max((len(run) for run in re.findall(r"`{3,}", body)), default=0) + 1)
    parts.append(
        f"{fence}{LANGUAGES.get(extension, '')}\n{body}\n{fence}" + ("\n\n(cut: the citation is longer)" if cut else "")
    )
    whole = LineRange(ranges[0].start, max(r.end for r in ranges))
    parts.append(f"[{v.path}#L{whole.start}]({permalink(scope.config.web_url, pin.sha, v.path, whole)})")
    return "\n\n".join(parts)


def _clip(ranges: tuple[LineRange, ...]) -> tuple[tuple[LineRange, ...], bool]:
    """The ranges, cut after MAX_HOVER_LINES lines; and whether they were cut."""
    out: list[LineRange] = []
    left = MAX_HOVER_LINES
    for r in ranges:
        if left <= 0:
            return tuple(out), True
        out.append(LineRange(r.start, min(r.end, r.start + left - 1)))
        left -= out[-1].end - out[-1].start + 1
    return tuple(out), out[-1] != ranges[-1] if out else False


def claim_markdown(scope: Scope, v: ClaimVerdict) -> str:
    c, fact = v.claim, v.fact
    head = f"**{_code(f'{c.kind}: {c.text}')}**" + (f" at {v.pin.name}" if v.pin else "") + f": {v.status}"
    parts = [head + (f": {v.message}" if v.message else "")]
    if fact is None:
        return "\n\n".join(parts)
    if fact.status is FactStatus.OK:
        value = show_value(v.measured)
        value = value if len(value) <= MAX_VALUE_CHARS else value[: MAX_VALUE_CHARS - 3] + "..."
        parts.append(f"**Measured** at {fact.pin.name}: {_code(value)}")
    parts.append(f"**Counting rule** ({_code(fact.id)}): {fact.definition}")
    evidence = merge_evidence(fact.evidence)
    if evidence:
        listed = [
            f"- [{e}]({permalink(scope.config.web_url, fact.pin.sha, e.path, e.lines)})"
            for e in evidence[:MAX_EVIDENCE]
        ]
        if len(evidence) > MAX_EVIDENCE:
            listed.append(f"- and {len(evidence) - MAX_EVIDENCE} more (`dshaudit facts {fact.id}`)")
        parts.append("**Evidence:**\n" + "\n".join(listed))
    return "\n\n".join(parts)


# -- completion --------------------------------------------------------------------

_PATH = r"[\w.\-@+/]*"
_LINES = r"(?::[\d,\-–]+)?"
_CLAIM_RE = re.compile(r"(?:claim|prior):\s*([\w.\-/]*)")
_SYMBOL_RE = re.compile(rf"({_PATH}){_LINES}#([\w$.]*)")
_PIN_SUFFIX_RE = re.compile(rf"{_PATH}(?::[\d,\-–]+|#[\w$.]+)+@([\w.\-]*)")
_PATH_RE = re.compile(_PATH)
_FRONT_PIN_RE = re.compile(r"pin:[ \t]*['\"]?([\w.\-]*)")


def completion(a: Analysis, engine: Engine, position: types.Position) -> list[types.CompletionItem]:
    """What may be written at `position`: a pin name after `pin:` in the front
    matter; inside a code span, a fact id or field after `claim:` / `prior:`,
    a #Symbol of the file before `#`, a pin after `@`, else a path of the tree
    at the document's pin."""
    column = a.lines.column(position)
    before = a.lines.line(position.line)[:column]
    if _in_front_matter(a.lines, position.line):
        m = _FRONT_PIN_RE.fullmatch(before)
        return _pins(a, position.line, column - len(m.group(1)), column) if m else []
    if before.count("`") % 2 == 0:
        return []  # not inside a code span
    content = before[before.rfind("`") + 1 :]
    if m := _CLAIM_RE.fullmatch(content):
        return _facts(a, position.line, column - len(m.group(1)), column, m.group(1))
    if m := _SYMBOL_RE.fullmatch(content):
        return _symbols(a, position.line, column - len(m.group(2)), column, m.group(1))
    if m := _PIN_SUFFIX_RE.fullmatch(content):
        return _pins(a, position.line, column - len(m.group(1)), column)
    if _PATH_RE.fullmatch(content):
        folder, _, name = content.rpartition("/")
        return _paths(engine, a, position.line, column - len(name), column, folder)
    return []


def _in_front_matter(lines: Lines, line: int) -> bool:
    if line == 0 or lines.line(0).rstrip() != "---":
        return False
    return not any(lines.line(i).rstrip() in ("---", "...") for i in range(1, line))


def _item(
    a: Analysis,
    line: int,
    start: int,
    end: int,
    label: str,
    kind: types.CompletionItemKind,
    detail: str = "",
    sort: str = "",
) -> types.CompletionItem:
    return types.CompletionItem(
        label=label,
        kind=kind,
        detail=detail or None,
        sort_text=sort or None,
        text_edit=types.TextEdit(range=a.lines.range(line, start, end), new_text=label),
    )


def _pins(a: Analysis, line: int, start: int, end: int) -> list[types.CompletionItem]:
    if a.scope is None:
        return []
    return [
        _item(a, line, start, end, name, types.CompletionItemKind.Constant, pin.sha)
        for name, pin in sorted(a.scope.config.pins.items())
    ]


def _facts(a: Analysis, line: int, start: int, end: int, written: str) -> list[types.CompletionItem]:
    from dshaudit.facts.book import registry

    specs = registry()
    items = [
        _item(a, line, start, end, fact_id, types.CompletionItemKind.Constant, spec.definition)
        for fact_id, spec in sorted(specs.items())
    ]
    fact_id, _ = split_ref(written.rstrip("."), set(specs))
    pin = a.pin()
    if fact_id is not None and written.startswith(fact_id + ".") and pin is not None and a.scope is not None:
        fact = a.scope.book.get(fact_id, pin)
        items += [
            _item(
                a,
                line,
                start,
                end,
                f"{fact_id}.{name}",
                types.CompletionItemKind.Field,
                f"{show_value(value)[:80]} at {pin.name}",
            )
            for name, value in sorted(fact.fields.items())
        ]
    return items


def _resolve(scope: Scope, pin: Pin, path: str) -> str | None:
    """The tree path a path names at the pin: as written, else the one file whose path ends so."""
    snapshot = scope.snapshot(pin)
    if snapshot.entry(path) is not None:
        return path
    candidates = snapshot.paths_ending_with(path)
    return candidates[0] if len(candidates) == 1 else None


def _symbols(a: Analysis, line: int, start: int, end: int, path: str) -> list[types.CompletionItem]:
    pin = a.pin()
    if pin is None or a.scope is None:
        return []
    found = _resolve(a.scope, pin, path)
    if found is None or found.rsplit(".", 1)[-1] not in SYMBOL_FILE_ENDINGS or a.scope.text(pin, found) is None:
        return []
    table = a.scope.verifier.symbols(a.scope.snapshot(pin), found)
    return [
        _item(
            a,
            line,
            start,
            end,
            name,
            types.CompletionItemKind.Method if "." in name else types.CompletionItemKind.Class,
            f"lines {format_lines(spans)} at {pin.name}",
        )
        for name, spans in sorted(table.spans.items())
    ]


def _paths(engine: Engine, a: Analysis, line: int, start: int, end: int, folder: str) -> list[types.CompletionItem]:
    pin = a.pin()
    if pin is None or a.scope is None:
        return []
    entries = engine.children(a.scope.snapshot(pin)).get(folder, [])
    return [
        _item(
            a,
            line,
            start,
            end,
            name + ("/" if is_folder else ""),
            types.CompletionItemKind.Folder if is_folder else types.CompletionItemKind.File,
            sort=("0" if is_folder else "1") + name,
        )
        for name, is_folder in entries
    ]


# -- code actions ------------------------------------------------------------------


def code_actions(a: Analysis, selected: types.Range) -> list[types.CodeAction]:
    """For each citation on the selected lines: anchor it (when it holds and has
    no anchor), move it to where its anchor is now (a content_mismatch), carry
    it to each other pin. Each is one edit of the document."""
    if a.file is None or a.scope is None:
        return []
    out: list[types.CodeAction] = []
    for c in a.file.citations:
        v = a.verdict(c)
        if not selected.start.line <= c.source.line - 1 <= selected.end.line or v is None or v.pin is None:
            continue
        out += _anchor_actions(a, a.scope, c, v) + _move_actions(a, a.scope, c, v) + _carry_actions(a, a.scope, c, v)
    return out


def _edit(a: Analysis, c: Citation, old: str, new: str) -> types.WorkspaceEdit:
    return types.WorkspaceEdit(
        changes={a.uri: [types.TextEdit(range=_range(a, c.source.line, c.source.column, len(old)), new_text=new)]}
    )


_POINT_TITLE = "Point this permalink at the lines its text describes"


def _anchor_actions(a: Analysis, scope: Scope, c: Citation, v: Verdict) -> list[types.CodeAction]:
    assert v.pin is not None and a.file is not None
    if v.status is not Status.OK and not v.suggested:
        return []
    edits = propose([c], {0: v}, {0: scope.text(v.pin, v.path)}, a.file.pin, a.lines.lines)
    return [
        types.CodeAction(
            title=f"Anchor this citation on `{e.anchor}`" if e.anchor else _POINT_TITLE,
            kind=types.CodeActionKind.QuickFix,
            edit=_edit(a, c, e.old, e.new),
        )
        for e in edits
    ]


def _move_actions(a: Analysis, scope: Scope, c: Citation, v: Verdict) -> list[types.CodeAction]:
    assert v.pin is not None
    if v.status is not Status.CONTENT_MISMATCH or c.form != "canonical" or not c.lines or not c.anchors:
        return []
    lines = relocated(scope, c, v)
    if lines is None:
        return []
    new = Move(c, MoveStatus.SHIFTED, "", c.path, lines).new_text(v.pin, v.pin)
    return [
        types.CodeAction(
            title=f"Move to where the anchor is now: {new}",
            kind=types.CodeActionKind.QuickFix,
            edit=_edit(a, c, c.text, new),
            is_preferred=True,
        )
    ]


def relocated(scope: Scope, c: Citation, v: Verdict) -> tuple[LineRange, ...] | None:
    """The citation's lines moved, all by one distance, to where its anchors are
    now in the same file: the nearest place where the full check passes."""
    assert v.pin is not None
    text = scope.text(v.pin, v.path)
    if text is None:
        return None
    shifts: set[int] = set()
    for anchor in c.anchors:
        for hit in text.find(anchor):
            for r in c.lines:
                shifts.update(range(hit - r.end, hit - r.start + 1))
    for d in sorted(shifts - {0}, key=lambda d: (abs(d), d))[:MAX_RELOCATIONS]:
        lines = tuple(LineRange(r.start + d, r.end + d) for r in c.lines)
        if lines[0].start >= 1 and scope.verifier.verify(replace(c, lines=lines), v.pin, v.pin.name).ok:
            return lines
    return None


def _carry_actions(a: Analysis, scope: Scope, c: Citation, v: Verdict) -> list[types.CodeAction]:
    """The rebase of this one citation to each other pin of the configuration."""
    assert v.pin is not None
    if v.status.fails() or c.form != "canonical":
        return []
    home = a.pin()
    out = []
    for pin in sorted(scope.config.pins.values(), key=lambda p: p.name):
        if pin.sha == v.pin.sha:
            continue
        # Carried from the path it was read at (an abbreviated path is written in full).
        move = scope.rebaser(v.pin, pin).move(replace(c, path=v.path, pin_ref=None))
        if not move.writable:
            out.append(
                types.CodeAction(
                    title=f"Carry to pin {pin.name}",
                    kind=types.CodeActionKind.RefactorRewrite,
                    disabled=types.CodeActionDisabled(reason=f"{move.status}: {move.message}"),
                )
            )
            continue
        new = move.new_text(v.pin, pin) + ("" if home is not None and home.sha == pin.sha else "@" + pin.ref)
        out.append(
            types.CodeAction(
                title=f"Carry to pin {pin.name}: {new} ({move.status})",
                kind=types.CodeActionKind.RefactorRewrite,
                edit=_edit(a, c, c.text, new),
            )
        )
    return out


# -- definition --------------------------------------------------------------------


def definition(a: Analysis, position: types.Position) -> types.Location | None:
    """The cited lines, in the cited file at its pin (a read-only `dshaudit:` document)."""
    c = citation_at(a, position)
    v = a.verdict(c) if c is not None else None
    if c is None or v is None or v.pin is None or a.scope is None or v.status.reach is Reach.NOWHERE:
        return None
    text = a.scope.text(v.pin, v.path)
    if text is None:
        return None
    blob = Lines(text.lines, a.lines.encoding)
    ranges = v.resolved_lines or c.lines
    first = ranges[0] if ranges and v.status.reach is Reach.LINES else LineRange(1, 1)
    where = types.Range(blob.position(first.start - 1, 0), blob.position(first.end - 1, len(blob.line(first.end - 1))))
    return types.Location(uri=blob_uri(v.pin.sha, v.path), range=where)
