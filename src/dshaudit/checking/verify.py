"""`dshaudit check`: every citation, claim and name of the documents, checked at their pins.

The citations are checked here (citations.py), while the claims are measured
and the names and quoted code looked up in the background (platform/background.py).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from functools import cached_property, partial
from typing import TYPE_CHECKING

from dshaudit.checking.citations import Verifier
from dshaudit.core.errors import DshauditError, InputError, RepoError
from dshaudit.core.model import Citation, ClaimVerdict, Pin, SourceLocation, Verdict
from dshaudit.core.results import CheckResult
from dshaudit.documents.findings import FindingsFile
from dshaudit.git.pins import PinResolver
from dshaudit.git.repository import DshRepository
from dshaudit.git.twin import in_background
from dshaudit.platform import background, ui
from dshaudit.platform.background import BackgroundJob, Placement

if TYPE_CHECKING:
    from dshaudit.core.references import Reference
    from dshaudit.documents.names import Name
    from dshaudit.facts.book import FactBook
    from dshaudit.git.snapshot import Snapshot


def check(
    files: list[FindingsFile],
    resolver: PinResolver,
    repository: Callable[[], DshRepository],
    pin_override: str | None = None,
    *,
    citations: bool = True,
    claims: bool = True,
    references: bool = True,
    verifier: Verifier | None = None,
    book: FactBook | None = None,
    carry: Carry | None = None,
) -> CheckResult:
    """Verify every citation and evaluate every claim of every file. The
    repository is opened only when something needs it, so findings with only
    malformed citations need no clone. `citations=False` evaluates claims only,
    `claims=False` citations only. A caller that checks again and again (the
    language server) passes its own `verifier` and `book`, which keep what
    they read; without them each check reads afresh. `carry`: how citations of
    documents written at another pin are carried (moves/carry.py).
    A pin that names nothing is an input error for --pin and front matter, and
    an `unknown_pin` verdict for a citation's own `@` suffix."""
    _require_pins(files, resolver, pin_override)
    # The claims are measured, and the names and quoted code looked up, in the background
    # (platform/background.py) while the citations are checked here. The trees they all
    # read are listed before the first of those starts, once: the others begin with the
    # listings (DshRepository.twin).
    listed: list[DshRepository] = []

    def opened() -> DshRepository:
        if not listed:
            listed.append(repository())
            _list_trees(files, resolver, listed[0], pin_override)
        return listed[0]

    kept = book is not None or verifier is not None  # what is read stays in this process, for the next check
    claimed = _start_claims(files, resolver, opened, pin_override, book) if claims else BackgroundJob.done([])
    try:
        pinned = _reference_pins(files, resolver, pin_override) if references else []
        looked = _start_references(pinned, resolver, repository, opened, kept)
        try:
            verdicts = (
                _check_citations(files, verifier or Verifier(resolver, repository), pin_override, carry)
                if citations
                else []
            )
            looked_up, asked = looked.result()
            if asked:  # what the names' lookup asked the clone in a process of its own, for a kept outcome
                repository().asked.update(asked)
        except BaseException:
            looked.stop()
            raise
        claim_verdicts = claimed.result()
    except BaseException:
        claimed.stop()
        raise
    return CheckResult(tuple(verdicts), tuple(claim_verdicts), tuple(looked_up))


def _require_pins(files: list[FindingsFile], resolver: PinResolver, pin_override: str | None) -> None:
    """An InputError unless --pin and every front matter's pin name a commit, and every
    citation without a pin of its own has one to be checked at."""
    if pin_override is not None:
        resolver.require(pin_override)
    for f in files:
        if f.pin is not None and resolver.resolve(f.pin) is None:
            raise InputError(f"front matter: {resolver.unknown(f.pin)}", file=f.path, line=f.pin_line or 2)
        unpinned = next((c for c in f.citations if not c.pin_ref), None) if f.pin is None else None
        if unpinned is not None and pin_override is None:
            known = resolver.config.describe_pins()
            raise InputError(
                f"no pin for `{unpinned.text}`: name one in the file's front matter (`pin: NAME`) or pass --pin "
                f"(a pin of dshaudit.toml: {known}; a tag; or a full SHA)",
                file=f.path,
                line=unpinned.source.line,
            )


