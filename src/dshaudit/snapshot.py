"""DSH at pinned commits, read straight from the git object database.

`DshRepository` finds or makes the clone; `Snapshot` is the tree of one commit.
Nothing is checked out: blobs come from git through GitPython's persistent
`git cat-file --batch` process, so several SHAs can be read in one run.

No text from findings or configuration ever reaches git as an option: SHAs are
validated as 40 hex digits before use, and paths are looked up in trees, not
passed on command lines.
"""

from __future__ import annotations

import difflib
import hashlib
import importlib
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import git
from git.exc import GitCommandError, InvalidGitRepositoryError, NoSuchPathError
from gitdb.exc import BadName, BadObject

from . import ui
from .errors import InputError, RepoError
from .grep import Grep

SHA_RE = re.compile(r"^[0-9a-f]{40}$")
# Protocols a clone URL may use; `ext::` and friends can run commands.
ALLOWED_URL_RE = re.compile(r"^(https://|http://|ssh://|git://|file://|git@[\w.\-]+:)", re.IGNORECASE)

MODE_SYMLINK = 0o120000
MODE_GITLINK = 0o160000


@dataclass(frozen=True)
class Entry:
    """What a path names at a commit."""

    kind: str  # "blob", "tree", "symlink", "submodule"
    path: str
    blob_sha: str | None = None


def user_cache_dir() -> Path:
    override = os.environ.get("DSHAUDIT_CACHE_DIR")
    if override:
        return Path(override)
    import platformdirs

    return Path(platformdirs.user_cache_dir("dshaudit"))


def _is_url(spec: str) -> bool:
    return "://" in spec or spec.startswith("git@") or "::" in spec


