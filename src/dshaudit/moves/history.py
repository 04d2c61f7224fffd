"""What each commit between two pins did to the findings, in one forward pass.

The walk follows git's first-parent path from FROM to TO: the commits that
landed on the main line (for DSH, merged pull requests). One `git log` lists
every commit's changed paths, with rename detection and blob ids; the rest of
the work is done only where a commit meets something the findings read:

- A citation as written is checked again (the check of `check`) only at the
  commits that change a file of its file name: nowhere else can its verdict
  change. Where it stops holding is its `first_broken`; where it holds again,
  a `restored_at`.
- Each citation's lines are also carried through every commit that touches
  their file, with rebase's line mapper (rebase.py), so the commit that moved
  them (shifted) or edited them while their anchors still stand there
  (edited: the finding may now be wrong though its citation holds) is named,
  even when the citation as written still holds.
- A fact is measured again only at commits that touch a file it watches
  (registry.toml's `paths` and `reads`); a fact that greps the whole tree,
  only when a changed file, before or after the commit, holds what it greps
  for. Its claims are evaluated again there.

So the cost grows with the commits' diffs where they meet the findings, not
with citations × commits. The two halves share nothing but the commits: the
claims' runs in a second process while this one walks the citations.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import partial
from typing import TYPE_CHECKING, Any

from dshaudit.core.model import Citation, Claim, ClaimVerdict, Fact, Pin, Verdict, format_lines
from dshaudit.core.status import Severity
from dshaudit.documents.claims import evaluate, show, split_ref
from dshaudit.documents.findings import FindingsFile
from dshaudit.documents.searches import split as search_split
from dshaudit.git.diff import Diff
from dshaudit.git.log import Change, Commit, Pickaxe, Step, read_steps
from dshaudit.git.pins import PinResolver
from dshaudit.git.repository import DshRepository
from dshaudit.git.snapshot import Snapshot
from dshaudit.git.twin import in_background
from dshaudit.platform.background import BackgroundJob
from dshaudit.platform.config import Config

if TYPE_CHECKING:
    from dshaudit.facts.book import FactBook

_PULL_REQUEST_RE = re.compile(r"\(#(\d+)\)|\bpull request #(\d+)\b", re.IGNORECASE)


def pull_request(subject: str) -> int | None:
    """The pull request a commit subject names: `... (#123)` (a squash merge) or
    `Merge pull request #123 from ...` (a merge commit)."""
    m = _PULL_REQUEST_RE.search(subject)
    return int(m.group(1) or m.group(2)) if m else None


# -- what the walk finds ---------------------------------------------------------


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

    def counts_text(self) -> str:
        """`#2589: 45 broken, 7 edited, 43 shifted, 5 claims changed` (zeros left out)."""
        counts = [
            (self.broken, "broken"),
            (self.restored, "restored"),
            (self.edited, "edited"),
            (self.shifted, "shifted"),
            (self.claims_changed, "claims changed"),
        ]
        pr = f"#{self.pull_request}: " if self.pull_request else ""
        return pr + ", ".join(f"{n} {what}" for n, what in counts if n)

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
            "edited_at": [_commit_dict(c) for c in self.edited_at],
            "restored_at": [_commit_dict(c) for c in self.restored_at],
            "now_at": self.now_at,
        }


def _observed(v: ClaimVerdict) -> str:
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
                f"{_observed(self.at_from)} -> {self.after} between the pins (measured at the ends only); "
                f"{_observed(self.at_to)}, {self.at_to.status} at {to_pin.name}"
            )
        more = f" (changed {len(self.changed_at)} times)" if len(self.changed_at) > 1 else ""
        return (
            f"{_observed(self.at_from)} -> {self.after} at {_short(self.first_changed)}{more}; "
            f"{_observed(self.at_to)}, {self.at_to.status} at {to_pin.name}"
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
            "before": _observed(self.at_from),
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
        holding, or broken and restored on the way; in findings order."""
        return [c for c in self.citations if c.failing or c.edited_at or c.restored_at]

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
            f"edited, {sum(bool(c.restored_at) for c in self.citations)} broke and held again",
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


# -- the walk ----------------------------------------------------------------------


def _basename(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]


