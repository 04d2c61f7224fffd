"""Every git process dshaudit starts is started here.

Why one place: what git reads besides its arguments is decided once. Each
command line is `git [--git-dir=DIR] FIXED_CONFIG ARGS`: the settings of the
user's configuration that would change what git writes where dshaudit reads it
(colour codes, line numbers, quoted paths, what a pattern means, a signature
among the log lines) are fixed at the values dshaudit parses, so a search means
the same thing on every machine; an object is read as its id stores it, never
through a replace ref or a graft; and neither the user's nor the machine's
attributes decide which files are binary or how they are diffed (the clone's
own info/attributes is its owner's to keep). The environment is the caller's,
less the variables that point git at another repository, index, object store
or shallow list (every call names its repository: `--git-dir`, or the folder
it runs in) and those that change what a pathspec means or reshape a patch.
git's standard input is what the caller gives it, or nothing (a clone or fetch
over https may still ask git's credential helper, as any git command would).

Exit codes mean what the caller says they mean: `git grep` exits 1 when
nothing matches, which is an answer, not a failure; `Finished.output` takes the
codes a caller accepts. A failure is a RepoError in git's own words.

No other module of dshaudit starts a process: tests/unit/git/test_one_runner.py
reads the source of every module to hold to that. None outlives the run either:
a process started beside the caller (`Started`) and not ended when the
interpreter exits is ended then, and waited for.
"""

from __future__ import annotations

import atexit
import os
import selectors
import subprocess
import time
import weakref
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import IO

from dshaudit.core.errors import RepoError

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # the tree with no entries, which git always knows

# Settings of the user's configuration fixed for every call, at the values the output is read with.
FIXED_CONFIG: tuple[str, ...] = tuple(
    option
    for setting in (
        "core.quotePath=false",  # paths as they are, where a command writes them without -z
        "color.ui=false",  # no colour codes, whatever a command's own colour setting would default to
        "color.grep=false",
        "color.diff=false",  # a patch of `git log -p` too (color.ui does not override it)
        "grep.patternType=basic",  # a pattern is what its flags say: basic unless -E, -F or -P
        "grep.extendedRegexp=false",
        "grep.fullName=true",  # paths from the top of the tree, wherever git runs
        "grep.lineNumber=false",  # a line number only where -n asks for one
        "grep.column=false",
        "diff.noprefix=false",  # a patch names its files a/PATH and b/PATH, as Diff.patches reads them
        "diff.mnemonicPrefix=false",
        "diff.srcPrefix=a/",  # and not the prefixes these settings (git 2.45) would put there
        "diff.dstPrefix=b/",
        "diff.indentHeuristic=true",  # hunks where git puts them by default, so a carried line lands alike
        "diff.interHunkContext=0",  # -U0 hunks stay apart
        "diff.suppressBlankEmpty=false",
        "diff.algorithm=default",  # the lines a patch or a pickaxe counts as changed, on every machine
        "diff.renameLimit=1000",  # renames are looked for in a commit of many files too (git's default)
        "core.bigFileThreshold=512m",  # a large file is diffed line by line, not as binary (git's default)
        "log.showSignature=false",  # no signature check among the lines of `git log`
        "log.follow=false",  # a log of one path is a log of that path, not of the file it was renamed from
        "log.showRoot=true",  # the first commit of a history lists the files it made, as every other does
        "i18n.logOutputEncoding=UTF-8",  # subjects as the UTF-8 they are read as
        "core.useReplaceRefs=false",  # an object is what its id stores, not what refs/replace/ puts there
        # No attributes from the user's file, nor (git 2.42 and later) from HEAD's tree in a bare
        # clone: a `-diff` or `binary` there makes git grep -I skip a text file, and git diff print
        # no hunks for it. Only its bytes make a file binary, on every machine.
        f"core.attributesFile={os.devnull}",
        f"attr.tree={EMPTY_TREE}",
        "advice.graftFileDeprecated=false",  # no hint on every call about the graft file set below
    )
    for option in ("-c", setting)
)

