"""What `history` finds: each commit's impact, each citation's and claim's history."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dshaudit.core.model import Citation, Claim, ClaimVerdict, Pin, Verdict, format_lines
from dshaudit.core.status import Severity
from dshaudit.documents.claims import show
from dshaudit.git.log import Commit, pull_request


def holds(v: Verdict) -> bool:
    """A citation holds while `check` would not fail it (a warning is carried as it is)."""
    return v.status.severity is not Severity.ERROR


@dataclass
class CommitImpact:
    """What one commit did to the findings."""

    commit: Commit
    shifted: int = 0  # citations whose lines moved (or whose file was renamed), text the same
    edited: int = 0  # citations whose lines changed while their anchors still stand there
    broken: int = 0  # citations that stop holding as written here
    restored: int = 0  # citations that hold again here
    claims_changed: int = 0  # claims whose verdict or measured value changes here
    holding: int = 0  # citations holding after this commit
    holding_by_file: dict[str, int] = field(default_factory=dict)
    touched: bool = False  # it changed a file a citation or a watched fact reads

    @property
    def pull_request(self) -> int | None:
        return pull_request(self.commit.subject)

    @property
    def impact(self) -> int:
        """What a reader must look at: breaks, restorations, edits of cited lines, changed claims."""
        return self.broken + self.restored + self.edited + self.claims_changed

    def counts_text(self, with_pull_request: bool = True) -> str:
        """`#2589: 45 broken, 7 edited, 43 shifted, 5 claims changed` (zeros left out)."""
        counts = [
            (self.broken, "broken"),
            (self.restored, "restored"),
            (self.edited, "edited"),
            (self.shifted, "shifted"),
            (self.claims_changed, "claims changed"),
        ]
        pr = f"#{self.pull_request}: " if self.pull_request and with_pull_request else ""
        return pr + ", ".join(f"{n} {what}" for n, what in counts if n)

    def merged(self, other: CommitImpact) -> CommitImpact:
        """One commit's impact on two groups of documents (walked from two pins), added up."""
        return CommitImpact(
            self.commit,
            shifted=self.shifted + other.shifted,
            edited=self.edited + other.edited,
            broken=self.broken + other.broken,
            restored=self.restored + other.restored,
            claims_changed=self.claims_changed + other.claims_changed,
            touched=self.touched or other.touched,
        )

    def as_dict(self) -> dict[str, Any]:
        c = self.commit
        return {
            "sha": c.sha,
            "subject": c.subject,
            "date": c.date,
            "pull_request": self.pull_request,
            "shifted": self.shifted,
            "edited": self.edited,
            "broken": self.broken,
            "restored": self.restored,
            "claims_changed": self.claims_changed,
            "holding": self.holding,
        }


def _short(c: Commit) -> str:
    """`f8912628f5ab (#2589, 2026-08-17)`."""
    pr = pull_request(c.subject)
    return f"{c.sha[:12]} ({f'#{pr}, ' if pr else ''}{c.date[:10]})"


def _commit_dict(c: Commit | None) -> dict[str, str] | None:
    return None if c is None else {"sha": c.sha, "subject": c.subject, "date": c.date}


@dataclass
class CitationHistory:
    citation: Citation
    walked: bool  # False: it names its own pin (an @ suffix), which no commit here changes
    at_from: Verdict
    at_to: Verdict | None = None
    holds: bool = False  # as written, at the commit the walk is at
    read_path: str = ""  # the file its last check read (an abbreviated path resolved)
    first_broken: Commit | None = None
    ok: bool = False  # its status is `ok` at the commit the walk is at (not a warning)
    first_suspect: Commit | None = None  # where it went from ok to suspect: it holds, but its lines look moved
    edited_at: list[Commit] = field(default_factory=list)
    restored_at: list[Commit] = field(default_factory=list)
    carried: Citation | None = None  # where its lines are now; None: not carried (did not hold at FROM, or lost)
    lost_at: Commit | None = None  # the commit past which its lines could not be followed

    @property
    def failing(self) -> bool:
        """It fails `check` at TO (an error, in a citation of the document's own)."""
        return self.at_to is not None and not holds(self.at_to) and not self.citation.quoted

    @property
    def now_at(self) -> str | None:
        c = self.carried
        if c is None:
            return None
        return c.path + (":" + format_lines(c.lines) if c.lines else "") + (f"#{c.symbol}" if c.symbol else "")

    def story(self, to_pin: Pin) -> str:
        """Its status at TO and the commits that made it so, in a line."""
        assert self.at_to is not None
        parts = [f"{self.at_to.status} at {to_pin.name}"]
        if self.first_broken:
            parts.append(f"first broken at {_short(self.first_broken)}")
        elif not holds(self.at_from):
            parts.append("already failing at the first pin")
        if self.first_suspect:
            parts.append(f"first suspect at {_short(self.first_suspect)}")
        if self.restored_at:
            parts.append("held again at " + ", ".join(_short(c) for c in self.restored_at))
        if self.edited_at:
            parts.append("lines edited at " + ", ".join(_short(c) for c in self.edited_at))
        if self.now_at and self.failing:
            parts.append(f"its lines are now at {self.now_at}")
        elif self.lost_at and self.failing:
            parts.append(f"its lines could not be followed past {_short(self.lost_at)}")
        return "; ".join(parts)

    def as_dict(self) -> dict[str, Any]:
        assert self.at_to is not None
        return {
            "source": self.citation.source.to_dict(),
            "citation": self.citation.text,
            "status_at_from": self.at_from.status.value,
            "status_at_to": self.at_to.status.value,
            "first_broken": _commit_dict(self.first_broken),
            "first_suspect": _commit_dict(self.first_suspect),
            "edited_at": [_commit_dict(c) for c in self.edited_at],
            "restored_at": [_commit_dict(c) for c in self.restored_at],
            "now_at": self.now_at,
        }


