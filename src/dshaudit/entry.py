"""The `dshaudit` program: the helper that writes out a new pin's changed files
is started first (`prefetch`), on the core that idles while the rest imports."""

from __future__ import annotations

import sys


def main() -> None:
    from . import prefetch

    prefetch.start(sys.argv[1:])
    from .cli import main as run

    run()
