"""Citations of documents written at one pin and checked at another (DSH's own
documents, `--tree-docs`): each is carried through the diff before it is checked.
`check` is given this function by the layer that calls it (`carry=`), so that the
checking layer never imports the moves above it."""

from __future__ import annotations

from dataclasses import replace

from dshaudit.checking.citations import Verifier
from dshaudit.core.model import Citation, LineRange, Pin, Status, Verdict, format_lines
from dshaudit.documents.matching import alnum, squash
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
                followed_to = None if c.by_shape else followed(c, written, pin, verifier)
                out.append(
                    followed_to or Verdict(c, pin, Status.CHANGED_SINCE, f"since {written.name}: {move.message}")
                )
    return out


# A cited line that says something of its own (`return false` says little): at least this many letters and digits.
DISTINCT_CHARS = 12
# The share of a citation's distinct lines that must stand together elsewhere for its text to be found there.
FOUND_SHARE = 0.4
MAX_OTHER_FILES = 5
GREPPED_LINES = 3
NEAR = 3  # lines between two hits of one stretch of text, at most


def followed(c: Citation, written: Pin, pin: Pin, verifier: Verifier) -> Verdict | None:
    """Where the text of an unanchored citation went when the diff edited its lines, for a document
    not written for dshaudit, which has no anchor to find it by: most of its distinct lines, together,
    elsewhere in its file (changed, with the lines), or in another file (gone, with the file and lines).
    None when they are found nowhere together."""
    repository = verifier.repository()
    old = verifier.text(repository.snapshot(written.sha, written.name), c.path)
    if old is None:
        return None
    keys = list(
        dict.fromkeys(
            k
            for r in c.lines
            for n in range(r.start, min(r.end, len(old.lines)) + 1)
            if len(alnum(k := squash(old.lines[n - 1]))) >= DISTINCT_CHARS
        )
    )
    if len(keys) < 2:
        return None
    snapshot = repository.snapshot(pin.sha, pin.name)
    since = f"since {written.name}"
    here = verifier.text(snapshot, c.path)
    if here is not None:
        span = _together(keys, here.lines)
        if span is not None:
            return Verdict(
                c,
                pin,
                Status.CHANGED_SINCE,
                f"{since}: its lines were edited; most of their text is at {c.path}:{span} at {pin.name}",
                (span,),
                c.path,
            )
    # The longest cited lines, their spacing aside, find the files that may hold the text now.
    cited = {old.lines[n - 1].strip() for r in c.lines for n in range(r.start, min(r.end, len(old.lines)) + 1)}
    longest = sorted(cited, key=lambda line: (-len(line), line))[:GREPPED_LINES]
    for other in [p for p in snapshot.grep.files_holding(longest) if p != c.path][:MAX_OTHER_FILES]:
        text = verifier.text(snapshot, other)
        span = _together(keys, text.lines) if text is not None else None
        if span is not None:
            return Verdict(
                c,
                pin,
                Status.GONE_SINCE,
                f"{since}: its text left {c.path}; it is at {other}:{span} at {pin.name}",
                (span,),
                other,
            )
    return None


def _together(keys: list[str], lines: list[str]) -> LineRange | None:
    """The shortest stretch of `lines` holding a FOUND_SHARE of `keys` (squashed lines), if any."""
    squashed = [squash(line) for line in lines]
    wanted = set(keys)
    hits = [(n, s) for n, s in enumerate(squashed, 1) if s in wanted]
    need = max(2, -(-len(keys) * FOUND_SHARE // 1))
    best: tuple[int, int] | None = None
    for i in range(len(hits)):
        seen: set[str] = set()
        for j in range(i, len(hits)):
            seen.add(hits[j][1])
            if len(seen) >= need:
                if best is None or hits[j][0] - hits[i][0] < best[1] - best[0]:
                    best = (hits[i][0], hits[j][0])
                break
    if best is None or best[1] - best[0] > 3 * len(keys) + 20:
        return None
    # Widened over the hits next to it (a line or two apart): the text as it stands, not its least part.
    lines_hit = [n for n, _ in hits]
    lo, hi = lines_hit.index(best[0]), lines_hit.index(best[1])
    while lo > 0 and lines_hit[lo] - lines_hit[lo - 1] <= NEAR:
        lo -= 1
    while hi + 1 < len(lines_hit) and lines_hit[hi + 1] - lines_hit[hi] <= NEAR:
        hi += 1
    return LineRange(lines_hit[lo], lines_hit[hi])
