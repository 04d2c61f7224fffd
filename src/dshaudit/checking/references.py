"""Names and quoted code in a document, checked at its pin.

A document about DSH names code in its prose (`names.py` finds the candidates,
`mentions.py` reads them from a document, `plans.py` says how each is checked).
`check_references` looks each one up in the tree at the pin:

- an **identifier** (`AgentFactory`, `persist_session`, a backticked `mount`):
  the identifier itself;
- a **dotted name** (`AgentRegistry.setFactory`, `ctx.plugin()`): every
  component, each on its own, since code rarely spells the dotted whole
  (`setFactory` is declared inside `class AgentRegistry`); a trailing `()` or
  `[]` is dropped, and a file name (`index.ts`) is not a dotted name;
- a **package** (`@scope/name@1.2.3`): `@scope/name`, without the version;
- a **string literal**: in a code span (`'unavailable'`, `"tool/start"`), its
  content; in running prose only a quoted token with no spaces that looks like
  code (holds one of `/ _ . : @ $`, or is camelCase or snake_case), because a
  quoted plain word there ("deletes") is usually a quotation, not code.

Each must occur at the pin by the rule of `nameindex.py` (case-sensitive,
whole word, any text file). One that does not is `phantom`, or `deleted` when
a bounded first-parent history search finds the commit that removed it.

A code span with code structure is a **fragment** (`fragments.py`): an object
literal, `NAME = value`, `key: value`, or an expression with a call, `new`,
object or assignment. It is compared by structure: `ok` when some code matches,
`value_differs` when a binding's name is declared with another value, and
`no_match` when nothing matches.

A **path** in a code span (`packages/core/agent/src/registry.ts`,
`packages/ui/`) whose first folder is one the tree has at its root must be a
file or a folder of the tree at the pin: else it is `phantom`, or `deleted`
when the bounded first-parent history finds the commit that removed it (with
renames counted as removals), and the message names files of the same name
elsewhere in the tree (the file may have moved). A path under any other first
folder (`src/x.ts`, `~/.config/dsh`, a path of another repository) is not
checked, and a path a `files('...')` claim of the document counts is that
claim's to check.

A code span of 7 to 40 hex digits, with digits and letters both, names a
commit, never code: it is `ok` when the clone holds a commit with that id (or
id prefix, one only), the message naming its tags and whether it is the pin;
`ok` too when the tree at the pin holds the digits as a word (a manifest that
pins another repository's commit); else `unknown_commit`, a warning.

Not checked at all: shell commands and other code spans that are neither a
name nor a fragment, prose in backticks, numbers, versions, globs, URLs,
citations and their anchors, claims, and plain words. Precision comes first:
a name is reported only when it is surely absent.

Exempt: names the document introduces itself (front matter `introduces:`, and
declarations in its own fenced TypeScript/JavaScript blocks:
`document_exemptions`) are `ok`. The caller should add the pin names
(`rc7` in prose names a pin, not code).

A finding that states a name is absent writes it as a code span
`` `absent: NAME` ``: the claim is that NAME occurs nowhere at the pin, in
any case, as a whole word, neither in a file's text nor in a path. It is
verified (`absent`) or refuted (`present`, naming the first three places),
never reported as a phantom.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping
from typing import TYPE_CHECKING

from dshaudit.checking.plans import Plan, classify
from dshaudit.core.model import LineRange, SourceLocation
from dshaudit.core.references import Reference, ReferenceStatus
from dshaudit.documents.names import COMMIT, PATH, Name
from dshaudit.index.namehistory import HistoryAnswer
from dshaudit.index.nameindex import index_for
from dshaudit.index.quoted import FragmentVerdict, cached, evaluate_all
from dshaudit.index.words import any_case

if TYPE_CHECKING:
    from dshaudit.git.snapshot import Snapshot


def _plans(items: list[tuple[Name, SourceLocation]]) -> list[tuple[Name, SourceLocation, Plan]]:
    return [(name, where, plan) for name, where in items if (plan := classify(name)) is not None]


def _named(name: Name, plan: Plan) -> set[str]:
    return {name.text, *plan.lookups, plan.fragment.name if plan.fragment is not None else ""} - {""}


def _start(plans: list[Plan], snapshot: Snapshot, absent: list[str], dated: list[str]) -> list[str]:
    """Start one pass over the tree, in the background, for every name not yet
    known at this commit, the names of fragments whose verdict is not cached
    yet, and the absence claims; the names whose presence is wanted. When one
    of `dated` turns out to occur nowhere, its history is read at once (`_dated`)."""
    lookups = [x for p in plans if p.kind != PATH for x in p.lookups]
    tokens = [
        t for p in plans if p.fragment is not None and not cached(p.fragment, snapshot.sha) for t in p.fragment.tokens
    ]
    # Digits that name none of the clone's commits are quoted from the files that hold them (`_commit`):
    # those files are found in this pass too, not in one of their own once the rest is done.
    tokens += [p.lookups[0] for p in plans if p.kind == COMMIT and snapshot.repository.commit_of(p.lookups[0]) is None]
    index_for(snapshot).start(presence=lookups, paths=tokens, absent=absent, dated=dated)
    return lookups


def _dated(plans: list[Plan], commands: frozenset[str] | None) -> list[str]:
    """The names a check reports, with the commit that deleted them, when they occur
    nowhere: their history is worth reading ahead, while the rest of the check runs.
    Not an absence claim or a commit's digits, which have no such history, and not a
    name of a document's own shell blocks, which the check leaves out when it is
    missing (`check_references`): reading a history is a `git log -p` over many
    commits, not worth starting for a name nobody will ask about."""
    out: list[str] = []
    for p in plans:
        if p.kind in (PATH, COMMIT) or (commands and p.fragment is None and all(x in commands for x in p.lookups)):
            continue
        out += p.lookups
    return out + [p.fragment.name for p in plans if p.fragment is not None]


def prefetch_references(
    documents: list[tuple[list[tuple[Name, SourceLocation]], frozenset[str] | None]],
    snapshot: Snapshot,
    absent: list[str] | None = None,
) -> None:
    """Start looking up, in one pass and in the background, the names and
    absence claims of several documents pinned to the same commit, so that
    `check_references` on each finds them known. Optional: it only saves the
    cold cost of one pass over the tree per document, and lets the caller do
    other work while git searches. `documents`: each one's items, those
    `checked_items` keeps, and the words of its shell blocks as
    `check_references` takes them (`commands`)."""
    planned = [(_plans(items), commands) for items, commands in documents]
    plans = [plan for each, _ in planned for _, _, plan in each]
    dated = [x for each, commands in planned for x in _dated([plan for _, _, plan in each], commands)]
    _start(plans, snapshot, absent or [], dated)


def checked_items(
    items: list[tuple[Name, SourceLocation]],
    *,
    exempt: set[str],
    absent: list[tuple[str, SourceLocation]],
    own: Mapping[str, str] | None = None,
) -> list[tuple[Name, SourceLocation]]:
    """The items `check_references` looks up, given the same document's exemptions."""
    claims = [text for text, _ in absent]
    return [(name, where) for name, where, plan in _plans(items) if _excused(name, plan, exempt, claims, own) is None]


