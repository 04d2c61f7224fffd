"""What every format is: a module with `render(outcome, context) -> str`, and
what it is given besides the outcome.

A format module satisfies `Format` by its own top-level names (as a plugin
module satisfies an interface), so the registry in formats/ is a dict of
modules that the type checker holds to this protocol.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from dshaudit.core.diagnostics import Outcome

if TYPE_CHECKING:
    from dshaudit.git.auditrepo import AuditRepository


@dataclass(frozen=True)
class RenderContext:
    web_url: str  # DSH's web address (SARIF's provenance)
    # The folder findings paths are relative to (None: the working directory).
    root: Path | None = None
    # The audit's own git repository, asked before rendering; None outside one.
    repository: AuditRepository | None = None

    @property
    def base(self) -> Path:
        return self.root if self.root is not None else Path.cwd()


class Format(Protocol):
    """One output format."""

    @property
    def NEEDS_REPOSITORY(self) -> bool:
        """Whether it names findings files relative to the audit's git repository,
        which is then asked once, before anything renders."""
        ...

    @property
    def RENDERS_DIAGNOSTICS(self) -> bool:
        """Whether any command's outcome renders in it; False for a format that lays out pages only."""
        ...

    def render(self, outcome: Outcome, context: RenderContext) -> str:
        """The outcome as this format's text; it runs no git and reads no file."""
        ...
