"""The parsers of citations, front matter and claims, on arbitrary text: they never
raise, other than with their own one-line input errors."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from dshaudit.core.errors import InputError
from dshaudit.core.model import SourceLocation
from dshaudit.documents.claims import parse_claim
from dshaudit.documents.frontmatter import split_front_matter
from dshaudit.documents.grammar import find_citations

text_like = st.text(st.characters(blacklist_categories=("Cs",)), max_size=300)
citation_like = st.builds(
    lambda path, lines, sym, pin, tail: f"{path}:{lines}{sym}{pin}{tail}",
    st.from_regex(r"[a-z]{1,5}(/[a-z0-9_.\-]{1,8}){0,3}\.(ts|tsx|md|json)", fullmatch=True),
    st.from_regex(r"[0-9]{1,4}([-–][0-9]{1,4})?(,[0-9]{1,4}){0,3}", fullmatch=True),
    st.sampled_from(["", "#Foo", "#Foo.bar"]),
    st.sampled_from(["", "@rc7", "@" + "a" * 40]),
    st.sampled_from(["", " ", ".", ", and", ")", " → `x`"]),
)


@settings(max_examples=400, deadline=None)
@given(st.one_of(text_like, citation_like, st.lists(st.one_of(text_like, citation_like), max_size=5).map(" ".join)))
@example("0/0:0,:0")
def test_citation_parser_never_raises_and_round_trips(text):
    for c in find_citations(text):
        assert text[c.start : c.end] == c.text
        if c.form == "continuation":
            continue  # `:40` after a citation: more lines of its file, never a citation on its own
        again = find_citations(c.text)
        assert len(again) == 1
        r = again[0]
        assert (r.path, r.lines, r.symbol, r.pin, r.problem) == (c.path, c.lines, c.symbol, c.pin, c.problem)


@settings(max_examples=300, deadline=None)
@given(text_like)
def test_front_matter_parser_raises_only_input_errors(text):
    for doc in (text, "---\n" + text, "---\n" + text + "\n---\nbody"):
        try:
            data, skip = split_front_matter(doc, "f.md")
        except InputError as exc:
            assert str(exc).startswith("f.md:") and "\n" not in str(exc)
        else:
            assert isinstance(data, dict) and 0 <= skip <= doc.count("\n") + 1


@settings(max_examples=400, deadline=None)
@given(
    st.one_of(text_like, st.from_regex(r"[a-z.\-]{1,30} (==|!=|<=|>=|<|>|contains|excludes) .{0,40}", fullmatch=True))
)
def test_claim_parser_never_raises(text):
    claim = parse_claim("claim", text, SourceLocation("f.md", 1, 1))
    assert claim.problem is None or isinstance(claim.problem, str)
    if claim.problem is None:
        assert claim.ref and claim.op
