"""Carry citations from one pin to another, and say what happened to each.

For every citation: the same blob at both pins is `unchanged`. Otherwise its
lines are mapped through git's diff (with rename detection); where the mapping
lands in a changed hunk, or the anchor is not on the mapped lines, the anchor
itself is searched for, the candidate nearest the mapped position first. A
new location is accepted only when the full check (path, lines, symbol,
anchors) passes there, so no citation is ever moved silently onto other code.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from .config import Config
from .findings import FindingsFile
from .linemap import Hunk, LineMapper, parse_hunks
from .model import Citation, LineRange, Pin, Status, format_lines
from .snapshot import Diff, DshRepository
from .verify import FileText, Verifier, squash

STATUSES = ("unchanged", "shifted", "edited", "renamed", "ambiguous", "lost", "skipped")


@dataclass(frozen=True)
class Move:
    citation: Citation
    status: str
    message: str
    new_path: str | None = None
    new_lines: tuple[LineRange, ...] = ()
    diff: tuple[str, ...] = ()  # unified diff of the cited lines, for `edited`

    @property
    def writable(self) -> bool:
        return self.status in ("unchanged", "shifted", "edited", "renamed")

    def new_text(self, old_pin: Pin, new_pin: Pin) -> str:
        c = self.citation
        text = self.new_path or c.path
        if c.lines:
            text += ":" + format_lines(self.new_lines)
        if c.symbol:
            text += "#" + c.symbol
        if c.pin_ref:
            text += "@" + (new_pin.name if c.pin_ref in (old_pin.name, old_pin.sha) else c.pin_ref)
        return text


@dataclass
class RebaseResult:
    old_pin: Pin
    new_pin: Pin
    moves: list[Move] = field(default_factory=list)
    claim_changes: list[dict] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        return {s: sum(1 for m in self.moves if m.status == s) for s in STATUSES}


class Rebaser:
    def __init__(self, config: Config, repository: DshRepository, old_pin: Pin, new_pin: Pin):
        self.config = config
        self.repository = repository
        self.old_pin, self.new_pin = old_pin, new_pin
        self.old = repository.snapshot(old_pin.sha, old_pin.name)
        self.new = repository.snapshot(new_pin.sha, new_pin.name)
        self.verifier = Verifier(config, repository)
        self.diff = Diff(repository, old_pin.sha, new_pin.sha)

    def _text(self, snap, path: str) -> FileText | None:
        entry = snap.entry(path)
        return self.verifier._text(snap, entry.blob_sha) if entry and entry.kind == "blob" else None

    def _holds_at(self, c: Citation, pin: Pin) -> bool:
        return self.verifier.verify(c, pin, pin.name).status is Status.OK

    def prefetch(self, citations: list[Citation]) -> None:
        """One `git diff` for every changed file the citations touch."""
        pairs = []
        for c in citations:
            old_entry = self.old.entry(c.path)
            new_path = c.path if self.new.entry(c.path) else self.diff.renames.get(c.path)
            new_entry = self.new.entry(new_path) if new_path else None
            if old_entry and new_entry and old_entry.blob_sha != new_entry.blob_sha:
                pairs.append((c.path, new_path))
        self.diff.patches(sorted(set(pairs)))

    def move(self, c: Citation) -> Move:
        if c.pin_ref and c.pin_ref not in (self.old_pin.name, self.old_pin.sha):
            return Move(c, "skipped", f"pinned to {c.pin_ref}, not {self.old_pin.name}; left as it is")
        if not self._holds_at(c, self.old_pin):
            return Move(c, "skipped", f"does not hold at {self.old_pin.name}; fix it there first")
        old_entry = self.old.entry(c.path)
        new_path = c.path if self.new.entry(c.path) else self.diff.renames.get(c.path)
        if new_path is None:
            return Move(c, "lost", f"{c.path} is gone at {self.new_pin.name} (deleted, no rename detected)")
        new_entry = self.new.entry(new_path)
        if new_entry is None or new_entry.kind != "blob":
            return Move(c, "lost", f"{new_path} is not a file at {self.new_pin.name}")
        renamed = new_path != c.path
        if old_entry.blob_sha == new_entry.blob_sha:
            status = "renamed" if renamed else "unchanged"
            return Move(c, status, f"same content{f' at {new_path}' if renamed else ''}", new_path, c.lines)

        old_text, new_text = self._text(self.old, c.path), self._text(self.new, new_path)
        patch = self.diff.patches([(c.path, new_path)])[(c.path, new_path)]
        mapper = LineMapper(parse_hunks(patch))
        candidate = replace(c, path=new_path, pin_ref=None)

        if c.symbol and not c.lines:
            moved = candidate
        else:
            lines, why = self._map_lines(c, old_text, new_text, mapper)
            if lines is None:
                return Move(c, why[0], why[1], new_path)
            moved = replace(candidate, lines=lines)
            if c.symbol and not self._holds_at(moved, self.new_pin):
                moved = self._follow_symbol(c, moved, old_text) or moved
        if not self._holds_at(moved, self.new_pin):
            verdict = self.verifier.verify(moved, self.new_pin, self.new_pin.name)
            return Move(c, "lost", f"no place at {self.new_pin.name} holds it: {verdict.message}", new_path)

        new_lines = moved.lines
        before = self._region_text(c, c.lines, old_text, self.old, c.path)
        after = self._region_text(moved, new_lines, new_text, self.new, new_path)
        if renamed:
            status = "renamed"
        elif squash(before) == squash(after):
            status = "unchanged" if new_lines == c.lines else "shifted"
        else:
            status = "edited"
        diff = ()
        if squash(before) != squash(after):
            diff = tuple(
                difflib.unified_diff(before.split("\n"), after.split("\n"), f"{c.path}@{self.old_pin.name}",
                                     f"{new_path}@{self.new_pin.name}", lineterm="", n=1)
            )
        where = f"{new_path}:{format_lines(new_lines)}" if new_lines else new_path
        return Move(c, status, f"now at {where}", new_path, new_lines, diff)

    def _region_text(self, c: Citation, lines, text: FileText, snap, path: str) -> str:
        if lines:
            return text.cited_text(lines)
        table = self.verifier._symbols_of(snap, path, snap.entry(path).blob_sha)
        return text.cited_text(table.resolve(c.symbol))

    def _follow_symbol(self, c: Citation, moved: Citation, old_text: FileText) -> Citation | None:
        """Lines inside a declaration keep their offset from its start."""
        old_table = self.verifier._symbols_of(self.old, c.path, self.old.entry(c.path).blob_sha)
        new_table = self.verifier._symbols_of(self.new, moved.path, self.new.entry(moved.path).blob_sha)
        old_spans, new_spans = old_table.resolve(c.symbol), new_table.resolve(c.symbol)
        if len(old_spans) != 1 or len(new_spans) != 1:
            return None
        shift = new_spans[0].start - old_spans[0].start
        return replace(moved, lines=tuple(LineRange(r.start + shift, r.end + shift) for r in c.lines))

    def _map_lines(self, c: Citation, old_text: FileText, new_text: FileText, mapper: LineMapper):
        """New ranges for the citation's parts; or (None, (status, why))."""
        # Which anchors stand in which part, in the old file.
        part_anchors: list[list[str]] = [[] for _ in c.lines]
        for anchor in c.anchors:
            for i, r in enumerate(c.lines):
                if squash(anchor) in squash(old_text.cited_text((r,))):
                    part_anchors[i].append(anchor)
                    break
        out = []
        for r, anchors in zip(c.lines, part_anchors):
            mapped = mapper.map_range(r.start, r.end)
            if mapped is not None:
                # Untouched by the diff: the same text, by construction.
                out.append(LineRange(*mapped))
                continue
            if not anchors:
                return None, ("lost", f"lines {r} were edited and carry no anchor of their own to find them by")
            placed, why = self._relocate(r, anchors, old_text, new_text, mapper)
            if placed is None:
                return None, why
            out.append(placed)
        return tuple(out), None

    def _relocate(self, r: LineRange, anchors: list[str], old_text: FileText, new_text: FileText, mapper: LineMapper):
        first = anchors[0]
        old_hits = [h for h in old_text.find(first) if r.start <= h <= r.end]
        offset = (old_hits[0] - r.start) if old_hits else 0
        length = r.end - r.start
        candidates = []
        for hit in new_text.find(first):
            start = hit - offset
            if start < 1 or start + length > len(new_text.lines):
                continue
            cand = LineRange(start, start + length)
            cited = squash(new_text.cited_text((cand,)))
            if all(squash(a) in cited for a in anchors):
                candidates.append(cand)
        # Where the diff says the lines went: the new side of the hunks that took them.
        touched = mapper.touched(r.start, r.end) or [_nearest_hunk(mapper, r.start)]
        region = (min(h.new_start for h in touched), max(h.new_start + max(h.new_count, 1) - 1 for h in touched))
        if not candidates and len(anchors) > 1:
            stretched = self._stretch(r, anchors, old_text, new_text, region)
            if stretched is not None:
                return stretched, None
        if not candidates:
            return None, ("lost", f"`{first}` is nowhere in the new file" if not new_text.find(first)
                          else f"no place in the new file holds all of its anchors ({', '.join(anchors)})")
        inside = [c for c in candidates if region[0] - length <= c.start <= region[1]]
        if len(inside) == 1:
            return inside[0], None
        if len(candidates) == 1:
            return candidates[0], None
        # The cited line's proportional place inside the first hunk that took it.
        h = touched[0]
        expected = h.new_start + min(max(r.start - h.old_start, 0), max(h.new_count - 1, 0)) + offset
        ranked = sorted(candidates, key=lambda c: abs(c.start + offset - expected))
        d1, d2 = (abs(c.start + offset - expected) for c in ranked[:2])
        if d2 >= 3 * d1 + 3:
            return ranked[0], None
        where = ", ".join(str(c) for c in ranked[:5])
        return None, ("ambiguous", f"{len(candidates)} places hold its anchors, none clearly nearest: lines {where}")


    @staticmethod
    def _stretch(r: LineRange, anchors: list[str], old_text: FileText, new_text: FileText, region) -> LineRange | None:
        """A range that grew or shrank: from its first anchor to its last, each
        taken nearest to where the diff put the lines, if they stay close together."""
        old_lines = []
        for a in anchors:
            hits = [h for h in old_text.find(a) if r.start <= h <= r.end]
            if not hits:
                return None
            old_lines.append(hits[0])
        new_lines = []
        for a in anchors:
            hits = new_text.find(a)
            if not hits:
                return None
            new_lines.append(min(hits, key=lambda h: abs(h - region[0])))
        first_i, last_i = old_lines.index(min(old_lines)), old_lines.index(max(old_lines))
        start = new_lines[first_i] - (old_lines[first_i] - r.start)
        end = new_lines[last_i] + (r.end - old_lines[last_i])
        length = r.end - r.start + 1
        if start < 1 or end > len(new_text.lines) or end < start or end - start + 1 > 2 * length + 10:
            return None
        cand = LineRange(start, end)
        cited = squash(new_text.cited_text((cand,)))
        return cand if all(squash(a) in cited for a in anchors) else None


