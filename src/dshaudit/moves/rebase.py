"""`dshaudit rebase`: the findings' citations carried to a new pin (rebaser.py),
the claims whose verdict changes there, and the findings rewritten."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from dshaudit.core.diagnostics import Diagnostic, Outcome, Summary, rules_of
from dshaudit.core.errors import InputError
from dshaudit.core.model import ClaimVerdict, Pin, SourceLocation
from dshaudit.core.status import DiagnosticStatus, Reach, Severity
from dshaudit.documents.claims import show as show_value
from dshaudit.documents.findings import FindingsFile, join_raw_lines, raw_lines
from dshaudit.documents.frontmatter import parse_pin_line
from dshaudit.git.pins import PinResolver
from dshaudit.git.repository import DshRepository
from dshaudit.moves.rebaser import Move, MoveStatus, Rebaser
from dshaudit.platform.writing import reread


class ClaimChange(DiagnosticStatus):
    """A claim whose verdict or measured value differs at the new pin: reported, never a failure."""

    @property
    def family(self) -> str:
        return "claim"

    CHANGED = (
        "changed",
        Severity.NOTE,
        "The claim's verdict or measured value changes at the new pin.",
        "Re-read the claim: the fact it names measures differently at the new pin.",
        Reach.NOWHERE,
    )


@dataclass
class RebaseResult:
    old_pin: Pin
    new_pin: Pin
    moves: list[Move] = field(default_factory=list)


def rebase(
    files: list[FindingsFile],
    resolver: PinResolver,
    repository: Callable[[], DshRepository],
    old_pin: Pin,
    new_pin: Pin,
    by_link: frozenset[str] = frozenset(),
    branches: bool = False,
) -> RebaseResult:
    """Every citation of `files` carried from `old_pin` to `new_pin`; of the documents named in
    `by_link` (whose permalinks name several commits), only the permalinks at `old_pin`. With
    `branches`, a permalink to a branch is carried from the commit the branch is at."""
    rebaser = Rebaser(resolver, repository, old_pin, new_pin, branches=branches)
    result = RebaseResult(old_pin, new_pin)
    citations = [c for f in files for c in f.citations if f.path not in by_link or rebaser.links_here(c)]
    rebaser.prefetch(citations)
    for c in citations:
        result.moves.append(rebaser.move(c))
    result.moves = _names_still_declared([f for f in files if not f.pin], result, rebaser)
    return result


def _names_still_declared(files: list[FindingsFile], result: RebaseResult, rebaser: Rebaser) -> list[Move]:
    """A link to a whole file, with names listed beside it that the file declared (checking/linked.py),
    is carried only while the file at the new pin still declares every one of them; else it is lost,
    and says which name went. (Documents with a pin of their own list no names so.)"""
    from dshaudit.checking.linked import declared_at, linked_names
    from dshaudit.checking.mentions import document_names, front_lines
    from dshaudit.documents.stretches import outline

    beside: dict[SourceLocation, list] = {}  # a whole-file link's place -> the names listed beside it
    for f in files:
        items = [(n, SourceLocation(f.path, line, col)) for n, line, col in document_names(f.text)]
        for x in linked_names(items, outline(f.text, front_lines(f.text)), f.citations):
            beside.setdefault(x.link.source, []).append(x)
    if not beside:
        return result.moves
    out = []
    for m in result.moves:
        c = m.citation
        names = beside.get(c.source, [])
        if m.status in (MoveStatus.UNCHANGED, MoveStatus.RENAMED) and names:
            path = m.new_path or c.path
            # The names the file declared where the document was written, and does no longer.
            gone = [
                x
                for x in names
                if declared_at(rebaser.old, c.path, x.identifier, x.owner) is not None
                and declared_at(rebaser.new, path, x.identifier, x.owner) is None
            ]
            if gone:
                what = f"{gone[0].owner}.{gone[0].identifier}" if gone[0].owner else gone[0].identifier
                m = replace(
                    m,
                    status=MoveStatus.LOST,
                    message=f"`{what}`, listed beside it, is not declared in {path} at {result.new_pin.name}",
                )
        out.append(m)
    return out


def claim_change(before: ClaimVerdict, after: ClaimVerdict, new_pin: Pin) -> Diagnostic | None:
    """A diagnostic when a claim's verdict or measured value differs at the new pin."""
    was, now = show_value(before.measured), show_value(after.measured)
    if before.status == after.status and was == now:
        return None
    c = before.claim
    message = f"{before.status} ({was}) -> {after.status} ({now}) at {new_pin.name}"
    payload = {
        "source": str(c.source),
        "claim": c.text,
        "kind": c.kind,
        "before": {"status": before.status.value, "measured": was},
        "after": {"status": after.status.value, "measured": now},
    }
    return Diagnostic(
        "claim_change",
        c.source,
        ClaimChange.CHANGED,
        message,
        f"{c.kind}: {c.text}",
        new_pin,
        identity=(c.kind, c.text),
        payload_of=lambda: payload,
    )


