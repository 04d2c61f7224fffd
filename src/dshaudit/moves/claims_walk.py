"""The claims' half of `history`: each claim's fact measured at FROM, then again at
each commit that can change it (watch.py)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from dshaudit.core.model import Claim, ClaimVerdict, Fact, Pin
from dshaudit.documents.claims import evaluate, split_ref
from dshaudit.documents.searches import split as search_split
from dshaudit.git.log import Step
from dshaudit.git.pins import PinResolver
from dshaudit.git.repository import DshRepository
from dshaudit.git.snapshot import Snapshot
from dshaudit.index.search import matches as search_matches
from dshaudit.moves.history_result import ClaimHistory, observed
from dshaudit.moves.watch import FactWatch, SearchSelections, SearchWatch
from dshaudit.platform.background import alongside
from dshaudit.platform.config import Config

if TYPE_CHECKING:
    from dshaudit.facts.book import FactBook

# Each claim's history; and for each commit, how many claims it changed and whether it touched a fact.
ClaimsAnswer = tuple[list[ClaimHistory], list[int], list[bool]]


class ClaimsWalk:
    """The claims' half of the pass: facts measured at FROM, then again at each
    commit that can change them. Independent of the citations' half, so it can
    run in a process of its own (see history.py)."""

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

    def run(self) -> ClaimsAnswer:
        """Each claim's history; and for each commit, how many claims it changed and whether it touched a fact."""
        from dshaudit.facts.book import FactBook

        repo = self.repository()
        ids = sorted({fid for c in self.claims if not c.problem and (fid := split_ref(c.ref, self._known)[0])})
        shared = SearchSelections()
        watches: dict[str, FactWatch | SearchWatch] = {
            i: (
                SearchWatch(i, shared)
                if search_split(i)
                else FactWatch(i, repo, self.from_pin.sha, self.to_pin.sha, shared)
            )
            for i in ids
        }
        detectors = [w for w in watches.values() if isinstance(w, FactWatch)]
        book = FactBook(self.repository, resolver=self.resolver)
        changed, touched = [], []
        try:
            # The searches of the claims, and those the detectors count, in the commits' changed files:
            # git greps them while the facts are measured at FROM.
            searched = [w for w in watches.values() if isinstance(w, SearchWatch)]
            with alongside(partial(self._regrep, searched + [s for w in detectors for s in w.searches])):
                book.many(ids, self.from_pin)
            histories = [self._at_from(c, book) for c in self.claims]
            tree = repo.snapshot(self.from_pin.sha, self.from_pin.name)
            for detector in detectors:
                detector.follow(partial(search_matches, snapshot=tree))
            parent = self.from_pin
            # No commit changes a fact measured at the ends only: with nothing else, nothing to walk.
            walked = [] if all(isinstance(w, SearchWatch) and w.ends_only for w in watches.values()) else self.steps
            # The blobs whose literals each commit's facts depend on, read in one process for the whole walk.
            self._scan([b for step in walked for w in watches.values() for b in w.needle_blobs(step)])
            changed, touched = [0] * (len(self.steps) - len(walked)), [False] * (len(self.steps) - len(walked))
            for step in walked:
                pin = step.pin(self.to_pin)
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
                    if observed(ch.at_to) != ch.current:
                        ch.after = ch.current = observed(ch.at_to)  # changed somewhere between: no commit is named
        return histories, changed, touched

    @staticmethod
    def of_search(claim: Claim) -> bool:
        """Whether the claim's fact is measured by git's greps: a search (`search(...)`,
        `tree-docs(...)`), or a detector of the registry that counts searches over the
        tree (`SEARCHES`), rather than one that parses files (history.py walks the two
        kinds side by side). The greps of one walk screen the tree at FROM in one pass,
        each file read once for all of them: split between two walks, the files both
        kinds select would be read by each."""
        from dshaudit.facts.book import registry
        from dshaudit.facts.reducers import SEARCHES

        specs = registry()
        fact_id = None if claim.problem else split_ref(claim.ref, set(specs))[0]
        if not fact_id:
            return False
        return bool(search_split(fact_id)) or (fact_id in specs and specs[fact_id].reduce in SEARCHES)

    def _regrep(self, watches: list[SearchWatch]) -> None:
        """Each search's matches in the files the commits change, found before the walk
        (`search.found_in`): git screens the changed files of all commits for the
        searches' literals, then greps each search on what passed, all commits at once."""
        from dshaudit.index.derive import found_in

        found = found_in(
            {w.spec: w.places(self.steps) for w in watches},
            str(self.repository().git_dir),
            self.repository().read_blobs,
        )
        for w in watches:
            w.found = found.get(w.spec)  # None: the search reached its bound; `advance` says so

    def _at_from(self, claim: Claim, book: FactBook) -> ClaimHistory:
        fact_id, _ = split_ref(claim.ref, self._known)
        if claim.problem or fact_id is None:
            v = evaluate(claim, self.from_pin, None, self._known)
            return ClaimHistory(claim, None, v, at_to=v, current=observed(v))
        v = self._evaluate(claim, fact_id, self.from_pin, book)
        return ClaimHistory(claim, fact_id, v, current=observed(v))

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
        self._scan([b for w in watches.values() for b in w.needle_blobs(step)])
        touched = [i for i, w in watches.items() if w.touched_by(step, partial(self._holds_any, w.needles))]
        if not touched:
            return 0, False
        from dshaudit.index.derive import advance

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
                now = observed(self._evaluate(ch.claim, ch.fact_id, pin, book))
                if now != ch.current:
                    changed += 1
                    ch.changed_at.append(step.commit)
                    if ch.first_changed is None:
                        ch.first_changed, ch.after = step.commit, now
                    ch.current = now
        return changed, True

    def _holds_any(self, needles: tuple[str, ...], blob: str) -> bool:
        return not self._needles.get(blob, set()).isdisjoint(needles)

    def _scan(self, blobs: list[str]) -> None:
        """Which detector literals each blob holds, for the blobs not seen yet (one `git
        cat-file --batch`); a blob's bytes are not kept, and the side before a commit is the
        side after the one before. What is found is the facts' own answer too (their needle
        shard): measuring a fact at a commit then greps none of these blobs again."""
        from dshaudit.facts.engine import needle_shard
        from dshaudit.facts.specs import all_needles
        from dshaudit.platform import cache

        todo = sorted({b for b in blobs if b not in self._needles})
        if not todo:
            return
        encoded = [n.encode("utf-8") for n in all_needles()]
        shard = needle_shard(cache.current())
        for blob, data in self.repository().each_blob(todo):
            mask = sum(1 << k for k, raw in enumerate(encoded) if raw in data)
            shard.put(blob, mask)
            self._needles[blob] = {n for k, n in enumerate(all_needles()) if mask >> k & 1}


def walk_claims(
    claims: list[Claim], from_pin: Pin, to_pin: Pin, steps: list[Step], config: Config, repository: DshRepository
) -> ClaimsAnswer:
    """The claims' walk on a handle of the clone of its own (git/twin.py)."""
    return ClaimsWalk(
        claims, lambda: repository, from_pin, to_pin, steps, PinResolver(config, lambda: repository)
    ).run()


def merge_claims(in_second: list[bool], first: ClaimsAnswer, second: ClaimsAnswer) -> ClaimsAnswer:
    """Two claims' walks of the same commits as one: the histories in the claims' order
    (`in_second[i]`: the i-th claim was walked by the second), the commits' counts added."""
    a, b = iter(first[0]), iter(second[0])
    histories = [next(b) if s else next(a) for s in in_second]
    return (histories, [x + y for x, y in zip(first[1], second[1])], [x or y for x, y in zip(first[2], second[2])])
