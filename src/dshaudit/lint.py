"""`dshaudit lint`: the format of findings files, checked without DSH.

Lint reads only the findings files and dshaudit.toml; it never opens a
repository, so it runs in a second on a contributor's machine or in a
pre-commit hook. It catches what `check` would only report after a clone:
a missing or unknown pin, a malformed citation or claim, a fact id that does
not exist. It also flags what `check` cannot see at all, because the grammar
does not take it for a citation: `path:` with no lines, and compiler-style
`path:line:col` locations. A file that cannot be read is one problem, and
the other files are still linted.

Severity: an error makes `lint` exit 1; a warning only with `--strict`.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from pathlib import Path

from .claims import split_ref
from .config import Config
from .errors import InputError
from .findings import FindingsFile, _prose_chunks, display_path, load_findings_file, split_front_matter
from .grammar import _SEGMENT, code_spans, looks_like_path
from .verify import path_problem

ERROR = "error"
WARNING = "warning"

# Codes. The ones a `check` status also names keep that status's spelling.
MISSING_FRONT_MATTER = "missing_front_matter"
MALFORMED_FRONT_MATTER = "malformed_front_matter"
MISSING_PIN = "missing_pin"
UNREADABLE = "unreadable_file"
UNKNOWN_PIN = "unknown_pin"
INVALID_CITATION = "invalid_citation"
INVALID_CLAIM = "invalid_claim"
UNKNOWN_FACT = "unknown_fact"
DUPLICATE_CLAIM = "duplicate_claim"
COMPILER_LOCATION = "compiler_location"
UNANCHORED = "unanchored_citation"

_PATH = rf"(?<![\w./:@\\\-+])(?P<path>/?(?:{_SEGMENT}/)*{_SEGMENT})"
# `path:` followed by anything but a line number: the grammar skips it, so `check` never sees it.
_EMPTY_LINES_RE = re.compile(_PATH + r":(?!\d)")
# `path:12:7`, as compilers and editors print locations: not a citation (a citation has no column).
_COMPILER_RE = re.compile(_PATH + r":(?P<line>\d+):(?P<col>\d+)")
# A code span right after an arrow or a `+` is an anchor: quoted DSH text, not something to lint.
_ANCHOR_LEAD_RE = re.compile(r"(?:→|->|\+)[ \t\n]*$")
_LOCATED_RE = re.compile(r"^:(\d+): ")


@dataclass(frozen=True, order=True)
class Problem:
    file: str
    line: int
    column: int
    severity: str  # "error" or "warning"
    code: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}: {self.severity}: {self.code}: {self.message}"

    def as_dict(self) -> dict:
        return {
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "severity": self.severity,
            "code": self.code,
            "message": self.message,
        }


@dataclass(frozen=True)
class LintResult:
    files: tuple[str, ...]
    problems: tuple[Problem, ...]

    @property
    def errors(self) -> tuple[Problem, ...]:
        return tuple(p for p in self.problems if p.severity == ERROR)

    @property
    def warnings(self) -> tuple[Problem, ...]:
        return tuple(p for p in self.problems if p.severity == WARNING)

    def failed(self, strict: bool = False) -> bool:
        return bool(self.errors or (strict and self.warnings))

    def summary(self, strict: bool = False) -> str:
        e, w = len(self.errors), len(self.warnings)
        line = f"{len(self.files)} files linted: {e} errors, {w} warnings"
        if w:
            line += " (--strict: warnings fail)" if strict else " (warnings fail only with --strict)"
        return line


def _read_text(path: Path) -> str | None:
    """The file as load_findings_file sees it (CRLF folded, BOM dropped), or None."""
    try:
        return path.read_bytes().decode("utf-8").replace("\r\n", "\n").lstrip("\ufeff")
    except (OSError, UnicodeDecodeError):
        return None


def _input_problem(shown: str, exc: Exception, code: str) -> Problem:
    """An InputError's message (`shown:LINE: what`) as a problem at that line."""
    message = str(exc)
    line = 1
    if message.startswith(shown):
        rest = message[len(shown):]
        m = _LOCATED_RE.match(rest)
        if m:
            line, message = int(m.group(1)), rest[m.end():]
        else:
            message = rest.removeprefix(": ")
    return Problem(shown, line, 1, ERROR, code, message)


