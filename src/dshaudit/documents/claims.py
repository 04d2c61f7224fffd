"""Claims: what a finding says a fact's value is, checked against the measurement.

In Markdown a claim is an inline code span:

    `claim: core.context-builtin-services.count == 5`
    `claim: session.surface-op-kinds.agent_loop == {append}`
    `prior: workspace.packages.count == 239`

`claim:` must hold for `check` to pass. `prior:` records what the prior audit
said; it is evaluated and reported (confirmed or contradicted) but does not
fail the gate, since settling it either way is the point.

The left side is a fact id, optionally followed by `.field`. Operators:
`==`, `!=`, `<`, `<=`, `>`, `>=`, `contains`, `excludes`. Values: numbers
(`2,589` and `600_000` are numbers), 'strings' or "strings", bare words,
`true`, `false`, `null`, sets `{a, b}` (order ignored) and lists `[a, b]`.
"""

from __future__ import annotations

import re
from functools import lru_cache

from dshaudit.core.diagnostics import MAX_PLACES, Diagnostic, Place, permalink
from dshaudit.core.model import Claim, ClaimStatus, ClaimVerdict, Fact, FactStatus, Pin, SourceLocation, merge_evidence
from dshaudit.core.status import Severity
from dshaudit.documents import searches

# Possessive quantifiers: a span or expression that does not match fails at
# once, never by trying every way to split a run of spaces (quadratic time).
CLAIM_SPAN_RE = re.compile(r"(?<!`)`(claim|prior):([^`]++)`(?!`)")
# A claim's code span that opens on a line and does not close there.
_BROKEN_CLAIM_RE = re.compile(r"(?<!`)`(claim|prior):[^`]*$")
# The left side: a fact id with an optional field, or a search (search.py): `search(...)`/`files(...)`,
# whose quoted arguments may hold any character but their own quote.
_LEFT = r"""(?:search|files|tree-docs)\((?:[^()'"]|'[^']*+'|"[^"]*+")*+\)(?:\.[A-Za-z_]\w*)?|[A-Za-z][\w.\-/]*"""
_EXPR_RE = re.compile(rf"^\s*+({_LEFT})\s*+(==|!=|<=|>=|<|>|\bcontains\b|\bexcludes\b)\s*+(.*\S)\s*$")
_NUMBER_RE = re.compile(r"^-?(\d{1,3}(,\d{3})+|\d[\d_]*)(\.\d+)?$")

# Limits on a claim (SECURITY.md): beyond them a findings file is refused, with its line.
MAX_CLAIM_CHARS = 1000
MAX_NUMBER_DIGITS = 64  # no count or size measured in DSH comes near
MAX_VALUE_DEPTH = 8  # sets and lists inside one another
_LONG_NUMBER_RE = re.compile(rf"\d[\d,_]{{{MAX_NUMBER_DIGITS},}}")


class ClaimSyntaxError(ValueError):
    pass


def limit_problem(expression: str) -> str | None:
    """Why a claim is beyond what dshaudit reads, if it is: too long, a
    number too long, values nested too deep. Linear in its length."""
    if len(expression) > MAX_CLAIM_CHARS:
        return f"a claim of {len(expression)} characters is longer than the {MAX_CLAIM_CHARS} dshaudit reads"
    m = _LONG_NUMBER_RE.search(expression)
    if m and sum(ch.isdigit() for ch in m.group()) > MAX_NUMBER_DIGITS:
        return f"a number of more than {MAX_NUMBER_DIGITS} digits is beyond anything dshaudit measures"
    depth = deepest = 0
    for ch in expression:
        if ch in "{[":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "}]":
            depth -= 1
    if deepest > MAX_VALUE_DEPTH:
        return f"values nested {deepest} deep; at most {MAX_VALUE_DEPTH}"
    return None


