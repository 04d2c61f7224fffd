"""Citations of documents written at one pin and checked at another (DSH's own
documents, `--tree-docs`): each is carried through the diff before it is checked.
`check` is given this function by the layer that calls it (`carry=`), so that the
checking layer never imports the moves above it."""

from __future__ import annotations

from dataclasses import replace

from dshaudit.checking.citations import Verifier
from dshaudit.core.model import Citation, Pin, Status, Verdict, format_lines
from dshaudit.moves.rebaser import MoveStatus, Rebaser


def carried_verdicts(carried: list[tuple[Citation, Pin, Pin]], verifier: Verifier) -> list[Verdict]:
    """Citations of documents written at one pin and checked at another: each is
    carried through the diff first (moves/rebaser.py). Lines the diff left alone are
    checked where they are; lines that moved, or were edited, say so."""
    out = []
    pairs: dict[tuple[str, str], list[Citation]] = {}
    pins: dict[str, Pin] = {}
    for c, written, pin in carried:
        pairs.setdefault((written.sha, pin.sha), []).append(c)
        pins[written.sha], pins[pin.sha] = written, pin
    for (old, new), citations in sorted(pairs.items()):
        rebaser = Rebaser(verifier.resolver, verifier.repository, pins[old], pins[new], verifier)
        rebaser.prefetch(citations)
        written, pin = pins[old], pins[new]
        for c in citations:
            # A document not written for dshaudit may cite lines that hold other code than its text says
            # where it was written: carried, they would too, so that is the verdict to give.
            home = verifier.verify(c, written, written.name) if not c.by_shape else None
            move = None if home is not None and home.status is Status.SUSPECT else rebaser.move(c)
            if move is not None and move.status is MoveStatus.UNCHANGED:
                out.append(verifier.verify(c, pin, pin.name))
            elif move is None or move.status is MoveStatus.SKIPPED:
                # Wrong at its own commit already: that is the verdict to give.
                v = home or verifier.verify(c, written, written.name)
                out.append(
                    replace(v, message=f"already at {written.name}, where the document was written: {v.message}")
                )
            elif move.status in (MoveStatus.SHIFTED, MoveStatus.RENAMED):
                now = f"{move.new_path}:{format_lines(move.new_lines)}" if move.new_lines else str(move.new_path)
                out.append(
                    Verdict(
                        c,
                        pin,
                        Status.MOVED_SINCE,
                        f"the text it cited at {written.name} is at {now} at {pin.name}",
                        move.new_lines,
                        move.new_path or c.path,
                    )
                )
            else:
                out.append(Verdict(c, pin, Status.CHANGED_SINCE, f"since {written.name}: {move.message}"))
    return out