def _excused(name: Name, plan: Plan, exempt: set[str], claims: list[str], own: Mapping[str, str] | None) -> str | None:
    """Why a name is `ok` without being looked up, or None when it is looked up."""
    named = _named(name, plan)
    if named & exempt:
        return (
            "counted by a `files(...)` claim of this document" if plan.kind == PATH else "introduced by this document"
        )
    if claim := _claimed_absent(named, claims):
        return f"the document claims it absent (`absent: {claim}`)"
    defined = sorted(n for n in named if n in own) if own else []
    if own and defined and plan.kind != COMMIT:
        return f"defined by the document's own repository, at {own[defined[0]]}"
    return None


def compare_fragments(items: list[tuple[Name, SourceLocation]], snapshot: Snapshot) -> None:
    """Compare the quoted code of several documents at one commit in one go,
    their files read together, so that `check_references` on each finds the
    verdicts cached. Optional, like `prefetch_references`."""
    evaluate_all(
        [plan.fragment for _, _, plan in _plans(items) if plan.fragment is not None], snapshot, index_for(snapshot)
    )


def _claimed_absent(names: set[str], claims: list[str]) -> str | None:
    for claim in claims:
        if any(n.lower() == claim.lower() if any_case(claim) else n == claim for n in names):
            return claim
    return None


