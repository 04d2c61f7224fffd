"""A content-addressed cache under the user cache directory.

Everything cached is keyed by what it was computed from: git blob ids (which
name content), the text of a findings file, and the version of the code that
computed it. An entry is never trusted blindly: each shard carries an HMAC of
its payload under a key private to the user (`key`, 0600, in a cache folder
no one else may write), and one that does not match (a torn write, a disk
error, a hand edit, a forgery) is thrown away and rebuilt; so is an entry whose
shape is not what its reader expects. A cache folder or key that another user
could write is not used at all. Nothing in it is opened through a symbolic
link.

Entries live in shards (one JSON file per kind and version) so a warm run
opens a few dozen files, not thousands. Shards are replaced atomically; two
runs at once may each add entries, and the later write wins, but a shard is
never half-written. A lock file serialises the read-merge-write of a shard.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import hmac
import json
import os
import secrets
import stat
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Any

FORMAT = 2  # 2: shards authenticated with the user's key (1 had a plain checksum)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def digest(*parts: str | bytes) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p if isinstance(p, bytes) else p.encode("utf-8"))
        h.update(b"\0")
    return h.hexdigest()


@lru_cache(maxsize=1)
def code_version() -> str:
    """dshaudit's own code and rules, as one digest: what is computed from a document
    by dshaudit's rules alone is as old as the rules that made it."""
    root = Path(__file__).resolve().parent.parent
    h = hashlib.sha256()
    for f in sorted(p for p in root.rglob("*") if p.suffix in (".py", ".scm", ".toml") and p.is_file()):
        h.update(f.relative_to(root).as_posix().encode() + b"\0" + f.read_bytes())
    return h.hexdigest()[:16]


def shaped(template: Any) -> Callable[[Any], bool]:
    """A check that a cache entry has the shape of `template`, for `Cache.shard(shape=...)`:
    a type (`int` is not `bool`; `object` is anything); a tuple of alternatives;
    `[T]` a list of T; `[A, B, C]` a list of exactly those; `{str: T}` a mapping
    of strings to T; any other dict, exactly its keys (a key ending in `?` may be
    missing), each of its shape."""

    # The template is turned into nested checks once: a shard's entries are many, and
    # each is checked on its first read (a list of 200 positions is 200 checks).
    def compiled(t: Any) -> Callable[[Any], bool]:
        if t is object:
            return lambda value: True
        if isinstance(t, tuple):
            alternatives = [compiled(a) for a in t]
            return lambda value: any(c(value) for c in alternatives)
        if isinstance(t, type):
            if t in (int, float):
                return lambda value: isinstance(value, t) and not isinstance(value, bool)
            return lambda value: isinstance(value, t)
        if isinstance(t, list):
            if len(t) == 1 and isinstance(t[0], type) and t[0] is not object:
                # A list of plain values (a name's 2,000 file positions): their types
                # are gathered in C, not checked one call at a time. bool is not int.
                kind = {t[0]}
                return lambda value: isinstance(value, list) and set(map(type, value)) <= kind
            if len(t) == 1:
                each = compiled(t[0])
                return lambda value: isinstance(value, list) and all(each(v) for v in value)
            items = [compiled(u) for u in t]
            return lambda value: (
                isinstance(value, list) and len(value) == len(items) and all(c(v) for v, c in zip(value, items))
            )
        if isinstance(t, dict):
            if list(t) == [str]:
                inner = compiled(t[str])
                return lambda value: (
                    isinstance(value, dict) and all(isinstance(k, str) and inner(v) for k, v in value.items())
                )
            wanted = {k.rstrip("?"): (k.endswith("?"), compiled(u)) for k, u in t.items()}
            return lambda value: (
                isinstance(value, dict)
                and set(value) <= set(wanted)
                and all(
                    (k in value and c(value[k])) or (optional and k not in value) for k, (optional, c) in wanted.items()
                )
            )
        raise TypeError(f"not a shape: {t!r}")

    return compiled(template)


class Shard:
    """One cache file: a dict from key to JSON-able payload. `shape`, when
    given, says whether an entry is one its reader can use: one that is not
    is dropped (and so computed again and rewritten), never handed out."""

    def __init__(self, path: Path | None, key: bytes = b"", shape: Callable[[Any], bool] | None = None):
        self.path = path
        self.key = key
        self.shape = shape
        self.entries: dict[str, object] = {}
        self.added: dict[str, object] = {}
        self.checked: set[str] = set()  # entries read from disk whose shape is known good
        if path is not None:
            self.entries = _load(path, key)

    def get(self, key: str) -> Any:
        value = self.entries.get(key)
        if value is not None and self.shape is not None and key not in self.added and key not in self.checked:
            try:
                usable = self.shape(value)
            except (TypeError, ValueError, KeyError, IndexError, AttributeError):
                usable = False
            if not usable:
                del self.entries[key]
                return None
            self.checked.add(key)
        return value

    def keys(self) -> list[str]:
        return list(self.entries)

    def put(self, key: str, value: Any) -> None:
        self.entries[key] = value
        self.added[key] = value
        self.checked.discard(key)

    def flush(self) -> None:
        if self.path is None or not self.added:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with _locked(self.path.with_suffix(".lock")):
            merged = _load(self.path, self.key)  # another run may have added entries meanwhile
            merged.update(self.added)
            _store(self.path, merged, self.key)
        self.added = {}