def parse_value(text: str, depth: int = 0) -> object:
    text = text.strip()
    if not text:
        raise ClaimSyntaxError("missing value")
    if text[0] in "{[":
        if depth >= MAX_VALUE_DEPTH:
            raise ClaimSyntaxError(f"values nested more than {MAX_VALUE_DEPTH} deep")
        close = "}" if text[0] == "{" else "]"
        if text[-1] != close:
            raise ClaimSyntaxError(f"{text[0]} is never closed")
        inner = text[1:-1].strip()
        items = [parse_value(x, depth + 1) for x in _split_items(inner)] if inner else []
        return frozenset(items) if close == "}" else tuple(items)
    if text[0] in "'\"":
        if len(text) < 2 or text[-1] != text[0]:
            raise ClaimSyntaxError(f"unterminated string {text}")
        return text[1:-1]
    if _NUMBER_RE.match(text):
        clean = text.replace(",", "").replace("_", "")
        if sum(ch.isdigit() for ch in clean) > MAX_NUMBER_DIGITS:
            raise ClaimSyntaxError(f"a number of more than {MAX_NUMBER_DIGITS} digits")
        return float(clean) if "." in clean else int(clean)
    if text in ("true", "false"):
        return text == "true"
    if text == "null":
        return None
    return text


def _split_items(inner: str) -> list[str]:
    """Split on commas that are not inside quotes or nested brackets."""
    items, depth, quote, start = [], 0, None, 0
    for i, ch in enumerate(inner):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
        elif ch == "," and depth == 0:
            items.append(inner[start:i])
            start = i + 1
    items.append(inner[start:])
    return [x for x in (s.strip() for s in items) if x]


def parse_claim(kind: str, expression: str, source: SourceLocation) -> Claim:
    beyond = limit_problem(expression)
    if beyond:
        return Claim(kind, expression[:80], "", "", None, source, beyond)
    m = _EXPR_RE.match(expression)
    if not m:
        return Claim(
            kind, expression, "", "", None, source, "expected FACT[.FIELD] OP VALUE, e.g. `claim: x.count == 5`"
        )
    ref, op, raw = m.groups()
    try:
        expected = parse_value(raw)
        searched = searches.split(ref)
        if searched:
            searches.parse(searched[0])
    except (ClaimSyntaxError, searches.SearchSyntaxError) as exc:
        return Claim(kind, expression, ref, op, None, source, str(exc))
    return Claim(kind, expression.strip(), ref, op, expected, source)


def claims_in_text(text: str, line_offset: int, display_path: str) -> list[Claim]:
    """The claims of a chunk of prose; an InputError (with its line) for one beyond the limits."""
    return list(_claims_in_text(text, line_offset, display_path))


# Remembered by chunk, as its citations and names are: the language server reads a document
# again at each keystroke, and all of its chunks but one are as they were, on the same lines.
@lru_cache(maxsize=4096)
def _claims_in_text(text: str, line_offset: int, display_path: str) -> tuple[Claim, ...]:
    from dshaudit.core.errors import InputError

    out = []
    lines = text.split("\n")
    for i, line in enumerate(lines):
        broken = _BROKEN_CLAIM_RE.search(line)
        if broken and i + 1 < len(lines):
            # `claim: ...` whose code span closes on a later line: written so, it is not read as a
            # claim, and a claim nobody checks must not pass in silence.
            where = SourceLocation(display_path, line_offset + i + 1, broken.start() + 1)
            out.append(
                Claim(
                    broken.group(1),
                    line[broken.end(1) + 1 :].strip(),
                    "",
                    "",
                    None,
                    where,
                    f"`{broken.group(1)}:` runs over a line break: write a claim on one line",
                )
            )
        for m in CLAIM_SPAN_RE.finditer(line):
            expression = m.group(2).lstrip(" \t")
            beyond = limit_problem(expression)
            if beyond:
                raise InputError(f"`{m.group(1)}:` {beyond}", file=display_path, line=line_offset + i + 1)
            out.append(
                parse_claim(m.group(1), expression, SourceLocation(display_path, line_offset + i + 1, m.start() + 1))
            )
    return tuple(out)


def split_ref(ref: str, known: set[str]) -> tuple[str | None, str | None]:
    """`a.b-c.field` -> (`a.b-c`, `field`): the longest known fact id wins.
    A search (`search(...).files`) is a fact of its own, known by its text."""
    searched = searches.split(ref)
    if searched:
        return searched
    parts = ref.split(".")
    for n in range(len(parts), 0, -1):
        candidate = ".".join(parts[:n])
        if candidate in known:
            rest = ".".join(parts[n:])
            return candidate, rest or None
    return None, None