def check_references(
    items: list[tuple[Name, SourceLocation]],
    snapshot: Snapshot,
    *,
    exempt: set[str],
    absent: list[tuple[str, SourceLocation]],
    history: bool = True,
    own: Mapping[str, str] | None = None,
    commands: frozenset[str] | None = None,
) -> list[Reference]:
    """Every checkable name and fragment of `items`, and every absence claim,
    at the snapshot's commit; in source order. Items that are not checked
    (module docstring) are left out. A name the document claims absent
    (`absent: NAME`) is not looked up as a name: the claim itself is checked.
    `commands`, given (if only empty) for a document not written for dshaudit, and only for
    one: the words its own shell blocks use. Such a document's names that occur nowhere in DSH but in those blocks are
    the shell's (another tool's output fields), and its paths through a dot-folder the
    tree does not hold there (`packages/app/.dsh/skills`) are places a run makes in a
    user's project: neither is a claim about DSH's tree, and both are left out."""
    index = index_for(snapshot)
    at = snapshot.sha[:8]
    plans = _plans(items)
    claims = [text for text, _ in absent]
    excused = [_excused(name, plan, exempt, claims, own) for name, _, plan in plans]
    looked_up = [plan for (_, _, plan), why in zip(plans, excused) if why is None]
    lookups = _start(looked_up, snapshot, claims, _dated(looked_up, commands) if history else [])
    present = index.present(lookups)

    checked = [plan.fragment for (_, _, plan), why in zip(plans, excused) if why is None and plan.fragment is not None]
    verdicts = dict(zip(map(id, checked), evaluate_all(checked, snapshot, index)))

    out: list[Reference] = []
    missing: dict[int, str] = {}  # position in `out` -> the name that occurs nowhere
    for (name, where, plan), why in zip(plans, excused):
        if why is not None:
            out.append(Reference(where, name.text, plan.kind, ReferenceStatus.OK, why))
            continue
        if plan.kind == COMMIT:
            out.append(_commit(plan.lookups[0], where, name.text, snapshot, present[plan.lookups[0]]))
            continue
        if plan.kind == PATH:
            found = _tree_path(plan.lookups[0], snapshot, plan.folder)
            if found is not None:
                status, message = found
                if status is ReferenceStatus.PHANTOM and commands is not None and _made_at_run_time(plan.lookups[0]):
                    continue
                if status is ReferenceStatus.PHANTOM:
                    status, message = _missing_path(plan.lookups[0], snapshot, message, history)
                out.append(Reference(where, name.text, PATH, status, message))
            continue
        if plan.fragment is None:
            gone = [x for x in plan.lookups if not present[x]]
            if gone and commands and all(x in commands for x in gone):
                continue
            if gone:
                missing[len(out)] = gone[0]
                out.append(Reference(where, name.text, plan.kind, ReferenceStatus.PHANTOM, ""))
            else:
                what = (
                    "occurs"
                    if len(plan.lookups) == 1
                    else f"each of {', '.join(f'`{x}`' for x in plan.lookups)} occurs"
                )
                out.append(Reference(where, name.text, plan.kind, ReferenceStatus.OK, f"{what} at {at}"))
            continue
        verdict = verdicts[id(plan.fragment)]
        if verdict is None:
            continue  # undecided: not every candidate could be compared
        if verdict.status == "phantom":
            missing[len(out)] = plan.fragment.name
        out.append(_fragment_reference(name, where, verdict))

    answers = index.deletions(sorted(set(missing.values()))) if history and missing else {}
    for i, gone_name in missing.items():
        status, message = _phantom(gone_name, at, answers.get(gone_name))
        out[i] = Reference(out[i].source, out[i].text, out[i].kind, status, message)

    out += [_absence(text, where, snapshot) for text, where in absent]
    out.sort(key=lambda r: (r.source.file, r.source.line, r.source.column))
    return out


def _commit(digits: str, where: SourceLocation, written: str, snapshot: Snapshot, in_tree: bool) -> Reference:
    """Hex digits in backticks name a commit, never code: one of the clone's, with its tags,
    and whether it is the commit the document is checked at. Digits that name none of the
    clone's commits but that the tree holds as a word (a manifest pinning another
    repository's commit) are quoted from it: they hold too."""
    sha = snapshot.repository.commit_of(digits)
    if sha is None:
        if in_tree:
            where_written = ", ".join(sorted(index_for(snapshot).paths([digits])[digits])[:3])
            said = f"no commit of the DSH clone, but written in {where_written} at {snapshot.sha[:8]}"
            return Reference(where, written, COMMIT, ReferenceStatus.OK, said)
        why = f"`{digits}` names no commit of the DSH clone, and the tree at {snapshot.sha[:8]} does not hold it"
        return Reference(where, written, COMMIT, ReferenceStatus.UNKNOWN_COMMIT, why)
    tags = snapshot.repository.tags_at(sha)
    said = f"commit {sha[:12]}" + (f", tagged {', '.join(tags)}" if tags else "")
    said += ": the pin" if sha == snapshot.sha else ""
    return Reference(where, written, COMMIT, ReferenceStatus.OK, said)


