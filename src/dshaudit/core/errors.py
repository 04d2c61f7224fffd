"""Errors that end a run, each with the exit code it maps to.

A failed citation is not an error: it is a Verdict, and exit code 1.
"""

from __future__ import annotations

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_REPO = 3
EXIT_INTERNAL = 4


class DshauditError(Exception):
    """An error reported as one line on stderr.

    Where the error sits in a file, `file` and `line` say so (and lead the
    message, compiler style); `what` is the message without them, for tools
    such as lint that place it themselves."""

    exit_code = EXIT_USAGE

    def __init__(self, what: str, *, file: str | None = None, line: int | None = None):
        where = f"{file}:{line}: " if file is not None and line is not None else f"{file}: " if file else ""
        super().__init__(where + what)
        self.what = what
        self.file = file
        self.line = line


class InputError(DshauditError):
    """Bad usage, configuration or findings input (exit 2)."""

    exit_code = EXIT_USAGE


class RepoError(DshauditError):
    """The DSH repository cannot be used: missing SHA, shallow, unreachable (exit 3)."""

    exit_code = EXIT_REPO
