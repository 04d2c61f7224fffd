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
from collections.abc import Callable
from dataclasses import dataclass, replace

from dshaudit.checking.citations import FileText, Verifier
from dshaudit.core.diagnostics import Diagnostic
from dshaudit.core.model import Citation, LineRange, Pin, format_lines
from dshaudit.core.status import DiagnosticStatus, Reach, Severity
from dshaudit.documents.grammar import relinked
from dshaudit.documents.matching import squash
from dshaudit.git.diff import Diff
from dshaudit.git.linemap import Hunk, LineMapper, parse_hunks
from dshaudit.git.pins import PinResolver
from dshaudit.git.repository import DshRepository
from dshaudit.git.snapshot import Snapshot


class MoveStatus(DiagnosticStatus):
    """What happened to one citation carried to a new pin. Ambiguous and lost
    citations need a person (and fail the command); the rest are written."""

    @property
    def family(self) -> str:
        return "rebase"

    @property
    def writable(self) -> bool:
        return self in (MoveStatus.UNCHANGED, MoveStatus.SHIFTED, MoveStatus.EDITED, MoveStatus.RENAMED)

    UNCHANGED = ("unchanged", Severity.NONE)
    SHIFTED = (
        "shifted",
        Severity.NOTE,
        "The cited lines moved.",
        "The same text stands on other lines at the new pin; `--write` updates the line numbers.",
    )
    EDITED = (
        "edited",
        Severity.NOTE,
        "The cited lines were edited.",
        "The anchors still hold at the new place, but the text around them changed: re-read the finding "
        "against the diff before writing.",
    )
    RENAMED = (
        "renamed",
        Severity.NOTE,
        "The cited file was renamed.",
        "git's rename detection followed the file; `--write` updates the path.",
    )
    AMBIGUOUS = (
        "ambiguous",
        Severity.ERROR,
        "Several places could hold the citation.",
        "Its anchors stand in more than one place, none clearly nearest to where the diff put the lines. "
        "Pick one by hand with `dshaudit show`.",
    )
    LOST = (
        "lost",
        Severity.ERROR,
        "No place at the new pin holds the citation.",
        "The file is gone or its anchors are nowhere. Find the code by hand, or state that it is gone.",
        Reach.NOWHERE,
    )
    SKIPPED = (
        "skipped",
        Severity.NOTE,
        "The citation was not carried.",
        "It names another pin, or it does not hold at the old pin: fix it there first.",
        Reach.NOWHERE,
    )


@dataclass(frozen=True)
class Move:
    citation: Citation
    status: MoveStatus
    message: str
    new_path: str | None = None
    new_lines: tuple[LineRange, ...] = ()
    diff: tuple[str, ...] = ()  # unified diff of the cited lines, for `edited`

    @property
    def writable(self) -> bool:
        return self.status.writable

    def new_text(self, old_pin: Pin, new_pin: Pin) -> str:
        c = self.citation
        if c.is_permalink:
            return self._new_link(new_pin)
        text = self.new_path or c.path
        if c.lines:
            text += ":" + format_lines(self.new_lines)
        if c.symbol:
            text += "#" + c.symbol
        if c.pin_ref:
            text += "@" + (new_pin.ref if c.pin_ref in (old_pin.name, old_pin.sha) else c.pin_ref)
        return text

    def _new_link(self, new_pin: Pin) -> str:
        """The permalink at the new pin's commit (a permalink names a commit for good: its full SHA),
        at the new path and lines."""
        c = self.citation
        link = c.text.replace(f"/{c.pin_ref}/{c.path}", f"/{new_pin.sha}/{self.new_path or c.path}", 1)
        if c.lines and self.new_lines:
            link = relinked(link, self.new_lines[0].start, self.new_lines[0].end) or link
        return link

    def diagnostic(self, old_pin: Pin, new_pin: Pin) -> Diagnostic:
        c = self.citation
        target = f"{c.target_text}@{old_pin.name}"
        if self.writable:
            # A permalink names its commit in itself; a path is read at the pin after its `@`.
            target += f" -> {self.new_text(old_pin, new_pin)}" + ("" if c.is_permalink else f"@{new_pin.name}")
        payload = {
            "source": c.source.to_dict(),
            "status": self.status.value,
            "old": {
                "pin": old_pin.name,
                "path": c.path,
                "lines": format_lines(c.lines) or None,
                "symbol": c.symbol,
                "text": c.text,
            },
            "new": {
                "pin": new_pin.name,
                "path": self.new_path,
                "lines": format_lines(self.new_lines) or None,
                "text": self.new_text(old_pin, new_pin),
            }
            if self.writable
            else None,
            "message": self.message,
            "diff": list(self.diff),
        }
        return Diagnostic(
            "move",
            c.source,
            self.status,
            self.message,
            target,
            new_pin,
            identity=("move", c.text, *c.anchors),
            payload_of=lambda: payload,
        )


