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

from dshaudit.core.diagnostics import Diagnostic, Outcome, Summary, rules_of
from dshaudit.core.errors import InputError
from dshaudit.core.model import SourceLocation
from dshaudit.core.status import DiagnosticStatus, Reach, Severity
from dshaudit.documents.blocks import prose_chunks
from dshaudit.documents.claims import split_ref
from dshaudit.documents.codespans import code_spans
from dshaudit.documents.findings import (
    FindingsFile,
    citation_shaped,
    display_path,
    load_findings_file,
    no_citations_message,
)
from dshaudit.documents.frontmatter import FrontMatterError, parse_pin_line, split_front_matter
from dshaudit.documents.paths import SEGMENT, looks_like_path, path_problem
from dshaudit.facts.specs import load_specs
from dshaudit.git.pins import PinResolver
from dshaudit.platform.config import Config

E, W = Severity.ERROR, Severity.WARNING


class LintCode(DiagnosticStatus):
    """What lint finds. The codes a `check` status also names keep its spelling."""

    @property
    def family(self) -> str:
        return "format"

    MISSING_FRONT_MATTER = (
        "missing_front_matter",
        E,
        "The findings file has no front matter.",
        "Start the file with `---`, `pin: NAME`, `---`, so its citations have a pin.",
        Reach.NOWHERE,
    )
    MALFORMED_FRONT_MATTER = (
        "malformed_front_matter",
        E,
        "The front matter cannot be read.",
        "It must be a YAML mapping between two `---` lines; the message says what is wrong.",
        Reach.NOWHERE,
    )
    MISSING_PIN = (
        "missing_pin",
        E,
        "The front matter names no pin.",
        "Add `pin: NAME` with a pin of dshaudit.toml (or a full SHA).",
        Reach.NOWHERE,
    )
    UNREADABLE = (
        "unreadable_file",
        E,
        "The findings file cannot be read.",
        "It is missing, not UTF-8, too large, or a link out of the working directory.",
        Reach.NOWHERE,
    )
    UNKNOWN_PIN = (
        "unknown_pin",
        E,
        "A pin is not known.",
        "The front matter or an `@` suffix names no pin of dshaudit.toml and is not a full 40-hex SHA.",
        Reach.NOWHERE,
    )
    INVALID_CITATION = (
        "invalid_citation",
        E,
        "A citation is malformed.",
        "Write `path:N`, `path:N-M`, `path:a,b` or `path#Symbol`, with lines from 1, ranges forwards, and "
        "repository-relative paths.",
        Reach.NOWHERE,
    )
    INVALID_CLAIM = (
        "invalid_claim",
        E,
        "A claim cannot be read.",
        "A claim is `FACT[.FIELD] OP VALUE`; METHOD.md gives the grammar.",
        Reach.NOWHERE,
    )
    UNKNOWN_FACT = (
        "unknown_fact",
        E,
        "A claim names no known fact.",
        "`dshaudit facts` lists every fact; fix the name.",
        Reach.NOWHERE,
    )
    DUPLICATE_CLAIM = (
        "duplicate_claim",
        W,
        "The same claim is stated twice.",
        "State each claim once and refer to it elsewhere in words.",
        Reach.NOWHERE,
    )
    COMPILER_LOCATION = (
        "compiler_location",
        W,
        "A compiler-style location is not a citation.",
        "`path:line:col` is not checked; cite `path:line` with an anchor.",
        Reach.NOWHERE,
    )
    UNBACKED_SEARCH = (
        "unbacked_search",
        W,
        "A stated search result is not a claim.",
        "A sentence that says what a search returns (`git grep ... gives 3`) is checked only when it is a "
        "claim: write `claim: search(FLAGS 'PATTERN', 'PATHSPEC').count == 3` in its paragraph "
        "(METHOD.md, Searches as claims).",
        Reach.NOWHERE,
    )
    NO_CITATIONS = (
        "no_citations",
        W,
        "A file holds citation-shaped text but no citation was found.",
        "Text such as `path:12` stands in a code block or comment, is written in a form dshaudit does not "
        "read, or is broken by a character it cannot see; `check` would check nothing in it.",
        Reach.NOWHERE,
    )
    UNANCHORED = (
        "unanchored_citation",
        W,
        "A citation has no anchor.",
        "Only its path and line range are checked; add → `text on the line` or #Symbol.",
        Reach.NOWHERE,
    )