# Variables that would make git work on another repository, index or object store than the call names.
_LOCATION_VARIABLES = frozenset(
    {
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "GIT_OBJECT_DIRECTORY",
        "GIT_ALTERNATE_OBJECT_DIRECTORIES",
        "GIT_COMMON_DIR",
        "GIT_NAMESPACE",
        "GIT_PREFIX",
        "GIT_SHALLOW_FILE",  # commits read as having no parents, as a shallow clone's own file lists them
    }
)
# Variables that change what a command's options and pathspecs mean, or what it writes.
_MEANING_VARIABLES = frozenset(
    {
        "GIT_DIFF_OPTS",  # --unified=N, which takes precedence over a patch's -U0
        "GIT_LITERAL_PATHSPECS",  # every pathspec literal, its magic (`:(glob)`, `:!`) off
        "GIT_GLOB_PATHSPECS",  # `*` no longer crossing `/`
        "GIT_NOGLOB_PATHSPECS",  # no wildcards at all
        "GIT_ICASE_PATHSPECS",  # paths matched in any case
        "GIT_ATTR_SOURCE",  # attributes read from a tree of the user's choosing (git 2.40), as attr.tree
    }
)
# What `environment` drops from the caller's environment: both kinds, as one set made once.
_DROPPED_VARIABLES = _LOCATION_VARIABLES | _MEANING_VARIABLES


# The C locale, for the calls whose messages are shown or read: git writes `fatal:` and `error:`
# (what `Finished.reason` looks for) and its messages in English, whatever the user's language.
C_LOCALE: Mapping[str, str] = {"LANGUAGE": "C", "LC_ALL": "C"}


def command(args: Sequence[str], git_dir: str | None = None) -> list[str]:
    """The command line of a call: git, its repository when named, the fixed configuration, then `args`."""
    return ["git", *([f"--git-dir={git_dir}"] if git_dir is not None else []), *FIXED_CONFIG, *args]


# Variables set for every call. A graft file (the clone's info/grafts, or GIT_GRAFT_FILE) gives
# commits other parents than they store, as a replace ref may: git reads an empty one instead,
# so a commit's history is the one its id names. And no attributes file of the machine's is
# read, as core.attributesFile above keeps the user's out.
_FIXED_VARIABLES = {"GIT_GRAFT_FILE": os.devnull, "GIT_ATTR_NOSYSTEM": "1"}


