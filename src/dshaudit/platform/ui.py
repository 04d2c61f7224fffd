"""What dshaudit says on stderr besides errors: notes, detail and progress.

Progress bars appear only when stderr is a terminal, so CI logs and pipes get
nothing extra; `--quiet` silences notes and progress, `--verbose` adds detail
(timings, cache use). Output on stdout is never affected.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TypeVar

import click

T = TypeVar("T")

quiet = False
verbose = False
_started = time.monotonic()


def configure(*, be_quiet: bool, be_verbose: bool) -> None:
    global quiet, verbose, _started
    quiet, verbose, _started = be_quiet, be_verbose and not be_quiet, time.monotonic()


def note(message: str) -> None:
    """Something a person should know (a clone being made, files written)."""
    if not quiet:
        click.echo(f"dshaudit: {message}", err=True)


def detail(message: str) -> None:
    """Something only --verbose wants: what was done and how long it took."""
    if verbose:
        click.echo(f"dshaudit: [{time.monotonic() - _started:6.2f}s] {message}", err=True)


def stderr_is_terminal() -> bool:
    return sys.stderr.isatty()


MIN_ITEMS = 20  # fewer items than this finish before a bar is worth drawing


@contextmanager
def progress(items: Iterable[T], label: str, minimum: int | None = None) -> Iterator[Iterable[T]]:
    """Iterate `items`, with a progress bar on a terminal when there are enough of them."""
    items = list(items)
    if quiet or len(items) < (MIN_ITEMS if minimum is None else minimum) or not stderr_is_terminal():
        yield items
        return
    with click.progressbar(items, label=f"dshaudit: {label}", file=sys.stderr, show_pos=True) as bar:
        yield bar
