"""The files a check at a new pin will grep, written out while Python imports.

`dshaudit check --pin NEW` greps the files that changed since the pin its
documents were last checked at: the names pass, the screen of the derived
searches and the detectors' needles each read them (`fileindex`), and git
inflates every one of those blobs again in each pass (at rc2, 3,292 files,
25 MB, 2,924 of them deltas). Meanwhile, for the first quarter of a second,
one core idles while the interpreter imports dshaudit. So the entry point
(`entry.py`) starts a helper process first: it lists the changed files
(`git diff-tree`), writes them with `git checkout-index` into a temporary
folder (on tmpfs where there is one), and the greps of those files run on
that folder (`GIT_WORK_TREE`, no `--cached`) instead of inflating the blobs.
Measured on two cores: 0.93 of the new-pin check's wall time (16 pairs).

What the helper needs to know before anything is imported, the pins, comes
from a note the last check at its documents' own pins left in the user cache
directory (`remember`): the clone, the configured pins and the documents'
pin. A wrong or stale note only costs the helper's work: a grep uses the
folder only for files written there with the very blob it was asked to read
(`folder_for`), and waits for the helper to end before deciding.

What keeps a grep of the folder equal to a grep of the blobs: the bytes are
the blob's (no `.gitattributes` is written or listed, and the helper gives up
when attributes could apply from elsewhere: `$GIT_DIR/info/attributes`, a
global attributes file; `core.autocrlf` is off for it), every file it lists
was written (`checkout-index` said nothing, and no two paths differ in case
only; on Linux only, where such folders tell case apart), and git reads a
work tree's file for an index entry without comparing its stat data. At most
200 MB are written. The folder is removed when the process that started the helper
exits, and a folder left by a process that no longer runs is removed by the
next start.

This module imports nothing of dshaudit and little of the standard library:
it runs before the rest is imported.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile

from .places import clone_spec, git_dir_at, is_url, user_cache_dir

NOTE = "prefetch.json"  # in the user cache directory
_PREFIX = "dshaudit-prefetch-"
_SHM = "/dev/shm"


class _Started:
    def __init__(self, proc: subprocess.Popen, folder: str, git_dir: str):
        self.proc, self.folder, self.git_dir = proc, folder, git_dir
        self.owner = os.getpid()
        self.written: dict[str, str] | None = None  # path -> blob, once the helper has ended
        self.ended = False


_started: _Started | None = None


def start(argv: list[str]) -> None:
    """Start the helper when `argv` (the command line after the program) is a check with
    --pin at a clone named by --repo or DSH_REPO, and the note names both pins. Never
    fails the command: this only saves time."""
    global _started
    if not sys.platform.startswith("linux"):
        return  # a folder on a case-insensitive disk could hold two paths as one file
    try:
        plan = _plan(argv)
        if plan is None:
            return
        git_dir, base, target = plan
        _remove_stale()
        folder = tempfile.mkdtemp(prefix=_PREFIX, dir=_SHM if os.access(_SHM, os.W_OK) else None)
        with open(os.path.join(folder, "owner"), "w", encoding="ascii") as f:
            f.write(str(os.getpid()))
        proc = subprocess.Popen([sys.executable, "-S", "-c", _HELPER, git_dir, base, target, folder],
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    except Exception:  # an optimisation: whatever goes wrong here, the check runs as it would without
        return
    _started = _Started(proc, folder, git_dir)
    atexit.register(_stop)


def _plan(argv: list[str]) -> tuple[str, str, str] | None:
    words = list(argv)
    while words and words[0].startswith("-"):
        if words[0] == "--no-cache":
            return None
        words.pop(0)
    if not words or words[0] != "check" or os.environ.get("DSHAUDIT_NO_CACHE"):
        return None
    pin = _option(words, "--pin")
    spec = clone_spec(_option(words, "--repo"))
    if not pin or not spec or is_url(spec):
        return None
    git_dir = git_dir_at(os.path.expanduser(spec))
    if not os.path.isdir(git_dir) or os.path.exists(os.path.join(git_dir, "info", "attributes")):
        return None
    try:
        with open(os.path.join(user_cache_dir(), NOTE), encoding="utf-8") as f:
            note = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(note, dict) or note.get("git_dir") != os.path.realpath(git_dir):
        return None
    pins = note.get("pins")
    target, base = (pins.get(pin, pin) if isinstance(pins, dict) else pin), note.get("base")
    if not (isinstance(target, str) and isinstance(base, str) and _is_sha(target) and _is_sha(base)) or target == base:
        return None
    return git_dir, base, target


def _option(words: list[str], name: str) -> str | None:
    """The value of `--name VALUE` or `--name=VALUE` (the last one given), if any."""
    value = None
    for i, w in enumerate(words):
        if w == "--":
            break
        if w == name and i + 1 < len(words):
            value = words[i + 1]
        elif w.startswith(name + "="):
            value = w[len(name) + 1:]
    return value


def _is_sha(value: object) -> bool:
    return isinstance(value, str) and len(value) == 40 and all(c in "0123456789abcdef" for c in value)


def remember(git_dir: str, pins: dict[str, str], base: str) -> None:
    """The note for the next start: the clone, its configured pins (name -> SHA), and the
    pin the documents were just checked at. Written only when it changes."""
    note = {"git_dir": os.path.realpath(git_dir), "pins": pins, "base": base}
    path = os.path.join(user_cache_dir(), NOTE)
    try:
        with open(path, encoding="utf-8") as f:
            if json.load(f) == note:
                return
    except (OSError, ValueError):
        pass
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, temporary = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".prefetch-")
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(note, f)
        os.replace(temporary, path)
    except OSError:
        pass


def folder_for(git_dir: str, paths: list[str], blobs: dict[str, str]) -> str | None:
    """The folder the helper wrote, if it wrote every one of `paths` with its blob in
    `blobs` for this clone (waiting for it to end); else None: grep the blobs."""
    started = _started
    if started is None or not paths or os.path.realpath(git_dir) != os.path.realpath(started.git_dir):
        return None
    if not started.ended:
        started.ended = True
        try:
            assert started.proc.stdout is not None
            started.proc.stdout.read()  # until the helper ends (every process that inherited the pipe sees it)
            with open(os.path.join(started.folder, "written"), "rb") as f:
                records = f.read().split(b"\0")
            started.written = {records[i + 1].decode("utf-8", "surrogateescape"): records[i].decode()
                               for i in range(0, len(records) - 1, 2)}
        except (OSError, ValueError, IndexError):
            started.written = None
    written = started.written
    if written is None or any(written.get(p) != blobs.get(p) for p in paths):
        return None
    return os.path.join(started.folder, "w")


def _stop() -> None:
    """At exit of the process that started it: the helper stopped, the folder removed."""
    started = _started
    if started is None or os.getpid() != started.owner:
        return
    if started.proc.poll() is None:
        started.proc.kill()
    started.proc.wait()
    if started.proc.stdout is not None:
        started.proc.stdout.close()
    shutil.rmtree(started.folder, ignore_errors=True)


def _remove_stale() -> None:
    """Folders of earlier runs that ended without removing theirs (killed): the pid
    that made each is in its `owner` file."""
    for root in (_SHM, tempfile.gettempdir()):
        try:
            names = [n for n in os.listdir(root) if n.startswith(_PREFIX)]
        except OSError:
            continue
        for name in names:
            folder = os.path.join(root, name)
            try:
                with open(os.path.join(folder, "owner"), encoding="ascii") as f:
                    owner = int(f.read())
                os.kill(owner, 0)
            except ProcessLookupError:
                shutil.rmtree(folder, ignore_errors=True)
            except (OSError, ValueError):
                continue  # still being made, or another user's: left alone


# The helper: run as `python -S -c _HELPER GIT_DIR BASE TARGET FOLDER`, standard library only.
# It writes FOLDER/w/<path> for each regular file that differs, and last FOLDER/written
# (blob NUL path NUL ...); anything unexpected, and it writes no list: nothing is used.
_HELPER = r"""
import os, subprocess, sys
git_dir, base, target, folder = sys.argv[1:5]
LIMIT = 200 * 1024 * 1024  # bytes written at most: beyond, most of a tree changed and its greps read the tree
def git(*args, env=None, data=None):
    return subprocess.run(["git", "--git-dir=" + git_dir, *args], input=data, capture_output=True, env=env, check=True)
home = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
if os.path.exists(os.path.join(home, "git", "attributes")):
    sys.exit(1)
found = subprocess.run(["git", "--git-dir=" + git_dir, "config", "--get", "core.attributesFile"], capture_output=True)
if found.stdout.strip():
    sys.exit(1)
raw = git("diff-tree", "-r", "-z", "--no-renames", "--no-abbrev", base, target).stdout.split(b"\0")
entries, seen = [], set()
for meta, path in zip(raw[0::2], raw[1::2]):
    fields = meta.split()
    if len(fields) < 5 or fields[1] not in (b"100644", b"100755") or path.rsplit(b"/", 1)[-1] == b".gitattributes":
        continue
    if path.lower() in seen:
        sys.exit(1)
    seen.add(path.lower())
    entries.append((fields[3], path))
if not entries:
    sys.exit(1)
sizes = git("cat-file", "--batch-check=%(objectsize)", data=b"".join(blob + b"\n" for blob, _ in entries)).stdout.split()
if sum(int(size) for size in sizes) > LIMIT:
    sys.exit(1)
env = dict(os.environ, GIT_INDEX_FILE=os.path.join(folder, "index"))
listed = git("update-index", "-z", "--index-info", env=env,
             data=b"".join(b"100644 " + blob + b"\t" + path + b"\0" for blob, path in entries))
os.mkdir(os.path.join(folder, "w"))
out = git("--work-tree=" + os.path.join(folder, "w"), "-c", "core.autocrlf=false", "checkout-index", "-a", "-f", env=env)
if listed.stderr.strip() or out.stderr.strip():
    sys.exit(1)
tree = os.path.join(folder, "w").encode()
if not all(os.path.isfile(os.path.join(tree, path)) for _, path in entries):
    sys.exit(1)
with open(os.path.join(folder, "written.part"), "wb") as f:
    f.write(b"".join(blob + b"\0" + path + b"\0" for blob, path in entries))
os.replace(os.path.join(folder, "written.part"), os.path.join(folder, "written"))
"""