class FactWatch:
    """When a commit can change a fact (registry.toml declares what each reads):
    it changes a file whose content the fact reads, or adds, deletes or renames
    one whose name it reads. Two narrowings, each a superset of what can matter:
    a detector that parses only files holding its literal (`needle`) changes
    only where a changed file holds one, before or after; a fact that greps
    the whole tree, only where a changed line holds what it greps for."""

    def __init__(self, fact_id: str, repository: DshRepository, from_sha: str, to_sha: str):
        from dshaudit.documents.searches import extended
        from dshaudit.facts.book import registry
        from dshaudit.facts.engine import glob_predicate
        from dshaudit.facts.reducers import SEARCHES

        spec = registry()[fact_id]
        self.fact_id = fact_id
        self._content = [glob_predicate(g) for g in spec.content_globs]
        self._names = [glob_predicate(g) for g in spec.name_globs]
        # The needle narrows `paths` only: `reads` (a file the reducer reads itself) counts whenever it changes.
        self._needled = [glob_predicate(g) for g in spec.paths] if spec.needle and spec.kind == "query" else []
        self.needles = tuple(spec.needle or ()) if self._needled else ()
        # One `git log -G` per case rule, for the alternation of the detector's searches.
        queries = SEARCHES[spec.reduce](spec) if spec.reduce in SEARCHES else None
        self._pickaxes = (
            [
                Pickaxe(
                    repository,
                    from_sha,
                    to_sha,
                    "|".join(f"({extended(q)})" for q in queries if ("-i" in q.flags) == folded),
                    folded,
                    spec.content_globs,
                )
                for folded in sorted({"-i" in q.flags for q in queries})
            ]
            if queries is not None
            else None
        )

    def needle_blobs(self, step: Step) -> set[str]:
        """The blobs whose literals decide whether this commit can change the fact."""
        if not self.needles:
            return set()
        return {b for c in step.changes if self._needled_change(c) for b in (c.old_blob, c.new_blob) if b}

    def _needled_change(self, c: Change) -> bool:
        return any(test(p) for p in (c.old_path, c.new_path) if p for test in self._needled)

    def touched_by(self, step: Step, holds_needle: Callable[[str], bool]) -> bool:
        for c in step.changes:
            paths = [p for p in (c.old_path, c.new_path) if p]
            if c.status in "ADR" and any(test(p) for p in paths for test in self._names):
                return True
            if not any(test(p) for p in paths for test in self._content):
                continue
            if self._pickaxes is not None:
                return any(step.commit.sha in p.commits() for p in self._pickaxes)
            if not self._needled_change(c) or any(holds_needle(b) for b in (c.old_blob, c.new_blob) if b):
                return True
        return False

    def close(self) -> None:
        for p in self._pickaxes or ():
            p.close()


class SearchWatch:
    """When a commit can change a search claimed in the findings (search.py): it
    changes a file the pathspecs select (for `files(...)`, adds, deletes or
    renames one). A search fact follows the walk by `search.advance`: the
    changed files searched again, the rest kept. A `tree-docs(...)` fact, which
    checks whole documents, is measured at --from and --to only."""

    needles: tuple[str, ...] = ()

    def __init__(self, fact_id: str):
        from dshaudit.documents import searches

        self.spec = searches.parse(fact_id)
        self.ends_only = self.spec.kind == "tree-docs"
        self._changed: dict[str, tuple[tuple[str | None, str | None], ...]] = {}  # commit -> changed_paths
        self.found: dict[tuple[str, str], list[int]] | None = None  # see `regrep`

    def needle_blobs(self, step: Step) -> set[str]:
        return set()

    def changed_paths(self, step: Step) -> tuple[tuple[str | None, str | None], ...]:
        from dshaudit.index.search import selector

        sha = step.commit.sha
        if sha not in self._changed:
            wanted = "ADR" if self.spec.kind == "files" else "ADRMT"
            selected = selector(self.spec.pathspecs)
            self._changed[sha] = tuple(
                (c.old_path, c.new_path)
                for c in step.changes
                if c.status in wanted
                and (
                    (c.old_path is not None and selected(c.old_path))
                    or (c.new_path is not None and selected(c.new_path))
                )
            )
        return self._changed[sha]

    def places(self, steps: list[Step]) -> list[tuple[str, str, str]]:
        """(commit, path, blob) of each file a commit changes that this search reads again:
        the regular files (git grep reads no link, no submodule)."""
        from dshaudit.index.search import REGULAR_MODES, fresh_paths

        if self.ends_only or self.spec.kind != "search":
            return []
        out = []
        for step in steps:
            blobs = {c.new_path: c.new_blob for c in step.changes if c.new_path and c.new_mode in REGULAR_MODES}
            out += [
                (step.commit.sha, p, blob)
                for p in fresh_paths(self.spec, self.changed_paths(step))
                if (blob := blobs.get(p))
            ]
        return out

    def touched_by(self, step: Step, holds_needle: Callable[[str], bool]) -> bool:
        return not self.ends_only and bool(self.changed_paths(step))

    def close(self) -> None:
        pass


