"""`dshaudit lint`: the format of findings, checked without ever opening DSH."""

from __future__ import annotations

import pytest

from conftest import REPO_ROOT, run_cli, write_findings
from dshaudit.git import repository

SHA1 = "1" * 40
SHA2 = "2" * 40
ANCHORED = "`vendor/cordis/src/context.ts:14` → `this.fiber`"


@pytest.fixture
def lint_space(tmp_path, monkeypatch):
    """A folder with dshaudit.toml (pins v1, v2 at made-up SHAs), findings/, and no DSH anywhere."""
    (tmp_path / "dshaudit.toml").write_text(
        f'default_pin = "v1"\n\n[upstream]\nurl = "https://example.invalid/dsh"\n\n'
        f'[pins]\nv1 = "{SHA1}"\nv2 = "{SHA2}"\n'
    )
    (tmp_path / "findings").mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DSH_REPO", str(tmp_path / "no-such-clone"))
    monkeypatch.setenv("DSHAUDIT_CACHE_DIR", str(tmp_path / "cache"))

    def refuse(*args, **kwargs):
        raise AssertionError("lint opened a DSH repository")

    monkeypatch.setattr(repository.DshRepository, "open", classmethod(refuse))
    return tmp_path


def lint_json(*args: str):
    run = run_cli("lint", "--format", "json", *args)
    return run, run.json["problems"]


def codes(problems) -> list[tuple[str, str]]:
    return [(p["severity"], p["code"]) for p in problems]


def test_clean_file_passes_and_opens_no_repository(lint_space):
    write_findings(lint_space, f"Evidence {ANCHORED}, and `a/b.ts#Foo.bar`.\n")
    run = run_cli("lint")
    assert run.exit_code == 0, run.stdout
    assert run.stdout == "1 files linted: 0 errors, 0 warnings\n"
    assert not (lint_space / "cache" / "repos").exists()  # no clone was made


def test_missing_front_matter(lint_space):
    write_findings(lint_space, f"No front matter. {ANCHORED}\n", pin=None)
    run, problems = lint_json()
    assert run.exit_code == 1
    assert problems == [
        {
            "file": "findings/f.md",
            "line": 1,
            "column": 1,
            "severity": "error",
            "code": "missing_front_matter",
            "message": "no YAML front matter: start the file with `---`, `pin: NAME`, `---`",
        }
    ]


def test_front_matter_without_pin(lint_space):
    (lint_space / "findings" / "f.md").write_text(f"---\ntitle: x\n---\n{ANCHORED}\n")
    run, problems = lint_json()
    assert run.exit_code == 1
    assert codes(problems) == [("error", "missing_pin")]
    assert "pins: v1, v2" in problems[0]["message"]


def test_malformed_front_matter_is_reported_and_other_files_still_linted(lint_space):
    (lint_space / "findings" / "a.md").write_text("---\npin: [v1\n---\nbody\n")
    (lint_space / "findings" / "b.md").write_text("---\npin: v1\n")  # never closed
    write_findings(lint_space, "`a/b.ts:0` → `x`\n", name="c.md")
    run = run_cli("lint")
    assert run.exit_code == 1
    lines = run.stdout.splitlines()
    assert lines[0].startswith("findings/a.md:")
    assert ": error: malformed_front_matter: malformed front matter:" in lines[0]
    assert lines[1] == (
        "findings/b.md:1:1: error: malformed_front_matter: front matter opened with '---' is never closed"
    )
    # The third file is still read after the two broken ones.
    assert lines[2] == "findings/c.md:4:2: error: invalid_citation: `a/b.ts:0`: line numbers start at 1"
    assert lines[3] == "3 files linted: 3 errors, 0 warnings"


def test_not_utf8_is_one_error_not_a_stop(lint_space):
    (lint_space / "findings" / "a.md").write_bytes(b"---\npin: v1\n---\n\xff\n")
    write_findings(lint_space, f"{ANCHORED}\n", name="b.md")
    run, problems = lint_json()
    assert run.exit_code == 1
    assert codes(problems) == [("error", "unreadable_file")]
    assert problems[0]["line"] == 4
    assert run.json["summary"]["files"] == 2


def test_unknown_pin_in_front_matter(lint_space):
    write_findings(lint_space, f"{ANCHORED}\n", pin="v9")
    run, problems = lint_json()
    assert run.exit_code == 1
    assert problems == [
        {
            "file": "findings/f.md",
            "line": 2,
            "column": 6,
            "severity": "error",
            "code": "unknown_pin",
            "message": "pin 'v9' is not in dshaudit.toml (v1, v2), nor a full 40-hex SHA",
        }
    ]