def environment(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The caller's environment without the variables that point git elsewhere or change
    what its arguments mean or what it writes, with no graft file nor system attributes,
    and with `extra` (a locale) on top."""
    env = {name: value for name, value in os.environ.items() if name not in _DROPPED_VARIABLES}
    env.update(_FIXED_VARIABLES)
    env.update(extra or {})
    return env


def subcommand(args: Sequence[str]) -> str:
    """The git command `args` run (`grep` of `--literal-pathspecs grep -e x`), for messages."""
    return next((a for a in args if not a.startswith("-")), "")


@dataclass(frozen=True)
class Finished:
    """How a git process ended: its exit code and what it wrote."""

    args: tuple[str, ...]  # what followed the fixed configuration on its command line
    returncode: int
    stdout: bytes
    stderr: bytes

    @property
    def found_nothing(self) -> bool:
        """Exit 1 with nothing said on stderr: how `git grep` says that nothing matches."""
        return self.returncode == 1 and not self.stderr.strip()

    def output(
        self,
        *,
        ok: Collection[int] = (0,),
        no_match_ok: bool = False,
        commit: str | None = None,
        limit: int | None = None,
    ) -> bytes:
        """What git wrote, when it ended as the caller allows: with an exit code of `ok`,
        or (`no_match_ok`) finding nothing, which is no output. Else the `failure`."""
        if no_match_ok and self.found_nothing:
            return b""
        if self.returncode not in ok:
            raise self.failure(commit, limit)
        return self.stdout

    def failure(self, commit: str | None = None, limit: int | None = None) -> RepoError:
        """`git CMD failed[ at COMMIT]: REASON`, the reason git's own stderr (its first `limit` characters)."""
        reason = self.stderr.decode(errors="replace").strip()
        at = f" at {commit[:12]}" if commit else ""
        return RepoError(f"git {subcommand(self.args)} failed{at}: {reason if limit is None else reason[:limit]}")

    @property
    def reason(self) -> str:
        """git's own first `fatal:` or `error:` line, which says what went wrong (blanks and
        quotes at its ends dropped); else the exit code. For messages that say what failed
        in words of their own."""
        for line in self.stderr.decode("utf-8", "surrogateescape").splitlines():
            line = line.strip().strip("'")
            if line.startswith(("fatal:", "error:")):
                return line
        return f"git exited with {self.returncode}"


def run(
    args: Sequence[str],
    git_dir: str | None = None,
    *,
    input: bytes | None = None,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    timeout: float | None = None,
) -> Finished:
    """Run git to its end and collect what it wrote. `input` is its stdin (else it reads
    nothing); `env` is added to the environment. Whatever the exit code, it is returned:
    the caller decides what it means (`Finished.output`)."""
    done = subprocess.run(
        command(args, git_dir),
        input=input,
        stdin=subprocess.DEVNULL if input is None else None,
        capture_output=True,
        env=environment(env),
        cwd=cwd,
        timeout=timeout,
        check=False,
    )
    return Finished(tuple(args), done.returncode, done.stdout, done.stderr)


class Exceeded(Exception):
    """A bounded call (`bounded`) ran past its bound: `what` is "time" or "output"."""

    def __init__(self, what: str):
        super().__init__(what)
        self.what = what


def bounded(
    args: Sequence[str],
    git_dir: str | None = None,
    *,
    seconds: float,
    max_output: int,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
) -> Finished:
    """`run`, for a call whose cost its input decides (a search's pattern): git is stopped,
    and Exceeded raised, once it has run `seconds` or written more than `max_output` bytes.
    Its output is read as it comes, so no more than that is ever held."""
    deadline = time.monotonic() + seconds
    proc = subprocess.Popen(
        command(args, git_dir),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=environment(env),
        cwd=cwd,
    )
    assert proc.stdout is not None and proc.stderr is not None
    out: list[bytes] = []
    err: list[bytes] = []
    size = 0
    try:
        with selectors.DefaultSelector() as selector:
            selector.register(proc.stdout, selectors.EVENT_READ, out)
            selector.register(proc.stderr, selectors.EVENT_READ, err)
            while selector.get_map():
                left = deadline - time.monotonic()
                if left <= 0:
                    raise Exceeded("time")
                for key, _ in selector.select(left):
                    chunk = os.read(key.fd, 1 << 16)
                    if not chunk:
                        selector.unregister(key.fileobj)
                        continue
                    key.data.append(chunk)
                    if key.data is out:
                        size += len(chunk)
                        if size > max_output:
                            raise Exceeded("output")
        try:
            proc.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            raise Exceeded("time") from None
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        proc.stdout.close()
        proc.stderr.close()
    return Finished(tuple(args), proc.returncode, b"".join(out), b"".join(err))


def output_text(
    args: Sequence[str],
    git_dir: str,
    *,
    env: Mapping[str, str] | None = None,
    keep_newline: bool = False,
    commit: str | None = None,
) -> str:
    """What git writes, as `text`, run in the C locale (`env` on top) to exit 0; else
    the RepoError of `Finished.failure` (`commit` names where it failed)."""
    done = run(args, git_dir, env={**C_LOCALE, **(env or {})})
    return text(done.output(commit=commit), keep_newline=keep_newline)


def ask(args: Sequence[str], *, cwd: str, timeout: float) -> str | None:
    """git's answer to a question about the repository holding `cwd`, stripped; None when there is
    none to have: git is missing, fails, takes longer than `timeout` seconds, or says nothing."""
    try:
        done = run(args, cwd=cwd, timeout=timeout)
    except (OSError, subprocess.SubprocessError):
        return None
    out = os.fsdecode(done.stdout).strip()
    return out if done.returncode == 0 and out else None


# The git processes started here and not ended yet. A `git cat-file` kept for the whole run
# is ended only by the run's end: unwaited, it would outlive dshaudit as nobody's child, and
# where the system's first process reaps no orphans (a container's), stay a zombie. Weakly
# held: one its caller let go of is collected as before (its pipes closed, so git ends),
# not kept with open pipes until a long run (the language server) exits.
_RUNNING: weakref.WeakSet[Started] = weakref.WeakSet()


@atexit.register
def _end_running() -> None:
    for started in list(_RUNNING):
        started.stop()


# A forked process owns none of its parent's processes: they are the parent's to end.
os.register_at_fork(after_in_child=_RUNNING.clear)


class Started:
    """A git process started now, running beside the caller. `finish` waits for its end;
    `stop` ends it early; `wait` lets it end by itself once the caller has written and
    read what it wanted through `stdin` and `stdout`. Spooled, its output goes to a
    temporary file, read at the end: git never waits on a full pipe while the caller is
    busy elsewhere. Without `stderr`, what git says there is dropped."""

    def __init__(
        self,
        args: Sequence[str],
        git_dir: str | None = None,
        *,
        env: Mapping[str, str] | None = None,
        cwd: str | None = None,
        stdin: bool = False,
        spool: bool = False,
        stderr: bool = True,
    ):
        self.args = tuple(args)
        self._spool: IO[bytes] | None = None
        if spool:
            import tempfile

            self._spool = tempfile.TemporaryFile()
        self._ended = False
        try:
            self._proc = subprocess.Popen(
                command(args, git_dir),
                stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
                stdout=self._spool if self._spool is not None else subprocess.PIPE,
                stderr=subprocess.PIPE if stderr else subprocess.DEVNULL,
                env=environment(env),
                cwd=cwd,
            )
        except BaseException:
            self._release()
            raise
        _RUNNING.add(self)

    @property
    def stdin(self) -> IO[bytes]:
        assert self._proc.stdin is not None, "started without stdin"
        return self._proc.stdin

    @property
    def stdout(self) -> IO[bytes]:
        assert self._proc.stdout is not None, "spooled: the output is read by finish"
        return self._proc.stdout

    def finish(self) -> Finished:
        """Wait for git to end, and collect what it wrote."""
        try:
            out, err = self._proc.communicate()
            if self._spool is not None:
                self._spool.seek(0)
                out = self._spool.read()
        finally:
            self._release()
        return Finished(self.args, self._proc.returncode, out or b"", err or b"")

    def stop(self) -> None:
        """End git now if it still runs (its answer is not needed), and release its pipes."""
        if self._ended:
            return
        try:
            if self._proc.poll() is None:
                self._proc.kill()
            self._proc.communicate()
        finally:
            self._release()

    def wait(self) -> int:
        """Close the pipes (the caller has written and read all it wanted) and wait for git to end."""
        for pipe in (self._proc.stdin, self._proc.stdout, self._proc.stderr):
            if pipe is not None:
                pipe.close()
        try:
            return self._proc.wait()
        finally:
            self._release()

    def _release(self) -> None:
        self._ended = True
        _RUNNING.discard(self)
        if self._spool is not None:
            self._spool.close()


def text(out: bytes, *, keep_newline: bool = False) -> str:
    """git's output as text: its last newline dropped, so that a one-line answer is the
    answer itself (unless `keep_newline`), and bytes that are not UTF-8 kept as surrogates
    (`surrogateescape`), so that a path that is not UTF-8 is still the path it was."""
    if not keep_newline and out.endswith(b"\n"):
        out = out[:-1]
    return out.decode("utf-8", "surrogateescape")


def nul_fields(out: bytes) -> list[str]:
    """The fields of `-z` output, as text (a NUL ends each, so the last field is empty)."""
    return out.decode("utf-8", "replace").split("\0")


def nul_terminated(records: Iterable[str]) -> bytes:
    """`-z` input for git: each record followed by a NUL; a path's undecodable bytes as they were."""
    return "".join(f"{record}\0" for record in records).encode("utf-8", "surrogateescape")


def grep_lines(out: bytes, prefix: str = "") -> Iterator[tuple[str, int, bytes]]:
    """(path, line number, text) of each line `git grep -n -z` prints; `prefix` (`COMMIT:`
    before each path of a grep of a commit) is taken off the paths."""
    start = prefix.encode()
    for record in out.split(b"\n"):
        if record:
            path, line, text = record.split(b"\0", 2)
            yield path.removeprefix(start).decode("utf-8", "replace"), int(line), text
