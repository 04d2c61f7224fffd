"""The pull-request body of `dshaudit bump`: what moving documents to a new pin did.

`bump` rebases the documents (rebase.py) and walks the history from each
group's pin to the new one (history.py); this module says what both found,
as GitHub-flavoured Markdown a reviewer reads: what moved and where, what was
edited while its anchor held (re-read it), what changed or went (fix it by
hand), each with the upstream commit and pull request that did it, and the
commits that mattered, most impactful first.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from dshaudit.core.model import Pin, format_lines
from dshaudit.git.log import Commit, pull_request
from dshaudit.moves.history_result import CitationHistory, CommitImpact, HistoryResult
from dshaudit.moves.rebase import RebaseResult
from dshaudit.moves.rebaser import Move, MoveStatus
from dshaudit.platform.textsafe import markdown_code, markdown_text

MAX_COMMITS = 15  # the commits that mattered, listed; the rest are counted


@dataclass(frozen=True)
class BumpResult:
    new_pin: Pin
    rebased: list[RebaseResult]
    histories: list[HistoryResult]
    written: bool
    # Where the text of a lost citation went, by its place in its document (carry.py follows it).
    followed: dict[tuple[str, int, int], str] = field(default_factory=dict)
    # The pins no history leads from to the new one (a branch ahead of it): carried through the diff alone.
    unwalked: tuple[Pin, ...] = ()

    @property
    def moves(self) -> list[tuple[Move, Pin]]:
        return sorted(
            ((m, r.old_pin) for r in self.rebased for m in r.moves),
            key=lambda mp: (mp[0].citation.source.file, mp[0].citation.source.line, mp[0].citation.source.column),
        )

    @property
    def needs_a_person(self) -> bool:
        return any(m.status in _BY_HAND or m.status is MoveStatus.EDITED for m, _ in self.moves)


_BY_HAND = frozenset({MoveStatus.AMBIGUOUS, MoveStatus.LOST})


def _place(source_file: str, line: int) -> str:
    return markdown_code(f"{source_file}:{line}")


class _Links:
    def __init__(self, web_url: str):
        self.web = web_url.rstrip("/")

    def commit(self, c: Commit) -> str:
        text = f"[{c.sha[:12]}]({self.web}/commit/{c.sha})"
        pr = pull_request(c.subject)
        return text + (f" ([#{pr}]({self.web}/pull/{pr}))" if pr else "")


def _history_of(result: BumpResult) -> dict[tuple[str, int, int], CitationHistory]:
    return {
        (h.citation.source.file, h.citation.source.line, h.citation.source.column): h
        for r in result.histories
        for h in r.citations
    }


def _who(h: CitationHistory | None, links: _Links) -> str:
    """The upstream commits that did it, from the history of the citation."""
    if h is None:
        return ""
    commits = [*h.edited_at, *([h.lost_at] if h.lost_at else []), *([h.first_broken] if h.first_broken else [])]
    seen: list[Commit] = []
    for c in commits:
        if c not in seen:
            seen.append(c)
    return ", ".join(links.commit(c) for c in seen[:3])


def body(result: BumpResult, web_url: str) -> str:
    """The pull-request body, in GitHub-flavoured Markdown."""
    links = _Links(web_url)
    moves = result.moves
    history = _history_of(result)
    new = result.new_pin
    counts = {s: sum(1 for m, _ in moves if m.status is s) for s in MoveStatus}
    files = sorted({m.citation.source.file for m, _ in moves})
    out = [
        f"## Move to {markdown_text(new.name)} ({new.sha[:12]})",
        "",
        f"{len(moves)} citations in {len(files)} documents, from "
        + ", ".join(markdown_text(name) for name in sorted({old.name for _, old in moves}) or ["nothing"])
        + ": "
        + ", ".join(f"{n} {s.value}" for s, n in counts.items() if n)
        + ("." if moves else ""),
        "",
    ]
    if not result.written:
        out += ["Nothing was written: this is what `--write` would do.", ""]
    moved = [(m, old) for m, old in moves if m.status in (MoveStatus.SHIFTED, MoveStatus.RENAMED)]
    if moved:
        out += ["### Moved", "", "| Where | Was | Now |", "|---|---|---|"]
        for m, old in moved:
            c = m.citation
            was = f"{c.path}:{format_lines(c.lines)}" if c.lines else c.path
            now = f"{m.new_path or c.path}" + (f":{format_lines(m.new_lines)}" if m.new_lines else "")
            out.append(
                f"| {_place(c.source.file, c.source.line)} | {markdown_code(was)} at {markdown_text(old.name)} "
                f"| {markdown_code(now)} |"
            )
        out.append("")
    edited = [(m, old) for m, old in moves if m.status is MoveStatus.EDITED]
    if edited:
        out += ["### Re-read: edited while their anchors held", ""]
        for m, _ in edited:
            c = m.citation
            who = _who(history.get((c.source.file, c.source.line, c.source.column)), links)
            now = f"{m.new_path or c.path}:{format_lines(m.new_lines)}"
            out.append(
                f"- {_place(c.source.file, c.source.line)}: now {markdown_code(now)}"
                + (f"; edited by {who}" if who else "")
            )
        out.append("")
    by_hand = [(m, old) for m, old in moves if m.status in _BY_HAND]
    if by_hand:
        out += ["### Fix by hand", ""]
        for m, old in by_hand:
            c = m.citation
            who = _who(history.get((c.source.file, c.source.line, c.source.column)), links)
            cited = f"{c.path}:{format_lines(c.lines)}" if c.lines else c.path
            went = result.followed.get((c.source.file, c.source.line, c.source.column))
            out.append(
                f"- {_place(c.source.file, c.source.line)}: {markdown_code(cited)} at {markdown_text(old.name)}, "
                f"{m.status.value}: {markdown_text(m.message)}"
                + (f"; {markdown_text(went)}" if went else "")
                + (f" (changed by {who})" if who else "")
            )
        out.append("")
    by_commit: dict[str, CommitImpact] = {}
    for impact in (i for r in result.histories for i in r.ranked()):
        seen = by_commit.get(impact.commit.sha)
        by_commit[impact.commit.sha] = seen.merged(impact) if seen else impact
    ranked = sorted(by_commit.values(), key=lambda i: (-i.impact, -i.broken, -i.shifted, i.commit.date, i.commit.sha))
    if ranked:
        out += ["### Commits that mattered", "", "| Commit | Date | What it did |", "|---|---|---|"]
        for i in ranked[:MAX_COMMITS]:
            out.append(f"| {links.commit(i.commit)} | {markdown_text(i.commit.date[:10])} | {i.counts_text(False)} |")
        if len(ranked) > MAX_COMMITS:
            out.append(f"\n{len(ranked) - MAX_COMMITS} more commits moved cited lines.")
        out.append("")
    if result.unwalked:
        names = ", ".join(f"{markdown_text(p.name)} ({p.sha[:12]})" for p in result.unwalked)
        out += [
            f"The links at {names} were carried through the diff to {markdown_text(new.name)}, which is not "
            "ahead of them: no history was walked for them.",
            "",
        ]
    if not result.needs_a_person:
        out += ["Every citation moved cleanly: nothing needs a person.", ""]
    return "\n".join(out)
