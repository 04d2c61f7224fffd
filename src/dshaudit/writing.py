"""Writing files so that a reader sees the old file or the new one, never half of one."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from .errors import InputError


def write_atomically(path: Path, text: str) -> None:
    """Write through a temporary file in the same folder and rename: a reader
    sees the old file or the new one, never half of one."""
    write_all_atomically([(path, text)])


def write_all_atomically(files: list[tuple[Path, str]]) -> None:
    """Several files, all or none: every text goes to a temporary file beside
    its target first, and only when all of them are written are they renamed
    into place. A failure before that leaves every target as it was."""
    staged: list[tuple[str, Path]] = []
    try:
        for path, text in files:
            staged.append((_stage(path, text), path))
        for tmp, path in staged:
            try:
                os.replace(tmp, path)
            except OSError as exc:
                raise InputError(f"{path}: cannot write: {exc.strerror or exc}") from None
    finally:
        for tmp, _ in staged:
            Path(tmp).unlink(missing_ok=True)


def _stage(path: Path, text: str) -> str:
    """`text` in a new temporary file beside `path`, flushed to disk; its name."""
    folder = path.parent if str(path.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=folder)
    except OSError as exc:
        raise InputError(f"{path}: cannot write: {exc.strerror or exc}") from None
    umask = os.umask(0)
    os.umask(umask)
    try:
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; a report is an ordinary file
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise InputError(f"{path}: cannot write: {exc.strerror or exc}") from None
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return tmp