def _list_trees(
    files: list[FindingsFile], resolver: PinResolver, repository: DshRepository, pin_override: str | None
) -> None:
    """The tree of each pin the documents are checked at, listed (`Snapshot.index`, once
    per run): the citations read it here in any case. A pin the clone lacks is reported
    where the citations meet it."""
    refs = {pin_override} if pin_override else {f.pin for f in files if f.pin}
    try:
        for pin in sorted({p for ref in refs if ref and (p := resolver.resolve(ref)) is not None}, key=lambda p: p.sha):
            repository.snapshot(pin.sha, pin.name).index()
    except DshauditError:
        pass


def _start_claims(
    files: list[FindingsFile],
    resolver: PinResolver,
    repository: Callable[[], DshRepository],
    pin_override: str | None,
    book: FactBook | None,
) -> BackgroundJob[list[ClaimVerdict]]:
    """The claims' verdicts, measured in the background when there are facts to
    measure; a caller with its own `book` (the language server) has them measured
    here when it asks, into that book."""
    if book is not None or not _measures(files):
        return BackgroundJob.inline(partial(_check_claims, files, resolver, repository, pin_override, book))
    return in_background(
        repository(),
        lambda clone: _check_claims(files, PinResolver(resolver.config, lambda: clone), lambda: clone, pin_override),
    )


def _measures(files: list[FindingsFile]) -> bool:
    """Whether any claim of these documents has a fact to measure."""
    return any(not c.problem for f in files for c in f.claims)


def _start_references(
    pinned: list[tuple[FindingsFile, Pin]],
    resolver: PinResolver,
    repository: Callable[[], DshRepository],
    opened: Callable[[], DshRepository],
    kept: bool,
) -> BackgroundJob[tuple[list[tuple[Pin, Reference]], dict[tuple[str, str], str]]]:
    """The names and quoted code of the documents, read from them and looked up in the
    background; here when what is read is `kept` (the language server keeps its name
    indexes), or the run has one job: then the indexes' git processes start now, beside
    the citations, and are read when the answer is asked for. With the answer comes what
    a process of its own asked the clone (`DshRepository.asked`); one here records it itself."""
    # A document written for dshaudit is read here: it is short, and whether it names anything
    # decides whether the clone is opened at all. One not written for it (a long page that links
    # DSH, whose clone its citations open anyway) is read where its names are looked up.
    read = _reference_work([(f, pin) for f, pin in pinned if f.pin is not None], resolver, repository)
    foreign = [(f, pin) for f, pin in pinned if f.pin is None]
    if not (read or foreign):
        return BackgroundJob.done(([], {}))
    position = {id(f): i for i, (f, _) in enumerate(pinned)}

    def all_work(resolver: PinResolver, repository: Callable[[], DshRepository]) -> list[_Work]:
        """Every document's work, in the documents' order."""
        work = read + _reference_work(foreign, resolver, repository)
        return sorted(work, key=lambda w: position[id(w.document)])

    if kept or background.placement() is Placement.INLINE:
        work = all_work(resolver, repository)
        _prefetch_references(work, repository)
        return BackgroundJob.inline(
            lambda: (_check_references(work, resolver, repository), {}),
            stop=partial(_stop_references, work, repository),
        )

    def look_up(clone: DshRepository) -> tuple[list[tuple[Pin, Reference]], dict[tuple[str, str], str]]:
        there = PinResolver(resolver.config, lambda: clone)
        return _look_up_references(all_work(there, lambda: clone), there, lambda: clone), dict(clone.asked)

    return in_background(opened(), look_up)


@dataclass
class _Work:
    """One document's names and absence claims, at its pin, and what its check takes as
    known, worked out where the names are looked up (in the background, as a rule)."""

    document: FindingsFile
    pin: Pin
    items: list[tuple[Name, SourceLocation]]
    absent: list[tuple[str, SourceLocation]]
    pins: frozenset[str]

    @cached_property
    def exempt(self) -> set[str]:
        """What the document introduces, and the pin names (`rc7` in prose names a pin, not code)."""
        from dshaudit.checking.mentions import document_exemptions

        return document_exemptions(self.document.text) | self.pins

    @cached_property
    def own(self) -> Mapping[str, str]:
        """What the document's own repository defines."""
        return _own_definitions(self.document)

    @cached_property
    def commands(self) -> frozenset[str] | None:
        """The words a document not written for dshaudit uses in its own shell blocks."""
        from dshaudit.checking.mentions import used_in_command_blocks

        return used_in_command_blocks(self.document.text) if self.document.pin is None else None

    def checked(self) -> list[tuple[Name, SourceLocation]]:
        """The names its check looks up in DSH."""
        from dshaudit.checking.references import checked_items

        return checked_items(self.items, exempt=self.exempt, absent=self.absent, own=self.own)