class NoPlace(Exception):
    """No new place for a cited part: lost or ambiguous, and why."""

    def __init__(self, status: MoveStatus, why: str):
        super().__init__(why)
        self.status, self.why = status, why


class Rebaser:
    """Carries citations from `old_pin` to `new_pin`. `move` decides one
    citation in three steps: whether it can be carried at all (`_precheck`),
    where its lines land (`_place`), and what kind of move that was (`_classify`)."""

    def __init__(
        self,
        resolver: PinResolver,
        repository: Callable[[], DshRepository],
        old_pin: Pin,
        new_pin: Pin,
        verifier: Verifier | None = None,
        diff: Diff | None = None,
        branches: bool = False,
    ):
        """`verifier` and `diff` may come from the caller: history carries citations
        through many commits in a row, and shares one verifier's decoded files between them."""
        opened = repository()
        self.old_pin, self.new_pin = old_pin, new_pin
        self.old = opened.snapshot(old_pin.sha, old_pin.name)
        self.new = opened.snapshot(new_pin.sha, new_pin.name)
        # The language server and history pass the Verifier they keep; a run makes its own.
        self.resolver = resolver
        self.branches = branches  # a permalink to a branch counts as one at the commit the branch is at
        self.verifier = verifier or Verifier(resolver, repository)
        self.diff = diff or Diff(opened, old_pin.sha, new_pin.sha)

    def _holds_at(self, c: Citation, pin: Pin) -> bool:
        """The full check passes (a warning such as `suspect` is carried as it is, never made worse)."""
        return self.verifier.verify(c, pin, pin.name).status.severity is not Severity.ERROR

    def _new_path(self, path: str) -> str | None:
        return path if self.new.entry(path) else self.diff.renames.get(path)

    def prefetch(self, citations: list[Citation]) -> None:
        """One `git diff` for every changed file the citations touch."""
        pairs = []
        for c in citations:
            old_entry = self.old.entry(c.path)
            new_path = self._new_path(c.path)
            new_entry = self.new.entry(new_path) if new_path else None
            if old_entry and new_entry and new_path and old_entry.blob_sha != new_entry.blob_sha:
                pairs.append((c.path, new_path))
        self.diff.patches(sorted(set(pairs)))

    def move(self, c: Citation) -> Move:
        early = self._precheck(c)
        if early is not None:
            return early
        new_path = self._new_path(c.path)
        assert new_path is not None  # _precheck returned a move otherwise
        placed = self._place(c, new_path)
        if isinstance(placed, Move):
            return placed
        return self._classify(c, placed)

    def _precheck(self, c: Citation) -> Move | None:
        """A move decided before any line is mapped: skipped, lost with its
        file, or a file whose content did not change."""
        if c.pin_ref and not self._at_old_pin(c):
            return Move(c, MoveStatus.SKIPPED, f"pinned to {c.pin_ref}, not {self.old_pin.name}; left as it is")
        if c.form == "tree-permalink":  # a folder: carried while it is there
            there = self.new.entry(c.path)
            if there is None or there.kind != "tree":
                return Move(c, MoveStatus.LOST, f"{c.path} is not a folder at {self.new_pin.name}")
            return Move(c, MoveStatus.UNCHANGED, "the folder is there", c.path)
        if not self._holds_at(c, self.old_pin):
            return Move(c, MoveStatus.SKIPPED, f"does not hold at {self.old_pin.name}; fix it there first")
        new_path = self._new_path(c.path)
        if new_path is None:
            return Move(c, MoveStatus.LOST, f"{c.path} is gone at {self.new_pin.name} (deleted, no rename detected)")
        old_entry, new_entry = self.old.entry(c.path), self.new.entry(new_path)
        if new_entry is None or new_entry.kind != "blob":
            return Move(c, MoveStatus.LOST, f"{new_path} is not a file at {self.new_pin.name}")
        renamed = new_path != c.path
        if old_entry is not None and old_entry.blob_sha == new_entry.blob_sha:
            status = MoveStatus.RENAMED if renamed else MoveStatus.UNCHANGED
            return Move(c, status, f"same content{f' at {new_path}' if renamed else ''}", new_path, c.lines)
        return None

    def links_here(self, c: Citation) -> bool:
        """Whether the citation is a permalink at the old pin's commit."""
        return c.is_permalink and bool(c.pin_ref) and self._at_old_pin(c)

    def _at_old_pin(self, c: Citation) -> bool:
        """Whether the citation's own ref names the old pin: as written, or (a permalink's
        commit, full or abbreviated) as the commit it resolves to."""
        if c.pin_ref in (self.old_pin.name, self.old_pin.sha):
            return True
        own = self.resolver.resolve_link(c.pin_ref) if c.is_permalink and c.pin_ref else None
        return own is not None and (self.branches or not own.branch) and own.sha == self.old_pin.sha

    def _place(self, c: Citation, new_path: str) -> Citation | Move:
        """The citation at its new place, checked in full there; or a Move saying why there is none."""
        old_text, new_text = self.verifier.text(self.old, c.path), self.verifier.text(self.new, new_path)
        assert old_text is not None and new_text is not None  # both are text: the citation held at the old pin
        patch = self.diff.patches([(c.path, new_path)])[(c.path, new_path)]
        mapper = LineMapper(parse_hunks(patch))
        candidate = replace(c, path=new_path, pin_ref=None)
        if c.symbol and not c.lines:
            moved = candidate
        else:
            try:
                lines = self._map_lines(c, old_text, new_text, mapper)
            except NoPlace as exc:
                return Move(c, exc.status, exc.why, new_path)
            moved = replace(candidate, lines=lines)
            if c.symbol and not self._holds_at(moved, self.new_pin):
                moved = self._follow_symbol(c, moved) or moved
        verdict = self.verifier.verify(moved, self.new_pin, self.new_pin.name)
        if verdict.status.severity is Severity.ERROR:
            return Move(c, MoveStatus.LOST, f"no place at {self.new_pin.name} holds it: {verdict.message}", new_path)
        return moved

    def _classify(self, c: Citation, moved: Citation) -> Move:
        """Unchanged, shifted, edited or renamed, by comparing the cited text at both pins."""
        before = self._region_text(c, self.old)
        after = self._region_text(moved, self.new)
        if moved.path != c.path:
            status = MoveStatus.RENAMED
        elif squash(before) == squash(after):
            status = MoveStatus.UNCHANGED if moved.lines == c.lines else MoveStatus.SHIFTED
        else:
            status = MoveStatus.EDITED
        diff: tuple[str, ...] = ()
        if squash(before) != squash(after):
            diff = tuple(
                difflib.unified_diff(
                    before.split("\n"),
                    after.split("\n"),
                    f"{c.path}@{self.old_pin.name}",
                    f"{moved.path}@{self.new_pin.name}",
                    lineterm="",
                    n=1,
                )
            )
        where = f"{moved.path}:{format_lines(moved.lines)}" if moved.lines else moved.path
        return Move(c, status, f"now at {where}", moved.path, moved.lines, diff)

    def _region_text(self, c: Citation, snap: Snapshot) -> str:
        text = self.verifier.text(snap, c.path)
        assert text is not None
        if c.lines:
            return text.cited_text(c.lines)
        return text.cited_text(self.verifier.symbols(snap, c.path).resolve(c.symbol or ""))

    def _follow_symbol(self, c: Citation, moved: Citation) -> Citation | None:
        """Lines inside a declaration keep their offset from its start."""
        old_spans = self.verifier.symbols(self.old, c.path).resolve(c.symbol or "")
        new_spans = self.verifier.symbols(self.new, moved.path).resolve(c.symbol or "")
        if len(old_spans) != 1 or len(new_spans) != 1:
            return None
        shift = new_spans[0].start - old_spans[0].start
        return replace(moved, lines=tuple(LineRange(r.start + shift, r.end + shift) for r in c.lines))

    def _map_lines(
        self, c: Citation, old_text: FileText, new_text: FileText, mapper: LineMapper
    ) -> tuple[LineRange, ...]:
        """New ranges for the citation's parts; NoPlace says why there are none."""
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
                raise NoPlace(
                    MoveStatus.LOST,
                    (f"line {r} was" if r.start == r.end else f"lines {r} were")
                    + " edited, and the citation has no anchor to find its text by",
                )
            out.append(self._relocate(r, anchors, old_text, new_text, mapper))
        return tuple(out)

    def _relocate(
        self, r: LineRange, anchors: list[str], old_text: FileText, new_text: FileText, mapper: LineMapper
    ) -> LineRange:
        """Where the anchors of the edited part `r` stand now; NoPlace when nowhere, or in several places."""
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
                return stretched
        if not candidates:
            raise NoPlace(
                MoveStatus.LOST,
                f"`{first}` is nowhere in the new file"
                if not new_text.find(first)
                else f"no place in the new file holds all of its anchors ({', '.join(anchors)})",
            )
        inside = [c for c in candidates if region[0] - length <= c.start <= region[1]]
        if len(inside) == 1:
            return inside[0]
        if len(candidates) == 1:
            return candidates[0]
        # The cited line's proportional place inside the first hunk that took it.
        h = touched[0]
        expected = h.new_start + min(max(r.start - h.old_start, 0), max(h.new_count - 1, 0)) + offset
        ranked = sorted(candidates, key=lambda c: abs(c.start + offset - expected))
        d1, d2 = (abs(c.start + offset - expected) for c in ranked[:2])
        if d2 >= 3 * d1 + 3:
            return ranked[0]
        where = ", ".join(str(c) for c in ranked[:5])
        raise NoPlace(
            MoveStatus.AMBIGUOUS, f"{len(candidates)} places hold its anchors, none clearly nearest: lines {where}"
        )

    @staticmethod
    def _stretch(
        r: LineRange, anchors: list[str], old_text: FileText, new_text: FileText, region: tuple[int, int]
    ) -> LineRange | None:
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
