"""What the CI formats share: one flat list of checked items built from a
CheckResult, the DSH places each points at, rule texts, fingerprints, and
where the audit repository is.

Every CI format (sarif, junit, github, markdown) walks `entries(result)` and
nothing else, so they all report the same failures in the same order.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, urlsplit, urlunsplit

from ..model import (
    CheckResult,
    ClaimStatus,
    ClaimVerdict,
    LineRange,
    Pin,
    SourceLocation,
    Status,
    Verdict,
)

# Related places listed per entry at most (a fact's evidence can run long).
MAX_PLACES = 20

# One sentence saying what went wrong, and one saying what to do about it,
# per failing status. Keys are the status values of model.Status and
# model.ClaimStatus; the two sets do not overlap, so a value names one rule.
RULES: dict[str, tuple[str, str]] = {
    Status.INVALID_CITATION.value: (
        "The citation is malformed.",
        "It names line 0, a range that runs backwards, or an absolute or `..` path. "
        "Line numbers start at 1, ranges run forwards, and paths are relative to the DSH repository root.",
    ),
    Status.UNKNOWN_PIN.value: (
        "The citation names no known pin.",
        "The `@` suffix or the findings file's front matter names no pin of dshaudit.toml and is not a "
        "full 40-hex SHA. Add the pin to dshaudit.toml, fix its name, or cite a full SHA.",
    ),
    Status.MISSING_PATH.value: (
        "The cited file does not exist at the pin.",
        "The file was renamed, moved or deleted at the pinned commit. The message names the closest "
        "existing path; `dshaudit show` it, or carry the findings over with `dshaudit rebase`.",
    ),
    Status.NOT_A_FILE.value: (
        "The cited path is not a regular file.",
        "At the pin the path is a directory, a symbolic link or a submodule. Cite the file it leads to.",
    ),
    Status.BINARY.value: (
        "The cited file is binary.",
        "Only text files can be cited by line. Cite a text file instead.",
    ),
    Status.OUT_OF_RANGE.value: (
        "The cited lines run past the end of the file.",
        "The file is shorter at the pin than the citation says. Read it with `dshaudit show` and fix "
        "the line numbers.",
    ),
    Status.UNKNOWN_SYMBOL.value: (
        "The cited #Symbol resolves to no declaration.",
        "No declaration with that dotted name exists in the file at the pin. The message names the "
        "closest declaration; check the spelling or whether the code moved.",
    ),
    Status.OUTSIDE_SYMBOL.value: (
        "The cited lines lie outside the cited #Symbol.",
        "The symbol resolved, but its span does not hold the cited lines. Fix the lines, or drop them "
        "and let the symbol stand alone.",
    ),
    Status.CONTENT_MISMATCH.value: (
        "An anchor is not on the cited lines.",
        "The cited lines now hold other code. The message says where the anchor text is now, if it is "
        "anywhere in the file; fix the line numbers (`dshaudit rebase` does it) or the anchor.",
    ),
    ClaimStatus.CONTRADICTED.value: (
        "The measured fact contradicts the claim.",
        "The fact measured from the syntax trees at the pin does not satisfy the claim. "
        "`dshaudit facts FACT` shows the value, its counting rule and its evidence; correct the claim.",
    ),
    ClaimStatus.UNKNOWN_FACT.value: (
        "The claim names an unknown fact or field.",
        "`dshaudit facts` lists every fact and its fields; fix the name.",
    ),
    ClaimStatus.CANNOT_EVALUATE.value: (
        "The fact cannot be measured at the pin.",
        "A parse error or a missing file stands where the fact's evidence would be, so dshaudit refuses "
        "to give a count it cannot trust. The message says where.",
    ),
    ClaimStatus.INVALID_CLAIM.value: (
        "The claim cannot be read or compared.",
        "A claim is `FACT[.FIELD] OP VALUE` with OP one of == != < <= > >= contains excludes, and the "
        "value must be of a kind the operator compares. METHOD.md gives the grammar.",
    ),
}
RULE_PREFIX = "dshaudit/"


def rule_id(status: str) -> str:
    return RULE_PREFIX + status


@dataclass(frozen=True)
class Place:
    """A place in DSH: a path at a pin, with lines when known, and its permalink."""

    pin: Pin
    path: str
    lines: LineRange | None
    url: str

    def __str__(self) -> str:
        where = f"{self.path}:{self.lines}" if self.lines else self.path
        return f"{where}@{self.pin.name}"


@dataclass(frozen=True)
class Entry:
    """One checked citation or claim, as every CI format sees it."""

    kind: str  # "citation" or "claim"
    source: SourceLocation
    status: str
    ok: bool
    target: str  # what was checked, as written: `path:lines#Symbol@pin` or `claim: EXPR @pin`
    message: str
    pin: Pin | None
    places: tuple[Place, ...]
    identity: tuple[str, ...]  # what names the entry in its file, line numbers left out

    @property
    def rule_id(self) -> str:
        return rule_id(self.status)

    @property
    def summary(self) -> str:
        return f"{self.target}: {self.status}: {self.message}"


def permalink(web_url: str, sha: str, path: str, lines: LineRange | None) -> str:
    url = f"{web_url.rstrip('/')}/blob/{sha}/{quote(path, safe='/')}"
    if lines is not None:
        url += f"#L{lines.start}" if lines.start == lines.end else f"#L{lines.start}-L{lines.end}"
    return url


# Citations that point at nothing in DSH: no pin, a path that cannot be one, no such file.
_NO_PLACE = {Status.UNKNOWN_PIN, Status.INVALID_CITATION, Status.MISSING_PATH}
# Citations whose file is there but whose cited lines are not (or mean nothing): link the file.
_NO_LINES = {Status.OUT_OF_RANGE, Status.NOT_A_FILE, Status.BINARY}


def _citation_entry(v: Verdict, web_url: str) -> Entry:
    c = v.citation
    pin_name = v.pin.name if v.pin else (c.pin_ref or "?")
    places: list[Place] = []
    if v.pin is not None and v.status not in _NO_PLACE:
        ranges = () if v.status in _NO_LINES else (v.resolved_lines or c.lines)
        for r in ranges or (None,):
            places.append(Place(v.pin, c.path, r, permalink(web_url, v.pin.sha, c.path, r)))
    return Entry(
        kind="citation",
        source=c.source,
        status=v.status.value,
        ok=v.ok,
        target=f"{c.target_text}@{pin_name}",
        message=v.message,
        pin=v.pin,
        places=tuple(places[:MAX_PLACES]),
        identity=("citation", c.text, *c.anchors),
    )


def _claim_entry(v: ClaimVerdict, web_url: str) -> Entry:
    c = v.claim
    places = []
    if v.fact is not None:
        from ..report import merge_evidence  # here, so that only runs with claims load Jinja2

        pin = v.fact.pin
        places = [Place(pin, e.path, e.lines, permalink(web_url, pin.sha, e.path, e.lines)) for e in merge_evidence(v.fact.evidence)]
    pin_name = v.pin.name if v.pin else "?"
    return Entry(
        kind="claim",
        source=c.source,
        status=v.status.value,
        ok=v.ok,
        target=f"{c.kind}: {c.text} @{pin_name}",
        message=v.message,
        pin=v.pin,
        places=tuple(places[:MAX_PLACES]),
        identity=(c.kind, c.text),
    )


def entries(result: CheckResult, web_url: str) -> list[Entry]:
    """Citations, then claims, each in the result's order (by findings file, line, column)."""
    return [_citation_entry(v, web_url) for v in result.verdicts] + [_claim_entry(v, web_url) for v in result.claims]