def _tree_path(path: str, snapshot: Snapshot, folder: str | None = None) -> tuple[ReferenceStatus, str] | None:
    """Whether `path` is a file or folder of the tree; None when the tree has no
    root folder of that name, so the path is not taken to be one of DSH's. A
    path written right after another (`packages/x/src/a.ts` and `src/b.ts`) is
    looked for in that one's `folder` and the folders above it, as a citation is."""
    roots, paths = _tree(snapshot)
    at = snapshot.sha[:8]
    if path.split("/", 1)[0] not in roots:
        if not folder or folder.split("/", 1)[0] not in roots:
            return None
        under = folder
        while under.count("/") >= 1:  # not up to a root folder: `packages/src/x.ts` is no package's
            found = _tree_path(f"{under}/{path}", snapshot)
            if found is not None and found[0] is ReferenceStatus.OK:
                return ReferenceStatus.OK, f"`{path}` read as {under}/{path} (after the path before it): {found[1]}"
            under = under.rpartition("/")[0]
        return ReferenceStatus.PHANTOM, f"`{path}` is in no folder of `{folder}`, the path before it, at {at}"
    k = bisect_left(paths, path)
    if k < len(paths) and paths[k] == path:
        return ReferenceStatus.OK, f"a file at {at}"
    k = bisect_left(paths, path + "/")
    if k < len(paths) and paths[k].startswith(path + "/"):
        return ReferenceStatus.OK, f"a folder at {at}"
    base = path.rsplit("/", 1)[-1]
    moved = [p for p in paths if p.endswith("/" + base)]
    hint = "" if not moved or len(moved) > MAX_SAME_NAME else "; a file of that name is at " + ", ".join(moved)
    return ReferenceStatus.PHANTOM, f"`{path}` is no file or folder at {at}{hint}"


def _made_at_run_time(path: str) -> bool:
    """Whether a path the tree lacks goes through a dot-folder below its root folder
    (`packages/app/.dsh/skills`): a state or configuration folder a run makes."""
    return any(part.startswith(".") and part not in (".", "..") for part in path.split("/")[1:-1])


MAX_SAME_NAME = 3  # files of a missing path's name shown as where it may have moved
_TREES: dict[str, tuple[frozenset[str], list[str]]] = {}  # commit -> its root folders, its sorted paths


def _tree(snapshot: Snapshot) -> tuple[frozenset[str], list[str]]:
    """The folders at the root of the snapshot's tree and its paths, sorted: worked out once per commit."""
    if snapshot.sha not in _TREES:
        paths = sorted(snapshot.blob_ids())
        _TREES[snapshot.sha] = (frozenset(p.split("/", 1)[0] for p in paths if "/" in p), paths)
    return _TREES[snapshot.sha]


def root_folders(snapshot: Snapshot) -> frozenset[str]:
    """The folders at the root of the snapshot's tree: a path under one of them is one of DSH's."""
    return _tree(snapshot)[0]


def _missing_path(path: str, snapshot: Snapshot, message: str, history: bool) -> tuple[ReferenceStatus, str]:
    if not history or path.split("/", 1)[0] not in _tree(snapshot)[0]:
        return ReferenceStatus.PHANTOM, message  # a relative path has no history of its own
    answer = index_for(snapshot).path_deletion(path)
    if answer.deletion is not None:
        return ReferenceStatus.DELETED, f"{message}; it was removed at {answer.deletion}"
    reach = "any of the" if answer.reached_root else "the"
    return (
        ReferenceStatus.PHANTOM,
        f"{message}, nor was it removed in {reach} {answer.commits} first-parent commits up to it",
    )


def _absence(text: str, where: SourceLocation, snapshot: Snapshot) -> Reference:
    places = index_for(snapshot).occurrences(text)
    if not places:
        case = "in any case" if any_case(text) else "in this case"
        return Reference(
            where,
            text,
            "absence",
            ReferenceStatus.ABSENT_CONFIRMED,
            f"`{text}` occurs nowhere at {snapshot.sha[:8]}, {case}, in file contents or paths",
        )
    shown = ", ".join(f"{p}:{n}" if n else f"{p} (path)" for p, n in places)
    first = next(((p, LineRange(n, n)) for p, n in places if n), None)
    return Reference(where, text, "absence", ReferenceStatus.PRESENT, f"`{text}` occurs at {shown}", first)


_FRAGMENT_STATUS = {
    "ok": ReferenceStatus.OK,
    "value_differs": ReferenceStatus.VALUE_DIFFERS,
    "no_match": ReferenceStatus.NO_MATCH,
    "phantom": ReferenceStatus.PHANTOM,
}


def _fragment_reference(name: Name, where: SourceLocation, verdict: FragmentVerdict) -> Reference:
    return Reference(where, name.text, "fragment", _FRAGMENT_STATUS[verdict.status], verdict.message, verdict.place)


def _phantom(name: str, at: str, answer: HistoryAnswer | None) -> tuple[ReferenceStatus, str]:
    head = f"`{name}` occurs nowhere at {at}"
    if answer is None:  # its history was not asked for
        return ReferenceStatus.PHANTOM, head
    if answer.deletion is not None:
        return ReferenceStatus.DELETED, f"{head}; it was deleted at {answer.deletion}"
    if answer.reached_root:
        return ReferenceStatus.PHANTOM, f"{head}, nor in any of the {answer.commits} first-parent commits up to it"
    return ReferenceStatus.PHANTOM, f"{head}, nor in the {answer.commits} first-parent commits up to it (git log -S)"