class Cache:
    """Shards by name; a disabled cache hands out shards that keep nothing on disk."""

    def __init__(self, root: Path | None):
        self.root = root
        self._shards: dict[str, Shard] = {}
        # Threads (the history search runs two) may ask for a shard at once:
        # each must get the same one, or what one of them puts is lost.
        self._lock = threading.Lock()
        self._key = b""

    def _open(self) -> None:
        """The user's key, on the first shard asked for (a command that caches nothing makes no folder)."""
        if self.root is None or self._key:
            return
        try:
            self._key = _user_key(self.root)
        except (OSError, UnsafeCache) as exc:
            from dshaudit.platform import ui

            ui.note(f"not using the cache at {self.root}: {exc.strerror if isinstance(exc, OSError) else exc}")
            self.root = None

    @classmethod
    def default(cls) -> Cache:
        if not _enabled or os.environ.get("DSHAUDIT_NO_CACHE"):
            return cls(None)
        from dshaudit.platform.places import user_cache_dir

        return cls(Path(user_cache_dir()) / f"cache-v{FORMAT}")

    def shard(self, kind: str, version: str, shape: Callable[[Any], bool] | None = None) -> Shard:
        name = f"{kind}/{version}"
        with self._lock:
            if name not in self._shards:
                self._open()
                self._shards[name] = Shard(
                    self.root / kind / f"{version}.json" if self.root else None, self._key, shape
                )
            return self._shards[name]

    def prune(self, kind: str, keep: int) -> None:
        """Remove the shards of `kind` on disk beyond the `keep` most recently written
        (a kind with a shard per input, such as kept outcomes, would otherwise only grow)."""
        if self.root is None:
            return
        try:
            shards = sorted((self.root / kind).glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True)
            for old in shards[keep:]:
                old.unlink(missing_ok=True)
                old.with_suffix(".lock").unlink(missing_ok=True)
        except OSError:
            pass  # another run pruned it first, or the folder is gone: only space is at stake

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


class UnsafeCache(Exception):
    """The cache folder or its key could be written by someone else."""


def _user_key(root: Path) -> bytes:
    """The key shards are authenticated with: made once, 0600, in a cache
    folder that is ours and that no one else may write."""
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    st = os.lstat(root)
    if not stat.S_ISDIR(st.st_mode):
        raise UnsafeCache("it is not a folder (a symbolic link?)")
    if st.st_uid != os.geteuid():
        raise UnsafeCache("it belongs to another user")
    if st.st_mode & 0o022:
        raise UnsafeCache("others may write to it (chmod go-w it)")
    path = root / "key"
    if not os.path.lexists(path):
        # Written whole beside it, then linked into place: a second run at once sees no key or the whole one.
        import tempfile

        fd, tmp = tempfile.mkstemp(prefix=".key.", dir=root)
        try:
            with os.fdopen(fd, "w") as out:
                out.write(secrets.token_hex(32))
            try:
                os.link(tmp, path)
            except FileExistsError:
                pass
        finally:
            os.unlink(tmp)
    fd = os.open(path, os.O_RDONLY | _NOFOLLOW)
    with os.fdopen(fd) as handle:
        kst = os.fstat(handle.fileno())
        if not stat.S_ISREG(kst.st_mode) or kst.st_uid != os.geteuid() or kst.st_mode & 0o077:
            raise UnsafeCache("its key is not a file private to you")
        key = handle.read().strip()
    if len(key) < 32:
        raise UnsafeCache("its key is damaged (delete it: a new one is made)")
    return key.encode()


def _mac(key: bytes, body: bytes) -> str:
    return hmac.new(key, body, hashlib.sha256).hexdigest()


# A shard file is `{"format": 2, "mac": "<64 hex>", "payload": <payload>}`, which is
# what json.dumps makes of that dict; the MAC is of the payload's text as it stands there.
_HEAD = b'{"format": %d, "mac": "' % FORMAT
_BEFORE_PAYLOAD = b'", "payload": '
_PAYLOAD_AT = len(_HEAD) + 64 + len(_BEFORE_PAYLOAD)


def _load(path: Path, key: bytes) -> dict:
    """The shard's payload, when its MAC holds; {} for anything else. The MAC is
    checked on the payload's bytes as they are in the file, not on the payload
    serialised again (for a large shard, that cost as much as reading it)."""
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW)
        with os.fdopen(fd, "rb") as handle:
            raw = handle.read()
    except OSError:
        return {}
    mac, body = raw[len(_HEAD) : len(_HEAD) + 64], raw[_PAYLOAD_AT:-1]
    if not (
        raw.startswith(_HEAD)
        and raw[len(_HEAD) + 64 : _PAYLOAD_AT] == _BEFORE_PAYLOAD
        and raw.endswith(b"}")
        and hmac.compare_digest(mac, _mac(key, body).encode())
    ):
        return {}  # torn, damaged, edited, of another format or not ours: rebuilt by this run
    try:
        payload = json.loads(body)
    except (ValueError, RecursionError):
        return {}
    return payload if isinstance(payload, dict) else {}


def _store(path: Path, payload: dict, key: bytes) -> None:
    # Key order is kept as it was (values are read back exactly as computed). The
    # payload is serialised once, its MAC taken of that text (json.dumps writes ASCII).
    body = json.dumps(payload).encode("ascii")
    import tempfile

    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(_HEAD + _mac(key, body).encode() + _BEFORE_PAYLOAD + body + b"}")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


@contextmanager
def _locked(lock_path: Path) -> Iterator[None]:
    # Not through a symbolic link: one planted here must not make us create or lock a file elsewhere.
    try:
        fd = os.open(lock_path, os.O_WRONLY | os.O_CREAT | _NOFOLLOW, 0o600)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise OSError(exc.errno, f"{lock_path} is a symbolic link") from None
        raise
    with os.fdopen(fd, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
