"""`claim:` and `prior:` spans: how they are read from prose, parsed, compared with a
measured fact, and reported. Pure functions: no repository is needed."""

from __future__ import annotations

import pytest

from dshaudit.core.errors import InputError
from dshaudit.core.model import (
    Claim,
    ClaimStatus,
    Evidence,
    Fact,
    FactStatus,
    LineRange,
    Pin,
    SourceLocation,
)
from dshaudit.core.status import Severity
from dshaudit.documents.claims import (
    MAX_CLAIM_CHARS,
    MAX_VALUE_DEPTH,
    ClaimSyntaxError,
    claim_diagnostic,
    claims_in_text,
    compare,
    evaluate,
    limit_problem,
    parse_claim,
    parse_value,
    show,
    split_ref,
)

HERE = SourceLocation("f.md", 3, 5)
PIN = Pin("v1", "a" * 40)
KNOWN = {"core.services", "core.services.extra", "workspace.packages"}


def fact(
    fact_id: str = "core.services",
    value: object = 5,
    fields: dict | None = None,
    status: FactStatus = FactStatus.OK,
    evidence: tuple[Evidence, ...] = (),
    message: str = "",
) -> Fact:
    return Fact(fact_id, "a counting rule", PIN, status, value, fields or {}, evidence, message)


def claim(expression: str, kind: str = "claim") -> Claim:
    return parse_claim(kind, expression, HERE)


def problem(expression: str) -> str:
    """Why a claim cannot be read (it must be unreadable)."""
    why = claim(expression).problem
    assert why is not None, expression
    return why


# -- reading claims from prose ------------------------------------------------------


def test_claims_in_text_finds_claim_and_prior_spans_with_their_line_and_column():
    text = "Intro.\nThe core has `claim: core.services == 5` and\n`prior: workspace.packages.count == 239`."
    found = claims_in_text(text, line_offset=10, display_path="doc.md")
    assert [(c.kind, c.ref, c.op, c.expected) for c in found] == [
        ("claim", "core.services", "==", 5),
        ("prior", "workspace.packages.count", "==", 239),
    ]
    assert [c.source for c in found] == [SourceLocation("doc.md", 12, 14), SourceLocation("doc.md", 13, 1)]


def test_claims_in_text_ignores_spans_inside_double_backticks():
    """``claim: x == 1`` quotes the syntax; it is no claim of its own."""
    assert claims_in_text("``claim: x.count == 1`` and `claimed: x`", 0, "doc.md") == []


def test_claims_in_text_refuses_a_claim_beyond_the_limits_with_its_line():
    long_claim = "x.count == " + "1" * 100
    with pytest.raises(InputError) as refused:
        claims_in_text(f"ok\n\n`claim: {long_claim}`", 0, "doc.md")
    assert refused.value.line == 3
    assert "digits" in str(refused.value)


# -- parsing ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("5", 5),
        ("2,589", 2589),
        ("600_000", 600000),
        ("-3", -3),
        ("1.5", 1.5),
        ("'a b'", "a b"),
        ('"x"', "x"),
        ("append", "append"),
        ("true", True),
        ("false", False),
        ("null", None),
        ("{b, a}", frozenset({"a", "b"})),
        ("[a, 'b, c', 2]", ("a", "b, c", 2)),
        ("{}", frozenset()),
        ("[[1, 2], {x}]", ((1, 2), frozenset({"x"}))),
    ],
)
def test_parse_value_reads_each_kind_of_value(text, value):
    parsed = parse_value(text)
    assert parsed == value and type(parsed) is type(value)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("", "missing value"),
        ("{a, b", "never closed"),
        ("'open", "unterminated string"),
        ("[" * (MAX_VALUE_DEPTH + 1) + "]" * (MAX_VALUE_DEPTH + 1), "nested more than"),
    ],
)
def test_parse_value_refuses_malformed_values(text, why):
    with pytest.raises(ClaimSyntaxError, match=why):
        parse_value(text)


def test_parse_claim_splits_reference_operator_and_value():
    c = claim("  session.kinds.agent_loop   contains {append, replace} ")
    assert (c.ref, c.op, c.expected, c.problem) == (
        "session.kinds.agent_loop",
        "contains",
        frozenset({"append", "replace"}),
        None,
    )
    assert c.text == "session.kinds.agent_loop   contains {append, replace}"


