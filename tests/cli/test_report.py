"""`dshaudit report`: the same verdicts as `check`, laid out for people, with
everything from DSH and from findings escaped."""

from __future__ import annotations

import json
import re

from conftest import run_cli, write_findings

HOSTILE = (
    "# A finding <script>alert(1)</script> {{ 7*7 }} {% raw %}\n\n"
    "Cited `vendor/cordis/src/context.ts:14-15` → `this.fiber` and a table | cell.\n"
    "Broken `vendor/cordis/src/context.ts:16` → `this.gone`.\n"
    "`claim: core.context-builtin-services.count == 5`\n"
    "`claim: core.context-builtin-services == {fiber, reflect, registry, events, logger}`\n"
    "`prior: core.context-builtin-services.count == 4`\n"
)


def test_html_is_self_contained_escaped_and_complete(workspace, fixture_repo):
    write_findings(workspace, HOSTILE)
    run = run_cli("report", "--format", "html", "--output", "out.html")
    assert run.exit_code == 1  # one citation fails, as in `check`
    page = (workspace / "out.html").read_text()
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "{{ 7*7 }}" in page and "{% raw %}" in page  # data is never evaluated as a template
    assert not re.search(r"<(link|script|img|iframe)\b", page), "the page must not load anything"
    assert 'href="http' not in page.split("<main>")[0].replace('href="https://github.com', "")
    sha = fixture_repo.shas["v1"]
    assert f'href="https://example.invalid/dsh/blob/{sha}/vendor/cordis/src/context.ts#L14-L15"' in page
    assert "this.fiber = new Fiber(self" in page  # the cited lines are shown
    assert "content_mismatch" in page and "`this.gone` is not on line 16; not found anywhere in the file" in page
    for section in ("Claims", "Citations", "Measured facts", "Contents"):
        assert section in page
    assert page.count('class="status confirmed"') == 2
    assert "prior audit" in page and 'class="status contradicted"' in page


def test_markdown_tables_survive_hostile_text(workspace, fixture_repo):
    write_findings(workspace, HOSTILE)
    run = run_cli("report", "--format", "markdown")
    assert run.exit_code == 1
    md = run.stdout
    assert "<script>" not in md
    assert "## A finding &lt;script&gt;alert(1)&lt;/script&gt; {{ 7\\*7 }} {% raw %}" in md
    # Every row of a table has as many cells as its header: no `|` from data broke one.
    width = None
    for line in md.splitlines():
        if not line.startswith("|"):
            width = None
            continue
        cells = len(re.split(r"(?<!\\)\|", line)) - 2
        width = width or cells
        assert cells == width, line
    sha = fixture_repo.shas["v1"]
    assert (
        "| confirmed | `core.context-builtin-services.count` (line 8) | `== 5` | `5` | "
        f"[vendor/cordis/src/context.ts:14-18](https://example.invalid/dsh/blob/{sha}/vendor/cordis/src/context.ts#L14-L18) |"
    ) in md
    assert "| contradicted (prior audit) | `core.context-builtin-services.count` (line 10) | `== 4` | `5` |" in md


def test_json_report_is_byte_identical_and_matches_check(workspace):
    write_findings(workspace, HOSTILE)
    first = run_cli("report", "--format", "json").stdout
    assert first == run_cli("report", "--format", "json").stdout
    doc = json.loads(first)
    check = run_cli("check", "--format", "json").json
    assert doc["summary"]["citations"] == check["summary"]["total"]
    assert doc["summary"]["citations_ok"] == check["summary"]["ok"]
    statuses = [c["status"] for f in doc["findings"] for c in f["citations"]]
    assert statuses == [c["status"] for c in check["citations"]]
    assert [c["status"] for f in doc["findings"] for c in f["claims"]] == [c["status"] for c in check["claims"]]
    fact = next(f for f in doc["facts"] if f["id"] == "core.context-builtin-services")
    assert fact["value"] == "[fiber, reflect, registry, events, logger]"
    assert [e["text"] for e in fact["evidence"]] == ["vendor/cordis/src/context.ts:14-18"]


def test_several_pins_add_a_status_per_pin(workspace):
    write_findings(workspace, "`vendor/cordis/src/context.ts:14` → `this.fiber`\n")
    doc = json.loads(run_cli("report", "--format", "json", "--pin", "v1", "--pin", "v2").stdout)
    assert [p["name"] for p in doc["pins"]] == ["v1", "v2"]
    cit = doc["findings"][0]["citations"][0]
    assert cit["status"] == "ok"
    assert cit["at_pins"] == [{"pin": "v2", "status": "content_mismatch"}]


def test_output_to_unwritable_place_is_one_line_and_leaves_nothing(workspace):
    write_findings(workspace, "`vendor/cordis/src/context.ts:14` → `this.fiber`\n")
    run = run_cli("report", "--output", "no/such/folder/out.html")
    assert run.exit_code == 2
    assert run.stderr.startswith("dshaudit: no/such/folder/out.html: cannot write")
    assert not (workspace / "no").exists()