def _line_col(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _front_matter_problems(f: FindingsFile, text: str, config: Config) -> list[Problem]:
    try:
        front, skip = split_front_matter(text, f.path)
    except InputError:  # load_findings_file already read it, so this does not happen
        return []
    if skip == 0:
        return [Problem(f.path, 1, 1, ERROR, MISSING_FRONT_MATTER,
                        "no YAML front matter: start the file with `---`, `pin: NAME`, `---`")]
    if f.pin is None:
        return [Problem(f.path, 1, 1, ERROR, MISSING_PIN,
                        f"front matter names no pin; add `pin: NAME` (pins: {config.describe_pins()})")]
    if config.resolve_pin(f.pin) is None:
        line, column = 1, 1
        for i, ln in enumerate(text.split("\n")[1:skip - 1], start=2):
            m = re.match(r"^pin[ \t]*:[ \t]*", ln)
            if m:
                line, column = i, m.end() + 1
                break
        return [Problem(f.path, line, column, ERROR, UNKNOWN_PIN, _unknown_pin(f.pin, config))]
    return []


def _unknown_pin(ref: str, config: Config) -> str:
    why = "a short SHA is not a pin" if re.fullmatch(r"[0-9a-f]{7,39}", ref) else "nor a full 40-hex SHA"
    return f"pin {ref!r} is not in dshaudit.toml ({config.describe_pins()}), {why}"


def _citation_problems(f: FindingsFile, config: Config) -> list[Problem]:
    out = []
    for c in f.citations:
        where = (f.path, c.source.line, c.source.column)
        found = []
        if c.problem:
            found.append(Problem(*where, ERROR, INVALID_CITATION, f"`{c.text}`: {c.problem}"))
        problem = path_problem(c.path)
        if problem:
            found.append(Problem(*where, ERROR, INVALID_CITATION, f"`{c.text}`: {problem}"))
        if c.pin_ref and config.resolve_pin(c.pin_ref) is None:
            found.append(Problem(*where, ERROR, UNKNOWN_PIN, f"`{c.text}`: {_unknown_pin(c.pin_ref, config)}"))
        if not found and not c.has_anchor:
            found.append(Problem(
                *where, WARNING, UNANCHORED,
                f"`{c.text}` has no anchor: only its path and line range are checked; "
                "add → `text on the line` or #Symbol",
            ))
        out += found
    return out


def _claim_problems(f: FindingsFile, known: set[str], seen: dict) -> list[Problem]:
    out = []
    for claim in f.claims:
        where = (f.path, claim.source.line, claim.source.column)
        if claim.problem:
            out.append(Problem(*where, ERROR, INVALID_CLAIM, f"`{claim.kind}: {claim.text}`: {claim.problem}"))
            continue
        fact_id, _field = split_ref(claim.ref, known)
        if fact_id is None:
            # Only the fact id can be known without measuring; a field is checked by `check`.
            close = difflib.get_close_matches(claim.ref.split(".")[0], sorted(known), n=1)
            close = close or difflib.get_close_matches(claim.ref, sorted(known), n=1)
            hint = f"; did you mean {close[0]}?" if close else " (see `dshaudit facts`)"
            out.append(Problem(*where, ERROR, UNKNOWN_FACT, f"`{claim.kind}: {claim.text}`: no fact named {claim.ref}{hint}"))
            continue
        # The same statement twice, however it is spelled (`2,589` is `2589`; sets ignore order).
        try:
            key = (claim.kind, claim.ref, claim.op, claim.expected)
            hash(key)
        except TypeError:
            continue
        first = seen.get(key)
        if first is None:
            seen[key] = claim.source
        else:
            out.append(Problem(*where, WARNING, DUPLICATE_CLAIM,
                               f"`{claim.kind}: {claim.text}` is already stated at {first}"))
    return out


def _code_span_problems(shown: str, text: str, skip: int) -> list[Problem]:
    """What the grammar passes over inside inline code in prose: `path:` and `path:12:7`."""
    out = []
    lines = text.split("\n")
    chunks, _ = _prose_chunks(text, skip)
    for a, b in chunks:
        chunk = "\n".join(lines[a:b])
        for s_start, c_start, c_end, _s_end in code_spans(chunk):
            if _ANCHOR_LEAD_RE.search(chunk[max(0, s_start - 8):s_start]):
                continue
            content = chunk[c_start:c_end]
            if content.lstrip().startswith(("claim:", "prior:")):
                continue
            for m in _EMPTY_LINES_RE.finditer(content):
                if looks_like_path(m.group("path")):
                    line, col = _line_col(chunk, c_start + m.start())
                    out.append(Problem(
                        shown, a + line, col, ERROR, INVALID_CITATION,
                        f"`{m.group('path')}:` names no lines; write `path:N`, `path:N-M` or `path#Symbol`",
                    ))
            for m in _COMPILER_RE.finditer(content):
                if looks_like_path(m.group("path")):
                    line, col = _line_col(chunk, c_start + m.start())
                    out.append(Problem(
                        shown, a + line, col, WARNING, COMPILER_LOCATION,
                        f"`{m.group(0)}` looks like a compiler location (line:column), not a citation; "
                        f"cite `{m.group('path')}:{m.group('line')}` with an anchor",
                    ))
    return out


def _lint_one(path: Path, config: Config, known: set[str], seen: dict) -> tuple[str, list[Problem]]:
    shown = display_path(path)
    try:
        f = load_findings_file(path)
    except InputError as exc:
        code = MALFORMED_FRONT_MATTER if "front matter" in str(exc) else UNREADABLE
        return shown, [_input_problem(shown, exc, code)]
    text = _read_text(path) or ""
    _, skip = split_front_matter(text, shown)
    problems = _front_matter_problems(f, text, config)
    problems += _citation_problems(f, config)
    problems += _claim_problems(f, known, seen)
    problems += _code_span_problems(f.path, text, skip)
    return f.path, problems


def lint(files: list[Path], config: Config, known_facts: set[str] | None = None) -> LintResult:
    """Lint the findings files (already expanded by `collect_markdown`), in order."""
    if known_facts is None:
        from .facts import registry

        known_facts = set(registry())
    seen: dict = {}
    shown_files = []
    problems: list[Problem] = []
    for path in files:
        shown, found = _lint_one(path, config, known_facts, seen)
        shown_files.append(shown)
        problems += sorted(found, key=lambda p: (p.line, p.column, p.code))
    return LintResult(tuple(shown_files), tuple(problems))


def default_paths(config: Config, paths) -> list[Path]:
    if paths:
        return list(paths)
    default = config.root / "findings"
    if not default.is_dir():
        raise InputError(f"no PATHS given and no findings/ folder at {config.root}")
    return [default]


__all__ = ["Problem", "LintResult", "lint", "default_paths", "ERROR", "WARNING"]