def test_parse_claim_reports_what_it_cannot_read_as_a_problem():
    assert "expected FACT[.FIELD] OP VALUE" in problem("x.count is five")
    assert problem("x.count == {a") == "{ is never closed"
    assert problem("search(oops).count == 1") == "cannot read 'oops': quote patterns and pathspecs"


def test_parse_claim_accepts_a_search_on_the_left():
    c = claim("search('setFactory', 'packages/**').count == 2")
    assert c.problem is None and c.ref == "search('setFactory', 'packages/**').count" and c.expected == 2


def test_limit_problem_names_each_limit_and_passes_ordinary_claims():
    assert limit_problem("x.count == 5") is None
    assert "longer than" in (limit_problem("x" * (MAX_CLAIM_CHARS + 1)) or "")
    assert "digits" in (limit_problem("x == " + "9" * 65) or "")
    assert "nested 9 deep" in (limit_problem("x == " + "[" * 9 + "]" * 9) or "")
    assert limit_problem("x == " + "[" * MAX_VALUE_DEPTH + "]" * MAX_VALUE_DEPTH) is None


def test_a_claim_beyond_the_limits_keeps_a_short_text_and_the_reason():
    expression = "x" * (MAX_CLAIM_CHARS + 1) + " == 1"
    c = claim(expression)
    assert (c.text, c.ref) == (expression[:80], "")
    assert (
        problem(expression)
        == f"a claim of {len(expression)} characters is longer than the {MAX_CLAIM_CHARS} dshaudit reads"
    )


# -- references to facts --------------------------------------------------------------


def test_split_ref_takes_the_longest_known_fact_id_and_the_rest_as_field():
    assert split_ref("core.services", KNOWN) == ("core.services", None)
    assert split_ref("core.services.count", KNOWN) == ("core.services", "count")
    assert split_ref("core.services.extra.names", KNOWN) == ("core.services.extra", "names")
    assert split_ref("core.other.count", KNOWN) == (None, None)


def test_split_ref_reads_a_search_as_a_fact_of_its_own():
    assert split_ref("files('a/**').count", set()) == ("files('a/**')", "count")


# -- comparing ----------------------------------------------------------------------------


def test_compare_sets_ignore_order_and_lists_do_not():
    assert compare(["b", "a"], "==", frozenset({"a", "b"}))
    assert not compare(["b", "a"], "==", ("a", "b"))
    assert compare(["a", "b"], "==", ("a", "b"))
    assert compare(["a"], "!=", frozenset({"a", "b"}))
    assert not compare("ab", "==", frozenset({"a", "b"}))  # text is no set


def test_compare_contains_and_excludes_on_lists_maps_and_text():
    assert compare(["a", "b", "c"], "contains", frozenset({"a", "c"}))
    assert not compare(["a", "b"], "contains", "z")
    assert compare({"k": 1}, "contains", "k")
    assert compare("the quick fox", "contains", "quick")
    assert compare(["a", "b"], "excludes", ("x", "y"))
    assert not compare(["a", "b"], "excludes", ("x", "b"))  # one present: not excluded


def test_compare_orders_numbers_only():
    assert compare(5, "<", 6) and compare(5, "<=", 5) and compare(7, ">", 6) and not compare(5, ">=", 6)
    with pytest.raises(TypeError, match="compares numbers"):
        compare("5", "<", 6)
    with pytest.raises(TypeError, match="compares numbers"):
        compare(True, ">", 0)  # a boolean is not a count
    with pytest.raises(TypeError, match="needs a list, set or text"):
        compare(5, "contains", 5)


def test_show_writes_values_as_a_claim_would():
    assert show(True) == "true" and show(None) == "null"
    assert show(frozenset({"b", "a"})) == "{a, b}"
    assert show(["a", 1]) == "[a, 1]"
    assert show({"k": False}) == "{k: false}"


# -- evaluating ------------------------------------------------------------------------


def test_evaluate_confirms_or_contradicts_by_the_measured_value():
    confirmed = evaluate(claim("core.services == 5"), PIN, fact(value=5), KNOWN)
    assert (confirmed.status, confirmed.measured, confirmed.message) == (ClaimStatus.CONFIRMED, 5, "measured 5")
    contradicted = evaluate(claim("core.services == 4"), PIN, fact(value=5), KNOWN)
    assert contradicted.status is ClaimStatus.CONTRADICTED and contradicted.message == "measured 5"


