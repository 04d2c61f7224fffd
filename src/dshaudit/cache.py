"""A content-addressed cache under the user cache directory.

Everything cached is keyed by what it was computed from: git blob ids (which
name content), the text of a findings file, and the version of the code that
computed it. An entry is never trusted blindly: each shard carries a checksum
of its payload, and one that does not match (a torn write, a disk error, a
hand edit) is thrown away and rebuilt.

Entries live in shards (one JSON file per kind and version) so a warm run
opens a few dozen files, not thousands. Shards are replaced atomically; two
runs at once may each add entries, and the later write wins, but a shard is
never half-written. A lock file serialises the read-merge-write of a shard.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import tempfile
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

FORMAT = 1


def digest(*parts: str | bytes) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p if isinstance(p, bytes) else p.encode("utf-8"))
        h.update(b"\0")
    return h.hexdigest()


class Shard:
    """One cache file: a dict from key to JSON-able payload."""

    def __init__(self, path: Path | None):
        self.path = path
        self.entries: dict[str, object] = {}
        self.added: dict[str, object] = {}
        if path is not None:
            self.entries = _load(path)

    def get(self, key: str) -> Any:
        return self.entries.get(key)

    def keys(self) -> list[str]:
        return list(self.entries)

    def put(self, key: str, value: Any) -> None:
        self.entries[key] = value
        self.added[key] = value

    def flush(self) -> None:
        if self.path is None or not self.added:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with _locked(self.path.with_suffix(".lock")):
            merged = _load(self.path)  # another run may have added entries meanwhile
            merged.update(self.added)
            _store(self.path, merged)
        self.added = {}


class Cache:
    """Shards by name; a disabled cache hands out shards that keep nothing on disk."""

    def __init__(self, root: Path | None):
        self.root = root
        self._shards: dict[str, Shard] = {}
        # Threads (the history search runs two) may ask for a shard at once:
        # each must get the same one, or what one of them puts is lost.
        self._lock = threading.Lock()

    @classmethod
    def default(cls) -> "Cache":
        if not _enabled or os.environ.get("DSHAUDIT_NO_CACHE"):
            return cls(None)
        from .repository import user_cache_dir

        return cls(user_cache_dir() / f"cache-v{FORMAT}")

    def shard(self, kind: str, version: str) -> Shard:
        name = f"{kind}/{version}"
        with self._lock:
            if name not in self._shards:
                self._shards[name] = Shard(self.root / kind / f"{version}.json" if self.root else None)
            return self._shards[name]

    def flush(self) -> None:
        for shard in self._shards.values():
            try:
                shard.flush()
            except OSError:
                pass  # a cache that cannot be written only costs speed next time


_current: Cache | None = None
_enabled = True


def configure(*, enabled: bool) -> None:
    """`--no-cache` for this invocation (set anew by every command line)."""
    global _enabled
    _enabled = enabled


def begin(kind: type[Cache] = Cache) -> Cache:
    """Start a run: the cache every part of this command shares (the language
    server, which runs as long as the editor, brings a `kind` of its own)."""
    global _current
    _current = kind.default()
    return _current


def current() -> Cache:
    """This run's cache (a disabled one outside a command, e.g. in library use)."""
    return _current if _current is not None else Cache(None)


def end() -> None:
    """Write what this run added, then forget it."""
    global _current
    if _current is not None:
        _current.flush()
    _current = None


def _load(path: Path) -> dict:
    try:
        raw = path.read_bytes()
    except OSError:
        return {}
    try:
        doc = json.loads(raw)
        payload = doc["payload"]
        if doc.get("format") != FORMAT or doc.get("sha256") != digest(json.dumps(payload)):
            return {}
        return payload if isinstance(payload, dict) else {}
    except (ValueError, KeyError, TypeError):
        return {}  # corrupt or truncated: rebuilt by this run


def _store(path: Path, payload: dict) -> None:
    # Key order is kept as it was (values are read back exactly as computed);
    # the checksum is over that same serialisation.
    body = json.dumps({"format": FORMAT, "sha256": digest(json.dumps(payload)), "payload": payload})
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(body)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@contextmanager
def _locked(lock_path: Path) -> Iterator[None]:
    with open(lock_path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