class DshRepository:
    """A bare (or ordinary) clone of DSH, opened without relying on its config."""

    def __init__(self, git_dir: Path, origin: str, cached: bool = False):
        self.git_dir = git_dir
        self.origin = origin  # how the user named it, for messages
        self.cached = cached  # our own clone in the cache: we may fetch into it
        try:
            self.repo = git.Repo(git_dir)
        except (InvalidGitRepositoryError, NoSuchPathError):
            raise RepoError(f"{origin}: not a git repository") from None
        # A bare mirror whose config lacks `core.bare = true` makes GitPython run
        # git in the parent folder, where git finds no repository. Naming the git
        # directory in the environment makes every git call independent of that.
        self.repo.git.update_environment(GIT_DIR=str(self.repo.git_dir))
        self._snapshots: dict[str, Snapshot] = {}
        if self.is_shallow():
            raise RepoError(
                f"{origin}: is a shallow clone; citations cannot be checked against partial history "
                f"(run: git --git-dir={self.repo.git_dir} fetch --unshallow)"
            )

    # -- opening -----------------------------------------------------------------

    @classmethod
    def open(cls, spec: str | None, upstream_url: str) -> "DshRepository":
        """`--repo` value, else $DSH_REPO, else a cached clone of the upstream URL."""
        spec = spec or os.environ.get("DSH_REPO") or None
        if spec and not _is_url(spec):
            path = Path(spec).expanduser()
            if not path.exists():
                raise RepoError(f"{spec}: no such DSH clone (set --repo or DSH_REPO to a clone of {upstream_url})")
            git_dir = path / ".git" if (path / ".git").is_dir() else path
            return cls(git_dir, spec)
        return cls.cached_clone(spec or upstream_url)

    @classmethod
    def cached_clone(cls, url: str) -> "DshRepository":
        if not ALLOWED_URL_RE.match(url):
            raise InputError(f"{url}: refusing to clone from this URL (allowed: https, http, ssh, git, file)")
        digest = hashlib.sha256(url.encode()).hexdigest()[:12]
        name = re.sub(r"[^\w.-]+", "-", url.rstrip("/").rsplit("/", 1)[-1]).removesuffix(".git")
        target = user_cache_dir() / "repos" / f"{name}-{digest}.git"
        if not (target / "objects").is_dir():
            target.parent.mkdir(parents=True, exist_ok=True)
            ui.note(f"cloning {url} into {target} (first use; later runs reuse it)")
            # Clone beside the target and rename, so an interrupted clone leaves
            # only a temporary folder, never a half-made cache entry.
            tmp = Path(tempfile.mkdtemp(prefix=".clone-", dir=target.parent))
            try:
                git.Repo.clone_from(url, tmp / "repo.git", bare=True, multi_options=["--no-tags"])
                git.Repo(tmp / "repo.git").git.fetch("origin", "+refs/tags/*:refs/tags/*")
                shutil.rmtree(target, ignore_errors=True)
                os.replace(tmp / "repo.git", target)
            except GitCommandError as exc:
                raise RepoError(f"{url}: cannot clone: {_git_reason(exc)}") from None
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
        return cls(target, url, cached=True)

    def fetch_missing(self, sha: str) -> None:
        """Bring a cached clone up to date when a pin names a commit it lacks."""
        ui.note(f"fetching {self.origin} for commit {sha}")
        try:
            self.repo.git.fetch("origin", "+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*")
            if not self.has_commit(sha):
                # Not on a branch or tag (a pull request's commit, say): ask for it by id.
                self.repo.git.fetch("origin", sha)
        except GitCommandError as exc:
            if not self.has_commit(sha):
                raise RepoError(f"{self.origin}: cannot fetch commit {sha}: {_git_reason(exc)}") from None

    # -- reading -----------------------------------------------------------------

    def resolve_tag(self, name: str) -> str | None:
        """The commit a tag names, if it is a tag of this clone."""
        if not re.fullmatch(r"[A-Za-z0-9][\w.\-/]*", name) or ".." in name:
            return None
        try:
            return self.repo.git.rev_parse("--verify", "--quiet", "--end-of-options", f"refs/tags/{name}^{{commit}}")
        except GitCommandError:
            return None

    def read_blobs(self, blob_ids: list[str]) -> dict[str, bytes]:
        """Blob contents by id, read through one `git cat-file --batch` process."""
        import subprocess
        import threading

        wanted = sorted(set(blob_ids))
        if not wanted:
            return {}
        proc = subprocess.Popen(
            ["git", f"--git-dir={self.repo.git_dir}", "cat-file", "--batch"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        )

        def feed():
            try:
                proc.stdin.write("".join(f"{b}\n" for b in wanted).encode())
            finally:
                proc.stdin.close()

        writer = threading.Thread(target=feed, daemon=True)
        writer.start()
        out: dict[str, bytes] = {}
        read = proc.stdout
        for _ in wanted:
            header = read.readline().split()
            if len(header) == 2 and header[1] == b"missing":
                continue
            oid, size = header[0].decode(), int(header[2])
            out[oid] = read.read(size)
            read.read(1)  # the newline after each object
        writer.join()
        proc.wait()
        return out

    def is_shallow(self) -> bool:
        return (Path(self.repo.git_dir) / "shallow").exists()

    def has_commit(self, sha: str) -> bool:
        try:
            return self.repo.commit(sha).type == "commit"
        except (BadName, BadObject, ValueError, GitCommandError):
            return False

    def snapshot(self, sha: str, pin_name: str | None = None) -> "Snapshot":
        if not SHA_RE.match(sha):
            raise InputError(f"{sha!r}: not a full 40-hex commit SHA")
        snap = self._snapshots.get(sha)
        if snap is None:
            if not self.has_commit(sha) and self.cached:
                self.fetch_missing(sha)
            if not self.has_commit(sha):
                label = f"pin {pin_name} = {sha}" if pin_name else sha
                raise RepoError(
                    f"commit {label} is not in the DSH clone at {self.origin}; "
                    f"get it with: git --git-dir={self.repo.git_dir} fetch origin {sha}"
                )
            snap = Snapshot(self, sha)
            self._snapshots[sha] = snap
        return snap


def _git_reason(exc: GitCommandError) -> str:
    """git's own first `fatal:`/`error:` line, which says what went wrong."""
    text = str(exc.stderr or "").replace("stderr: '", "\n")
    for line in text.splitlines():
        line = line.strip().strip("'")
        if line.startswith(("fatal:", "error:")):
            return line
    return f"git exited with {exc.status}"


class Snapshot:
    """The tree of one commit: look up paths, read blobs, list files.

    The whole tree is listed once (`git ls-tree -r -t`): one process, a few
    milliseconds, after which every lookup is a dictionary access."""

    def __init__(self, repository: DshRepository, sha: str):
        self.repository = repository
        self.sha = sha
        self._index: dict[str, tuple[str, str, str]] | None = None
        self._paths: list[str] | None = None
        self._blob_ids: dict[str, str] | None = None
        self.grep = Grep(repository.repo, sha)
        self._by_name: dict[str, list[str]] | None = None
        self._by_dir: dict[str, list[str]] = {}

    def index(self) -> dict[str, tuple[str, str, str]]:
        """path -> (mode, type, object id) for every entry, folders included."""
        if self._index is None:
            out = self.repository.repo.git.ls_tree("-r", "-t", "-z", "--full-tree", self.sha)
            index = {}
            for record in out.split("\0"):
                if record:
                    meta, _, path = record.partition("\t")
                    mode, kind, obj = meta.split(" ")
                    index[path] = (mode, kind, obj)
            self._index = index
        return self._index

    def entry(self, path: str) -> Entry | None:
        record = self.index().get(path.rstrip("/")) if path else None
        if record is None:
            return None
        mode, kind, obj = record
        if kind == "tree":
            return Entry("tree", path)
        if kind == "commit" or int(mode, 8) == MODE_GITLINK:
            return Entry("submodule", path)
        if int(mode, 8) == MODE_SYMLINK:
            return Entry("symlink", path, obj)
        return Entry("blob", path, obj)

    def read(self, blob_sha: str) -> bytes:
        return self.repository.repo.odb.stream(bytes.fromhex(blob_sha)).read()

    def read_many(self, blob_ids: list[str]) -> dict[str, bytes]:
        """Many blobs through one `git cat-file --batch`, far faster than one at a time."""
        return self.repository.read_blobs(blob_ids)

    def paths(self) -> list[str]:
        """Every file path at this commit (not folders), sorted."""
        if self._paths is None:
            self._paths = sorted(p for p, (_, kind, _) in self.index().items() if kind != "tree")
        return self._paths

    def blob_ids(self) -> dict[str, str]:
        """Regular files (no symlinks, no submodules) and their blob ids, by path, sorted."""
        if self._blob_ids is None:
            self._blob_ids = {
                p: obj for p, (mode, kind, obj) in sorted(self.index().items())
                if kind == "blob" and int(mode, 8) != MODE_SYMLINK
            }
        return self._blob_ids

    def closest_paths(self, path: str, n: int = 1) -> list[str]:
        """Existing paths most like `path`, for a hint on a missing file.

        In order: a file of the same name anywhere; a file of a similar name in
        the same folder; any file in that folder (a rename); a file of a
        similar name anywhere; a file below the nearest folder that exists."""
        if self._by_name is None:
            by_name: dict[str, list[str]] = {}
            by_dir: dict[str, list[str]] = {}
            for p in self.paths():
                pp = PurePosixPath(p)
                by_name.setdefault(pp.name, []).append(p)
                by_dir.setdefault(str(pp.parent), []).append(p)
            self._by_name, self._by_dir = by_name, by_dir
        wanted = PurePosixPath(path)
        base = wanted.name

        def best(candidates: list[str]) -> list[str]:
            return difflib.get_close_matches(path, candidates, n=n, cutoff=0.0)

        if base in self._by_name:
            return best(self._by_name[base])
        siblings = self._by_dir.get(str(wanted.parent), [])
        names = difflib.get_close_matches(base, [PurePosixPath(p).name for p in siblings], n=n, cutoff=0.6)
        if names:
            return [str(wanted.parent / name) for name in names]
        if siblings:
            return best(siblings)
        names = difflib.get_close_matches(base, self._by_name, n=5, cutoff=0.6)
        if names:
            return best([p for name in names for p in self._by_name[name]])
        for folder in wanted.parents:
            prefix = "" if str(folder) == "." else f"{folder}/"
            below = [p for p in self.paths() if p.startswith(prefix)] if prefix else []
            if below:
                return best(below[:2000])
        return []


# Names that moved to modules of their own, still importable from here for the
# modules that import them from here.
_MOVED = {"Diff": "diff"}


def __getattr__(name: str):
    if name in _MOVED:
        return getattr(importlib.import_module(f".{_MOVED[name]}", __package__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
