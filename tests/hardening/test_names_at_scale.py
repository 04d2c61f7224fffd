"""Names at scale and names that are not what they look like: a document of
100,000 code-formatted names, names made of regular expression syntax and PCRE
verbs, names past the length a name can have, and look-alike (homoglyph)
names. Each name is looked up as the text it is, never as a pattern, and a
look-alike never passes as the Latin name it mimics.

An `absent:` claim past the name length is refused in test_resource_limits.py."""

from __future__ import annotations

import pytest

from conftest import extend_fixture, run_cli, write_findings
from dshaudit.documents.names import MAX_NAME_CHARS
from hardening.helpers import DSHAUDIT, one_line_error, run_measured

# A file whose strings are regular expression syntax, and one name spelled with a Cyrillic р.
VERBS = """\
export const verbs = ['(*ACCEPT)', 'a.*b', 'x|y', '[^a]', '(?i)Q', '\\\\Q']
export const рrobe = 1
"""


def references(workspace, body: str, pin: str = "v1") -> dict[str, str]:
    write_findings(workspace, body, pin=pin)
    run = run_cli("check", "--format", "json")
    assert run.exit_code in (0, 1), run.stderr
    return {r["text"]: r["status"] for r in run.json["references"]}


@pytest.fixture
def verbs(workspace, fixture_repo, tmp_path, monkeypatch):
    extend_fixture(workspace, fixture_repo, tmp_path, monkeypatch, ("verbs", {"src/verbs.ts": VERBS}))
    return workspace


# -- 100,000 names -------------------------------------------------------------------------------


def test_a_document_of_100000_distinct_names_in_bounded_time_and_memory(workspace):
    rows = (" ".join(f"`someName{i + j}`" for j in range(10)) for i in range(0, 100_000, 10))
    write_findings(workspace, "`AgentRegistry` is there.\n\n" + "\n".join(rows) + "\n")
    import time

    start = time.perf_counter()
    ran = run_measured(DSHAUDIT, "check", "--format", "json", cwd=workspace)
    elapsed = time.perf_counter() - start
    assert ran["code"] == 1, ran["err"]
    assert elapsed < 180, elapsed
    assert ran["peak"] < 1_500_000, ran["peak"]  # KiB
    import json

    refs = json.loads(ran["out"])["references"]
    assert len(refs) == 100_001
    assert refs[0] == {**refs[0], "text": "AgentRegistry", "status": "ok"}
    assert {r["status"] for r in refs[1:]} == {"phantom"}
    assert refs[-1]["text"] == "someName99999"


def test_one_name_written_100000_times_is_looked_up_once(workspace):
    body = ("`AgentRegistry` `noSuchName` " * 5 + "\n") * 10_000
    write_findings(workspace, body)
    import time

    start = time.perf_counter()
    run = run_cli("check", "--format", "json")
    assert time.perf_counter() - start < 120
    statuses = [(r["text"], r["status"]) for r in run.json["references"]]
    assert len(statuses) == 100_000
    assert set(statuses) == {("AgentRegistry", "ok"), ("noSuchName", "phantom")}


# -- regular expression syntax and PCRE verbs ----------------------------------------------------


@pytest.mark.parametrize(
    "written, status",
    [
        ("'(*ACCEPT)'", "ok"),  # held as text by the file
        ("'a.*b'", "ok"),
        ("'x|y'", "ok"),
        ("'[^a]'", "ok"),
        ("'(?i)Q'", "ok"),
        ("'(*FAIL)'", "phantom"),  # a verb that would make a pattern fail everywhere
        ("'(*COMMIT)verbs'", "phantom"),
        ("'(*LIMIT_MATCH=1)'", "phantom"),
        ("'(*UTF)(*UCP)'", "phantom"),
        ("'ver.*'", "phantom"),  # as a pattern it matches `verbs`; as text it is nowhere
        ("'x|verbs'", "phantom"),
        ("'(?i)AGENTREGISTRY'", "phantom"),
        ("'[A-Z]gentRegistry'", "phantom"),
        ("'(?{ die })'", "phantom"),
        ("'.+?'", "phantom"),
        ("'a{1,99999}'", "phantom"),
        ("'(a+)+$'", "phantom"),
        ("`AgentRegistry$`", "phantom"),
        ("`$AgentRegistry`", "phantom"),
    ],
)
def test_names_of_pattern_syntax_are_looked_up_as_text(verbs, written, status):
    code = written if written.startswith("`") else f"`{written}`"
    refs = references(verbs, f"The name {code} here.\n", pin="verbs")
    assert list(refs.values()) == [status], refs


