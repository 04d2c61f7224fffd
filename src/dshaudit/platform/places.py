"""Where dshaudit finds what it keeps and what it reads outside the documents:
the user cache directory, and the DSH clone a user names."""

from __future__ import annotations

import os


def user_cache_dir() -> str:
    """DSHAUDIT_CACHE_DIR, else the platform's user cache directory for dshaudit."""
    override = os.environ.get("DSHAUDIT_CACHE_DIR")
    if override:
        return override
    import platformdirs

    return platformdirs.user_cache_dir("dshaudit")


def clone_spec(spec: str | None) -> str | None:
    """The clone the user names: `--repo`, else $DSH_REPO; None when neither is given."""
    return spec or os.environ.get("DSH_REPO") or None


def is_url(spec: str) -> bool:
    return "://" in spec or spec.startswith("git@") or "::" in spec


def git_dir_at(path: str) -> str:
    """The git directory of a clone at `path`: its `.git` folder, or itself when bare."""
    return os.path.join(path, ".git") if os.path.isdir(os.path.join(path, ".git")) else path
