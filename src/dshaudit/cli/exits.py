"""How every command ends: its outcome handed to the output layer, or an
error said in one line on stderr; either way, a documented exit code."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

import click

from dshaudit.core import errors
from dshaudit.core.diagnostics import Outcome
from dshaudit.core.errors import DshauditError
from dshaudit.output.emit import emit, page_outputs, parse_outputs
from dshaudit.platform.textsafe import terminal_safe

F = TypeVar("F", bound=Callable[..., Any])


def _quiet_interrupts(unraisable: Any) -> None:
    """Python's report of an exception nobody can catch (one raised in a finalizer),
    except Ctrl-C: when it lands while an object is being finalized (GitPython closes
    its config readers so, in every process of the run), the run still stops, and says
    so in one line, as for any other Ctrl-C, with no traceback beside it."""
    if isinstance(unraisable.exc_value, KeyboardInterrupt):
        return
    sys.__unraisablehook__(unraisable)


def handle_errors(fn: F) -> F:
    """One line on stderr and a documented exit code, never a traceback."""

    @wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from dshaudit.platform import cache

        sys.unraisablehook = _quiet_interrupts  # the processes a run forks keep it
        try:
            cache.begin()
            try:
                return fn(*args, **kwargs)
            finally:
                cache.end()
        except DshauditError as exc:
            click.echo(f"dshaudit: {terminal_safe(str(exc))}", err=True)
            sys.exit(exc.exit_code)
        except KeyboardInterrupt:
            click.echo("dshaudit: interrupted", err=True)
            sys.exit(130)
        except (click.exceptions.Exit, click.ClickException, SystemExit):
            raise
        except BrokenPipeError:
            sys.exit(errors.EXIT_OK)
        except Exception as exc:  # a bug: say so briefly; DSHAUDIT_DEBUG=1 shows the traceback
            if os.environ.get("DSHAUDIT_DEBUG"):
                raise
            click.echo(
                f"dshaudit: internal error: {type(exc).__name__}: {terminal_safe(str(exc))} "
                "(set DSHAUDIT_DEBUG=1 for the traceback)",
                err=True,
            )
            sys.exit(errors.EXIT_INTERNAL)

    return wrapper  # type: ignore[return-value]


def finish(outcome: Outcome, fmt: str, outputs: tuple[str, ...], web_url: str = "") -> None:
    """Hand the outcome to the output layer and exit with its code."""
    sys.exit(emit(outcome, fmt, parse_outputs(outputs), web_url))


def finish_page(page: Outcome, fmt: str | None, outputs: tuple[str, ...], formats: tuple[str, ...]) -> None:
    """A page (report, history) to stdout and to its --output files, and its exit code."""
    stdout, files = page_outputs(outputs, fmt, formats)
    sys.exit(emit(page, stdout, files, ""))