def _reference_pins(
    files: list[FindingsFile], resolver: PinResolver, pin_override: str | None
) -> list[tuple[FindingsFile, Pin]]:
    """The documents whose names are looked up, each with its pin (`document_pin`)."""
    pinned: list[tuple[FindingsFile, Pin]] = []
    split: list[tuple[FindingsFile, list[Pin]]] = []
    for f in files:
        pin = document_pin(f, resolver, pin_override)
        if pin is None and not pin_override and not f.pin and len(commits := linked_commits(f, resolver)) > 1:
            split.append((f, commits))
        if pin is not None and f.text:
            pinned.append((f, pin))
    if split:
        f, commits = split[0]
        ui.note(
            f"{len(split)} document{'s' if len(split) > 1 else ''} link DSH at several commits, so their names are "
            f"checked only at a --pin (e.g. {f.path}: {', '.join(p.sha[:8] for p in commits[:4])})"
        )
    return pinned


def _reference_work(
    pinned: list[tuple[FindingsFile, Pin]],
    resolver: PinResolver,
    repository: Callable[[], DshRepository],
) -> list[_Work]:
    """Each document's names and absence claims, at its pin: of a document not written
    for dshaudit, only the names it claims of DSH (scoping.py)."""
    from dshaudit.checking.mentions import absent_claims, document_names
    from dshaudit.documents.names import MAX_NAME_CHARS, lookalike

    work: list[_Work] = []
    for f, pin in pinned:
        items = [(n, SourceLocation(f.path, line, col)) for n, line, col in document_names(f.text)]
        if f.pin is None and items:
            items = _about_dsh(f, items, pin, resolver, repository)
        absent = [(t, SourceLocation(f.path, line, col)) for t, line, col in absent_claims(f.text)]
        for text, where in absent:
            if len(text) > MAX_NAME_CHARS:  # a name, not a page: and it is looked up through git's command line
                raise InputError(
                    f"`absent:` names {len(text)} characters; a name is at most {MAX_NAME_CHARS}",
                    file=f.path,
                    line=where.line,
                )
            if odd := lookalike(text):  # found absent as written, it would read as the Latin name's absence
                raise InputError(
                    f"`absent:` name {text!r} has {odd} among Latin letters; write the name as DSH would spell it",
                    file=f.path,
                    line=where.line,
                )
        if items or absent or (f.pin is None and f.citations):  # and what it says beside the files it links
            work.append(_Work(f, pin, items, absent, frozenset(resolver.config.pins)))
    return work


def document_pin(f: FindingsFile, resolver: PinResolver, pin_override: str | None) -> Pin | None:
    """The pin a document's names and claims are checked at: --pin, else its front matter's, else
    the one commit all its permalinks name (a document not written for dshaudit that links DSH
    at one commit speaks of that commit)."""
    ref = pin_override or f.pin
    if ref:
        return resolver.resolve(ref)
    commits = linked_commits(f, resolver)
    return commits[0] if len(commits) == 1 else None


def linked_commits(f: FindingsFile, resolver: PinResolver, branches: bool = False) -> list[Pin]:
    """The commits the document's permalinks name, by SHA: branches aside (they name no commit
    for good), unless `branches`, when a branch names the commit it is at."""
    found: dict[str, Pin] = {}
    for ref in sorted({c.pin_ref for c in f.citations if c.is_permalink and c.pin_ref and not c.problem}):
        try:
            pin = resolver.resolve_link(ref)
        except RepoError:
            continue  # no clone to ask: the citations say so
        if pin is not None and (branches or not pin.branch):
            found.setdefault(pin.sha, pin)
    return [found[sha] for sha in sorted(found)]


def _about_dsh(
    f: FindingsFile,
    items: list[tuple[Name, SourceLocation]],
    pin: Pin,
    resolver: PinResolver,
    repository: Callable[[], DshRepository],
) -> list[tuple[Name, SourceLocation]]:
    """The names a document not written for dshaudit claims of DSH."""
    from dshaudit.checking.mentions import front_lines
    from dshaudit.checking.references import root_folders
    from dshaudit.checking.scoping import EVENT_RE, DshTies, about_dsh, owner_scope
    from dshaudit.documents.names import CODE, STRING
    from dshaudit.documents.stretches import outline

    roots: list[frozenset[str]] = []

    def in_tree(path: str) -> bool:
        """Whether the path is under a root folder of the tree, by the rule the names pass checks paths by."""
        if not roots:
            try:
                roots.append(root_folders(repository().snapshot(pin.sha, pin.name)))
            except RepoError:
                roots.append(frozenset())  # a commit the clone lacks: reported where the citations meet it
        return path.split("/", 1)[0] in roots[0]

    web = resolver.config.web_url
    ties = DshTies(f.text, outline(f.text, front_lines(f.text)), f.citations, in_tree, owner_scope(web), web)
    # `turn/end` under no folder of the tree is an event's name, looked up as the string it is.
    return [
        (replace(n, kind=STRING) if n.kind == CODE and EVENT_RE.fullmatch(n.text) and not in_tree(n.text) else n, where)
        for n, where in about_dsh(items, ties)
    ]


