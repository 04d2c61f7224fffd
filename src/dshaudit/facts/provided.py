"""Facts whose measure lives above the facts package: a `tree-docs(...)` fact runs a
whole check. The layer that has it registers it here (`provide`), so that this
package imports nothing above itself; this module imports nothing heavy, so that
registering costs a run nothing when it measures no fact (a kept outcome read back)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dshaudit.core.model import Fact, Pin
    from dshaudit.documents import searches
    from dshaudit.git.pins import PinResolver
    from dshaudit.git.repository import DshRepository

ProvidedMeasure = Callable[["searches.Search", "Pin", "PinResolver", Callable[[], "DshRepository"]], "Fact"]
PROVIDED: dict[str, ProvidedMeasure] = {}


def provide(kind: str, measure: ProvidedMeasure) -> None:
    """Measure facts of `kind` (a search kind such as `tree-docs`) with `measure`."""
    PROVIDED[kind] = measure
