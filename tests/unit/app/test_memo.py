"""The key of a kept outcome: whether a document names a pin is kept by the digest of
its bytes, so that a run on unchanged documents parses none of their front matter."""

from __future__ import annotations

import hashlib

import pytest

from dshaudit.app import memo
from dshaudit.platform import cache

PINNED = b"---\npin: rc7\n---\n# A finding\n"
UNPINNED = b"---\npin: \n---\n# A page that names the word pin but no pin\n"


@pytest.fixture
def parses(tmp_path, monkeypatch):
    """Each front matter read as YAML, in order; a fresh cache in `tmp_path` for each run."""
    monkeypatch.setenv("DSHAUDIT_CACHE_DIR", str(tmp_path / "cache"))
    read: list[bytes] = []
    names_pin = memo._names_pin

    def counted(data: bytes) -> bool:
        read.append(data)
        return names_pin(data)

    monkeypatch.setattr(memo, "_names_pin", counted)
    return read


def run(*documents: bytes) -> list[bool]:
    """One run: each document asked about, then the cache written, as a command ends."""
    cache.begin()
    try:
        return [memo._has_pin(d, hashlib.sha256(d).hexdigest()) for d in documents]
    finally:
        cache.end()


def test_a_document_is_parsed_once_for_its_bytes(parses):
    assert run(PINNED, UNPINNED) == [True, False]
    assert parses == [PINNED, UNPINNED]
    assert run(PINNED, UNPINNED) == [True, False]  # read back, not parsed again
    assert parses == [PINNED, UNPINNED]
    edited = PINNED.replace(b"rc7", b"")
    assert run(edited) == [False]  # other bytes: parsed, and answered for themselves
    assert parses == [PINNED, UNPINNED, edited]


def test_without_the_cache_every_run_parses(parses):
    cache.configure(enabled=False)
    assert run(PINNED) == [True] and run(PINNED) == [True]
    assert parses == [PINNED, PINNED]
