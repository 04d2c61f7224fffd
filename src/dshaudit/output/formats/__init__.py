"""The formats, one module each, every one a `Format` (interface.py).

text and json are for people and scripts; sarif (code scanning), junit (test
reports), github (workflow annotations) and markdown ($GITHUB_STEP_SUMMARY)
are for CI; html lays out the pages of `report` and `history`. Adding a
format means adding its module and its name to NAMES (and to
DIAGNOSTIC_FORMATS when it renders a command's diagnostics).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from typing import cast

from dshaudit.output.interface import Format

# The formats by name; each is a module of this package.
NAMES = ("text", "json", "sarif", "junit", "github", "markdown", "html")


class _Formats(Mapping[str, Format]):
    """Each format's module, imported when first asked for: a run renders one or two,
    and some take a while to load (junit's XML library, html's templates), which a
    check read back from its kept outcome would otherwise pay for."""

    def __getitem__(self, name: str) -> Format:
        if name not in NAMES:
            raise KeyError(name)
        return cast(Format, importlib.import_module(f"{__name__}.{name}"))

    def __iter__(self) -> Iterator[str]:
        return iter(NAMES)

    def __len__(self) -> int:
        return len(NAMES)


FORMATS: Mapping[str, Format] = _Formats()
# The formats any command's outcome renders in (check, lint, rebase, anchor offer each of
# them): those whose RENDERS_DIAGNOSTICS is true, named here so that none is imported to tell.
DIAGNOSTIC_FORMATS = ("github", "json", "junit", "markdown", "sarif", "text")
