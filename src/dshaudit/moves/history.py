"""What each commit between two pins did to the findings, in one forward pass.

The walk follows git's first-parent path from FROM to TO: the commits that
landed on the main line (for DSH, merged pull requests). One `git log` lists
every commit's changed paths, with rename detection and blob ids; the rest of
the work is done only where a commit meets something the findings read:

- A citation as written is checked again (the check of `check`) only at the
  commits that change a file of its file name: nowhere else can its verdict
  change. Where it stops holding is its `first_broken`; where it holds again,
  a `restored_at`; where it goes from `ok` to `suspect` (it still holds, but its
  lines look moved), its `first_suspect`.
- Each citation's lines are also carried through every commit that touches
  their file, with rebase's line mapper (rebaser.py), so the commit that moved
  them (shifted) or edited them while their anchors still stand there
  (edited: the finding may now be wrong though its citation holds) is named,
  even when the citation as written still holds.
- A fact is measured again only at commits that touch a file it watches
  (registry.toml's `paths` and `reads`); a fact that greps the whole tree,
  only when a changed file, before or after the commit, holds what it greps
  for. Its claims are evaluated again there.

So the cost grows with the commits' diffs where they meet the findings, not
with citations × commits. The two halves share nothing but the commits: the
claims' (claims_walk.py) runs in the background while this one walks the
citations.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import partial

from dshaudit.core.model import Claim, Pin, Status
from dshaudit.documents.findings import FindingsFile
from dshaudit.git.diff import Diff
from dshaudit.git.log import Step, read_steps
from dshaudit.git.pins import PinResolver
from dshaudit.git.repository import DshRepository
from dshaudit.git.twin import in_background
from dshaudit.moves.claims_walk import ClaimsAnswer, ClaimsWalk, merge_claims, walk_claims
from dshaudit.moves.history_result import CitationHistory, CommitImpact, HistoryResult, holds
from dshaudit.platform.background import BackgroundJob


def _basename(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]


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
        from dshaudit.checking.citations import Verifier

        self.files, self.resolver, self.repository = files, resolver, repository
        self.from_pin, self.to_pin = from_pin, to_pin
        self.verifier = Verifier(resolver, repository)

    def run(self) -> HistoryResult:
        repo = self.repository()
        steps = read_steps(repo, self.from_pin.sha, self.to_pin.sha)
        claims = [c for f in self.files for c in f.claims]
        # Two jobs started before this walk of the citations (background.py says where they run),
        # each walking some of the claims: those of the registry's detectors that parse files
        # (tree-sitter parses of the commits' changed files); and those measured by greps
        # (searches, detectors that count searches, and the whole docs checks of tree-docs
        # facts at the two ends). Split so, the three take about as long, neither core waits
        # at the end for one of them, and no file is screened by both jobs.
        of_searches = [ClaimsWalk.of_search(c) for c in claims]
        # FROM's tree is listed here, once, before the jobs start: each takes the listing along
        # (DshRepository.twin) rather than listing it again, and this walk reads it first too.
        repo.snapshot(self.from_pin.sha, self.from_pin.name).index()
        jobs = [
            self._claims_job(repo, [c for c, s in zip(claims, of_searches) if s == wanted], steps)
            for wanted in (False, True)
        ]
        try:
            citations, at_from, commits = self._walk_citations(repo, steps)
            histories, changed, touched = merge_claims(of_searches, jobs[0].result(), jobs[1].result())
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
            repo, partial(walk_claims, claims, self.from_pin, self.to_pin, steps, self.resolver.config)
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
            pin = step.pin(self.to_pin)
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
                    # A permalink at FROM's commit is walked like a citation of the document's pin;
                    # any other ref names the one commit it is read at.
                    if not (c.is_permalink and pin is not None and not pin.branch and pin.sha == self.from_pin.sha):
                        v = self.verifier.verify(c, pin, ref)
                        out.append(CitationHistory(c, False, v, at_to=v, holds=holds(v)))
                        continue
                v = self.verifier.verify(c, self.from_pin, self.from_pin.name)
                h = CitationHistory(c, True, v, holds=holds(v), read_path=v.path, ok=v.status is Status.OK)
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
        only where that file changes; where a file under the cited folder comes or
        goes; or, for a path not read as written (an abbreviated path is resolved
        among the files of its name), where a file of the same name does."""
        names = {_basename(p) for p in step.listed}
        # A cited folder is touched when a file comes or goes anywhere below it: it is one of
        # the folders above such a file.
        folders = {"/".join(parts[:i]) for p in step.listed for parts in [p.split("/")] for i in range(1, len(parts))}
        for h in citations:
            if not h.walked:
                continue
            path = h.citation.path.rstrip("/")
            if (
                h.read_path not in step.touched
                and (h.read_path == path or _basename(path) not in names)
                and path not in folders
            ):
                continue
            impact.touched = True
            v = self.verifier.status_at(h.citation, pin)
            now = holds(v)
            if h.holds and not now:
                impact.broken += 1
                h.first_broken = h.first_broken or step.commit
            elif now and not h.holds:
                impact.restored += 1
                h.restored_at.append(step.commit)
            if h.ok and v.status is Status.SUSPECT:
                h.first_suspect = h.first_suspect or step.commit
            h.holds, h.read_path, h.ok = now, v.path, v.status is Status.OK

    def _carry(self, step: Step, parent: Pin, pin: Pin, citations: list[CitationHistory], impact: CommitImpact) -> None:
        """The cited lines carried through the commit's diff, as rebase carries them between two pins."""
        from dshaudit.moves.rebaser import MoveStatus, Rebaser

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
