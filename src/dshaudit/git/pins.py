"""One resolver for pins: every command, every front matter and every `@`
suffix turns a reference into a commit here, by the same rules.

A reference is, in order: a pin name of dshaudit.toml; a full 40-hex SHA
(named after the configured pin with that SHA, if any); a tag of the DSH
clone, peeled to its commit (annotated tags included). Tags need the clone,
so a resolver without a repository (lint, which never opens DSH) knows names
and SHAs only.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from dshaudit.core.errors import InputError
from dshaudit.core.model import SHA_RE, Pin
from dshaudit.platform.config import Config

if TYPE_CHECKING:
    from dshaudit.git.repository import DshRepository

# What a tag name may look like before it is given to git at all.
_TAG_RE = re.compile(r"[A-Za-z0-9][\w.\-/]*")
MAX_REF_CHARS = 255  # longer is no pin, tag or branch (and would be passed to git on a command line)


class PinResolver:
    def __init__(self, config: Config, repository: Callable[[], DshRepository] | None = None):
        self.config = config
        self._repository = repository
        self._tags: dict[str, Pin | None] = {}
        self._why: dict[str, str] = {}  # refs that name an object of the clone that is not a commit

    @property
    def knows_tags(self) -> bool:
        return self._repository is not None

    def resolve(self, ref: str) -> Pin | None:
        """The pin `ref` names, or None (`unknown` says why)."""
        pins = self.config.pins
        if ref in pins:
            return pins[ref]
        if SHA_RE.match(ref):
            for pin in pins.values():
                if pin.sha == ref:
                    return pin
            return self._commit(Pin(ref[:12], ref, named=False))
        if self._repository is None or len(ref) > MAX_REF_CHARS or not _TAG_RE.fullmatch(ref) or ".." in ref:
            return None
        if ref not in self._tags:
            repository = self._repository()
            sha = repository.resolve_tag(ref)
            configured = next((p for p in pins.values() if p.sha == sha), None) if sha else None
            # A tag of a configured pin's commit is that pin: it is written by its name.
            self._tags[ref] = configured or (Pin(ref, sha, named=False) if sha else None)
            kind = None if sha else repository.tag_target_type(ref)
            if kind is not None:
                self._why[ref] = f"tag {ref!r} names a {kind}, not a commit: a pin names a commit"
        return self._tags[ref]

    def _commit(self, pin: Pin) -> Pin | None:
        """A SHA written in a findings file or an option, as the commit it
        names: an annotated tag object's SHA is peeled to its commit (so every
        output shows the commit); a tree or blob is no pin (`unknown` says
        what it is). Without a repository (lint), as given. (A configured
        pin's SHA is checked where it is read: `DshRepository.snapshot`.)"""
        if self._repository is None:
            return pin
        key = "sha:" + pin.sha
        if key not in self._tags:
            repository = self._repository()
            kind = repository.object_type(pin.sha)
            commit = repository.peel(pin.sha) if kind == "tag" else None
            if kind in (None, "commit"):  # a commit, or not in the clone (yet): read, or fetched, as given
                self._tags[key] = pin
            elif commit is not None:
                self._tags[key] = Pin(commit[:12], commit, named=False)
            else:
                what = f"an annotated tag of a {repository.tag_target_type(pin.sha)}" if kind == "tag" else f"a {kind}"
                self._why[pin.sha] = f"{pin.sha} is {what} of the DSH clone, not a commit: a pin names a commit"
                self._tags[key] = None
        return self._tags[key]

    def resolve_link(self, ref: str) -> Pin | None:
        """The commit a permalink's ref names: a pin, a tag, a full or abbreviated
        SHA, or a branch (flagged as one: it holds today, it moves tomorrow)."""
        pin = self.resolve(ref)
        if pin is not None or self._repository is None or len(ref) > MAX_REF_CHARS:
            return pin
        key = "link:" + ref
        if key not in self._tags:
            repository = self._repository()
            sha = repository.resolve_abbreviated(ref)
            if sha is not None:
                self._tags[key] = next((p for p in self.config.pins.values() if p.sha == sha), None) or Pin(
                    ref, sha, named=False
                )
            else:
                branch = repository.resolve_branch(ref)
                self._tags[key] = Pin(ref, branch, named=False, branch=True) if branch else None
            if self._tags[key] is None and re.fullmatch(r"[0-9a-f]{1,39}", ref) and ref not in self._why:
                # A link's abbreviated SHA: say why it names no commit, not that pins are never short.
                self._why[ref] = (
                    f"no single commit of the DSH clone has an id starting {ref}: none has, or several have; "
                    "write the full 40-hex SHA"
                    if len(ref) >= 7
                    else f"{ref} is too short to name one commit (7 hex digits at least); write the full 40-hex SHA"
                )
        return self._tags[key]

    def require(self, ref: str | None, option: str = "--pin") -> Pin:
        """The pin `ref` names (the config's default_pin when None), or an
        InputError naming the option it came from and why it names no pin."""
        ref = ref or self.config.default_pin
        if not ref:
            raise InputError(f"no pin: pass {option} PIN or set default_pin in dshaudit.toml")
        pin = self.resolve(ref)
        if pin is None:
            raise InputError(f"{option}: {self.unknown(ref)}")
        return pin

    def unknown(self, ref: str) -> str:
        """Why `ref` names no pin, in words."""
        if ref in self._why:
            return self._why[ref]
        if len(ref) > MAX_REF_CHARS:
            return f"pin {ref[:40]!r}… is {len(ref)} characters long; no pin, tag or SHA is longer than {MAX_REF_CHARS}"
        tags = ", nor a tag of the DSH clone" if self.knows_tags else ""
        why = "a short SHA is not a pin" if re.fullmatch(r"[0-9a-f]{7,39}", ref) else "nor a full 40-hex SHA"
        return f"pin {ref!r} is not in dshaudit.toml ({self.config.describe_pins()}){tags}, {why}"
