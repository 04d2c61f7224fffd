"""The CI formats of `dshaudit check` (sarif, junit, github, markdown) over one
run with every kind of failure, checked against each other and against JSON.

tests/data/sarif-schema-2.1.0.json is the OASIS SARIF 2.1.0 schema (errata01),
copied unchanged from github.com/oasis-tcs/sarif-spec,
sarif-2.1/schema/sarif-schema-2.1.0.json at e0583813964ec43cea53b6b531b402866095ed1f.
"""

from __future__ import annotations

import ast
import html
import json
import re
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest

from conftest import REPO_ROOT, run_cli, write_findings
from dshaudit.checking.outcome import check_outcome
from dshaudit.core.diagnostics import Outcome
from dshaudit.core.model import Citation, ClaimStatus, LineRange, Pin, SourceLocation, Status, Verdict
from dshaudit.core.results import CheckResult
from dshaudit.output.formats import DIAGNOSTIC_FORMATS, FORMATS
from dshaudit.output.interface import RenderContext

SCHEMA = json.loads((REPO_ROOT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
WEB = "https://github.com/deepseek-ai/deepseek-harness"
CONTEXT = "vendor/cordis/src/context.ts"
TRICKY = "50% off, a:b | c <b>x</b> ]]> &amp; \x1b[31mred"
TRICKY_SHOWN = TRICKY.replace("\x1b", "\\x1b")  # how ESC comes out where it cannot stay

# Line numbers below count the three lines of front matter that write_findings adds.
BODY = f"""# Formats

Holds: `{CONTEXT}:14-18` → `this.fiber` + `this.logger`
Moved: `{CONTEXT}:16` → `this.fiber`
Moved again: `{CONTEXT}:16` → `this.fiber`
Gone: `vendor/cordis/src/contxt.ts:14` → `x`
Past the end: `{CONTEXT}:30-40` → `x`
No such symbol: `{CONTEXT}#Context.destructor`
A range: `{CONTEXT}:20-22` → `this.fiber`
Tricky: `{CONTEXT}:16` → `{TRICKY}`
- `claim: core.context-builtin-services.count == 6`
- `claim: core.no-such-fact == 1`
- `claim: core.context-builtin-services.count == 5`
- `prior: core.context-builtin-services.count == 7`
"""

# (line, status) of every failure in BODY; the holding citation, the confirmed
# claim and the prior (contradicted, which is reported but never fails) are not here.
EXPECTED_FAILURES = [
    (7, "content_mismatch"),
    (8, "content_mismatch"),
    (9, "missing_path"),
    (10, "out_of_range"),
    (11, "unknown_symbol"),
    (12, "content_mismatch"),
    (13, "content_mismatch"),
    (14, "contradicted"),
    (15, "unknown_fact"),
]


def _use_github_web_url(workspace: Path) -> None:
    config = workspace / "dshaudit.toml"
    text = config.read_text()
    config.write_text(text.replace("[upstream]\n", f'[upstream]\nweb = "{WEB}"\n', 1))


@pytest.fixture
def audit(workspace):
    """The workspace with BODY in findings/f.md and permalinks on github.com."""
    _use_github_web_url(workspace)
    write_findings(workspace, BODY)
    return workspace


def check(fmt: str, *args: str):
    run = run_cli("check", "--format", fmt, *args)
    assert run.exit_code == 1, (fmt, run.stdout, run.stderr)
    assert run.stderr == ""
    return run


def json_failures(doc: dict) -> list[tuple[str, int, str]]:
    out = [(c["source"]["file"], c["source"]["line"], c["status"]) for c in doc["citations"] if c["status"] != "ok"]
    for c in doc["claims"]:
        holds = c["status"] in ("confirmed", "contradicted") if c["kind"] == "prior" else c["status"] == "confirmed"
        if not holds:
            out.append((c["source"]["file"], c["source"]["line"], c["status"]))
    return sorted(out)


# -- SARIF -----------------------------------------------------------------------------------------


def sarif_results(doc: dict) -> list[dict]:
    assert len(doc["runs"]) == 1
    return doc["runs"][0]["results"]


def test_sarif_validates_against_the_shipped_schema(audit):
    doc = json.loads(check("sarif").stdout)
    jsonschema.Draft4Validator.check_schema(SCHEMA)
    jsonschema.Draft4Validator(SCHEMA).validate(doc)
    assert doc["version"] == "2.1.0"
    run = doc["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert len({r["id"] for r in rules}) == len(rules)
    for r in rules:
        assert r["id"].startswith("dshaudit/")
        assert r["shortDescription"]["text"] and r["help"]["text"]
    # One rule per status that says something is wrong: of citations, claims, names and what was
    # not checked; no name shared.
    from dshaudit.checking.outcome import Coverage
    from dshaudit.core.references import ReferenceStatus

    assert not {s.value for s in Status} & {s.value for s in ClaimStatus} & {s.value for s in ReferenceStatus}
    assert not {s.value for s in Coverage} & {s.value for e in (Status, ClaimStatus, ReferenceStatus) for s in e}
    statuses = {s.value for enum in (Status, ClaimStatus, ReferenceStatus, Coverage) for s in enum if s.is_rule}
    assert {r["id"] for r in rules} == {f"dshaudit/{s}" for s in statuses}
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"] == f"dshaudit/{result['properties']['status']}"
        assert result["level"] == "error"


def test_sarif_omits_what_holds_and_keeps_the_summary(audit):
    doc = json.loads(check("sarif").stdout)
    summary = run_cli("check", "--format", "json").json["summary"]
    assert doc["runs"][0]["properties"]["summary"] == summary
    assert len(sarif_results(doc)) == summary["failed"] + summary["claims"]["failed"] == len(EXPECTED_FAILURES)


def test_sarif_primary_locations_are_findings_lines(audit):
    results = sarif_results(json.loads(check("sarif").stdout))
    doc = run_cli("check", "--format", "json").json
    sources = {(c["source"]["line"], c["source"]["column"], c["status"]) for c in doc["citations"] + doc["claims"]}
    got = []
    for r in results:
        (loc,) = r["locations"]
        physical = loc["physicalLocation"]
        assert physical["artifactLocation"] == {"uri": "findings/f.md", "uriBaseId": "%SRCROOT%"}
        region = physical["region"]
        assert (region["startLine"], region["startColumn"], r["properties"]["status"]) in sources
        got.append((region["startLine"], r["properties"]["status"]))
    assert got == EXPECTED_FAILURES
    assert results[0]["locations"][0]["physicalLocation"]["region"] == {"startLine": 7, "startColumn": 9}


def test_sarif_related_locations_are_paths_under_a_base_for_the_sha(audit, fixture_repo):
    """Each DSH place is a path relative to a base per commit (`<web>/blob/<sha>/`), which
    versionControlProvenance maps to DSH at that SHA: the base plus the path is the permalink."""
    sha = fixture_repo.shas["v1"]
    run = json.loads(check("sarif").stdout)["runs"][0]
    by_line = {r["locations"][0]["physicalLocation"]["region"]["startLine"]: r for r in run["results"]}
    base = f"DSH_{sha[:12]}"
    assert run["originalUriBaseIds"][base]["uri"] == f"{WEB}/blob/{sha}/"

    def related(line):
        out = []
        for x in by_line[line].get("relatedLocations", []):
            loc = x["physicalLocation"]
            assert loc["artifactLocation"]["uriBaseId"] == base
            out.append((loc["artifactLocation"]["uri"], loc.get("region"), x["properties"]["permalink"]))
        return out

    blob = f"{WEB}/blob/{sha}/{CONTEXT}"
    assert related(7) == [(CONTEXT, {"startLine": 16, "endLine": 16}, f"{blob}#L16")]
    assert related(12) == [(CONTEXT, {"startLine": 20, "endLine": 22}, f"{blob}#L20-L22")]
    assert related(13) == [(CONTEXT, {"startLine": 16, "endLine": 16}, f"{blob}#L16")]
    assert related(14) == [(CONTEXT, {"startLine": 14, "endLine": 18}, f"{blob}#L14-L18")]  # the claim's evidence
    assert related(10) == [(CONTEXT, None, blob)]  # out of range: the file, no lines that are not there
    assert related(11) == [(CONTEXT, None, blob)]  # no symbol resolved: the file
    assert related(9) == []  # no such file: nothing to link to
    assert related(15) == []  # no such fact: no evidence
    assert by_line[7]["relatedLocations"][0]["message"]["text"] == f"{CONTEXT}:16@v1 ({sha[:12]})"


def test_sarif_without_an_audit_repository_writes_no_provenance(audit, fixture_repo):
    """Outside git nothing maps the findings paths (SARIF2007 for every result):
    no provenance, while the DSH base still names the commit."""
    run = json.loads(check("sarif").stdout)["runs"][0]
    assert "versionControlProvenance" not in run
    sha = fixture_repo.shas["v1"]
    assert run["originalUriBaseIds"][f"DSH_{sha[:12]}"]["uri"] == f"{WEB}/blob/{sha}/"


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


def test_sarif_provenance_names_the_audit_repository(audit, fixture_repo, monkeypatch):
    git(audit, "init", "-q", "-b", "main")
    git(audit, "remote", "add", "origin", "https://someone:s3cret-token@example.com/audit/findings.git")
    git(audit, "add", "-A")
    git(audit, "commit", "-q", "-m", "findings")
    head = git(audit, "rev-parse", "HEAD")
    out = check("sarif").stdout
    assert "s3cret" not in out and "someone" not in out
    provenance = json.loads(out)["runs"][0]["versionControlProvenance"]
    assert provenance[0] == {
        "repositoryUri": "https://example.com/audit/findings.git",
        "revisionId": head,
        "mappedTo": {"uriBaseId": "%SRCROOT%"},
    }
    assert provenance[1]["revisionId"] == fixture_repo.shas["v1"]
    # The tool's information is where the audit that runs it lives (SARIF Multitool's SARIF2005).
    assert json.loads(out)["runs"][0]["tool"]["driver"]["informationUri"] == "https://example.com/audit/findings.git"
    # Every repository the run names maps to a base its paths are relative to (SARIF2007).
    assert all("uriBaseId" in p["mappedTo"] for p in provenance)
    # Run from a subfolder: findings paths are still relative to the repository root.
    monkeypatch.chdir(audit / "findings")
    results = sarif_results(json.loads(check("sarif", "f.md").stdout))
    assert {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results} == {"findings/f.md"}
    assert check("github", "f.md").stdout.startswith("::error file=findings/f.md,line=7,")
    assert check("text", "f.md").stdout.startswith("f.md:7:9: ")  # text keeps paths as given


def test_sarif_scp_remote_becomes_an_ssh_uri(audit):
    git(audit, "init", "-q", "-b", "main")
    git(audit, "remote", "add", "origin", "git@github.com:acme/audit.git")
    provenance = json.loads(check("sarif").stdout)["runs"][0]["versionControlProvenance"]
    assert provenance[0] == {"repositoryUri": "ssh://github.com/acme/audit.git", "mappedTo": {"uriBaseId": "%SRCROOT%"}}


def fingerprints(doc: dict) -> list[tuple[int, str, str]]:
    return [
        (
            r["locations"][0]["physicalLocation"]["region"]["startLine"],
            r["ruleId"],
            r["partialFingerprints"]["dshauditFinding/v1"],
        )
        for r in sarif_results(doc)
    ]


def test_sarif_fingerprints_survive_lines_moving(audit):
    before = fingerprints(json.loads(check("sarif").stdout))
    assert len({fp for _, _, fp in before}) == len(before)  # the two identical citations too
    path = audit / "findings" / "f.md"
    path.write_text(path.read_text().replace("# Formats\n", "# Formats\n\n\n\n", 1))
    after = fingerprints(json.loads(check("sarif").stdout))
    assert [line + 3 for line, _, _ in before] == [line for line, _, _ in after]
    assert [(rule, fp) for _, rule, fp in before] == [(rule, fp) for _, rule, fp in after]
    # What a citation says is part of its fingerprint: a new anchor makes a new alert.
    path.write_text(
        path.read_text().replace(
            "Moved again: `vendor/cordis/src/context.ts:16` → `this.fiber`",
            "Moved again: `vendor/cordis/src/context.ts:16` → `this.fibre`",
        )
    )
    changed = fingerprints(json.loads(check("sarif").stdout))
    assert [fp for _, _, fp in changed] != [fp for _, _, fp in after]
    assert changed[0] == after[0]


# -- JUnit ------------------------------------------------------------------------------------------


def test_junit_parses_and_counts_match_json(audit):
    root = ET.fromstring(check("junit").stdout)
    summary = run_cli("check", "--format", "json").json["summary"]
    tests = summary["total"] + summary["claims"]["total"]
    failures = summary["failed"] + summary["claims"]["failed"]
    assert root.tag == "testsuites"
    assert (int(root.get("tests")), int(root.get("failures")), int(root.get("errors"))) == (tests, failures, 0)
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == ["findings/f.md"]
    assert sum(int(s.get("tests")) for s in suites) == tests
    assert sum(int(s.get("failures")) for s in suites) == failures
    assert len(root.findall(".//testcase")) == tests
    assert len(root.findall(".//testcase/failure")) == failures == len(EXPECTED_FAILURES)
    got = [
        (int(case.get("line")), case.find("failure").get("type"))
        for case in root.iter("testcase")
        if case.find("failure") is not None
    ]
    assert got == EXPECTED_FAILURES


def test_junit_carries_untrusted_text_intact(audit):
    root = ET.fromstring(check("junit").stdout)
    (case,) = [c for c in root.iter("testcase") if c.get("line") == "13"]
    failure = case.find("failure")
    # Markup characters survive as text; ESC (not allowed in XML 1.0) becomes visible.
    assert failure.get("message") == f"`{TRICKY_SHOWN}` is not on line 16; not found anywhere in the file"
    assert "\\x1b[31mred" in failure.text and "<b>x</b> ]]> &amp;" in failure.text
    assert f"{WEB}/blob/" in failure.text


def test_junit_survives_control_characters_and_newlines():
    message = "a\x00b\x1b[0m\nline two \"q\" 'a' <&> \ud800"
    doc = FORMATS["junit"].render(_one_failure(message, file="findings/x.md"), RenderContext(WEB))
    failure = ET.fromstring(doc).find(".//failure")
    assert failure.get("message") == "a\\x00b\\x1b[0m\nline two \"q\" 'a' <&> \\ud800"


# -- GitHub workflow commands -------------------------------------------------------------------------


def unescape_data(text: str) -> str:
    # The runner's order: %0D and %0A first, %25 last, so `%250A` stays `%0A`.
    return text.replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")


def unescape_property(text: str) -> str:
    return text.replace("%0D", "\r").replace("%0A", "\n").replace("%3A", ":").replace("%2C", ",").replace("%25", "%")


def parse_command(line: str) -> tuple[str, dict, str]:
    m = re.fullmatch(r"::(\w+)(?: (.*?))?::(.*)", line)
    assert m, line
    props = dict(p.split("=", 1) for p in m.group(2).split(",")) if m.group(2) else {}
    return m.group(1), {k: unescape_property(v) for k, v in props.items()}, unescape_data(m.group(3))


def _one_failure(message: str, file: str) -> Outcome:
    pin = Pin("v1", "a" * 40)
    citation = Citation(CONTEXT, (LineRange(3, 4),), None, None, ("x",), SourceLocation(file, 12, 5), f"{CONTEXT}:3-4")
    return check_outcome(CheckResult((Verdict(citation, pin, Status.CONTENT_MISMATCH, message),)), WEB)


def test_github_escapes_data_and_properties(tmp_path):
    message = "100% sure, a:b,\nnext line\rcarriage"
    out = FORMATS["github"].render(_one_failure(message, file="find,ings/a:b.md"), RenderContext(WEB, root=tmp_path))
    lines = out.splitlines()
    assert len(lines) == 2  # one ::error and the ::notice: nothing broke out of its line
    assert lines[0] == (
        "::error file=find%2Cings/a%3Ab.md,line=12,col=5,title=dshaudit%3A content_mismatch::"
        f"{CONTEXT}:3-4@v1: 100%25 sure, a:b,%0Anext line%0Dcarriage"
        f"%0A{CONTEXT}:3-4@v1: {WEB}/blob/{'a' * 40}/{CONTEXT}#L3-L4"
    )
    name, props, data = parse_command(lines[0])
    assert name == "error"
    assert props == {"file": "find,ings/a:b.md", "line": "12", "col": "5", "title": "dshaudit: content_mismatch"}
    assert data.startswith(f"{CONTEXT}:3-4@v1: {message}\n")
    assert lines[1].startswith("::notice title=dshaudit check::1 citations in 1 files: 0 ok, 1 failed")


def test_github_commands_for_the_run(audit):
    lines = check("github").stdout.splitlines()
    assert len(lines) == len(EXPECTED_FAILURES) + 1
    commands = [parse_command(line) for line in lines]
    assert [
        (int(p["line"]), p["title"].removeprefix("dshaudit: ")) for name, p, _ in commands if name == "error"
    ] == EXPECTED_FAILURES
    (tricky,) = [line for line in lines if ",line=13," in line]
    assert "line=13,col=10," in tricky
    assert "`50%25 off, a:b | c <b>x</b> ]]> &amp; \\x1b[31mred`" in tricky  # `:` and `,` are data here
    assert "\x1b" not in check("github").stdout
    assert commands[-1][0] == "notice"


# -- Markdown -----------------------------------------------------------------------------------------


def cells(row: str) -> list[str]:
    """Split a GFM table row the way GitHub does: a backslash and the character
    after it are one escaped character; a `|` on its own ends a cell."""
    assert row.startswith("| ") and row.endswith(" |"), row
    body = row[1:-1]
    out, cell, i = [], "", 0
    while i < len(body):
        if body[i] == "\\" and i + 1 < len(body):
            cell += body[i : i + 2]
            i += 2
            continue
        if body[i] == "|":
            out.append(cell)
            cell = ""
        else:
            cell += body[i]
        i += 1
    out.append(cell)
    return [c.strip() for c in out]


def unescape_md(text: str) -> str:
    return html.unescape(re.sub(r"\\(.)", r"\1", text))


def table_rows(out: str) -> list[list[str]]:
    rows = [line for line in out.splitlines() if line.startswith("| ")]
    if not rows:
        return []
    assert rows[0] == "| Where | Target | Status | Message |"
    return [cells(r) for r in rows[1:]]


def test_markdown_totals_and_one_row_per_failure(audit):
    out = check("markdown").stdout
    assert out.startswith("## dshaudit check\n")
    assert "- **Citations:** 8 in 1 files: 1 ok, 7 failed" in out
    assert "- **Claims:** 4: 1 confirmed, 2 contradicted, 1 unknown_fact; 2 failed" in out
    assert "|---|---|---|---|" in out
    rows = table_rows(out)
    assert all(len(r) == 4 for r in rows), rows
    assert [(int(unescape_md(r[0]).rsplit(":", 1)[1]), r[2].strip("`")) for r in rows] == EXPECTED_FAILURES


def test_markdown_escapes_pipes_backticks_and_html(audit, fixture_repo):
    out = check("markdown").stdout
    (row,) = [r for r in table_rows(out) if unescape_md(r[0]) == "findings/f.md:13"]
    assert len(row) == 4
    assert unescape_md(row[3]) == f"`{TRICKY_SHOWN}` is not on line 16; not found anywhere in the file"
    assert "<b>" not in out and "\x1b" not in out
    assert "\\`50% off, a:b \\| c &lt;b&gt;x&lt;/b&gt; \\]\\]&gt; &amp;amp; \\\\x1b\\[31mred\\`" in row[3]
    assert row[1] == f"[{CONTEXT}:16@v1]({WEB}/blob/{fixture_repo.shas['v1']}/{CONTEXT}#L16)"


def test_markdown_message_with_a_newline_stays_in_its_row():
    out = FORMATS["markdown"].render(_one_failure("one | two\nthree `x`", file="f.md"), RenderContext(WEB))
    (row,) = table_rows(out)
    assert len(row) == 4
    assert unescape_md(row[3]) == "one | two three `x`"


# -- every format, the same failures ------------------------------------------------------------------

STATUS_WORDS = "|".join(sorted({s.value for s in Status} | {s.value for s in ClaimStatus}, key=len, reverse=True))


def from_text(out: str) -> list[tuple[str, int, str]]:
    got = []
    for line in out.splitlines()[:-1]:  # the last line is the summary
        m = re.match(rf"^(.+?):(\d+):\d+: .*?: ({STATUS_WORDS}): ", line)
        assert m, line
        got.append((m.group(1), int(m.group(2)), m.group(3)))
    return got


def from_json(out: str) -> list[tuple[str, int, str]]:
    return json_failures(json.loads(out))


def from_sarif(out: str) -> list[tuple[str, int, str]]:
    return [
        (
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            r["locations"][0]["physicalLocation"]["region"]["startLine"],
            r["ruleId"].removeprefix("dshaudit/"),
        )
        for r in sarif_results(json.loads(out))
    ]


def from_junit(out: str) -> list[tuple[str, int, str]]:
    return [
        (case.get("file"), int(case.get("line")), case.find("failure").get("type"))
        for case in ET.fromstring(out).iter("testcase")
        if case.find("failure") is not None
    ]


def from_github(out: str) -> list[tuple[str, int, str]]:
    got = []
    for name, props, _ in map(parse_command, out.splitlines()):
        if name == "error":
            got.append((props["file"], int(props["line"]), props["title"].removeprefix("dshaudit: ")))
    return got


def from_markdown(out: str) -> list[tuple[str, int, str]]:
    got = []
    for where, _, status, _ in table_rows(out):
        file, line = unescape_md(where).rsplit(":", 1)
        got.append((file, int(line), status.strip("`")))
    return got


PARSERS = {
    "text": from_text,
    "json": from_json,
    "sarif": from_sarif,
    "junit": from_junit,
    "github": from_github,
    "markdown": from_markdown,
}


def test_every_format_reports_the_same_failures(audit):
    assert set(PARSERS) == set(DIAGNOSTIC_FORMATS), "a new format needs a parser here"
    expected = sorted(("findings/f.md", line, status) for line, status in EXPECTED_FAILURES)
    for fmt in DIAGNOSTIC_FORMATS:
        got = PARSERS[fmt](check(fmt).stdout)
        assert sorted(got) == expected, fmt


def test_every_format_when_everything_holds(workspace):
    write_findings(workspace, f"`{CONTEXT}:14` → `this.fiber`\n- `claim: core.context-builtin-services.count == 5`\n")
    outputs = {}
    for fmt in DIAGNOSTIC_FORMATS:
        run = run_cli("check", "--format", fmt)
        assert run.exit_code == 0, (fmt, run.stdout)
        assert PARSERS[fmt](run.stdout) == [], fmt
        outputs[fmt] = run.stdout
    sarif = json.loads(outputs["sarif"])
    jsonschema.Draft4Validator(SCHEMA).validate(sarif)
    assert sarif_results(sarif) == []
    root = ET.fromstring(outputs["junit"])
    assert (root.get("tests"), root.get("failures")) == ("2", "0")
    assert outputs["github"].startswith("::notice title=dshaudit check::1 citations in 1 files: 1 ok, 0 failed")
    assert "Every citation and claim holds." in outputs["markdown"]
    assert "| Where |" not in outputs["markdown"]


def test_check_help_lists_every_format():
    out = run_cli("check", "--help").stdout
    for fmt in DIAGNOSTIC_FORMATS:
        assert fmt in out


@pytest.mark.parametrize(
    "remote, uri",
    [
        ("https://x-access-token:abc123@github.com/acme/audit.git", "https://github.com/acme/audit.git"),
        ("https://github.com/acme/audit?token=abc123#frag", "https://github.com/acme/audit"),
        ("ssh://git@example.com:2222/acme/audit.git", "ssh://example.com:2222/acme/audit.git"),
        ("git@github.com:acme/audit.git", "ssh://github.com/acme/audit.git"),
        ("/srv/git/audit.git", "file:///srv/git/audit.git"),
        ("../audit", None),  # relative to what? left out
        ("", None),
    ],
)
def test_origin_urls_lose_credentials(remote, uri):
    from dshaudit.git.auditrepo import clean_remote_url

    assert clean_remote_url(remote) == uri


# -- the structure of the output layer --------------------------------------------------------------


def test_no_formatter_runs_git_or_reads_files():
    sources = sorted((REPO_ROOT / "src" / "dshaudit" / "output" / "formats").glob("*.py"))
    assert len(sources) > 1  # the formats' folder, not a path that names nothing
    for module in sources:
        if module.name == "__init__.py":
            continue  # the driver: it asks git once, before any format renders
        tree = ast.parse(module.read_text())
        names = {
            alias.name
            for node in ast.walk(tree)
            if isinstance(node, (ast.Import, ast.ImportFrom))
            for alias in node.names
        }
        modules = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
        assert not names & {"subprocess", "audit_repository", "git"}, module.name
        assert not modules & {"subprocess", "git"}, module.name
        assert "open(" not in module.read_text(), module.name


def test_the_formats_are_their_modules_and_the_diagnostic_ones_say_so():
    """Named without importing them (a warm run loads the one it renders): the names hold."""
    import importlib

    assert list(FORMATS) == ["text", "json", "sarif", "junit", "github", "markdown", "html"]
    for name in FORMATS:
        assert FORMATS[name] is importlib.import_module(f"dshaudit.output.formats.{name}")
    assert set(DIAGNOSTIC_FORMATS) == {name for name in FORMATS if FORMATS[name].RENDERS_DIAGNOSTICS}
    with pytest.raises(KeyError):
        FORMATS["interface"]