class ClaimsWalk:
    """The claims' half of the pass: facts measured at FROM, then again at each
    commit that can change them. Independent of the citations' half, so it can
    run in a process of its own (see `history`)."""

    def __init__(
        self,
        claims: list[Claim],
        repository: Callable[[], DshRepository],
        from_pin: Pin,
        to_pin: Pin,
        steps: list[Step],
        resolver: PinResolver | None = None,
    ):
        from dshaudit.facts.book import registry

        self.claims, self.repository, self.steps = claims, repository, steps
        self.resolver = resolver  # for facts that name a pin of their own (tree-docs)
        self.from_pin, self.to_pin = from_pin, to_pin
        self._known = set(registry())
        self._needles: dict[str, set[str]] = {}  # blob id -> the detector literals it holds
        self._latest: dict[str, Fact] = {}  # each fact as last measured
        self._measured: list[str] = []  # the commits after FROM where facts were measured, in walk order

    def run(self) -> tuple[list[ClaimHistory], list[int], list[bool]]:
        """Each claim's history; and for each commit, how many claims it changed and whether it touched a fact."""
        from dshaudit.facts.book import FactBook

        repo = self.repository()
        ids = sorted({fid for c in self.claims if not c.problem and (fid := split_ref(c.ref, self._known)[0])})
        # Started first: the git processes of the whole-tree facts run while the facts are measured at FROM.
        watches: dict[str, FactWatch | SearchWatch] = {
            i: SearchWatch(i) if search_split(i) else FactWatch(i, repo, self.from_pin.sha, self.to_pin.sha)
            for i in ids
        }
        book = FactBook(self.repository, resolver=self.resolver)
        changed, touched = [], []
        try:
            self._regrep([w for w in watches.values() if isinstance(w, SearchWatch)])
            book.many(ids, self.from_pin)
            histories = [self._at_from(c, book) for c in self.claims]
            tree = repo.snapshot(self.from_pin.sha, self.from_pin.name)
            parent = self.from_pin
            # No commit changes a fact measured at the ends only: with nothing else, nothing to walk.
            walked = [] if all(isinstance(w, SearchWatch) and w.ends_only for w in watches.values()) else self.steps
            changed, touched = [0] * (len(self.steps) - len(walked)), [False] * (len(self.steps) - len(walked))
            for step in walked:
                pin = _pin_of(step, self.to_pin)
                tree = step.tree(tree)
                repo.remember(tree)
                n, hit = self._remeasure(step, pin, histories, watches, book, tree)
                changed.append(n)
                touched.append(hit)
                repo.forget(parent.sha)
                book.forget(parent)
                parent = pin
        finally:
            book.close()
            for w in watches.values():
                w.close()
        ends = {i for i, w in watches.items() if isinstance(w, SearchWatch) and w.ends_only}
        if ends:
            book.many(sorted(ends), self.to_pin)
            for i in ends:
                self._latest[i] = book.get(i, self.to_pin)
        book.close()
        for ch in histories:
            if ch.fact_id:
                # A fact is what it was where it was last measured: no commit since touched what it reads.
                ch.at_to = evaluate(ch.claim, self.to_pin, self._latest[ch.fact_id], self._known)
                if ch.fact_id in ends:
                    ch.followed = False
                    if _observed(ch.at_to) != ch.current:
                        ch.after = ch.current = _observed(ch.at_to)  # changed somewhere between: no commit is named
        return histories, changed, touched

    @staticmethod
    def at_ends_only(claim: Claim) -> bool:
        """Whether the claim's fact is measured at FROM and TO only (a tree-docs fact): no commit is walked for it."""
        from dshaudit.documents.searches import parse
        from dshaudit.facts.book import registry

        fact_id = None if claim.problem else split_ref(claim.ref, set(registry()))[0]
        return bool(fact_id and search_split(fact_id) and parse(fact_id).kind == "tree-docs")

    def _regrep(self, watches: list[SearchWatch]) -> None:
        """Each search's matches in the files the commits change, found before the walk
        (`search.found_in`): git screens the changed files of all commits for the
        searches' literals, then greps each search on what passed, all commits at once."""
        from dshaudit.index.search import found_in

        found = found_in(
            {w.spec: w.places(self.steps) for w in watches},
            str(self.repository().repo.git_dir),
            self.repository().read_blobs,
        )
        for w in watches:
            w.found = found[w.spec]

    def _at_from(self, claim: Claim, book: FactBook) -> ClaimHistory:
        fact_id, _ = split_ref(claim.ref, self._known)
        if claim.problem or fact_id is None:
            v = evaluate(claim, self.from_pin, None, self._known)
            return ClaimHistory(claim, None, v, at_to=v, current=_observed(v))
        v = self._evaluate(claim, fact_id, self.from_pin, book)
        return ClaimHistory(claim, fact_id, v, current=_observed(v))

    def _evaluate(self, claim: Claim, fact_id: str, pin: Pin, book: FactBook) -> ClaimVerdict:
        if search_split(fact_id) is None or fact_id not in self._latest or pin == self.from_pin:
            self._latest[fact_id] = book.get(fact_id, pin)
        return evaluate(claim, pin, self._latest[fact_id], self._known)

    def _remeasure(
        self,
        step: Step,
        pin: Pin,
        claims: list[ClaimHistory],
        watches: dict[str, FactWatch | SearchWatch],
        book: FactBook,
        tree: Snapshot,
    ) -> tuple[int, bool]:
        """Facts this commit can change, measured again, and their claims evaluated again."""
        self._scan(
            [b for w in watches.values() for b in w.needle_blobs(step)],
            sorted({n for w in watches.values() for n in w.needles}),
        )
        touched = [i for i, w in watches.items() if w.touched_by(step, partial(self._holds_any, w.needles))]
        if not touched:
            return 0, False
        from dshaudit.index.search import advance

        for i in touched:
            w = watches[i]
            if isinstance(w, SearchWatch):  # the changed files searched again, the rest kept
                self._latest[i] = advance(w.spec, self._latest[i], tree, pin, w.changed_paths(step), w.found)
        # Their searches derived from the commits measured before, the latest first (not from a pin:
        # between the pins that would grep every file changed since one, at every commit).
        facts = [i for i in touched if not isinstance(watches[i], SearchWatch)]
        if facts:
            book.many(facts, pin, derive_from=[*reversed(self._measured), self.from_pin.sha])
            self._measured.append(pin.sha)
        changed = 0
        for ch in claims:
            if ch.fact_id in touched:
                now = _observed(self._evaluate(ch.claim, ch.fact_id, pin, book))
                if now != ch.current:
                    changed += 1
                    ch.changed_at.append(step.commit)
                    if ch.first_changed is None:
                        ch.first_changed, ch.after = step.commit, now
                    ch.current = now
        return changed, True

    def _holds_any(self, needles: tuple[str, ...], blob: str) -> bool:
        return not self._needles.get(blob, set()).isdisjoint(needles)

    def _scan(self, blobs: list[str], needles: list[str]) -> None:
        """Which needles each blob holds, for the blobs not seen yet (one `git cat-file --batch`);
        a blob's bytes are not kept, and the side before a commit is the side after the one before."""
        todo = sorted({b for b in blobs if b not in self._needles})
        if not todo:
            return
        for blob, data in self.repository().read_blobs(todo).items():
            self._needles[blob] = {n for n in needles if n.encode("utf-8") in data}


