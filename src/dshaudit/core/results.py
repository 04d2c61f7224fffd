"""The result of one check, and its totals: counted here once for every format and the report."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dshaudit.core.model import ClaimStatus, ClaimVerdict, Pin, Verdict
from dshaudit.core.references import Reference
from dshaudit.core.status import Severity


@dataclass(frozen=True)
class CheckSummary:
    """The totals of one check, counted once for every format and the report."""

    files: int
    citations: int
    citations_failed: int  # errors: they fail the check
    claims: int  # `claim:` and `prior:` together
    claims_failed: int
    claim_statuses: dict[str, int]  # every ClaimStatus value, zero included, in declaration order
    own_claims: int  # `claim:` only
    own_confirmed: int
    prior_claims: int
    prior_confirmed: int
    prior_contradicted: int
    citations_warned: int = 0  # warnings (suspect, unpinned): they fail only under --strict
    citations_quoted: int = 0  # other documents' citations that do not hold: reported, never failing
    references: int = 0  # names and quoted code looked up
    references_failed: int = 0

    @property
    def citations_ok(self) -> int:
        return self.citations - self.citations_failed - self.citations_warned - self.citations_quoted

    @property
    def failed(self) -> int:
        return self.citations_failed + self.claims_failed + self.references_failed

    @property
    def references_line(self) -> str:
        return (
            f"{self.references} names and quoted code: {self.references - self.references_failed} ok, "
            f"{self.references_failed} failed"
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "total": self.citations,
            "ok": self.citations_ok,
            "failed": self.citations_failed,
            **({"warnings": self.citations_warned} if self.citations_warned else {}),
            **({"quoted": self.citations_quoted} if self.citations_quoted else {}),
            "claims": {"total": self.claims, "failed": self.claims_failed, **self.claim_statuses},
            **({"references": {"total": self.references, "failed": self.references_failed}} if self.references else {}),
        }

    @property
    def citations_line(self) -> str:
        """`763 in 10 files: 758 ok, 5 quoted (do not hold; reported only), 0 failed`."""
        parts = [f"{self.citations_ok} ok"]
        if self.citations_warned:
            parts.append(f"{self.citations_warned} warnings")
        if self.citations_quoted:
            parts.append(f"{self.citations_quoted} quoted (do not hold; reported only)")
        return f"{self.citations} in {self.files} files: {', '.join(parts)}, {self.citations_failed} failed"

    @property
    def line(self) -> str:
        line = f"{self.citations} citations" + self.citations_line.removeprefix(str(self.citations))
        if self.claims:
            parts = ", ".join(f"{n} {status}" for status, n in sorted(self.claim_statuses.items()) if n)
            line += f"; {self.claims} claims: {parts}; {self.claims_failed} failed"
        if self.references:
            line += f"; {self.references_line}"
        return line


@dataclass(frozen=True)
class CheckResult:
    verdicts: tuple[Verdict, ...]
    claims: tuple[ClaimVerdict, ...] = ()
    # Names and quoted code of the documents, each with the pin it was looked up at.
    references: tuple[tuple[Pin, Reference], ...] = ()

    @property
    def failed_references(self) -> tuple[Reference, ...]:
        return tuple(r for _, r in self.references if r.status.severity is Severity.ERROR)

    @property
    def failed(self) -> tuple[Verdict, ...]:
        """Citations that fail the check: an error, in a citation of this document's own."""
        return tuple(v for v in self.verdicts if v.status.severity is Severity.ERROR and not v.citation.quoted)

    @property
    def warned(self) -> tuple[Verdict, ...]:
        return tuple(v for v in self.verdicts if v.status.severity is Severity.WARNING and not v.citation.quoted)

    @property
    def quoted(self) -> tuple[Verdict, ...]:
        return tuple(v for v in self.verdicts if v.citation.quoted and not v.ok)

    @property
    def failed_claims(self) -> tuple[ClaimVerdict, ...]:
        return tuple(c for c in self.claims if not c.ok)

    @property
    def ok(self) -> bool:
        return not self.failed and not self.failed_claims and not self.failed_references

    def summary(self) -> CheckSummary:
        files = {v.citation.source.file for v in self.verdicts} | {c.claim.source.file for c in self.claims}
        prior = [c for c in self.claims if c.claim.kind == "prior"]
        return CheckSummary(
            files=len(files),
            citations=len(self.verdicts),
            citations_failed=len(self.failed),
            citations_warned=len(self.warned),
            citations_quoted=len(self.quoted),
            claims=len(self.claims),
            claims_failed=len(self.failed_claims),
            claim_statuses={s.value: sum(1 for c in self.claims if c.status is s) for s in ClaimStatus},
            own_claims=len(self.claims) - len(prior),
            own_confirmed=sum(1 for c in self.claims if c.claim.kind == "claim" and c.ok),
            prior_claims=len(prior),
            prior_confirmed=sum(1 for c in prior if c.status is ClaimStatus.CONFIRMED),
            prior_contradicted=sum(1 for c in prior if c.status is ClaimStatus.CONTRADICTED),
            references=len(self.references),
            references_failed=len(self.failed_references),
        )
