"""Where dshaudit keeps what it keeps for a user: its cache, its own clones, notes.
Light to import (the entry point reads a note before anything else is imported)."""

from __future__ import annotations

import os


def user_cache_dir() -> str:
    """DSHAUDIT_CACHE_DIR, else the platform's user cache directory for dshaudit."""
    override = os.environ.get("DSHAUDIT_CACHE_DIR")
    if override:
        return override
    import platformdirs

    return platformdirs.user_cache_dir("dshaudit")
