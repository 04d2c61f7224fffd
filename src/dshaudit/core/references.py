"""What looking up a document's names, quoted code and absence claims found:
one `Reference` each (checking/references.py does the looking up)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dshaudit.core.diagnostics import Diagnostic, Place, permalink
from dshaudit.core.model import LineRange, Pin, SourceLocation
from dshaudit.core.status import DiagnosticStatus, Reach, Severity

E, W, N = Severity.ERROR, Severity.WARNING, Severity.NONE


class ReferenceStatus(DiagnosticStatus):
    """What looking up one name, fragment or absence claim found at the pin."""

    @property
    def family(self) -> str:
        return "reference"

    OK = ("ok", N)
    PHANTOM = (
        "phantom",
        E,
        "A name the document uses occurs nowhere at the pin.",
        "No text file at the pinned commit holds the name as a whole word, and the history search found no "
        "commit that deleted it. Fix the spelling, name what the code calls it, or, if the document means "
        "the name is absent, say so with `absent: NAME`.",
        Reach.NOWHERE,
    )
    DELETED = (
        "deleted",
        E,
        "A name the document uses was deleted before the pin.",
        "The name occurred in an earlier first-parent commit; the message says which commit removed it. "
        "Name what replaced it, or pin the document to a commit that still has it.",
        Reach.NOWHERE,
    )
    VALUE_DIFFERS = (
        "value_differs",
        E,
        "Quoted code gives a value the code does not.",
        "The quoted name is declared at the pin with another value; the message names the line. "
        "Quote the value the code has.",
        Reach.LINES,
    )
    NO_MATCH = (
        "no_match",
        E,
        "Quoted code matches no code at the pin.",
        "No code at the pinned commit has this structure (whitespace, quote style and trailing commas "
        "aside; an object may have more entries than quoted). Quote the code as it is, or write prose "
        "instead of code.",
        Reach.NOWHERE,
    )
    UNKNOWN_COMMIT = (
        "unknown_commit",
        W,
        "A commit the document names is not a commit of the DSH clone.",
        "The 7 to 40 hex digits name no commit the clone holds: a commit of another repository, one the "
        "clone has not fetched, or a mistyped id. Name a commit of DSH, or say whose commit it is.",
        Reach.NOWHERE,
    )
    DECLARED_ELSEWHERE = (
        "declared_elsewhere",
        E,
        "A name listed beside a linked file is declared in another file.",
        "The text ties the name to the file it links (the same sentence, list item or table row), and that "
        "file does not declare it at the pin; the message names the file and line that do. Link that file, "
        "or move the name beside it.",
        Reach.LINES,
    )
    NOT_DECLARED = (
        "not_declared",
        W,
        "A name listed beside a linked file is neither in it nor declared anywhere.",
        "The file linked beside the name does not hold it, and no file at the pin declares it: it may be "
        "a property, a string or a name of another project. Say what it is, or link where it comes from.",
        Reach.NOWHERE,
    )
    ABSENT_CONFIRMED = ("absent", N, "", "", Reach.NOWHERE)
    PRESENT = (
        "present",
        E,
        "A name the document says is absent occurs at the pin.",
        "The `absent:` claim is contradicted: the message names the first places that hold the name "
        "(any case, whole word). Correct the claim.",
        Reach.LINES,
    )


@dataclass(frozen=True)
class Reference:
    """One name, fragment or absence claim of a document, and what the pin says of it."""

    source: SourceLocation
    text: str
    kind: str  # identifier, dotted, package, string, path, commit, fragment, absence
    status: ReferenceStatus
    message: str
    place: tuple[str, LineRange] | None = None  # where in DSH the code is, when one place says it

    @property
    def ok(self) -> bool:
        return self.status.severity is Severity.NONE

    def as_dict(self) -> dict[str, Any]:
        return {
            "source": self.source.to_dict(),
            "text": self.text,
            "kind": self.kind,
            "status": self.status.value,
            "message": self.message,
        }

    def places(self, pin: Pin, web_url: str) -> tuple[Place, ...]:
        if self.place is None:
            return ()
        path, lines = self.place
        return (Place(pin, path, lines, permalink(web_url, pin.sha, path, lines)),)

    def diagnostic(self, pin: Pin, web_url: str) -> Diagnostic:
        return Diagnostic(
            kind="reference",
            source=self.source,
            status=self.status,
            message=self.message,
            target=f"`{self.text}`@{pin.name}",
            pin=pin,
            places_of=lambda: self.places(pin, web_url),
            identity=("reference", self.text),
            payload_of=self.as_dict,
        )