_PATH = rf"(?<![\w./:@\\\-+])(?P<path>/?(?:{SEGMENT}/)*{SEGMENT})"
# `path:` followed by anything but a line number: the grammar skips it, so `check` never sees it.
_EMPTY_LINES_RE = re.compile(_PATH + r":(?!\d)")
# `path:12:7`, as compilers and editors print locations: not a citation (a citation has no column).
_COMPILER_RE = re.compile(_PATH + r":(?P<line>\d+):(?P<col>\d+)")
# A code span right after an arrow or a `+` is an anchor: quoted DSH text, not something to lint.
_ANCHOR_LEAD_RE = re.compile(r"(?:→|->|\+)[ \t\n]*$")


def problem(file: str, line: int, column: int, code: LintCode, message: str) -> Diagnostic:
    return Diagnostic(
        kind="problem",
        source=SourceLocation(file, line, column),
        status=code,
        message=message,
        identity=("problem", message),
        payload_of=lambda: {
            "file": file,
            "line": line,
            "column": column,
            "severity": code.severity.value,
            "code": code.value,
            "message": message,
        },
    )


@dataclass(frozen=True)
class LintResult:
    files: tuple[str, ...]
    problems: tuple[Diagnostic, ...]

    def outcome(self, strict: bool = False) -> Outcome:
        errors = sum(1 for p in self.problems if p.severity is Severity.ERROR)
        warnings = sum(1 for p in self.problems if p.severity is Severity.WARNING)
        failed = bool(errors or (strict and warnings))
        line = f"{len(self.files)} files linted: {errors} errors, {warnings} warnings"
        if warnings:
            line += " (--strict: warnings fail)" if strict else " (warnings fail only with --strict)"
        counts = {"files": len(self.files), "errors": errors, "warnings": warnings, "strict": strict, "failed": failed}
        return Outcome(
            command="lint",
            diagnostics=self.problems,
            summary=Summary(
                line,
                counts,
                (("Files", str(len(self.files))), ("Errors", str(errors)), ("Warnings", str(warnings))),
                "Every findings file is well formed.",
            ),
            rules=rules_of(LintCode),
            strict=strict,
            sections=(("problems", ("problem",)),),
            files=self.files,
        )


