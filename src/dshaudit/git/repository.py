"""Where DSH comes from, and reading it.

`DshRepository.open` finds the clone: a path given with --repo or $DSH_REPO,
else our own bare clone of the upstream URL in the user cache directory, made
on first use and fetched into when a pin names a commit it lacks. It hands out
a `Snapshot` (snapshot.py) per commit.

No text from findings or configuration ever reaches git as an option: SHAs are
validated as 40 hex digits before use, clone URLs must use a known protocol,
tag names are checked before git sees them, and paths are looked up in trees
(snapshot.py), not passed on command lines.

GitPython only opens the clone: it finds the git directory and refuses a folder
that is none, and starts no git for dshaudit (importing it runs `git version`
once, its own check that git is there). Every git this module needs, the clone
and fetches included, is run through run.py.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
from collections.abc import Generator, Iterator
from pathlib import Path

import git
from git.exc import InvalidGitRepositoryError, NoSuchPathError

from dshaudit.core.errors import InputError, RepoError
from dshaudit.core.model import SHA_RE
from dshaudit.git import run
from dshaudit.git.clonestate import ASKED_REV, ASKED_TAGS, ASKED_TYPE, list_tags, tags_by_commit
from dshaudit.git.objects import BlobStore, ObjectReader, cannot_read
from dshaudit.git.snapshot import Snapshot
from dshaudit.platform import places, ui

_REF_NAME_RE = re.compile(r"[A-Za-z0-9][\w.\-/]*")
# Protocols a clone URL may use; `ext::` and friends can run commands.
ALLOWED_URL_RE = re.compile(r"^(https://|http://|ssh://|git://|file://|git@[\w.\-]+:)", re.IGNORECASE)


def user_cache_dir() -> Path:
    return Path(places.user_cache_dir())


def _cached_clone_path(url: str) -> Path:
    """Where our own clone of `url` lives in the user cache directory."""
    digest = hashlib.sha256(url.encode()).hexdigest()[:12]
    name = re.sub(r"[^\w.-]+", "-", url.rstrip("/").rsplit("/", 1)[-1]).removesuffix(".git")
    return user_cache_dir() / "repos" / f"{name}-{digest}.git"


class DshRepository:
    """A bare (or ordinary) clone of DSH, opened without relying on its config."""

    def __init__(self, git_dir: Path, origin: str, cached: bool = False):
        self.origin = origin  # how the user named it, for messages
        self.cached = cached  # our own clone in the cache: we may fetch into it
        try:
            self.repo = git.Repo(git_dir)
        except (InvalidGitRepositoryError, NoSuchPathError):
            raise RepoError(f"{origin}: not a git repository") from None
        self._objects = ObjectReader(self.git_dir)
        self._blobs = BlobStore()  # what was read, whichever reader read it (objects.py)
        self._snapshots: dict[str, Snapshot] = {}
        # What this handle (and its twins) asked the clone whose answer can change
        # (which commit a ref names, whether the clone holds an object), with the
        # answers: an outcome kept between runs holds while they hold (clonestate.py).
        self.asked: dict[tuple[str, str], str] = {}
        self._tags: dict[str, list[str]] | None = None  # commit -> its tags, listed on first need
        # What each revision names, asked of git once per handle as the tags are (the language
        # server re-checks a document at every keystroke); a fetch into the clone forgets them.
        self._revisions: dict[str, str | None] = {}
        self._kinds: dict[str, str | None] = {}  # object id -> its kind, kept and forgotten as revisions are
        if self.is_shallow():
            raise RepoError(
                f"{origin}: is a shallow clone; citations cannot be checked against partial history "
                f"(run: git --git-dir={self.git_dir} fetch --unshallow)"
            )

    @property
    def git_dir(self) -> str:
        """The clone's git directory, as git is given it (`--git-dir`)."""
        return str(self.repo.git_dir)

    def twin(self) -> DshRepository:
        """Another handle on the same clone, for a thread or a forked process of its
        own: a handle reads objects through `git cat-file` processes of its own
        (objects.py), which two threads must not share. The trees listed so far
        come along (a tree never changes), so the twin does not list them again."""
        other = DshRepository(Path(self.git_dir), self.origin, self.cached)
        other._snapshots = {sha: snap.moved_to(other) for sha, snap in self._snapshots.items()}
        other._blobs = self._blobs  # a thread's twin reads what this handle read; a forked one, a copy
        other.asked = self.asked
        return other

    # -- opening -----------------------------------------------------------------

    @classmethod
    def open(cls, spec: str | None, upstream_url: str) -> DshRepository:
        """`--repo` value, else $DSH_REPO, else a cached clone of the upstream URL."""
        spec = places.clone_spec(spec)
        if spec and not places.is_url(spec):
            path = Path(spec).expanduser()
            if not path.exists():
                raise RepoError(f"{spec}: no such DSH clone (set --repo or DSH_REPO to a clone of {upstream_url})")
            return cls(Path(places.git_dir_at(str(path))), spec)
        return cls.cached_clone(spec or upstream_url)

    @classmethod
    def cached_clone(cls, url: str) -> DshRepository:
        if not ALLOWED_URL_RE.match(url):
            raise InputError(f"{url}: refusing to clone from this URL (allowed: https, http, ssh, git, file)")
        target = _cached_clone_path(url)
        if not (target / "objects").is_dir():
            target.parent.mkdir(parents=True, exist_ok=True)
            ui.note(f"cloning {url} into {target} (first use; later runs reuse it)")
            # Clone beside the target and rename, so an interrupted clone leaves
            # only a temporary folder, never a half-made cache entry.
            tmp = Path(tempfile.mkdtemp(prefix=".clone-", dir=target.parent))
            try:
                clone_bare(url, tmp / "repo.git")
                shutil.rmtree(target, ignore_errors=True)
                os.replace(tmp / "repo.git", target)
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
        return cls(target, url, cached=True)

    def fetch_missing(self, sha: str) -> None:
        """Bring a cached clone up to date when a pin names a commit it lacks."""
        ui.note(f"fetching {self.origin} for commit {sha}")
        self._revisions.clear()
        self._kinds.clear()
        done = _fetch(self.git_dir, "+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*")
        if done.returncode == 0 and not self.has_commit(sha):
            # Not on a branch or tag (a pull request's commit, say): ask for it by id.
            done = _fetch(self.git_dir, sha)
        if done.returncode != 0 and not self.has_commit(sha):
            raise RepoError(f"{self.origin}: cannot fetch commit {sha}: {done.reason}")

    # -- reading -----------------------------------------------------------------

    def resolve_tag(self, name: str) -> str | None:
        """The commit a tag names, if it is a tag of this clone."""
        return self._rev(f"refs/tags/{name}") if _REF_NAME_RE.fullmatch(name) and ".." not in name else None

    def resolve_branch(self, name: str) -> str | None:
        """The commit a branch of this clone (or of its origin) points at now."""
        if not _REF_NAME_RE.fullmatch(name) or ".." in name:
            return None
        return self._rev(f"refs/heads/{name}") or self._rev(f"refs/remotes/origin/{name}")

    def resolve_abbreviated(self, prefix: str) -> str | None:
        """The one commit whose SHA starts with `prefix` (7 to 39 hex digits), if exactly one does."""
        return self._rev(prefix) if re.fullmatch(r"[0-9a-f]{7,39}", prefix) else None

    def object_type(self, sha: str) -> str | None:
        """What a full SHA names in this clone: `commit`, `tag` (an annotated
        tag object), `tree` or `blob`; None when the clone does not hold it."""
        if not SHA_RE.match(sha):
            return None
        if sha not in self._kinds:
            self._kinds[sha] = self._objects.kind(sha)
        kind = self._kinds[sha]
        self.asked[(ASKED_TYPE, sha)] = kind or ""
        return kind

    def commit_of(self, sha_or_prefix: str) -> str | None:
        """The commit that 7 to 40 hex digits name in this clone: a commit whose id is, or
        starts with, them (one only), or the commit an annotated tag with that id tags."""
        if not re.fullmatch(r"[0-9a-f]{7,40}", sha_or_prefix):
            return None
        if len(sha_or_prefix) < 40:
            return self.resolve_abbreviated(sha_or_prefix)
        kind = self.object_type(sha_or_prefix)
        return sha_or_prefix if kind == "commit" else self.peel(sha_or_prefix) if kind == "tag" else None

    def tags_at(self, commit: str) -> list[str]:
        """The tags of this clone that lead to `commit`, by name (one `git show-ref` per handle)."""
        if self._tags is None:
            self._tags = tags_by_commit(list_tags(self.git_dir))
        tags = self._tags.get(commit, [])
        self.asked[(ASKED_TAGS, commit)] = ",".join(tags)
        return tags

    def peel(self, ref: str) -> str | None:
        """The commit a SHA or an (annotated) tag leads to, if it leads to one."""
        return self._rev(ref)

    def tag_target_type(self, name_or_sha: str) -> str | None:
        """What a tag of this clone (by name, or its object's SHA) finally
        names: `commit`, `tree` or `blob`; None when there is no such tag."""
        if SHA_RE.match(name_or_sha):
            rev = name_or_sha
        elif _REF_NAME_RE.fullmatch(name_or_sha) and ".." not in name_or_sha:
            rev = f"refs/tags/{name_or_sha}"
        else:
            return None
        sha = self._verified(f"{rev}^{{}}")
        return self.object_type(sha) if sha is not None else None

    def _rev(self, ref: str) -> str | None:
        return self._verified(f"{ref}^{{commit}}")

    def _verified(self, rev: str) -> str | None:
        """The SHA of the object `rev` names (`git rev-parse --verify`); None when it names none."""
        if rev not in self._revisions:
            done = run.run(
                ["rev-parse", "--verify", "--quiet", "--end-of-options", rev], self.git_dir, env=run.C_LOCALE
            )
            sha = run.text(done.stdout) if done.returncode == 0 else ""
            self._revisions[rev] = sha if SHA_RE.match(sha) else None
        found = self._revisions[rev]
        self.asked[(ASKED_REV, rev)] = found or ""
        return found

    def read_blob(self, blob_id: str) -> bytes:
        """One blob's content: kept from an earlier read, else through the handle's running
        `git cat-file --batch`."""
        data = self._blobs.get(blob_id)
        if data is None:
            data = self._objects.read(blob_id)
            self._blobs.put(blob_id, data)
        return data

    def read_blobs(self, blob_ids: list[str]) -> dict[str, bytes]:
        """Blob contents by id (`each_blob`)."""
        return dict(self.each_blob(blob_ids))

    def each_blob(self, blob_ids: list[str]) -> Iterator[tuple[str, bytes]]:
        """(id, content) of each blob the clone holds, in id order: those read before as
        they were kept, the others read through one `git cat-file --batch` process. A
        caller that keeps less than the contents never holds them all at once."""
        wanted = sorted(set(blob_ids))
        held = {b: data for b in wanted if (data := self._blobs.get(b)) is not None}
        fresh = self._read_each([b for b in wanted if b not in held])
        try:
            pending = next(fresh, None)
            for blob in wanted:
                if blob in held:
                    yield blob, held.pop(blob)
                elif pending is not None and pending[0] == blob:
                    _, oid, data = pending
                    self._blobs.put(oid, data)
                    yield oid, data
                    pending = next(fresh, None)
        finally:
            fresh.close()

    def _read_each(self, wanted: list[str]) -> Generator[tuple[str, str, bytes], None, None]:
        """(id asked for, id, content) of each of these blobs (sorted) the clone holds, in
        their order, read through one `git cat-file --batch` process."""
        import threading

        if not wanted:
            return
        proc = run.Started(["cat-file", "--batch"], self.git_dir, stdin=True, stderr=False)
        write, read = proc.stdin, proc.stdout

        def feed() -> None:
            try:
                write.write("".join(f"{b}\n" for b in wanted).encode())
                write.close()
            except (OSError, ValueError):
                pass  # the reader stopped early and closed the pipes: git needs no more ids

        writer = threading.Thread(target=feed, daemon=True)
        writer.start()
        try:
            for blob in wanted:
                header = read.readline().split()
                if len(header) == 2 and header[1] == b"missing":
                    continue
                if len(header) != 3:
                    raise cannot_read(self.git_dir, blob, header)
                oid, size = header[0].decode(), int(header[2])
                data = read.read(size)
                read.read(1)  # the newline after each object
                yield blob, oid, data
        finally:
            # Closes the pipes (left to the collector, they are a ResourceWarning) and waits for
            # git; a reader that stopped early closes them on git, which then ends.
            proc.wait()
            writer.join()

    def close(self) -> None:
        """End the git processes the handle keeps running (objects.py)."""
        self._objects.close()

    def is_shallow(self) -> bool:
        return (Path(self.git_dir) / "shallow").exists()

    def has_commit(self, sha: str) -> bool:
        """Whether `sha` is a commit of the clone (not a tag, tree or blob that leads to one)."""
        return self.object_type(sha) == "commit"

    def snapshot(self, sha: str, pin_name: str | None = None) -> Snapshot:
        if not SHA_RE.match(sha):
            raise InputError(f"{sha!r}: not a full 40-hex commit SHA")
        snap = self._snapshots.get(sha)
        if snap is None:
            kind = self.object_type(sha)
            if kind is None and self.cached:  # only a missing object is worth a fetch
                self.fetch_missing(sha)
                kind = self.object_type(sha)
            if kind != "commit":
                label = f"pin {pin_name} = {sha}" if pin_name else sha
                if kind == "tag":  # an annotated tag's own SHA: its commit is what a pin names
                    commit = self.peel(sha)
                    fix = f"; write its commit {commit} instead" if commit else ""
                    raise InputError(f"{label} is an annotated tag object of the DSH clone, not a commit{fix}")
                if kind is not None:  # in the clone, but not a commit: the pin is wrong, not the clone
                    raise InputError(f"{label} is a {kind} of the DSH clone, not a commit: a pin names a commit")
                raise RepoError(
                    f"commit {label} is not in the DSH clone at {self.origin}; "
                    f"get it with: git --git-dir={self.git_dir} fetch origin {sha}"
                )
            snap = Snapshot(self, sha)
            self._snapshots[sha] = snap
        return snap

    def remember(self, snapshot: Snapshot) -> None:
        """Hand out this snapshot for its commit from now on (one made by `Snapshot.derive`)."""
        self._snapshots[snapshot.sha] = snapshot

    def forget(self, sha: str) -> None:
        """Drop the snapshot of `sha` (its tree listing): a walk over many commits keeps only those it still reads."""
        self._snapshots.pop(sha, None)


def clone_bare(url: str, path: Path) -> None:
    """A bare clone of `url` made at `path`: its branches (`--no-tags`), then all its tags,
    fetched by name. Its remote is `origin` whatever `clone.defaultRemoteName` says, since
    that is the remote later fetches name. A RepoError in git's words when either step fails."""
    done = run.run(["clone", "-v", "--bare", "--no-tags", "--origin", "origin", "--", url, str(path)], env=run.C_LOCALE)
    if done.returncode == 0:
        done = _fetch(str(path), "+refs/tags/*:refs/tags/*")
    if done.returncode != 0:
        raise RepoError(f"{url}: cannot clone: {done.reason}")


def _fetch(git_dir: str, *refspecs: str) -> run.Finished:
    """`git fetch origin REFSPECS` into the clone at `git_dir`, in the C locale: a failure is
    told by git's own `fatal:` line (`Finished.reason`)."""
    return run.run(["fetch", "origin", *refspecs], git_dir, env=run.C_LOCALE)