def _pin_of(step: Step, to_pin: Pin) -> Pin:
    sha = step.commit.sha
    return to_pin if sha == to_pin.sha else Pin(sha[:12], sha, named=False)


ClaimsAnswer = tuple[list[ClaimHistory], list[int], list[bool]]


def _walk_claims(
    claims: list[Claim], from_pin: Pin, to_pin: Pin, steps: list[Step], config: Config, repository: DshRepository
) -> ClaimsAnswer:
    """The claims' walk on a handle of the clone of its own (git/twin.py)."""
    return ClaimsWalk(
        claims, lambda: repository, from_pin, to_pin, steps, PinResolver(config, lambda: repository)
    ).run()


def _merge(here: list[bool], elsewhere: ClaimsAnswer, ends: ClaimsAnswer) -> ClaimsAnswer:
    """Two claims' walks of the same commits as one: the histories in the claims' order
    (`here[i]`: the i-th claim is in `ends`), the commits' counts added."""
    a, b = iter(elsewhere[0]), iter(ends[0])
    histories = [next(b) if h else next(a) for h in here]
    return (histories, [x + y for x, y in zip(elsewhere[1], ends[1])], [x or y for x, y in zip(elsewhere[2], ends[2])])


class Walk:
    """The citations' half of the pass, here, while the claims' half runs in the
    background (or here after it, with one job). `run` returns every citation's
    and claim's history and every commit's impact."""

    def __init__(
        self,
        files: list[FindingsFile],
        resolver: PinResolver,
        repository: Callable[[], DshRepository],
        from_pin: Pin,
        to_pin: Pin,
    ):
        from dshaudit.checking.verify import Verifier

        self.files, self.resolver, self.repository = files, resolver, repository
        self.from_pin, self.to_pin = from_pin, to_pin
        self.verifier = Verifier(resolver, repository)

    def run(self) -> HistoryResult:
        repo = self.repository()
        steps = read_steps(repo, self.from_pin.sha, self.to_pin.sha)
        claims = [c for f in self.files for c in f.claims]
        # Two jobs started before this walk of the citations (background.py says where they run):
        # one walks the claims commit by commit, the other measures those of facts taken at the
        # two ends only (whole docs checks, the most work of all).
        ends = [ClaimsWalk.at_ends_only(c) for c in claims]
        jobs = [
            self._claims_job(repo, [c for c, e in zip(claims, ends) if e == wanted], steps) for wanted in (False, True)
        ]
        try:
            citations, at_from, commits = self._walk_citations(repo, steps)
            histories, changed, touched = _merge(ends, jobs[0].result(), jobs[1].result())
        except BaseException:
            for job in jobs:
                job.stop()
            raise
        for impact, n, hit in zip(commits, changed, touched):
            impact.claims_changed, impact.touched = n, impact.touched or hit
        return HistoryResult(
            self.from_pin, self.to_pin, commits, citations, histories, *at_from, [f.path for f in self.files]
        )

    def _claims_job(self, repo: DshRepository, claims: list[Claim], steps: list[Step]) -> BackgroundJob[ClaimsAnswer]:
        if not claims:
            return BackgroundJob.done(([], [0] * len(steps), [False] * len(steps)))
        return in_background(
            repo, partial(_walk_claims, claims, self.from_pin, self.to_pin, steps, self.resolver.config)
        )

    def _walk_citations(
        self, repo: DshRepository, steps: list[Step]
    ) -> tuple[list[CitationHistory], tuple[int, dict[str, int]], list[CommitImpact]]:
        """Each citation's history, how many held at FROM (in all and in each findings
        file), and each commit's impact on them."""
        citations = self._citations_at_from()
        at_from = self._holding(citations)
        commits = []
        parent = self.from_pin
        tree = repo.snapshot(self.from_pin.sha, self.from_pin.name)
        for step in steps:
            pin = _pin_of(step, self.to_pin)
            tree = step.tree(tree)
            repo.remember(tree)
            impact = CommitImpact(step.commit)
            self._recheck(step, pin, citations, impact)
            self._carry(step, parent, pin, citations, impact)
            impact.holding, impact.holding_by_file = self._holding(citations)
            commits.append(impact)
            # Only the commit the walk is at is read again: what is kept of the others is let go,
            # and so are the files this commit replaced (a revert reads one again).
            repo.forget(parent.sha)
            self.verifier.forget({c.old_blob for c in step.changes if c.old_blob and c.old_blob != c.new_blob})
            parent = pin
        self._at_to(citations)
        return citations, at_from, commits

    def _holding(self, citations: list[CitationHistory]) -> tuple[int, dict[str, int]]:
        """Citations holding now: in all, and in each findings file."""
        by_file = {f.path: 0 for f in self.files}
        for h in citations:
            if h.holds:
                by_file[h.citation.source.file] = by_file.get(h.citation.source.file, 0) + 1
        return sum(by_file.values()), by_file

    # -- FROM and TO -------------------------------------------------------------

    def _citations_at_from(self) -> list[CitationHistory]:
        from dshaudit.checking.verify import citation_pin

        out = []
        for f in self.files:
            for c in f.citations:
                if c.pin_ref:
                    pin, ref = citation_pin(c, f, self.resolver, None)
                    v = self.verifier.verify(c, pin, ref)
                    out.append(CitationHistory(c, False, v, at_to=v, holds=holds(v)))
                    continue
                v = self.verifier.verify(c, self.from_pin, self.from_pin.name)
                h = CitationHistory(c, True, v, holds=holds(v), read_path=v.path)
                if holds(v) and v.pin is not None:
                    # Carried under the path it was read at (an abbreviated path, resolved).
                    h.carried = replace(c, path=v.path, pin_ref=None, context_dir=None, nearby=())
                out.append(h)
        return out

    def _at_to(self, citations: list[CitationHistory]) -> None:
        """The verdicts at TO, as `check --pin TO` gives them."""
        from dshaudit.platform import ui

        missed = 0
        for h in citations:
            if h.walked:
                h.at_to = self.verifier.verify(h.citation, self.to_pin, self.to_pin.name)
                missed += holds(h.at_to) != h.holds
        if missed:
            # Every change is looked for where it can happen; a difference here is a bug in that reasoning.
            ui.note(
                f"history: {missed} citations differ at {self.to_pin.name} from the walk's last state "
                "(a dshaudit bug: please report it)"
            )

    # -- one commit ----------------------------------------------------------------

    def _recheck(self, step: Step, pin: Pin, citations: list[CitationHistory], impact: CommitImpact) -> None:
        """The citations as written whose verdict this commit can change, checked again.
        A verdict reads one file's text, and which file a path names: it changes
        only where that file changes, or where a file of the same name (among
        which an abbreviated path is resolved) or under the cited folder comes or goes."""
        names = {_basename(p) for p in step.listed}
        folders = {p.rsplit("/", 1)[0] for p in step.listed if "/" in p}
        for h in citations:
            if not h.walked:
                continue
            path = h.citation.path.rstrip("/")
            if (
                h.read_path not in step.touched
                and _basename(path) not in names
                and not any(f == path or f.startswith(path + "/") for f in folders)
            ):
                continue
            impact.touched = True
            v = self.verifier.verify(h.citation, pin, pin.name)
            now = holds(v)
            if h.holds and not now:
                impact.broken += 1
                h.first_broken = h.first_broken or step.commit
            elif now and not h.holds:
                impact.restored += 1
                h.restored_at.append(step.commit)
            h.holds, h.read_path = now, v.path

    def _carry(self, step: Step, parent: Pin, pin: Pin, citations: list[CitationHistory], impact: CommitImpact) -> None:
        """The cited lines carried through the commit's diff, as rebase carries them between two pins."""
        from dshaudit.moves.rebase import MoveStatus, Rebaser

        moving = [h for h in citations if h.carried is not None and h.carried.path in step.old_side]
        if not moving:
            return
        impact.touched = True
        diff = Diff(self.repository(), parent.sha, pin.sha, known=(step.renames, step.deleted))
        rebaser = Rebaser(self.resolver, self.repository, parent, pin, self.verifier, diff)
        rebaser.prefetch([h.carried for h in moving if h.carried is not None])
        for h in moving:
            assert h.carried is not None
            move = rebaser.move(h.carried)
            if not move.writable:
                h.carried, h.lost_at = None, step.commit
                continue
            h.carried = replace(h.carried, path=move.new_path or h.carried.path, lines=move.new_lines)
            if move.status is MoveStatus.EDITED:
                impact.edited += 1
                h.edited_at.append(step.commit)
            elif move.status in (MoveStatus.SHIFTED, MoveStatus.RENAMED):
                impact.shifted += 1


def history(
    files: list[FindingsFile],
    resolver: PinResolver,
    repository: Callable[[], DshRepository],
    from_pin: Pin,
    to_pin: Pin,
) -> HistoryResult:
    return Walk(files, resolver, repository, from_pin, to_pin).run()
