"""A command's outcome, kept between runs of the same inputs.

The outcome of `check` is a function of dshaudit's code and rules
(`cache.code_version`), the configuration, the command's options, the working
directory (paths are shown relative to it), the clone it reads, the bytes of
each document (and, for one without a `pin:` of its own, the code files of the
repository it lies in, whose definitions are its own names), and the commits
their pins name. When every one of those is as
it was in an earlier run, that run's outcome is the answer: it is read back
from one file of the cache, and no document is parsed and no git process runs.

Which commit a tag or a branch names, and whether the clone holds a commit at
all, can change while all of those stay the same. So the questions of that
kind the run asked the clone are kept with its outcome, with their answers,
and the outcome is used only while one `git cat-file` gives every answer again
(git/clonestate.py). Only the most recent `KEEP` outcomes stay on disk.

`facts` keeps its outcome too, under a key with no documents: what it
measures is read from the tree of the commit its pin names.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from dshaudit.core.errors import InputError
from dshaudit.core.outcome_record import from_record, to_record
from dshaudit.documents.ownrepo import RepositoryStates
from dshaudit.git.clonestate import still_answered
from dshaudit.platform import cache, ui
from dshaudit.platform.places import clone_spec
from dshaudit.platform.writing import read_regular

if TYPE_CHECKING:
    from dshaudit.core.diagnostics import Outcome
    from dshaudit.core.status import DiagnosticStatus
    from dshaudit.git.repository import DshRepository
    from dshaudit.platform.config import Config

KIND = "outcome"
KEEP = 16  # outcomes kept on disk, the most recent ones
PINNED_KIND = "pinned-documents"  # whether a document names a pin, by its digest (`_has_pin`)
_SHAPE = cache.shaped({"outcome": dict, "git_dir": (str, type(None)), "asked": [[str, str, str]]})
_PINNED_SHAPE = cache.shaped(bool)


@dataclass(frozen=True)
class KeptOutcome:
    """Where the outcome of one set of inputs is kept."""

    key: str
    enums: tuple[type[DiagnosticStatus], ...]  # the statuses the command's outcome can hold

    def _shard(self) -> cache.Shard:
        return cache.current().shard(KIND, self.key, _SHAPE)

    def read(self) -> Outcome | None:
        """The outcome an earlier run of these inputs gave, or None."""
        entry = self._shard().get("outcome")
        if entry is None or (entry["git_dir"] is not None and not still_answered(entry["git_dir"], entry["asked"])):
            return None
        outcome = from_record(entry["outcome"], self.enums)
        if outcome is not None:
            ui.detail("the outcome of an earlier run of the same inputs, from the cache")
        return outcome

    def write(self, outcome: Outcome, clone: DshRepository | None) -> None:
        """Keep `outcome` for the next run of these inputs, with what the run asked
        `clone` (None: it never opened the clone)."""
        cache.current().prune(KIND, KEEP - 1)
        asked = sorted([question, name, answer] for (question, name), answer in clone.asked.items()) if clone else []
        entry = {"outcome": to_record(outcome), "git_dir": clone.git_dir if clone else None, "asked": asked}
        self._shard().put("outcome", entry)


def kept_outcome(
    command: str,
    enums: tuple[type[DiagnosticStatus], ...],
    options: tuple[object, ...],
    config: Config,
    repo: str | None,
    documents: list[Path],
    limit: int,
) -> KeptOutcome | None:
    """The place of this run's outcome among kept ones; None when a document cannot
    be read as a regular file of at most `limit` bytes (the run itself says why)."""
    parts = [
        command,
        cache.code_version(),
        repr(options),
        repr(config),
        clone_spec(repo) or config.upstream_url,
        os.getcwd(),
    ]
    states = RepositoryStates()
    for path in documents:
        try:
            read = read_regular(path, str(path), limit)
        except InputError:
            return None
        digest = hashlib.sha256(read.data).hexdigest()
        parts += [str(path), str(read.real), digest]
        if not _has_pin(read.data, digest):
            # Not written for dshaudit: the names its own repository defines are its own (ownrepo.py).
            parts.append(hashlib.sha256(states.of(read.real).encode()).hexdigest())
    return KeptOutcome(cache.digest(*parts), enums)


def _has_pin(data: bytes, digest: str) -> bool:
    """Whether the document's front matter names a pin (a document written for dshaudit),
    kept by the digest of its bytes: a run whose documents are as they were reads the
    answer back, and neither imports nor runs the YAML parser to find its kept outcome."""
    shard = cache.current().shard(PINNED_KIND, cache.code_version(), _PINNED_SHAPE)
    known = shard.get(digest)
    if known is None:
        known = _names_pin(data)
        shard.put(digest, known)
    return bool(known)


def _names_pin(data: bytes) -> bool:
    from dshaudit.documents.frontblock import may_name_pin

    text = data.decode("utf-8", "replace")
    if not may_name_pin(text):
        return False
    from dshaudit.documents.frontmatter import FrontMatterError, split_front_matter

    try:
        front = split_front_matter(text, "")[0]
    except (FrontMatterError, InputError):
        return False
    return bool(front.get("pin"))
