"""The git repository the findings live in: its top level, origin and HEAD.

SARIF and GitHub annotations name findings files relative to this repository,
and SARIF records its origin and revision. It is asked once, before any
format renders, so no formatter runs git.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from dshaudit.git import run


@dataclass(frozen=True)
class AuditRepository:
    """The git repository the findings live in, as far as git can say."""

    toplevel: Path
    uri: str | None  # origin's URL, credentials removed; None without an origin
    revision: str | None  # HEAD's SHA; None before the first commit

    def relative(self, root: Path, file: str) -> str:
        """A findings path (relative to `root`) made relative to the repository's top level."""
        try:
            return (root / file).resolve().relative_to(self.toplevel).as_posix()
        except (ValueError, OSError):
            return file


_SCP_RE = re.compile(r"^(?:[^@/:]+@)?([^/:\\]{2,}):(?!//)(.+)$")  # user@host:path; one letter is a drive


def clean_remote_url(url: str) -> str | None:
    """An absolute URI for a git remote: credentials dropped (an origin URL can
    carry a token), scp-like `git@host:owner/repo` as `ssh://host/owner/repo`, a
    local path as a file URI. None when it cannot be one."""
    url = url.strip()
    if not url:
        return None
    parts = urlsplit(url)
    if "://" in url and len(parts.scheme) > 1:  # one letter would be a Windows drive
        netloc = parts.netloc.rpartition("@")[2]
        return urlunsplit((parts.scheme, netloc, parts.path, "", ""))
    match = _SCP_RE.match(url)
    if match:
        return f"ssh://{match.group(1)}/{match.group(2).lstrip('/')}"
    path = Path(url)
    return path.as_uri() if path.is_absolute() else None


def audit_repository(root: Path) -> AuditRepository | None:
    """Ask git about the repository holding `root`; None when it is not in one or git is missing."""
    top = run.ask(["rev-parse", "--show-toplevel"], cwd=str(root), timeout=10)
    if top is None:
        return None
    origin = run.ask(["remote", "get-url", "origin"], cwd=str(root), timeout=10)
    return AuditRepository(
        toplevel=Path(top).resolve(),
        uri=clean_remote_url(origin) if origin else None,
        revision=run.ask(["rev-parse", "--verify", "-q", "HEAD^{commit}"], cwd=str(root), timeout=10),
    )