@pytest.mark.parametrize(
    "name, status",
    [("(*ACCEPT)", "present"), ("a.*b", "present"), ("(*FAIL)", "absent"), ("ver.*", "absent"), ("x|verbs", "absent")],
)
def test_absence_claims_of_pattern_syntax_are_claims_about_text(verbs, name, status):
    write_findings(verbs, f"`absent: {name}`\n", pin="verbs")
    run = run_cli("check", "--format", "json")
    (ref,) = run.json["references"]
    assert ref["status"] == status and run.exit_code == (0 if status == "absent" else 1), ref


# -- long names ----------------------------------------------------------------------------------


def test_a_name_at_the_length_limit_is_checked_and_a_longer_one_is_not_a_name(workspace):
    at = "n" + "A" * (MAX_NAME_CHARS - 2) + "x"  # camel case, so a name in prose as well
    past = at + "y"
    refs = references(workspace, f"`{at}` and `{past}`, and {at} in prose.\n")
    assert refs == {at: "phantom"}


@pytest.mark.parametrize("length", [10_000, 1_000_000])
def test_very_long_names_are_not_names_and_cost_little(workspace, length):
    import time

    write_findings(workspace, f"`{'a' * length}` and `x{'Ab' * (length // 2)}` and `AgentRegistry`.\n")
    start = time.perf_counter()
    run = run_cli("check", "--format", "json")
    assert time.perf_counter() - start < 30
    assert [(r["text"], r["status"]) for r in run.json["references"]] == [("AgentRegistry", "ok")]


# -- look-alikes ---------------------------------------------------------------------------------

LOOKALIKES = [
    "\u0410gentRegistry",  # Cyrillic А first
    "AgentRegistr\u0443",  # Cyrillic у last
    "Agent\u0420egistry",  # Cyrillic Р inside
    "\u0391gentRegistry",  # Greek Alpha
    "\u13aagentRegistry",  # Cherokee A
    "\uff21gentRegistry",  # fullwidth A
    "\U0001d400gentRegistry",  # mathematical bold A
    "Agent\u200bRegistry",  # zero-width space
    "Agent\u00adRegistry",  # soft hyphen
    "Agent\u200dRegistry",  # zero-width joiner
    "AgentRegistry\u202e",  # right-to-left override
    "A\u0301gentRegistry",  # a combining accent
    "AgentRegistry.setF\u0430ctory",  # a Cyrillic а in a member
    "\u0410gentRegistry.setFactory",  # a Cyrillic А opening a dotted name
]


@pytest.mark.parametrize("name", LOOKALIKES)
def test_a_look_alike_never_passes_as_the_latin_name(workspace, name):
    refs = references(workspace, f"The registry is `AgentRegistry.setFactory`; here written `{name}`.\n")
    assert refs["AgentRegistry.setFactory"] == "ok"
    assert refs[name] == "phantom", refs
    assert run_cli("check").exit_code == 1


@pytest.mark.parametrize("name", LOOKALIKES[:3] + LOOKALIKES[5:9])
def test_an_absence_claim_of_a_look_alike_is_refused(workspace, name):
    # Found absent as written, it would read as the absence of the Latin name, which is there.
    write_findings(workspace, f"text\n\n`absent: {name}`\n")
    run = run_cli("check")
    one_line_error(run, 2, f"findings/f.md:6: `absent:` name {name!r} has U+")
    assert "among Latin letters" in run.stderr


def test_a_name_in_another_script_is_looked_up_as_written(verbs):
    # DSH may spell a name with a Cyrillic letter: then it is there, as written, and only so.
    refs = references(verbs, "`\u0440robe` and `probe`, and `\u041f\u0440\u0438\u0432\u0435\u0442`.\n", pin="verbs")
    # The Latin `probe` is not there; the all-Cyrillic word is no look-alike, and not a name.
    assert refs == {"\u0440robe": "ok", "probe": "phantom"}, refs