def rebase_outcome(results: list[RebaseResult], new_pin: Pin, changes: list[Diagnostic]) -> Outcome:
    """Moves in findings order, then claim changes; text lists every move but the unchanged."""
    moves = sorted(
        ((m, r.old_pin) for r in results for m in r.moves),
        key=lambda mp: (mp[0].citation.source.file, mp[0].citation.source.line, mp[0].citation.source.column),
    )
    counts = {s.value: sum(1 for m, _ in moves if m.status is s) for s in MoveStatus}
    line = (
        f"{len(moves)} citations to {new_pin.name}: "
        + ", ".join(f"{n} {s}" for s, n in counts.items())
        + f"; {len(changes)} claims change"
    )
    diagnostics = [m.diagnostic(old, new_pin) for m, old in moves] + changes
    return Outcome(
        command="rebase",
        diagnostics=tuple(diagnostics),
        summary=Summary(
            line,
            counts,
            tuple((s.capitalize(), str(n)) for s, n in counts.items()),
            "Every citation holds at the new pin, unchanged.",
        ),
        rules=rules_of(MoveStatus, ClaimChange),
        show_at=Severity.NOTE,
        head={"from": sorted({r.old_pin.name for r in results}), "to": {"pin": new_pin.name, "sha": new_pin.sha}},
        sections=(("citations", ("move",)), ("claims", ("claim_change",))),
        files=tuple(sorted({d.source.file for d in diagnostics})),
    )


# -- writing -------------------------------------------------------------------


def rewrite_findings(
    f: FindingsFile, moves: list[Move], old_pin: Pin, new_pin: Pin, own_pin: Pin | None = None
) -> str | None:
    """The file's new text: writable citations rewritten in place, the front
    matter's pin moved to `new_pin.ref` (a name `check` reads: the configured
    name, else the full SHA); every other byte the same (byte order mark and
    line ends included). None when nothing changes. An InputError when the
    file is no longer what was read."""
    if f.read is None:
        raise InputError("was not read from disk; nothing to write", file=f.path)
    # The same file (not a link or another file swapped into its place), with the same bytes.
    data = reread(f.read, f.path, "rebase").data
    bom, lines = raw_lines(data.decode("utf-8"))
    changed = False
    by_line: dict[int, list[Move]] = {}
    for m in moves:
        if m.writable:
            by_line.setdefault(m.citation.source.line, []).append(m)
    for line_no, ms in by_line.items():
        line, end = lines[line_no - 1]
        for m in sorted(ms, key=lambda m: -m.citation.source.column):
            col = m.citation.source.column - 1
            old = m.citation.text
            if line[col : col + len(old)] != old:
                raise InputError(
                    f"citation {old!r} is not where it was read; nothing was written to the file",
                    file=f.path,
                    line=line_no,
                )
            new = m.new_text(old_pin, new_pin)
            if new != old:
                line = line[:col] + new + line[col + len(old) :]
                changed = True
        lines[line_no - 1] = (line, end)
    if f.pin_line:
        # The one line `load_findings_file` read the pin from, in the one form it accepts.
        line, end = lines[f.pin_line - 1]
        written = parse_pin_line(line)
        if written is None or written.value != f.pin:
            raise InputError(
                "the pin is not where it was read; nothing was written to the file", file=f.path, line=f.pin_line
            )
        # The pin the citations were carried from, however it is written (a name, a SHA, a tag's SHA).
        carried = written.value in (old_pin.name, old_pin.sha) or (own_pin is not None and own_pin.sha == old_pin.sha)
        if carried and written.value != new_pin.ref:
            lines[f.pin_line - 1] = (written.with_value(new_pin.ref), end)
            changed = True
    return join_raw_lines(bom, lines) if changed else None