def _line_col(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _front_matter_problems(f: FindingsFile, text: str, resolver: PinResolver) -> list[Diagnostic]:
    try:
        front, skip = split_front_matter(text, f.path)
    except InputError:  # load_findings_file already read it, so this does not happen
        return []
    if skip == 0:
        return [
            problem(
                f.path,
                1,
                1,
                LintCode.MISSING_FRONT_MATTER,
                "no YAML front matter: start the file with `---`, `pin: NAME`, `---`",
            )
        ]
    if f.pin is None:
        return [
            problem(
                f.path,
                1,
                1,
                LintCode.MISSING_PIN,
                f"front matter names no pin; add `pin: NAME` (pins: {resolver.config.describe_pins()})",
            )
        ]
    if resolver.resolve(f.pin) is None:
        written = parse_pin_line(text.split("\n")[f.pin_line - 1])
        column = len(written.key) + 1 if written else 1
        return [problem(f.path, f.pin_line, column, LintCode.UNKNOWN_PIN, resolver.unknown(f.pin))]
    return []


def _citation_problems(f: FindingsFile, resolver: PinResolver) -> list[Diagnostic]:
    out = []
    for c in f.citations:
        where = (f.path, c.source.line, c.source.column)
        found = []
        if c.problem:
            found.append(problem(*where, LintCode.INVALID_CITATION, f"`{c.text}`: {c.problem}"))
        bad_path = path_problem(c.path)
        if bad_path:
            found.append(problem(*where, LintCode.INVALID_CITATION, f"`{c.text}`: {bad_path}"))
        if c.pin_ref and resolver.resolve(c.pin_ref) is None:
            found.append(problem(*where, LintCode.UNKNOWN_PIN, f"`{c.text}`: {resolver.unknown(c.pin_ref)}"))
        if not found and not c.has_anchor and not c.quoted:
            found.append(
                problem(
                    *where,
                    LintCode.UNANCHORED,
                    f"`{c.text}` has no anchor: only its path and line range are checked; "
                    "add → `text on the line` or #Symbol",
                )
            )
        out += found
    return out


def _claim_problems(
    f: FindingsFile, known: set[str], seen: dict[tuple[object, ...], SourceLocation]
) -> list[Diagnostic]:
    out = []
    for claim in f.claims:
        where = (f.path, claim.source.line, claim.source.column)
        if claim.problem:
            out.append(problem(*where, LintCode.INVALID_CLAIM, f"`{claim.kind}: {claim.text}`: {claim.problem}"))
            continue
        fact_id, _field = split_ref(claim.ref, known)
        if fact_id is None:
            # Only the fact id can be known without measuring; a field is checked by `check`.
            close = difflib.get_close_matches(claim.ref.split(".")[0], sorted(known), n=1)
            close = close or difflib.get_close_matches(claim.ref, sorted(known), n=1)
            hint = f"; did you mean {close[0]}?" if close else " (see `dshaudit facts`)"
            out.append(
                problem(*where, LintCode.UNKNOWN_FACT, f"`{claim.kind}: {claim.text}`: no fact named {claim.ref}{hint}")
            )
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
            out.append(
                problem(*where, LintCode.DUPLICATE_CLAIM, f"`{claim.kind}: {claim.text}` is already stated at {first}")
            )
    return out


def _code_span_problems(shown: str, text: str, skip: int) -> list[Diagnostic]:
    """What the grammar passes over inside inline code in prose: `path:` and `path:12:7`."""
    out = []
    lines = text.split("\n")
    chunks, _ = prose_chunks(text, skip)
    for a, b in chunks:
        chunk = "\n".join(lines[a:b])
        for s_start, c_start, c_end, _s_end in code_spans(chunk):
            if _ANCHOR_LEAD_RE.search(chunk[max(0, s_start - 8) : s_start]):
                continue
            content = chunk[c_start:c_end]
            if content.lstrip().startswith(("claim:", "prior:")):
                continue
            for m in _EMPTY_LINES_RE.finditer(content):
                if looks_like_path(m.group("path")):
                    line, col = _line_col(chunk, c_start + m.start())
                    out.append(
                        problem(
                            shown,
                            a + line,
                            col,
                            LintCode.INVALID_CITATION,
                            f"`{m.group('path')}:` names no lines; write `path:N`, `path:N-M` or `path#Symbol`",
                        )
                    )
            for m in _COMPILER_RE.finditer(content):
                if looks_like_path(m.group("path")):
                    line, col = _line_col(chunk, c_start + m.start())
                    out.append(
                        problem(
                            shown,
                            a + line,
                            col,
                            LintCode.COMPILER_LOCATION,
                            f"`{m.group(0)}` looks like a compiler location (line:column), not a citation; "
                            f"cite `{m.group('path')}:{m.group('line')}` with an anchor",
                        )
                    )
    return out


# A search someone ran and reports: a shell command in a code span.
# (`git log -S` searches history, which a claim at one pin cannot state: it is left to the prose.)
_SEARCH_COMMAND_RE = re.compile(r"^\s*(?:git\s+(?:grep|ls-tree|ls-files)|grep|rg|ag)\b|\|\s*(?:grep|wc)\b")
_SENTENCE_END_RE = re.compile(r"[.!?。](?=\s|$)")
_NUMBER_WORDS = (
    "nothing|none|no\\s+(?:lines?|hits?|matches|results?|files?)"
    "|zero|one|two|three|four|five|six|seven|eight|nine|ten|\\d[\\d,]*"
)
# What it returned: a verb and a count, or a count of lines, files, hits or matches.
_SEARCH_RESULT_RE = re.compile(
    rf"\b(?:returns?|gives?|yields?|finds?|prints?|lists?|matches|shows?|reports?)\s+(?:only\s+|exactly\s+)?(?:{_NUMBER_WORDS})\b"
    rf"|\b(?:{_NUMBER_WORDS})\s+(?:lines?|files?|hits?|matches|results?|occurrences)\b",
    re.IGNORECASE,
)


def _stated_search_problems(shown: str, text: str, skip: int) -> list[Diagnostic]:
    """A paragraph that runs a search and says what it returned, with no claim to check it."""
    out = []
    lines = text.split("\n")
    chunks, _ = prose_chunks(text, skip)
    for a, b in chunks:
        start = a
        for end in [i for i in range(a, b) if not lines[i].strip()] + [b]:
            paragraph = "\n".join(lines[start:end])
            offset, start = start, end + 1
            if "claim:" in paragraph or "prior:" in paragraph or not _SEARCH_RESULT_RE.search(paragraph):
                continue
            for _s, c_start, c_end, _e in code_spans(paragraph):
                command = paragraph[c_start:c_end]
                if _SEARCH_COMMAND_RE.search(command):
                    # What the search returned is said in the sentence that runs it.
                    start = max((m.end() for m in _SENTENCE_END_RE.finditer(paragraph, 0, c_start)), default=0)
                    end = next((m.end() for m in _SENTENCE_END_RE.finditer(paragraph, c_end)), len(paragraph))
                    said = _SEARCH_RESULT_RE.search(paragraph, start, end)
                    if said is None:
                        continue
                    line, col = _line_col(paragraph, c_start)
                    out.append(
                        problem(
                            shown,
                            offset + line,
                            col,
                            LintCode.UNBACKED_SEARCH,
                            f"`{command[:60]}{'…' if len(command) > 60 else ''}` is said to give "
                            f'"{" ".join(said.group(0).split())}", which no claim in the paragraph checks',
                        )
                    )
                    break
    return out


def _lint_one(
    path: Path, resolver: PinResolver, known: set[str], seen: dict[tuple[object, ...], SourceLocation]
) -> tuple[str, list[Diagnostic]]:
    shown = display_path(path)
    try:
        f = load_findings_file(path, resolver.config.web_url)
    except InputError as exc:
        code = LintCode.MALFORMED_FRONT_MATTER if isinstance(exc, FrontMatterError) else LintCode.UNREADABLE
        return shown, [problem(exc.file or shown, exc.line or 1, 1, code, exc.what)]
    text = f.text  # as load_findings_file read it (BOM dropped, line ends folded)
    _, skip = split_front_matter(text, shown)
    problems = _front_matter_problems(f, text, resolver)
    problems += _citation_problems(f, resolver)
    problems += _claim_problems(f, known, seen)
    problems += _code_span_problems(f.path, text, skip)
    problems += _stated_search_problems(f.path, text, skip)
    shaped = None if f.citations else citation_shaped(text, skip)
    if shaped is not None and not any(p.source.line == shaped[0] for p in problems):  # not said twice
        problems.append(problem(f.path, shaped[0], 1, LintCode.NO_CITATIONS, no_citations_message(*shaped)))
    return f.path, problems


def lint(files: list[Path], config: Config, known_facts: set[str] | None = None) -> LintResult:
    """Lint the findings files (already expanded by `collect_markdown`), in order.
    No repository: pins are names and full SHAs of dshaudit.toml only."""
    if known_facts is None:
        known_facts = set(load_specs())
    resolver = PinResolver(config)
    seen: dict[tuple[object, ...], SourceLocation] = {}
    shown_files = []
    problems: list[Diagnostic] = []
    for path in files:
        shown, found = _lint_one(path, resolver, known_facts, seen)
        shown_files.append(shown)
        problems += sorted(found, key=lambda p: (p.source.line, p.source.column, str(p.status)))
    return LintResult(tuple(shown_files), tuple(problems))


def default_paths(config: Config, paths: tuple[Path, ...]) -> list[Path]:
    if paths:
        return list(paths)
    default = config.root / "findings"
    if not default.is_dir():
        raise InputError(f"no PATHS given and no findings/ folder at {config.root}")
    return [default]