def failures(result: CheckResult, web_url: str) -> list[Entry]:
    return [e for e in entries(result, web_url) if not e.ok]


def fingerprints(items: list[Entry], paths: dict[str, str] | None = None) -> list[str]:
    """A hash per entry of its findings file, what it says (citation text and
    anchors, or claim text) and its rule: never a line number, so moving a
    citation within its file keeps it. Identical entries in one file are told
    apart by their rank among themselves, which only changes when another of
    them is added or removed above."""
    seen: dict[tuple, int] = {}
    out = []
    for e in items:
        path = (paths or {}).get(e.source.file, e.source.file)
        key = (path, e.rule_id, *e.identity)
        rank = seen.get(key, 0)
        seen[key] = rank + 1
        out.append(hashlib.sha256(json.dumps([*key, rank]).encode("ascii")).hexdigest())
    return out


# -- the audit repository ----------------------------------------------------------------------


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


def base_dir(context) -> Path:
    """The folder findings paths are relative to: the context's root, else the working directory."""
    root = getattr(context, "root", None)
    return Path(root) if root is not None else Path.cwd()


def _git(cwd: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    out = done.stdout.strip()
    return out if done.returncode == 0 and out else None


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
    top = _git(root, "rev-parse", "--show-toplevel")
    if top is None:
        return None
    origin = _git(root, "remote", "get-url", "origin")
    return AuditRepository(
        toplevel=Path(top).resolve(),
        uri=clean_remote_url(origin) if origin else None,
        revision=_git(root, "rev-parse", "--verify", "-q", "HEAD^{commit}"),
    )