def test_full_sha_pins_are_accepted_without_a_repository(lint_space):
    sha = "abcdef0123" * 4
    write_findings(lint_space, f"{ANCHORED} and `a/b.ts:3@{sha}` → `x` and `a/b.ts:3@v2` → `y`\n", pin=sha)
    run = run_cli("lint")
    assert run.exit_code == 0, run.stdout


def test_citation_suffix_naming_an_unknown_pin(lint_space):
    write_findings(lint_space, "`a/b.ts:3@v9` → `x`, `a/b.ts:4@6d1214af` → `y`\n")
    run, problems = lint_json()
    assert run.exit_code == 1
    assert [(p["code"], p["message"]) for p in problems] == [
        ("unknown_pin", "`a/b.ts:3@v9`: pin 'v9' is not in dshaudit.toml (v1, v2), nor a full 40-hex SHA"),
        (
            "unknown_pin",
            "`a/b.ts:4@6d1214af`: pin '6d1214af' is not in dshaudit.toml (v1, v2), a short SHA is not a pin",
        ),
    ]


def test_unknown_fact_id_is_an_error_but_an_unknown_field_is_not_knowable(lint_space):
    write_findings(
        lint_space,
        "`claim: core.context-builtin-service.count == 5` and "
        "`claim: core.context-builtin-services.no_such_field == 5` and "
        "`prior: workspace.packages == 239`\n",
    )
    run, problems = lint_json()
    assert run.exit_code == 1
    assert codes(problems) == [("error", "unknown_fact")]
    assert problems[0]["column"] == 1
    assert problems[0]["message"] == (
        "`claim: core.context-builtin-service.count == 5`: no fact named "
        "core.context-builtin-service.count; did you mean core.context-builtin-services?"
    )


@pytest.mark.parametrize(
    "claim, message",
    [
        ("`claim: workspace.packages.count 239`", "expected FACT[.FIELD] OP VALUE"),
        ("`claim: workspace.packages.count == {a, b`", "{ is never closed"),
        ("`prior: workspace.packages.count == 'x`", "unterminated string 'x"),
    ],
)
def test_malformed_claim(lint_space, claim, message):
    write_findings(lint_space, f"Said {claim}.\n")
    run, problems = lint_json()
    assert run.exit_code == 1
    assert codes(problems) == [("error", "invalid_claim")]
    assert message in problems[0]["message"]
    assert (problems[0]["line"], problems[0]["column"]) == (4, 6)


@pytest.mark.parametrize(
    "citation, message",
    [
        ("`a/b.ts:0` → `x`", "`a/b.ts:0`: line numbers start at 1"),
        ("`a/b.ts:5-3` → `x`", "`a/b.ts:5-3`: range 5-3 runs backwards"),
        ("`a/b.ts:99999999999` → `x`", "`a/b.ts:99999999999`: line 99999999999 is beyond any file dshaudit reads"),
        ("`/etc/passwd:1` → `root`", "`/etc/passwd:1`: absolute paths are not repository paths"),
        ("`../../etc/passwd:1` → `root`", "`../../etc/passwd:1`: '.' and '..' are not allowed in a repository path"),
        ("`a/./b.ts:1` → `x`", "`a/./b.ts:1`: '.' and '..' are not allowed in a repository path"),
        ("`a/b.ts:` → `x`", "`a/b.ts:` names no lines; write `path:N`, `path:N-M` or `path#Symbol`"),
        ("`vendor/README.md: the log`", "`vendor/README.md:` names no lines"),
        ("`package.json:#deps`", "`package.json:` names no lines"),
    ],
)
def test_malformed_citation(lint_space, citation, message):
    write_findings(lint_space, f"Here {citation}.\n")
    run, problems = lint_json()
    assert run.exit_code == 1
    assert codes(problems) == [("error", "invalid_citation")]
    assert problems[0]["message"].startswith(message)
    assert (problems[0]["line"], problems[0]["column"]) == (4, 7)


def test_line_number_too_long_for_int_is_a_problem_not_a_crash(lint_space):
    write_findings(lint_space, "ok line\n\nHere `a/b.ts:" + "9" * 5000 + "` → `x`.\n", name="a.md")
    write_findings(lint_space, f"{ANCHORED}\n", name="b.md")
    run, problems = lint_json()
    assert run.exit_code == 1
    assert codes(problems) == [("error", "invalid_citation")]
    assert (problems[0]["file"], problems[0]["line"], problems[0]["column"]) == ("findings/a.md", 6, 7)
    assert problems[0]["message"].endswith("a line number 5000 digits long is beyond any file dshaudit reads")