def _normalise(value: object) -> object:
    if isinstance(value, dict):
        return {k: _normalise(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return tuple(_normalise(v) for v in value)
    return value


def compare(measured: object, op: str, expected: object) -> bool:
    measured = _normalise(measured)
    if op in ("==", "!="):
        if isinstance(expected, frozenset):
            same = isinstance(measured, (tuple, dict)) and frozenset(measured) == expected
        else:
            same = measured == expected
        return same if op == "==" else not same
    if op in ("contains", "excludes"):
        wanted = expected if isinstance(expected, (frozenset, tuple)) else (expected,)
        if isinstance(measured, str):
            present = all(str(w) in measured for w in wanted)
            absent = all(str(w) not in measured for w in wanted)
        elif isinstance(measured, (tuple, dict)):
            present = all(w in measured for w in wanted)
            absent = all(w not in measured for w in wanted)
        else:
            raise TypeError(f"`{op}` needs a list, set or text; the measured value is {show(measured)}")
        return present if op == "contains" else absent
    if not isinstance(measured, (int, float)) or isinstance(measured, bool) or not isinstance(expected, (int, float)):
        raise TypeError(f"`{op}` compares numbers; the measured value is {show(measured)}")
    return {"<": measured < expected, "<=": measured <= expected, ">": measured > expected, ">=": measured >= expected}[
        op
    ]


def show(value: object) -> str:
    """A value as a claim would write it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, frozenset):
        return "{" + ", ".join(sorted(show(v) for v in value)) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(show(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {show(v)}" for k, v in value.items()) + "}"
    return str(value)


def evaluate(claim: Claim, pin: Pin | None, fact: Fact | None, known: set[str]) -> ClaimVerdict:
    def verdict(
        status: ClaimStatus, measured: object = None, message: str = "", fact: Fact | None = None
    ) -> ClaimVerdict:
        return ClaimVerdict(claim, pin, status, measured, message, fact)

    if claim.problem:
        return verdict(ClaimStatus.INVALID_CLAIM, message=claim.problem)
    if pin is None:
        return verdict(ClaimStatus.INVALID_CLAIM, message="no pin: the findings file names none in its front matter")
    fact_id, field = split_ref(claim.ref, known)
    if fact_id is None:
        return verdict(ClaimStatus.UNKNOWN_FACT, message=f"no fact named {claim.ref} (see `dshaudit facts`)")
    if fact is None or fact.id != fact_id:
        raise ValueError("evaluate() needs the fact the claim names")
    if fact.status is FactStatus.CANNOT_EVALUATE:
        return verdict(ClaimStatus.CANNOT_EVALUATE, message=fact.message, fact=fact)
    if field is None:
        measured = fact.value
    elif field in fact.fields:
        measured = fact.fields[field]
    else:
        fields = ", ".join(sorted(fact.fields)) or "none"
        return verdict(
            ClaimStatus.UNKNOWN_FACT, message=f"{fact_id} has no field {field!r} (fields: {fields})", fact=fact
        )
    try:
        holds = compare(measured, claim.op, claim.expected)
    except TypeError as exc:
        return verdict(ClaimStatus.INVALID_CLAIM, measured, str(exc), fact)
    if holds:
        return verdict(ClaimStatus.CONFIRMED, measured, f"measured {show(measured)}", fact)
    return verdict(ClaimStatus.CONTRADICTED, measured, f"measured {show(measured)}", fact)


def claim_diagnostic(v: ClaimVerdict, web_url: str) -> Diagnostic:
    """A claim's verdict as a diagnostic; the fact's evidence is where it points in DSH.
    A prior audit's claim that the code contradicts is a note: reported, never a failure."""
    c = v.claim
    fact = v.fact

    def places() -> tuple[Place, ...]:
        if fact is None:
            return ()
        pin = fact.pin
        return tuple(
            Place(pin, e.path, e.lines, permalink(web_url, pin.sha, e.path, e.lines))
            for e in merge_evidence(fact.evidence)[:MAX_PLACES]
        )

    override = Severity.NOTE if c.kind == "prior" and v.status is ClaimStatus.CONTRADICTED else None
    return Diagnostic(
        kind="claim",
        source=c.source,
        status=v.status,
        message=v.message,
        target=f"{c.kind}: {c.text} @{v.pin.name if v.pin else '?'}",
        pin=v.pin,
        places_of=places,
        identity=(c.kind, c.text),
        payload_of=v.as_dict,
        severity_override=override,
    )
