"""Objects of the clone read one at a time, through `git cat-file` processes kept running.

Why kept running: a run asks what a SHA names, or reads a blob, many times over,
one at a time, between other work; a process for each would cost more than the
answers. `git cat-file --batch-check` says what an object is, `--batch` gives its
content; each starts on first use and ends with `close`. Many blobs known at once
are read otherwise, in one process of their own (`DshRepository.read_blobs`).

A reader answers one question at a time: two threads sharing it would read each
other's answers. Each handle of the clone has its own (`DshRepository.twin`).

What is read is kept (`BlobStore`): a blob's content never changes, and the parts
of a run that read the same file (the facts, the citations, the claims on DSH's
own documents) then read it from git once.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from dshaudit.core.errors import RepoError
from dshaudit.git import run

BLOB_STORE_BYTES = 32 << 20  # what a handle keeps of the blobs it read: enough for the files one run reads again


class BlobStore:
    """Blob contents by id, as they were read: those used last, up to `limit` bytes in all.
    Safe to share between threads (a handle and its twins in one process)."""

    def __init__(self, limit: int = BLOB_STORE_BYTES):
        self.limit = limit
        self._data: OrderedDict[str, bytes] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    def get(self, blob_id: str) -> bytes | None:
        with self._lock:
            data = self._data.get(blob_id)
            if data is not None:
                self._data.move_to_end(blob_id)
            return data

    def put(self, blob_id: str, data: bytes) -> None:
        if len(data) > self.limit:
            return  # would push out everything else
        with self._lock:
            if blob_id in self._data:
                self._data.move_to_end(blob_id)
                return
            self._data[blob_id] = data
            self._size += len(data)
            while self._size > self.limit:
                _, dropped = self._data.popitem(last=False)
                self._size -= len(dropped)


class ObjectReader:
    """What an object of one clone is, and its content, by id."""

    def __init__(self, git_dir: str):
        self.git_dir = git_dir
        self._check: run.Started | None = None  # `--batch-check`: headers only
        self._batch: run.Started | None = None  # `--batch`: headers and contents

    def kind(self, object_id: str) -> str | None:
        """`commit`, `tag`, `tree` or `blob`; None when the clone does not hold the object."""
        if self._check is None:
            self._check = run.Started(["cat-file", "--batch-check"], self.git_dir, stdin=True, stderr=False)
        header = _ask(self._check, _checked(object_id))
        return header[1].decode() if len(header) == 3 else None

    def read(self, object_id: str) -> bytes:
        """The object's content; a RepoError when the clone does not hold it."""
        if self._batch is None:
            self._batch = run.Started(["cat-file", "--batch"], self.git_dir, stdin=True, stderr=False)
        header = _ask(self._batch, _checked(object_id))
        if len(header) != 3:
            raise cannot_read(self.git_dir, object_id, header)
        data = self._batch.stdout.read(int(header[2]))
        self._batch.stdout.read(1)  # the newline after each object
        return data

    def close(self) -> None:
        """End the processes (each ends when its input does)."""
        for started in (self._check, self._batch):
            if started is not None:
                started.wait()
        self._check = self._batch = None


def cannot_read(git_dir: str, object_id: str, header: list[bytes]) -> RepoError:
    """Why `git cat-file` gave no content for an object: what it answered, or that it stopped.
    A partial clone (made with --filter) holds no file contents until they are read: git then
    fetches each from the clone's remote, and stops when it cannot; the message says so."""
    said = f"git cat-file says {b' '.join(header).decode(errors='replace')!r}" if header else "git cat-file stopped"
    if _is_partial(git_dir):
        said += (
            "; this is a partial clone (made with --filter), whose files git fetches from its remote "
            "as they are read: let git reach that remote, or clone DSH again without --filter"
        )
    return RepoError(f"cannot read object {object_id}: {said}")


def _is_partial(git_dir: str) -> bool:
    """Whether the clone's configuration names a promisor remote, which a clone made with
    --filter has: git fetches from it the objects the clone lacks. (Packs marked `.promisor`
    alone do not tell: a full clone may hold them too.)"""
    asked = run.run(["config", "--get-regexp", r"^(remote\..*\.promisor|extensions\.partialclone)$"], git_dir)
    settings = [line.rsplit(" ", 1) for line in run.text(asked.stdout).splitlines()]
    return asked.returncode == 0 and any(
        key.startswith("extensions.") or value.lower() == "true" for key, value in (s for s in settings if len(s) == 2)
    )


def _checked(object_id: str) -> str:
    """The id as git is asked for it: hex digits only, so that no other text (a
    newline, a revision expression) reaches git."""
    return bytes.fromhex(object_id).hex()


def _ask(started: run.Started, object_id: str) -> list[bytes]:
    """The header git answers for one object: `ID TYPE SIZE`, or `ID missing`."""
    started.stdin.write(f"{object_id}\n".encode())
    started.stdin.flush()
    return started.stdout.readline().split()