def test_empty_line_list_only_in_inline_code_and_not_in_anchors_or_fences(lint_space):
    body = (
        "In prose vendor/README.md: lists nine packages.\n\n"  # prose, not inline code: a writing style
        "`a/b.ts:3` → `key: a/b.ts: value`\n\n"  # inside an anchor: quoted DSH text
        "```yaml\nfile: a/b.ts: x\n```\n\n"  # fenced: never scanned
        "`https://example.com/a/b.ts:` and `localhost:` and `this.fiber: Fiber`\n"
    )
    write_findings(lint_space, body)
    run = run_cli("lint")
    assert run.exit_code == 0, run.stdout


def test_compiler_style_location_is_a_warning(lint_space):
    write_findings(lint_space, "tsc says `packages/core/src/a.ts:12:7` is wrong.\n")
    run = run_cli("lint")
    assert run.exit_code == 0
    assert run.stdout.splitlines() == [
        "findings/f.md:4:11: warning: compiler_location: `packages/core/src/a.ts:12:7` looks like a compiler "
        "location (line:column), not a citation; cite `packages/core/src/a.ts:12` with an anchor",
        "1 files linted: 0 errors, 1 warnings (warnings fail only with --strict)",
    ]
    assert run_cli("lint", "--strict").exit_code == 1


def test_duplicate_claims_in_one_file_and_across_files(lint_space):
    write_findings(
        lint_space,
        "`claim: workspace.packages.count == 2,589` then `claim: workspace.packages.count == 2589`\n"
        "`prior: workspace.packages.count == 2589` is another kind: not a duplicate.\n",
        name="a.md",
    )
    write_findings(lint_space, "`claim: root.patches == {b, a}`\n", name="b.md")
    write_findings(
        lint_space, "Again `claim: root.patches == {a, b}` and `claim: root.patches == [b, a]`\n", name="c.md"
    )
    run = run_cli("lint")
    assert run.exit_code == 0
    assert run.stdout.splitlines() == [
        "findings/a.md:4:49: warning: duplicate_claim: `claim: workspace.packages.count == 2589` "
        "is already stated at findings/a.md:4:1",
        "findings/c.md:4:7: warning: duplicate_claim: `claim: root.patches == {a, b}` "
        "is already stated at findings/b.md:4:1",
        "3 files linted: 0 errors, 2 warnings (warnings fail only with --strict)",
    ]


def test_unanchored_citation_is_a_warning_and_strict_fails_on_it(lint_space):
    write_findings(lint_space, "Bare `a/b.ts:3` here; anchored " + ANCHORED + "; symbol `a/b.ts#Foo`.\n")
    run, problems = lint_json()
    assert run.exit_code == 0
    assert run.json["summary"] == {"files": 1, "errors": 0, "warnings": 1, "strict": False, "failed": False}
    assert problems == [
        {
            "file": "findings/f.md",
            "line": 4,
            "column": 7,
            "severity": "warning",
            "code": "unanchored_citation",
            "message": "`a/b.ts:3` has no anchor: only its path and line range are checked; "
            "add → `text on the line` or #Symbol",
        }
    ]
    strict, _ = lint_json("--strict")
    assert strict.exit_code == 1
    assert strict.json["summary"]["failed"] is True


def test_a_malformed_citation_is_not_also_called_unanchored(lint_space):
    write_findings(lint_space, "`a/b.ts:0`\n")
    _, problems = lint_json()
    assert codes(problems) == [("error", "invalid_citation")]


def test_usage_errors_exit_2(lint_space):
    assert run_cli("lint", "findings/nope.md").exit_code == 2
    assert run_cli("lint", "--format", "pdf").exit_code == 2
    assert run_cli("lint", "--output", "sarif").exit_code == 2  # FORMAT=PATH, not a format alone
    (lint_space / "findings").rmdir()
    run = run_cli("lint")
    assert run.exit_code == 2
    assert "no findings/ folder" in run.stderr


def test_malformed_config_exits_2(lint_space):
    (lint_space / "dshaudit.toml").write_text("[pins\n")
    write_findings(lint_space, f"{ANCHORED}\n")
    run = run_cli("lint")
    assert run.exit_code == 2
    assert "malformed configuration" in run.stderr


def test_control_characters_in_messages_are_escaped(lint_space):
    # Findings text is echoed in messages; an ESC must come out as a visible escape.
    write_findings(lint_space, "`claim: workspace\x1b[2J == 1`\n")
    run = run_cli("lint")
    assert run.exit_code == 1
    assert "\x1b" not in run.stdout
    assert "`claim: workspace\\x1b[2J == 1`" in run.stdout


def test_the_audits_own_findings_pass(monkeypatch):
    """findings/ lints clean, even strictly: the prior audit's citations in
    corrections.md are marked `quoted:`, each claim is stated once, and every
    stated search result is a claim."""
    monkeypatch.chdir(REPO_ROOT)
    run, problems = lint_json()
    assert run.exit_code == 0, problems
    assert problems == []
    assert run_cli("lint", "--strict").exit_code == 0