def _nearest_hunk(mapper: LineMapper, line: int) -> Hunk:
    return min(mapper.hunks, key=lambda h: abs(h.old_start - line))


def rebase(files: list[FindingsFile], config: Config, repository: DshRepository, old_pin: Pin, new_pin: Pin) -> RebaseResult:
    rebaser = Rebaser(config, repository, old_pin, new_pin)
    result = RebaseResult(old_pin, new_pin)
    citations = [c for f in files for c in f.citations]
    rebaser.prefetch(citations)
    for c in citations:
        result.moves.append(rebaser.move(c))
    return result


# -- writing -------------------------------------------------------------------

_PIN_LINE_RE = re.compile(r"^(pin:[ \t]*)(['\"]?)([^'\"\s#]+)\2([ \t]*(#.*)?)$")


def rewrite_findings(path: Path, moves: list[Move], old_pin: Pin, new_pin: Pin) -> str | None:
    """The file's new text: writable citations rewritten in place, the front
    matter's pin moved; every other byte the same. None when nothing changes."""
    raw = path.read_bytes().decode("utf-8")
    lines = raw.split("\n")
    changed = False
    by_line: dict[int, list[Move]] = {}
    for m in moves:
        if m.writable:
            by_line.setdefault(m.citation.source.line, []).append(m)
    for line_no, ms in by_line.items():
        line = lines[line_no - 1]
        for m in sorted(ms, key=lambda m: -m.citation.source.column):
            col = m.citation.source.column - 1
            old = m.citation.text
            if line[col:col + len(old)] != old:
                raise RuntimeError(f"{path}:{line_no}: citation {old!r} is not where it was read")
            new = m.new_text(old_pin, new_pin)
            if new != old:
                line = line[:col] + new + line[col + len(old):]
                changed = True
        lines[line_no - 1] = line
    if lines and lines[0].rstrip("\r") == "---":
        for i in range(1, len(lines)):
            stripped = lines[i].rstrip("\r")
            if stripped in ("---", "..."):
                break
            m = _PIN_LINE_RE.match(stripped)
            if m and m.group(3) in (old_pin.name, old_pin.sha) and m.group(3) != new_pin.name:
                cr = "\r" if lines[i].endswith("\r") else ""
                lines[i] = f"{m.group(1)}{m.group(2)}{new_pin.name}{m.group(2)}{m.group(4)}{cr}"
                changed = True
    return "\n".join(lines) if changed else None
