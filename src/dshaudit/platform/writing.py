"""Writing files so that a reader sees the old file or the new one, never half
of one; and reading the files dshaudit rewrites so that what it writes is
made from the file it read, not from one swapped in meanwhile.

A regular file is written to a temporary file beside it and renamed into
place, keeping its permission bits (and owner, when allowed). A path that is
not a regular file is never replaced by one: a character device (`/dev/null`,
a terminal) or a pipe with a reader is written to; `/dev/stdout`,
`/dev/stderr` and `/dev/fd/N` are the process's own streams; a directory,
block device, socket or pipe with no reader is refused (exit 2).
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import stat
import sys
from dataclasses import dataclass
from pathlib import Path

from dshaudit.core.errors import InputError


@dataclass(frozen=True)
class ReadFile:
    """A regular file as read: its bytes, which file it was (device and
    inode), and its path with any symbolic link resolved."""

    data: bytes
    real: Path
    dev: int
    ino: int

    @property
    def digest(self) -> str:
        return hashlib.sha256(self.data).hexdigest()


# The files this run read (by device and inode, with the name they were shown by): an output of
# the run never replaces one of them, whatever path names it (write_all_atomically).
_READ: dict[tuple[int, int], str] = {}


def forget_reads() -> None:
    """Start a run afresh: what an earlier run in this process read is no input of this one."""
    _READ.clear()


def read_regular(path: Path, shown: str, limit: int | None = None, follow: bool = True) -> ReadFile:
    """The bytes of the regular file at `path` (an InputError naming `shown`
    for anything else). Opened without blocking, so a FIFO planted in its
    place is refused rather than waited on; with `follow=False` a symbolic
    link is refused too."""
    real = Path(os.path.realpath(path)) if follow else Path(os.path.abspath(path))
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOFOLLOW", 0)
    try:
        fd = os.open(real, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise InputError("is a symbolic link now; nothing is read or written through it", file=shown) from None
        raise InputError(f"cannot read: {exc.strerror or exc}", file=shown) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise InputError(f"is {_kind(st.st_mode)}, not a regular file", file=shown)
        if limit is not None and st.st_size > limit:
            raise InputError(f"{st.st_size} bytes is larger than the {limit} dshaudit reads", file=shown)
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read() if limit is None else handle.read(limit + 1)
        if limit is not None and len(data) > limit:
            raise InputError(f"grew past the {limit} bytes dshaudit reads while it was read", file=shown)
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", file=shown) from None
    finally:
        os.close(fd)
    _READ[(st.st_dev, st.st_ino)] = shown
    return ReadFile(data, real, st.st_dev, st.st_ino)


def reread(read: ReadFile, shown: str, command: str) -> ReadFile:
    """The file `read` came from, read again for rewriting: an InputError
    unless it is the same file (not a link or another file swapped into its
    place) with the same bytes, and the file's only name: a new text is renamed
    into place, which would leave the file's other hard links holding the old one."""
    again = read_regular(read.real, shown, follow=False)
    if (again.dev, again.ino) != (read.dev, read.ino):
        raise InputError(f"was replaced by another file while {command} ran; nothing was written to it", file=shown)
    links = os.stat(read.real, follow_symlinks=False).st_nlink
    if links > 1:
        raise InputError(
            f"has {links} hard links, and {command} --write would change this one only; nothing was written to it",
            file=shown,
        )
    if again.data != read.data:
        raise InputError(
            f"changed on disk while {command} ran; nothing was written to it: run {command} again", file=shown
        )
    return again


def write_atomically(path: Path, text: str) -> None:
    """Write through a temporary file in the same folder and rename: a reader
    sees the old file or the new one, never half of one."""
    write_all_atomically([(path, text)])


def write_all_atomically(
    files: list[tuple[Path, str]], unchanged: dict[Path, tuple[ReadFile, str, str]] | None = None
) -> None:
    """Several files, all or none: every text goes to a temporary file beside
    its target first, and only when all of them are written are they renamed
    into place. A failure before that leaves every target as it was.
    Streams and devices (see the module) are written after the files are
    staged and before any is renamed. `unchanged` maps a target to the file
    it was made from (as read, its name shown, the command): it is read again
    just before the rename, and the whole write is refused if it changed."""
    unchanged = unchanged or {}
    refuse_over_inputs([path for path, _ in files if path not in unchanged])
    staged: list[tuple[str, Path]] = []
    streams: list[tuple[Path, str]] = []
    try:
        for path, text in files:
            if _is_stream(path):
                streams.append((path, text))
            else:
                staged.append((_stage(path, text), path))
        for path, text in streams:
            _write_stream(path, text)
        for _, path in staged:
            if path in unchanged:
                read, shown, command = unchanged[path]
                reread(read, shown, command)
        for tmp, path in staged:
            try:
                os.replace(tmp, path)
            except OSError as exc:
                raise InputError(f"{path}: cannot write: {exc.strerror or exc}") from None
    finally:
        for tmp, _ in staged:
            Path(tmp).unlink(missing_ok=True)