def _prefetch_references(work: list[_Work], repository: Callable[[], DshRepository]) -> None:
    """Every document's names at a pin, those its check looks up, found in one pass over
    the tree started in the background."""
    from dshaudit.checking.references import prefetch_references

    try:
        for pin in sorted({w.pin for w in work}, key=lambda p: p.sha):
            prefetch_references(
                [(w.checked(), w.commands) for w in work if w.pin == pin],
                repository().snapshot(pin.sha, pin.name),
                [t for w in work if w.pin == pin for t, _ in w.absent],
            )
    except RepoError:
        pass  # a commit the clone lacks: reported where the citations and references meet it


def _look_up_references(
    work: list[_Work], resolver: PinResolver, repository: Callable[[], DshRepository]
) -> list[tuple[Pin, Reference]]:
    _prefetch_references(work, repository)
    try:
        return _check_references(work, resolver, repository)
    finally:
        _stop_references(work, repository)  # a history read ahead that no name needed: git is not left running


def _stop_references(work: list[_Work], repository: Callable[[], DshRepository]) -> None:
    from dshaudit.index.nameindex import index_for

    for pin in {w.pin for w in work}:
        try:
            index_for(repository().snapshot(pin.sha, pin.name)).stop()
        except RepoError:
            pass


def _check_references(
    work: list[_Work], resolver: PinResolver, repository: Callable[[], DshRepository]
) -> list[tuple[Pin, Reference]]:
    """The names and quoted code of each document, looked up at its pin."""
    from dshaudit.checking.references import check_references, compare_fragments

    for pin in sorted({w.pin for w in work}, key=lambda p: p.sha):
        compare_fragments(
            [i for w in work if w.pin == pin for i in w.checked()], repository().snapshot(pin.sha, pin.name)
        )
    out: list[tuple[Pin, Reference]] = []
    for w in work:
        snapshot = repository().snapshot(w.pin.sha, w.pin.name)
        found = check_references(w.items, snapshot, exempt=w.exempt, absent=w.absent, own=w.own, commands=w.commands)
        if w.document.pin is None:
            found = _beside_files(w.document, w.items, found, w.pin, snapshot, resolver, repository)
        out += [(w.pin, r) for r in found]
    return out


def _beside_files(
    f: FindingsFile,
    items: list[tuple[Name, SourceLocation]],
    found: list[Reference],
    pin: Pin,
    snapshot: Snapshot,
    resolver: PinResolver,
    repository: Callable[[], DshRepository],
) -> list[Reference]:
    """What a document not written for dshaudit says beside a file it names: the names it lists
    there are declared there (linked.py), and the counts it states are the facts' (stated.py)."""
    from dshaudit.checking.linked import check_linked, linked_names
    from dshaudit.checking.mentions import front_lines
    from dshaudit.checking.stated import check_stated, single_file_facts, stated_numbers
    from dshaudit.documents.stretches import outline
    from dshaudit.facts.book import FactBook, registry

    shape = outline(f.text, front_lines(f.text))
    found = check_linked(linked_names(items, shape, f.citations), found, snapshot)
    files = single_file_facts({i: spec.paths for i, spec in registry().items()})
    stated = stated_numbers(f.text, shape, f.citations, files, f.path)
    if not stated:
        return found
    book = FactBook(repository, resolver=resolver)
    try:
        counted = check_stated(stated, lambda fact_id: book.get(fact_id, pin), snapshot.sha[:8])
    finally:
        book.close()
    return sorted(found + counted, key=lambda r: (r.source.file, r.source.line, r.source.column))


def _own_definitions(f: FindingsFile) -> Mapping[str, str]:
    """What the repository of a document not written for dshaudit (no `pin:` of its own)
    defines in its code: names of its own, not claims about DSH."""
    from dshaudit.documents.ownrepo import own_definitions

    return own_definitions(f.read.real) if f.pin is None and f.read is not None else {}


