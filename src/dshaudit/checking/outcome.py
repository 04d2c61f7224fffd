"""A check's verdicts as diagnostics, and what it did not check (`coverage`)."""

from __future__ import annotations

from dshaudit.core.diagnostics import Diagnostic, Outcome, Place, Summary, permalink, rules_of
from dshaudit.core.model import ClaimStatus, LineRange, SourceLocation, Status, Verdict
from dshaudit.core.results import CheckResult
from dshaudit.core.status import DiagnosticStatus, Reach, Severity
from dshaudit.documents.findings import FindingsFile


def citation_places(v: Verdict, web_url: str) -> tuple[Place, ...]:
    """The cited lines at the pin (the file only, when its lines mean nothing; nothing without a file)."""
    c, pin = v.citation, v.pin
    if pin is None or v.status.reach is Reach.NOWHERE:
        return ()
    ranges: tuple[LineRange | None, ...] = ()
    if v.status.reach is Reach.LINES:
        ranges = v.resolved_lines or c.lines
    return tuple(Place(pin, v.path, r, permalink(web_url, pin.sha, v.path, r)) for r in ranges or (None,))


def citation_diagnostic(v: Verdict, web_url: str) -> Diagnostic:
    c = v.citation
    pin_name = v.pin.name if v.pin else (c.pin_ref or "?")
    return Diagnostic(
        kind="citation",
        source=c.source,
        status=v.status,
        message=v.message,
        target=f"{c.target_text}@{pin_name}",
        pin=v.pin,
        places_of=lambda: citation_places(v, web_url),
        identity=("citation", c.text, *c.anchors),
        payload_of=v.as_dict,
        # Another document's citation, quoted to be corrected: reported as it stands, never a failure here.
        severity_override=Severity.NOTE if c.quoted and not v.ok else None,
    )


class Coverage(DiagnosticStatus):
    """What a check read: a run that checked nothing says so, never exits 0 in silence."""

    @property
    def family(self) -> str:
        return "coverage"

    NO_CITATIONS = (
        "no_citations",
        Severity.WARNING,
        "A file holds citation-shaped text but no citation was found.",
        "Text such as `path:12` stands in a code block or comment, is written in a form dshaudit does not "
        "read, or is broken by a character it cannot see. Write it as METHOD.md says; under --strict this fails.",
        Reach.NOWHERE,
    )
    NOTHING_CHECKED = (
        "nothing_checked",
        Severity.WARNING,
        "The PATHS given hold no citation.",
        "Nothing was checked against DSH: the files hold no citation dshaudit reads (or there are no Markdown "
        "files). Check the paths; under --strict this fails.",
        Reach.NOWHERE,
    )


def coverage(files: list[FindingsFile], result: CheckResult, paths: tuple[str, ...]) -> tuple[Diagnostic, ...]:
    """Warnings for what was not checked: a file with citation-shaped text and
    no citation; no citation at all in PATHS the user named."""
    from dshaudit.documents.findings import citation_shaped, no_citations_message
    from dshaudit.documents.frontmatter import split_front_matter

    def warning(status: Coverage, where: SourceLocation, message: str) -> Diagnostic:
        return Diagnostic(
            "coverage",
            where,
            status,
            message,
            identity=("coverage", str(status)),
            payload_of=lambda: {"source": where.to_dict(), "status": status.value, "message": message},
        )

    out = []
    for f in files:
        if f.citations:
            continue
        shaped = citation_shaped(f.text, split_front_matter(f.text, f.path)[1])
        if shaped is not None:
            out.append(
                warning(Coverage.NO_CITATIONS, SourceLocation(f.path, shaped[0], 1), no_citations_message(*shaped))
            )
    # A document with names or claims but no citation was checked all the same: only nothing at all is said.
    if paths and not (result.verdicts or result.references or result.claims):
        where = SourceLocation(files[0].path if files else paths[0], 1, 1)
        named = ", ".join(paths)
        what = (
            f"its {len(files)} Markdown file{'s hold' if len(files) > 1 else ' holds'} no citation, name or claim "
            "dshaudit reads"
            if files
            else "it holds no Markdown file"
        )
        out.append(warning(Coverage.NOTHING_CHECKED, where, f"nothing checked in {named}: {what}"))
    return tuple(out)


def check_statuses() -> tuple[type[DiagnosticStatus], ...]:
    """The statuses a check's outcome can hold, in the order its rules are listed."""
    from dshaudit.core.references import ReferenceStatus

    return (Status, ClaimStatus, ReferenceStatus, Coverage)


def check_outcome(
    result: CheckResult,
    web_url: str,
    strict: bool = False,
    command: str = "check",
    coverage: tuple[Diagnostic, ...] = (),
) -> Outcome:
    """A check's verdicts as diagnostics: citations, then claims, each in file
    order; then what was not checked (`coverage`)."""
    from dshaudit.documents.claims import claim_diagnostic

    s = result.summary()
    bullets = [("Citations", s.citations_line)]
    if s.claims:
        counts = ", ".join(f"{n} {status}" for status, n in s.claim_statuses.items() if n)
        bullets.append(("Claims", f"{s.claims}: {counts}; {s.claims_failed} failed"))
    if s.references:
        bullets.append(("Names", s.references_line))
    diagnostics = [citation_diagnostic(v, web_url) for v in result.verdicts]
    diagnostics += [claim_diagnostic(v, web_url) for v in result.claims]
    diagnostics += [r.diagnostic(pin, web_url) for pin, r in result.references]
    diagnostics += coverage
    sections = (("citations", ("citation",)), ("claims", ("claim",)), ("references", ("reference",)))
    return Outcome(
        command=command,
        diagnostics=tuple(diagnostics),
        summary=Summary(s.line, s.as_dict(), tuple(bullets), "Every citation and claim holds."),
        rules=rules_of(*check_statuses()),
        strict=strict,
        sections=sections + ((("coverage", ("coverage",)),) if coverage else ()),
        files=tuple(sorted({d.source.file for d in diagnostics})),
    )