def test_drift_matrix_names_the_first_pin_where_each_stops_holding(workspace, fixture_repo):
    text = (workspace / "dshaudit.toml").read_text()
    (workspace / "dshaudit.toml").write_text(
        "\n".join(line for line in text.splitlines() if not line.startswith("v3 =")) + "\n"
    )
    write_findings(
        workspace,
        "`vendor/cordis/src/context.ts:14` → `this.fiber`\n"
        "`docs/architecture.md:4` → `privileged core`\n"
        "`claim: core.context-builtin-services.count == 5`\n",
    )
    # v3 is not a pin in the config: it is found as a tag of the clone.
    doc = json.loads(run_cli("report", "--format", "json", "--pin", "v1", "--pin", "v2", "--pin", "v3").stdout)
    drift = doc["drift"]
    assert drift["pins"] == ["v1", "v2", "v3"]
    rows = {r["source"]: r for r in drift["rows"]}
    moved = rows["findings/f.md:4:2"]
    assert moved["statuses"] == ["ok", "content_mismatch", "content_mismatch"]
    assert moved["first_failing"] == "v2" and not moved["stable"]
    steady = rows["findings/f.md:5:2"]
    assert steady["statuses"] == ["ok", "ok", "ok"] and steady["first_failing"] is None
    assert rows["findings/f.md:6:1"]["statuses"] == ["confirmed"] * 3
    assert drift["changed"] == 1 and drift["first_failing_counts"] == {"v1": 0, "v2": 1, "v3": 0}
    md = run_cli("report", "--format", "markdown", "--pin", "v1", "--pin", "v2").stdout
    assert "| findings/f.md:4:2 | `vendor/cordis/src/context.ts:14` | ok | content\\_mismatch | v2 |" not in md
    assert "| findings/f.md:4:2 | `vendor/cordis/src/context.ts:14` | ok | content_mismatch | v2 |" in md


def test_unknown_pin_or_tag_is_exit_2(workspace):
    write_findings(workspace, "`docs/architecture.md:4` → `privileged core`\n")
    run = run_cli("report", "--pin", "no-such-tag")
    assert run.exit_code == 2
    assert "pin 'no-such-tag' is not in dshaudit.toml" in run.stderr and "nor a tag of the DSH clone" in run.stderr


def test_a_foreign_document_shows_its_phantom_names(workspace):
    write_findings(
        workspace,
        "# A draft\n\nThe registry is filled by `AgentRegistry.setFactoryX`, and `defaults.maxDepth` exists.\n",
    )
    md = run_cli("report", "--format", "markdown")
    assert md.exit_code == 1
    assert "## Names that DSH does not hold" in md.stdout and "`AgentRegistry.setFactoryX`" in md.stdout
    html = run_cli("report", "--format", "html").stdout
    assert 'id="phantoms"' in html and "<code>AgentRegistry.setFactoryX</code>" in html
    assert "defaults.maxDepth" not in md.stdout.split("## Names that DSH does not hold")[1]


def test_output_format_to_path_writes_each_page_of_one_run(workspace):
    write_findings(workspace, HOSTILE)
    run = run_cli("report", "--output", "html=r.html", "-o", "markdown=r.md", "--output", "json=r.json")
    assert run.exit_code == 1 and run.stdout == ""  # files asked for and no --format: nothing on stdout
    for fmt, name in (("html", "r.html"), ("markdown", "r.md"), ("json", "r.json")):
        assert (workspace / name).read_text() == run_cli("report", "--format", fmt).stdout, fmt
    # --format still prints, and a FILE still takes --format, as before FORMAT=PATH existed.
    run = run_cli("report", "--format", "markdown", "--output", "html=again.html")
    assert run.stdout == (workspace / "r.md").read_text()
    assert (workspace / "again.html").read_text() == (workspace / "r.html").read_text()
    run = run_cli("report", "--format", "json", "--output", "plain=name.json")
    assert run.stdout == "" and (workspace / "plain=name.json").read_text() == (workspace / "r.json").read_text()


def test_output_format_to_path_is_all_or_none_and_checked(workspace):
    write_findings(workspace, "`vendor/cordis/src/context.ts:14` → `this.fiber`\n")
    run = run_cli("report", "--output", "html=r.html", "--output", "markdown=no/such/folder/r.md")
    assert run.exit_code == 2 and run.stderr.startswith("dshaudit: no/such/folder/r.md: cannot write")
    assert not (workspace / "r.html").exists()
    run = run_cli("report", "--output", "sarif=r.sarif")
    assert run.exit_code == 2 and "unknown format 'sarif' (one of html, markdown, json)" in run.stderr
    assert not (workspace / "r.sarif").exists() and not (workspace / "sarif=r.sarif").exists()