# How citations of a document written at another pin are carried to the pin they are
# checked at (moves/carry.py): given by the caller, from the layer above.
Carry = Callable[[list[tuple[Citation, Pin, Pin]], Verifier], list[Verdict]]


def _check_citations(
    files: list[FindingsFile], verifier: Verifier, pin_override: str | None, carry: Carry | None
) -> list[Verdict]:
    resolver, repository = verifier.resolver, verifier.repository
    work: list[tuple[Citation, Pin | None, str | None]] = []
    carried: list[tuple[Citation, Pin, Pin]] = []
    target = resolver.resolve(pin_override) if pin_override else None
    for f in files:
        written = resolver.resolve(f.written_at) if f.written_at else None
        for c in f.citations:
            pin, ref = citation_pin(c, f, resolver, pin_override)
            if written and pin and pin.sha != written.sha and not c.pin_ref and not c.problem:
                carried.append((c, written, pin))
            elif target and pin and _carried_to_pin(c, pin, target) and repository().has_commit(pin.sha):
                # A permalink checked at --pin: its lines are read at its own commit, then carried to
                # the pin; a whole file or a folder holds there when it is there.
                if c.lines:
                    carried.append((replace(c, pin_ref=None), pin, target))
                else:
                    work.append((replace(c, pin_ref=None), target, pin_override))
            else:
                work.append((c, pin, ref))
    for pin in sorted({pin for c, pin, _ in work if pin is not None and not c.problem}, key=lambda p: p.sha):
        if repository().has_commit(pin.sha):
            verifier.read_ahead(
                repository().snapshot(pin.sha, pin.name), {c.path for c, p, _ in work if p == pin and not c.problem}
            )
    verdicts = [verifier.verify(c, pin, ref) for c, pin, ref in work]
    if carried:
        if carry is None:
            raise RuntimeError("documents written at another pin need check(carry=...)")
        verdicts += carry(carried, verifier)
    verdicts.sort(key=lambda v: (v.citation.source.file, v.citation.source.line, v.citation.source.column))
    return verdicts


def _carried_to_pin(c: Citation, own: Pin, target: Pin) -> bool:
    """Whether a citation is carried from its own commit to --pin: a permalink at a commit
    (not a branch, which names no commit for good) other than the pin."""
    return c.is_permalink and not c.problem and not own.branch and own.sha != target.sha


def citation_pin(
    c: Citation, f: FindingsFile, resolver: PinResolver, pin_override: str | None
) -> tuple[Pin | None, str | None]:
    """The pin a citation is checked at, and the reference that named it: its own
    `@` suffix, else --pin, else its file's front matter."""
    ref = c.pin_ref or pin_override or f.pin
    if c.is_permalink and c.pin_ref:
        return resolver.resolve_link(c.pin_ref), ref
    return (resolver.resolve(ref) if ref else None), ref


def _check_claims(
    files: list[FindingsFile],
    resolver: PinResolver,
    repository: Callable[[], DshRepository],
    pin_override: str | None,
    own_book: FactBook | None = None,
) -> list[ClaimVerdict]:
    from dshaudit.documents.claims import evaluate, split_ref
    from dshaudit.facts.book import FactBook, registry

    known = set(registry())
    book = own_book or FactBook(repository, resolver=resolver)
    pins = {f.path: document_pin(f, resolver, pin_override) for f in files}
    wanted: dict[Pin, set[str]] = {}
    for f in files:
        pin = pins[f.path]
        for claim in f.claims:
            fact_id, _ = split_ref(claim.ref, known)
            if fact_id and pin and not claim.problem:
                wanted.setdefault(pin, set()).add(fact_id)
    try:
        for pin, ids in sorted(wanted.items(), key=lambda kv: kv[0].sha):
            book.many(sorted(ids), pin)  # their per-file work together, in parallel when large
        claim_verdicts = []
        for f in files:
            pin = pins[f.path]
            for claim in f.claims:
                fact_id, _ = split_ref(claim.ref, known)
                fact = book.get(fact_id, pin) if fact_id and pin and not claim.problem else None
                claim_verdicts.append(evaluate(claim, pin, fact, known))
    finally:
        if own_book is None:
            book.close()
    claim_verdicts.sort(key=lambda v: (v.claim.source.file, v.claim.source.line, v.claim.source.column))
    return claim_verdicts