def test_evaluate_reads_a_field_of_the_fact():
    measured = fact(fields={"names": ["a", "b"]})
    verdict = evaluate(claim("core.services.names == {b, a}"), PIN, measured, KNOWN)
    assert verdict.status is ClaimStatus.CONFIRMED and verdict.message == "measured [a, b]"


def test_evaluate_names_the_fields_of_a_fact_that_lacks_the_one_claimed():
    verdict = evaluate(claim("core.services.nope == 1"), PIN, fact(fields={"b": 1, "a": 2}), KNOWN)
    assert verdict.status is ClaimStatus.UNKNOWN_FACT
    assert verdict.message == "core.services has no field 'nope' (fields: a, b)"


def test_evaluate_without_a_usable_claim_pin_or_fact():
    assert evaluate(claim("x is"), PIN, None, KNOWN).status is ClaimStatus.INVALID_CLAIM
    no_pin = evaluate(claim("core.services == 5"), None, None, KNOWN)
    assert no_pin.status is ClaimStatus.INVALID_CLAIM and "no pin" in no_pin.message
    unknown = evaluate(claim("nothing.here == 5"), PIN, None, KNOWN)
    assert unknown.status is ClaimStatus.UNKNOWN_FACT and "no fact named nothing.here" in unknown.message


def test_evaluate_passes_on_a_fact_that_cannot_be_measured():
    broken = fact(status=FactStatus.CANNOT_EVALUATE, value=None, message="parse error at x.ts:3")
    verdict = evaluate(claim("core.services == 5"), PIN, broken, KNOWN)
    assert (verdict.status, verdict.message) == (ClaimStatus.CANNOT_EVALUATE, "parse error at x.ts:3")


def test_evaluate_calls_an_operator_the_value_cannot_take_an_invalid_claim():
    verdict = evaluate(claim("core.services < 3"), PIN, fact(value=["a"]), KNOWN)
    assert verdict.status is ClaimStatus.INVALID_CLAIM and "compares numbers" in verdict.message


def test_evaluate_refuses_a_fact_other_than_the_one_named():
    with pytest.raises(ValueError, match="needs the fact"):
        evaluate(claim("core.services == 5"), PIN, fact("workspace.packages"), KNOWN)


# -- diagnostics ------------------------------------------------------------------------


def test_a_contradicted_prior_is_a_note_and_a_contradicted_claim_an_error():
    measured = fact(value=5)
    prior = claim_diagnostic(evaluate(claim("core.services == 4", "prior"), PIN, measured, KNOWN), "https://x")
    held = claim_diagnostic(evaluate(claim("core.services == 4"), PIN, measured, KNOWN), "https://x")
    assert prior.severity is Severity.NOTE and not prior.fails(strict=True)
    assert held.severity is Severity.ERROR and held.fails()
    assert held.target == "claim: core.services == 4 @v1"


def test_a_claim_diagnostic_points_at_the_facts_evidence_merged():
    evidence = (Evidence("a.ts", LineRange(1, 2)), Evidence("a.ts", LineRange(3, 4)), Evidence("b.ts", LineRange(9, 9)))
    d = claim_diagnostic(evaluate(claim("core.services == 5"), PIN, fact(evidence=evidence), KNOWN), "https://x/")
    assert [str(p) for p in d.places] == ["a.ts:1-4@v1", "b.ts:9@v1"]
    assert d.places[0].url == f"https://x/blob/{PIN.sha}/a.ts#L1-L4"


def test_a_chunk_read_again_on_the_same_lines_is_not_parsed_again(monkeypatch):
    """The language server reads a document at every keystroke: the chunks it did not
    change give their claims back without parsing; each caller gets a list of its own."""
    from dshaudit.documents import claims

    parsed: list[str] = []
    parse = claims.parse_claim
    monkeypatch.setattr(claims, "parse_claim", lambda *a: parsed.append(a[1]) or parse(*a))
    text = "We say `claim: scale.docs.count == 7` here."
    first = claims_in_text(text, 40, "cache-test.md")
    first.append(first[0])
    again = claims_in_text(text, 40, "cache-test.md")
    assert parsed == ["scale.docs.count == 7"] and len(again) == 1
    moved = claims_in_text(text, 41, "cache-test.md")  # on another line: read as written there
    assert parsed == ["scale.docs.count == 7"] * 2 and moved[0].source.line == 42