def refuse_over_inputs(paths: list[Path]) -> None:
    """An InputError when an output would replace a file this run read (a document, the
    configuration), or two outputs name one file: checked before anything is written."""
    seen: dict[tuple[int, int] | str, Path] = {}
    for path in paths:
        if _is_stream(path):
            continue
        try:
            st = os.stat(path)
        except OSError:
            key: tuple[int, int] | str = os.path.realpath(path)
        else:
            key = (st.st_dev, st.st_ino)
            if key in _READ:
                raise InputError(
                    f"--output {path}: that is {_READ[key]}, which this run read; an output never replaces an input"
                )
        if key in seen:
            raise InputError(f"--output {path}: the same file as --output {seen[key]}")
        seen[key] = path


# `/dev/stdout`, `/dev/fd/1`, `/proc/self/fd/1`: the process's own descriptors.
_FD_PATH_RE = re.compile(
    r"^/(?:dev/(?:std(?P<std>in|out|err)|fd/(?P<fd>\d+))|proc/(?:self|thread-self|\d+)/fd/(?P<pfd>\d+))$"
)


def _own_fd(path: Path) -> int | None:
    m = _FD_PATH_RE.match(os.path.abspath(path))
    if m is None:
        return None
    if m.group("std"):
        return {"in": 0, "out": 1, "err": 2}[m.group("std")]
    if m.group("pfd") and not re.match(rf"^/proc/(?:self|thread-self|{os.getpid()})/", os.path.abspath(path)):
        return None  # another process's descriptors: not ours to write
    return int(m.group("fd") or m.group("pfd"))


def _is_stream(path: Path) -> bool:
    """Whether `path` is written to in place rather than replaced: one of our
    own descriptors, or anything that exists and is not a regular file."""
    if _own_fd(path) is not None:
        return True
    try:
        st = os.stat(path)
    except OSError:
        return False  # a new file (or a dangling link, replaced as before)
    return not stat.S_ISREG(st.st_mode)


def _write_stream(path: Path, text: str) -> None:
    fd = _own_fd(path)
    if fd in (1, 2):
        # Through Python's own stream, so it is ordered with the rest of the output (and captured in tests).
        stream = sys.stdout if fd == 1 else sys.stderr
        stream.write(text)
        stream.flush()
        return
    if fd is not None:
        _write_fd(path, fd, text)
        return
    try:
        st = os.stat(path)
    except OSError as exc:
        raise InputError(f"{path}: cannot write: {exc.strerror or exc}") from None
    if not (stat.S_ISCHR(st.st_mode) or stat.S_ISFIFO(st.st_mode)):
        raise InputError(
            f"{path}: is {_kind(st.st_mode)}; not written (a report goes to a file, a character device or a pipe)"
        )
    try:
        # Non-blocking open: a FIFO with no reader is refused, not waited on forever.
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            raise InputError(f"{path}: is a FIFO with no reader; nothing written") from None
        raise InputError(f"{path}: cannot write: {exc.strerror or exc}") from None
    try:
        os.set_blocking(fd, True)
        _write_fd(path, fd, text)
    finally:
        os.close(fd)


def _write_fd(path: Path, fd: int, text: str) -> None:
    data = text.encode("utf-8")
    try:
        while data:
            data = data[os.write(fd, data) :]
    except OSError as exc:
        raise InputError(f"{path}: cannot write: {exc.strerror or exc}") from None


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISLNK, "a symbolic link"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def _stage(path: Path, text: str) -> str:
    """`text` in a new temporary file beside `path`, flushed to disk, with the
    permission bits (and owner, where allowed) of the file it will replace,
    else those of a new file; its name."""
    folder = path.parent if str(path.parent) else Path(".")
    try:
        import tempfile

        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=folder)
    except OSError as exc:
        raise InputError(f"{path}: cannot write: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            try:
                old: os.stat_result | None = os.stat(path)
            except OSError:
                old = None
            if old is not None and stat.S_ISREG(old.st_mode):
                os.fchmod(out.fileno(), stat.S_IMODE(old.st_mode) & 0o777)
                if (old.st_uid, old.st_gid) != (os.geteuid(), os.getegid()):
                    try:
                        os.fchown(out.fileno(), old.st_uid, old.st_gid)
                    except OSError:
                        pass  # not ours to give away: the bits are kept, the owner is the writer
            else:
                umask = os.umask(0)
                os.umask(umask)
                os.fchmod(out.fileno(), 0o666 & ~umask)  # mkstemp makes 0600; a report is an ordinary file
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