def observed(v: ClaimVerdict) -> str:
    """What a claim's history compares from commit to commit: its measured value, or why there is none."""
    if v.status.value in ("confirmed", "contradicted"):
        return show(v.measured)
    return v.status.value


@dataclass
class ClaimHistory:
    claim: Claim
    fact_id: str | None  # None: the claim names no fact (or cannot be read), so no commit changes it
    at_from: ClaimVerdict
    at_to: ClaimVerdict | None = None
    current: str = ""
    first_changed: Commit | None = None
    after: str | None = None  # the value at first_changed
    changed_at: list[Commit] = field(default_factory=list)
    followed: bool = True  # False: measured at --from and --to only (a tree-docs fact); no commit is named

    @property
    def failing(self) -> bool:
        return self.at_to is not None and not self.at_to.ok

    def story(self, to_pin: Pin) -> str:
        assert self.at_to is not None
        if self.first_changed is None:  # measured at the two ends only
            return (
                f"{observed(self.at_from)} -> {self.after} between the pins (measured at the ends only); "
                f"{observed(self.at_to)}, {self.at_to.status} at {to_pin.name}"
            )
        more = f" (changed {len(self.changed_at)} times)" if len(self.changed_at) > 1 else ""
        return (
            f"{observed(self.at_from)} -> {self.after} at {_short(self.first_changed)}{more}; "
            f"{observed(self.at_to)}, {self.at_to.status} at {to_pin.name}"
        )

    def as_dict(self) -> dict[str, Any]:
        assert self.at_to is not None
        return {
            "source": self.claim.source.to_dict(),
            "kind": self.claim.kind,
            "claim": self.claim.text,
            "status_at_from": self.at_from.status.value,
            "status_at_to": self.at_to.status.value,
            "first_changed": _commit_dict(self.first_changed),
            "followed": self.followed,
            "before": observed(self.at_from),
            "after": self.after,
            "changed_at": [_commit_dict(c) for c in self.changed_at],
        }


@dataclass
class HistoryResult:
    from_pin: Pin
    to_pin: Pin
    commits: list[CommitImpact]
    citations: list[CitationHistory]
    claims: list[ClaimHistory]
    holding_at_from: int
    holding_by_file_at_from: dict[str, int]
    files: list[str]

    @property
    def failing(self) -> int:
        return sum(c.failing for c in self.citations) + sum(c.failing for c in self.claims)

    def ranked(self) -> list[CommitImpact]:
        """The commits that matter, most impactful first (then the ones that moved most lines, then in order)."""
        order = {c.commit.sha: i for i, c in enumerate(self.commits)}
        return sorted(
            (c for c in self.commits if c.impact or c.shifted),
            key=lambda c: (-c.impact, -c.broken, -c.shifted, order[c.commit.sha]),
        )

    def to_reread(self) -> list[CitationHistory]:
        """Citations a reader should look at again: failing at TO, edited while
        holding, broken and restored on the way, or turned suspect; in findings order."""
        return [c for c in self.citations if c.failing or c.edited_at or c.restored_at or c.first_suspect]

    def lines(self) -> tuple[str, ...]:
        """For a terminal: the totals, the commits that matter (most impactful
        first), then the citations to re-read and the claims that changed."""
        f, t = self.from_pin, self.to_pin
        touched = sum(c.touched for c in self.commits)
        holding_at_to = self.commits[-1].holding if self.commits else self.holding_at_from
        failing = [c for c in self.citations if c.failing]
        out = [
            f"history from {f.name} ({f.sha[:12]}) to {t.name} ({t.sha[:12]}): "
            f"{len(self.commits)} first-parent commits, {touched} touch what the findings read",
            f"citations holding: {self.holding_at_from} at {f.name}, {holding_at_to} at {t.name}; "
            f"{len(failing)} fail at {t.name}, {sum(bool(c.edited_at) for c in self.citations)} had their lines "
            f"edited, {sum(bool(c.restored_at) for c in self.citations)} broke and held again, "
            f"{sum(bool(c.first_suspect) for c in self.citations)} turned suspect",
            f"claims: {sum(bool(c.changed_at) for c in self.claims)} change on the way; "
            f"{sum(c.failing for c in self.claims)} fail at {t.name}",
        ]
        ranked = self.ranked()
        if ranked:
            out += ["", "commits that matter, most impactful first:"]
            out += [f"  {c.commit.sha[:12]} {c.commit.date[:10]} {c.counts_text()}: {c.commit.subject}" for c in ranked]
        reread = self.to_reread()
        if reread:
            out += ["", "citations to re-read:"]
            out += [f"  {h.citation.source}: {h.citation.text}: {h.story(t)}" for h in reread]
        changed = [c for c in self.claims if c.changed_at or (not c.followed and c.after is not None)]
        if changed:
            out += ["", "claims that changed:"]
            out += [f"  {c.claim.source}: {c.claim.kind}: {c.claim.text}: {c.story(t)}" for c in changed]
        return tuple(out)

    def as_dict(self) -> dict[str, Any]:
        return {
            "from": {"pin": self.from_pin.name, "sha": self.from_pin.sha},
            "to": {"pin": self.to_pin.name, "sha": self.to_pin.sha},
            "commits": [c.as_dict() for c in self.commits],
            "citations": [c.as_dict() for c in self.citations],
            "claims": [c.as_dict() for c in self.claims],
        }
