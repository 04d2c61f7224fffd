"""Hostile input, second round (issue 15), one section per family.

Each case ends in a correct verdict or a one-line error with a documented exit
code: never exit 4, never a pass that was not earned, bounded time and memory,
nothing written where it should not be.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from conftest import run_cli, write_findings

DSHAUDIT = str(Path(sys.executable).parent / "dshaudit")


def one_line_error(run, code: int, starts: str) -> None:
    assert run.exit_code == code, (run.exit_code, run.stdout, run.stderr)
    assert run.stderr.startswith("dshaudit: " + starts), run.stderr
    assert len(run.stderr.splitlines()) == 1 and "Traceback" not in run.stderr


def timed(*args: str) -> tuple[object, float]:
    start = time.perf_counter()
    run = run_cli(*args)
    return run, time.perf_counter() - start


# -- 1. resource limits on untrusted text ------------------------------------------------

GOOD = "`vendor/cordis/src/context.ts:14` → `this.fiber`\n"


@pytest.mark.parametrize(
    "front, line, message",
    [
        ("x: " + "[" * 5000 + "]" * 5000, 3, "malformed front matter: nested more than 16 levels deep"),
        ("x: " + "{a: " * 3000 + "1" + "}" * 3000, 3, "malformed front matter: nested more than 16 levels deep"),
        ("x:\n" + "".join("  " * i + "-\n" for i in range(1, 40)), 19, "malformed front matter: nested more"),
        (
            "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: [*b, *b, *b]",
            4,
            "malformed front matter: YAML aliases (*name) are not allowed",
        ),
        ("x: " + "9" * 5000, 3, "malformed front matter: a number of 5000 digits"),
        ("x: '" + "a" * 200_000 + "'", 3, "front matter is longer than the 65536 characters"),
        ("x: 2026-13-45", 3, "malformed front matter: month must be in 1..12"),
    ],
)
def test_front_matter_beyond_the_limits_is_refused_with_its_line(workspace, front, line, message):
    (workspace / "findings" / "f.md").write_text(f"---\npin: v1\n{front}\n---\n{GOOD}")
    run, elapsed = timed("check")
    one_line_error(run, 2, f"findings/f.md:{line}: {message}")
    assert elapsed < 10
    lint = run_cli("lint", "--format", "json")
    assert lint.exit_code == 1 and lint.json["problems"][0]["code"] == "malformed_front_matter"


@pytest.mark.parametrize(
    "claim, message",
    [
        ("core.x == " + "9" * 5000, "a claim of 5010 characters is longer than the 1000 dshaudit reads"),
        ("core.x == " + "9" * 100, "a number of more than 64 digits"),
        ("core.x == " + "[" * 40 + "]" * 40, "values nested 40 deep; at most 8"),
        ("core.x" + " " * 200_000 + "== 1", "a claim of 200010 characters"),
        ("core.x == {a, [b, {c, [d, {e, [f, {g, [h, {i}]}]}]}]}", "values nested 9 deep"),
    ],
)
def test_claims_beyond_the_limits_are_refused_with_their_line(workspace, claim, message):
    write_findings(workspace, f"text\n\n`claim: {claim}`\n")
    run, elapsed = timed("check")
    one_line_error(run, 2, f"findings/f.md:6: `claim:` {message}")
    assert elapsed < 10


def test_claim_patterns_take_linear_time(workspace):
    # Unclosed spans and runs of spaces: patterns that could try every split of them must not.
    body = (
        "`claim:"
        + " " * 100_000
        + "x\n\n"
        + "`absent: x"
        + " " * 100_000
        + "y\n\n"
        + "`claim: core.x =="
        + " " * 500
        + "`\n"
    )
    write_findings(workspace, body)
    run, elapsed = timed("check", "--format", "json")
    assert elapsed < 10
    assert run.exit_code == 1 and [c["status"] for c in run.json["claims"]] == ["invalid_claim"]


@pytest.mark.parametrize(
    "unit",
    ["[", "![", "[a](", "[`", "(", "<", "``x` ", "```x`` ", "*a ", "_a_", "&#", "<a ", "> ", "- "],
)
def test_markdown_of_pathological_brackets_in_bounded_time(workspace, unit):
    write_findings(workspace, unit * (400_000 // len(unit)) + "\n\n" + GOOD)
    run, elapsed = timed("check", "--format", "json")
    assert elapsed < 20, elapsed
    # The brackets hold no citation; a code span of them may be a name DSH lacks (exit 1).
    assert run.exit_code in (0, 1) and [c["status"] for c in run.json["citations"]] == ["ok"]


@pytest.mark.parametrize(
    "unit",
    [
        "`vendor/cordis/src/context.ts:14` ",  # one sentence of thousands of citations
        "- `vendor/cordis/src/context.ts:14`\n",  # a list of them, none naming anything
        "| `vendor/cordis/src/context.ts:14` ",  # a table row of them
        "`vendor/cordis/src/context.ts`, lines 14,",  # line phrases run together
        "`vendor/cordis/src/context.ts` (`",  # quoted code never closed
        "`vendor/cordis/src/context.ts:14` → ``x ",  # anchors never closed
        "// vendor/cordis/src/context.ts:14\n",  # each heading a block
    ],
)
def test_thousands_of_citations_in_one_paragraph_in_bounded_time(workspace, unit):
    write_findings(workspace, unit * 8000 + "\n\n" + GOOD)
    run, elapsed = timed("--no-cache", "check", "--format", "json")
    assert elapsed < 60, elapsed
    assert run.exit_code in (0, 1) and run.json["citations"][-1]["status"] == "ok"


def test_bisect_with_an_absurd_line_number_is_an_input_error(workspace):
    write_findings(workspace, GOOD)
    for line, message in (
        ("9" * 5000, "line 99999999999999999999… is not a line of findings/f.md (4 lines)"),
        ("99999999999", "line 99999999999 is not a line"),
        ("0", "line 0 is not a line"),
        ("50", "line 50 is past the end of findings/f.md (4 lines)"),
        ("4:" + "7" * 4000, "column 77777777777777777777… is not a column"),
    ):
        run = run_cli("bisect", f"findings/f.md:{line}", "--good", "v1", "--bad", "v2")
        assert run.exit_code == 2 and message in run.stderr and len(run.stderr.splitlines()) == 1, run.stderr


def test_an_absence_claim_of_a_huge_name_is_refused_with_its_line(workspace):
    write_findings(workspace, "`absent: " + "a" * 300_000 + "`\n\n" + GOOD)
    one_line_error(run_cli("check"), 2, "findings/f.md:4: `absent:` names 300000 characters")


def test_pins_of_absurd_length_never_reach_git(workspace):
    long = "a" * 200_000
    write_findings(
        workspace,
        f"`vendor/cordis/src/context.ts:14@{long}` → `this.fiber`\n"
        f"https://example.invalid/dsh/blob/{long}/vendor/cordis/src/context.ts#L14\n",
    )
    run = run_cli("check", "--format", "json")
    assert run.exit_code == 1 and [c["status"] for c in run.json["citations"]] == ["unknown_pin", "unknown_pin"]
    assert "200000 characters long" in run.json["citations"][0]["message"]
    write_findings(workspace, GOOD, pin=long[:60_000])
    run = run_cli("check")
    one_line_error(run, 2, "findings/f.md:2: front matter: pin 'aaaa")
    assert len(run.stderr) < 300


def test_too_many_line_ranges_in_one_citation_are_malformed(workspace):
    write_findings(workspace, "`vendor/cordis/src/context.ts:" + ",".join(["14"] * 5000) + "` → `this.fiber`\n")
    run, elapsed = timed("check", "--format", "json")
    assert elapsed < 10
    (v,) = run.json["citations"]
    assert v["status"] == "invalid_citation" and "5000 line ranges" in v["message"]


# -- 2. ambiguous input is an error, not a choice ---------------------------------------


@pytest.mark.parametrize(
    "front, line",
    [
        ("pin: v1\npin: v2", 3),
        ("pin: v1\ntitle: a\ntitle: b", 4),
        ("pin: v1\n'pin': v2", 3),
        ("pin: v1\nx: {a: 1, a: 2}", 3),
    ],
)
def test_a_key_given_twice_is_an_error(workspace, front, line):
    (workspace / "findings" / "f.md").write_text(f"---\n{front}\n---\n{GOOD}")
    one_line_error(run_cli("check"), 2, f"findings/f.md:{line}: malformed front matter: key ")
    lint = run_cli("lint", "--strict", "--format", "json")
    assert lint.exit_code == 1 and "given twice" in lint.json["problems"][0]["message"]
    assert lint.json["problems"][0]["line"] == line


@pytest.mark.parametrize(
    "pin_line",
    [
        '"pin": v1',
        "'pin': v1",
        "pin: !!str v1",
        "pin: &p v1",
        "? pin\n: v1",
        "pin: >-\n  v1",
        "pin:\n  v1",
        "{pin: v1}",
        "pin: 'v1' extra",
    ],
)
def test_a_pin_in_another_yaml_form_is_refused_before_anything_is_written(workspace, pin_line):
    path = workspace / "findings" / "f.md"
    path.write_text(f"---\n{pin_line}\n---\n{GOOD}")
    before = path.read_bytes()
    run = run_cli("rebase", "--to", "v2", "--write")
    assert run.exit_code == 2 and "findings/f.md:2:" in run.stderr and len(run.stderr.splitlines()) == 1, run.stderr
    assert path.read_bytes() == before
    assert run_cli("check").exit_code == 2
    lint = run_cli("lint", "--format", "json")
    assert lint.exit_code == 1 and lint.json["problems"][0]["code"] == "malformed_front_matter"


@pytest.mark.parametrize("pin_line", ["pin: v1", "pin: 'v1'", 'pin: "v1"', "pin: v1  # where we started", "pin : v1"])
@pytest.mark.parametrize("bom, newline", [("", "\n"), ("\ufeff", "\n"), ("\ufeff", "\r\n"), ("", "\r")])
def test_rebase_write_moves_the_pin_with_the_lines_in_every_accepted_form(workspace, pin_line, bom, newline):
    path = workspace / "findings" / "f.md"
    text = f"---\n{pin_line}\n---\n```\nfenced\n```\n{GOOD}"
    path.write_bytes((bom + text.replace("\n", newline)).encode())
    run = run_cli("rebase", "--to", "v2", "--write")
    assert run.exit_code == 0, run.stderr
    after = path.read_bytes().decode()
    expected = bom + text.replace("context.ts:14", "context.ts:17").replace(pin_line, pin_line.replace("v1", "v2"))
    assert after == expected.replace("\n", newline)
    assert run_cli("check").exit_code == 0


# -- 3. nothing passes unchecked ------------------------------------------------------------

HIDDEN = [
    "\u200b",
    "\u200c",
    "\u200d",
    "\u00ad",
    "\u2060",
    "\ufeff",
    "\u0301",
    "\u034f",
    "\u180e",
    "\u2062",
    "\ue000",
    "\u3164",
    "\x07",
    "\u2028",
]


@pytest.mark.parametrize("ch", HIDDEN)
@pytest.mark.parametrize(
    "where",
    [
        "vendor/cordis/src/con{}text.ts:14",
        "vendor/cordis/src/context{}.ts:14",
        "vendor/cordis{}/src/context.ts:14",
        "vendor/cordis/src/context.ts:1{}4",
        "vendor/cordis/src/context.ts:14-1{}5",
        "vendor/cordis/src/context.ts{}:14",
    ],
)
def test_a_citation_with_a_hidden_character_fails_and_lint_names_it(workspace, ch, where):
    import unicodedata

    cited = where.format(ch)
    write_findings(workspace, f"`{cited}` → `this.fiber`\n")
    run = run_cli("check", "--format", "json")
    assert run.exit_code == 1, run.stdout
    (v,) = run.json["citations"]
    assert v["status"] == "invalid_citation" and f"U+{ord(ch):04X}" in v["message"]
    lint = run_cli("lint", "--format", "json")
    assert lint.exit_code == 1
    (p,) = [p for p in lint.json["problems"] if p["severity"] == "error"]
    assert p["code"] == "invalid_citation" and f"U+{ord(ch):04X}" in p["message"]
    if unicodedata.name(ch, ""):
        assert unicodedata.name(ch) in p["message"]
    text = run_cli("check")
    assert ch not in text.stdout  # shown as an escape or named, never as itself


def test_a_hidden_character_in_a_line_phrase_or_a_pin_is_found_too(workspace):
    write_findings(
        workspace,
        "`vendor/cordis/src/context.ts` (line 1\u200b4) holds it\n\n"
        "`vendor/cordis/src/context.ts:14@v\u200d2` → `this.fiber`\n",
    )
    run = run_cli("check", "--format", "json")
    assert run.exit_code == 1
    assert [c["status"] for c in run.json["citations"]] == ["invalid_citation", "invalid_citation"]


@pytest.mark.parametrize("newline", ["\r", "\r\n", "\n"])
def test_lone_carriage_returns_count_lines_as_markdown_does(workspace, newline):
    body = (
        "```\nfenced `vendor/cordis/src/context.ts:99`\n```\n"
        + GOOD
        + "\n`vendor/cordis/src/context.ts:15` → `nothing`\n"
    )
    path = workspace / "findings" / "f.md"
    path.write_bytes(("---\npin: v1\n---\n" + body).replace("\n", newline).encode())
    run = run_cli("check", "--format", "json")
    got = [(c["source"]["line"], c["status"]) for c in run.json["citations"]]
    assert got == [(7, "ok"), (9, "content_mismatch")] and run.exit_code == 1
    assert run_cli("anchor", "findings/f.md").exit_code in (0, 1)


def test_citation_shaped_text_with_no_citation_is_a_warning_that_fails_under_strict(workspace):
    for body in (
        "```\nvendor/cordis/src/context.ts:14\n```\n",
        "<!-- vendor/cordis/src/context.ts:14 -->\n",
        "see vendor/cordis/src/context.ts\u00a0(line 14)\n",
        "see context.ts:14:3 in a stack\n",
    ):
        write_findings(workspace, body)
        run = run_cli("check", "--format", "json")
        assert run.exit_code == 0 and [c["status"] for c in run.json["coverage"]][0] == "no_citations", body
        assert "no_citations" in run_cli("check").stdout
        assert run_cli("check", "--strict").exit_code == 1
        lint = run_cli("lint", "--strict", "--format", "json")
        assert lint.exit_code == 1 and "no_citations" in [p["code"] for p in lint.json["problems"]]


def test_no_citation_at_all_in_the_paths_given_is_said_and_fails_under_strict(workspace):
    write_findings(workspace, "Prose only, nothing cited.\n")
    (workspace / "empty").mkdir()
    for paths in (["findings"], ["findings/f.md"], ["empty"]):
        run = run_cli("check", *paths)
        assert run.exit_code == 0 and "nothing_checked" in run.stdout, run.stdout
        assert run_cli("check", "--strict", *paths).exit_code == 1
    write_findings(workspace, GOOD, name="g.md")
    assert run_cli("check", "--strict", "findings").exit_code == 0


# -- 4. configuration type confusion -----------------------------------------------------------


def test_a_configuration_that_is_not_a_file_or_too_deep_is_an_input_error(workspace, tmp_path):
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)
    write_findings(workspace, GOOD)
    run, elapsed = timed("check", "--config", str(fifo))
    one_line_error(run, 2, f"{fifo}: is a FIFO, not a regular file")
    (workspace / "dshaudit.toml").write_text("a = " + "[" * 50_000 + "]" * 50_000 + "\n")
    one_line_error(run_cli("check"), 2, f"{workspace / 'dshaudit.toml'}: malformed configuration")
    (workspace / "dshaudit.toml").write_text("# " + "x" * 2_000_000 + "\n")
    one_line_error(run_cli("lint"), 2, f"{workspace / 'dshaudit.toml'}: 2000003 bytes is larger than")


@pytest.mark.parametrize(
    "toml, message",
    [
        ('upstream = "https://example.invalid/dsh"\n', "`upstream` must be a table"),
        ("[upstream]\nurl = 5\n", "`upstream.url` must be a string (the clone URL), not a number"),
        ('[upstream]\nurl = ""\n', "`upstream.url` must not be empty"),
        ("[upstream]\nurl = [1]\n", "`upstream.url` must be a string"),
        ('[upstream]\nurl = "https://example.invalid/dsh"\nweb = {a = 1}\n', "`upstream.web` must be a string"),
        ('pins = ["6d1214af7d96e9aa0095ef000806df57253b9ed7"]\n', "`pins` must be a table"),
        ("pins = 7\n", "`pins` must be a table"),
        ('pins = "v1"\n', "`pins` must be a table"),
        ("[pins]\nv1 = 5\n", "pin 'v1' must be a full 40-hex lowercase SHA, not a number"),
        ("[pins]\nv1 = {sha = 'x'}\n", "pin 'v1' must be a full 40-hex lowercase SHA, not a table"),
        ("[pins.v1]\nsha = 'x'\n", "pin 'v1' must be a full 40-hex lowercase SHA"),
        ('default_pin = ["v1"]\n', "`default_pin` must be a string (one of the pins), not an array"),
        ("default_pin = 1\n", "`default_pin` must be a string"),
        ("default_pin = 2026-01-01\n", "`default_pin` must be a string (one of the pins), not a date or time"),
        ('default_pin = "nope"\n', "default_pin 'nope' is not one of the pins"),
    ],
)
def test_configuration_of_the_wrong_type_is_a_one_line_error_naming_the_key(workspace, toml, message):
    config = workspace / "dshaudit.toml"
    config.write_text(toml)
    write_findings(workspace, GOOD)
    for args in (
        ["check"],
        ["lint"],
        ["show", "vendor/cordis/src/context.ts:14@v1"],
        ["report", "--format", "json"],
        ["rebase", "--to", "v2"],
        ["facts", "--pin", "v1"],
        ["anchor", "findings/f.md"],
        ["bisect", "findings/f.md:4", "--good", "v1", "--bad", "v2"],
    ):
        one_line_error(run_cli(*args), 2, f"{config}: {message}")


# -- 5. write safety -----------------------------------------------------------------------------


@pytest.mark.parametrize("mode", [0o600, 0o640, 0o444, 0o755])
def test_rebase_and_anchor_write_keep_each_files_permission_bits(workspace, mode):
    path = write_findings(workspace, GOOD)
    path.chmod(mode)
    assert run_cli("rebase", "--to", "v2", "--write").exit_code == 0
    assert b"context.ts:17" in path.read_bytes() and (path.stat().st_mode & 0o7777) == mode
    other = write_findings(workspace, "`vendor/cordis/src/context.ts:14` holds the fiber\n", name="g.md")
    other.chmod(mode)
    run = run_cli("anchor", "findings/g.md", "--write")
    assert run.exit_code == 0 and "→" in other.read_text() and (other.stat().st_mode & 0o7777) == mode


def _during_rebase(monkeypatch, act):
    """Run `act` after rebase read the findings and before it writes them."""
    import dshaudit.moves.rebase as rebase_module

    real = rebase_module.rebase

    def meanwhile(*args, **kwargs):
        act()
        return real(*args, **kwargs)

    monkeypatch.setattr(rebase_module, "rebase", meanwhile)


def test_rebase_write_refuses_a_symlink_swapped_in_mid_run(workspace, tmp_path, monkeypatch):
    path = write_findings(workspace, GOOD)
    outside = tmp_path.parent / f"{tmp_path.name}-outside.md"
    outside.write_text(path.read_text())  # the same bytes: only the file's identity tells them apart
    _during_rebase(monkeypatch, lambda: (path.unlink(), path.symlink_to(outside)))
    run = run_cli("rebase", "--to", "v2", "--write")
    one_line_error(run, 2, "findings/f.md: is a symbolic link now; nothing is read or written through it")
    assert path.is_symlink() and outside.read_text() == GOOD.join(["---\npin: v1\n---\n", ""])
    assert [p.name for p in (workspace / "findings").iterdir()] == ["f.md"]


@pytest.mark.parametrize(
    "edit, message",
    [
        ("delete", "findings/f.md: cannot read: No such file or directory"),
        ("directory", "findings/f.md: is a directory, not a regular file"),
        ("fifo", "findings/f.md: is a FIFO, not a regular file"),
        ("truncate", "findings/f.md: changed on disk while rebase ran"),
        ("append", "findings/f.md: changed on disk while rebase ran"),
        ("not utf-8", "findings/f.md: changed on disk while rebase ran"),
    ],
)
def test_a_concurrent_edit_during_rebase_write_is_a_clear_error(workspace, monkeypatch, edit, message):
    path = write_findings(workspace, GOOD)
    other = write_findings(workspace, GOOD, name="g.md")
    before = other.read_bytes()
    acts = {
        "delete": lambda: path.unlink(),
        "directory": lambda: (path.unlink(), path.mkdir()),
        "fifo": lambda: (path.unlink(), os.mkfifo(path)),
        "truncate": lambda: path.write_text(""),
        "append": lambda: path.write_text(path.read_text() + "more\n"),
        "not utf-8": lambda: path.write_bytes(b"\xff\xfe"),
    }
    _during_rebase(monkeypatch, acts[edit])
    one_line_error(run_cli("rebase", "--to", "v2", "--write"), 2, message)
    assert other.read_bytes() == before  # all or none
    assert not [p.name for p in (workspace / "findings").iterdir() if p.name.startswith(".")]


def test_an_edit_just_before_the_rename_is_refused_too(workspace, monkeypatch):
    import dshaudit.platform.writing as writing

    path = write_findings(workspace, GOOD)
    real = writing._stage

    def stage_then_edit(target, text):
        tmp = real(target, text)
        path.write_text(path.read_text() + "an edit made meanwhile\n")
        return tmp

    monkeypatch.setattr(writing, "_stage", stage_then_edit)
    one_line_error(run_cli("rebase", "--to", "v2", "--write"), 2, "findings/f.md: changed on disk while rebase ran")
    assert path.read_text().endswith("an edit made meanwhile\n")
    assert [p.name for p in (workspace / "findings").iterdir()] == ["f.md"]


def test_report_output_onto_devices_and_streams(workspace, tmp_path, capfd):
    import socket
    import threading

    write_findings(workspace, GOOD)
    null = Path("/dev/null")
    assert run_cli("report", "--format", "json", "-o", "/dev/null").exit_code == 0
    assert null.is_char_device()
    run = run_cli("report", "--format", "json", "-o", "/dev/stdout")
    assert run.exit_code == 0 and run.stdout.startswith("{") and Path("/dev/stdout").is_symlink()
    run = run_cli("check", "--format", "json", "--output", "text=/dev/stderr")
    assert run.exit_code == 0 and "1 citations in 1 files" in run.stderr
    assert run_cli("check", "--output", "sarif=/dev/null").exit_code == 0 and null.is_char_device()
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    one_line_error(run_cli("report", "--format", "json", "-o", str(fifo)), 2, f"{fifo}: is a FIFO with no reader")
    got = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    time.sleep(0.2)
    run = run_cli("report", "--format", "json", "-o", str(fifo))
    reader.join(10)
    assert run.exit_code == 0 and got and got[0].startswith(b"{") and fifo.is_fifo()
    sock_path = tmp_path / "sock"
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(sock_path))
    try:
        one_line_error(run_cli("report", "-o", str(sock_path)), 2, f"{sock_path}: is a socket; not written")
        one_line_error(
            run_cli("check", "--output", f"json={sock_path}", "--output", "sarif=new.sarif"),
            2,
            f"{sock_path}: is a socket",
        )
        assert not Path("new.sarif").exists()  # all or none
    finally:
        sock.close()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


# -- 6. cache integrity --------------------------------------------------------------------------

CLAIMED = "`claim: core.context-builtin-services.count >= 1`\n`vendor/cordis/src/context.ts:14` → `this.fiber`\n"


@pytest.fixture
def cached_workspace(tmp_path, facts_repo, fixture_repo, monkeypatch):
    """A workspace on the facts repository (claims and citations), its cache filled by one run."""
    from fixture_repo import write_config

    write_config(tmp_path, facts_repo, default_pin="v1")
    (tmp_path / "findings").mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DSH_REPO", str(facts_repo.path))
    monkeypatch.setenv("DSHAUDIT_CACHE_DIR", str(tmp_path / "cache"))
    write_findings(
        tmp_path,
        "`claim: core.context-builtin-services.count >= 1`\n"
        "`packages/core/agent/src/index.ts:1` → `export`\n`AgentRegistry` and `LIMIT = 3`\n",
    )
    return tmp_path


CACHED_COMMANDS = (("check", "--format", "json"), ("facts", "--format", "json", "--pin", "v1"))


@pytest.mark.parametrize(
    "wrong",
    [
        [],
        "x",
        1.5,
        True,
        {"a": 1},
        [[1, 2, 3]],
        {"chunks": "x", "fences": []},
        {"status": "nonsense", "message": "", "value": 1, "fields": {}, "evidence": []},
    ],
)
def test_a_cache_entry_of_the_wrong_shape_with_a_valid_mac_is_discarded_and_rebuilt(cached_workspace, wrong):
    from dshaudit.platform.cache import FORMAT, Cache

    first = [run_cli(*c) for c in CACHED_COMMANDS]
    root = cached_workspace / "cache" / f"cache-v{FORMAT}"
    shards = sorted(root.rglob("*.json"))
    assert {s.parent.name for s in shards} >= {"markdown-blocks", "fact", "partial", "needles"}
    cache = Cache(root)
    for path in shards:
        if path.parent.name == "searches" and wrong == []:
            continue  # a search that matched nothing: [] is the right shape there, and is used
        shard = cache.shard(path.parent.name, path.stem)
        for key in list(shard.entries):
            shard.put(key, wrong)  # signed with the user's own key: only the shape is wrong
        shard.flush()
    again = [run_cli(*c) for c in CACHED_COMMANDS]
    assert [(r.exit_code, r.stdout) for r in again] == [(r.exit_code, r.stdout) for r in first]
    assert all(r.exit_code in (0, 1) and "internal error" not in r.stderr for r in again)
    rebuilt = Cache(root)
    for kind in ("markdown-blocks", "fact"):  # read by every run: computed again and written back
        for path in (root / kind).glob("*.json"):
            assert wrong not in rebuilt.shard(kind, path.stem).entries.values()
    assert [(r.exit_code, r.stdout) for r in (run_cli(*c) for c in CACHED_COMMANDS)] == [
        (r.exit_code, r.stdout) for r in first
    ]


def test_a_forged_cache_entry_cannot_turn_a_failing_run_into_a_passing_one(cached_workspace):
    import hashlib
    import json

    from dshaudit.platform.cache import FORMAT

    write_findings(cached_workspace, "`claim: core.context-builtin-services.count == 999`\n")
    failing = run_cli("check", "--format", "json")
    assert failing.exit_code == 1
    for shard in (cached_workspace / "cache" / f"cache-v{FORMAT}" / "fact").rglob("*.json"):
        doc = json.loads(shard.read_text())
        for entry in doc["payload"].values():
            entry["value"] = 999  # the lie, sealed every way a forger could without the user's key
        body = json.dumps(doc["payload"])
        for mac in (
            hashlib.sha256((body + "\0").encode()).hexdigest(),
            hashlib.sha256(body.encode()).hexdigest(),
            "0" * 64,
        ):
            shard.write_text(json.dumps({**doc, "mac": mac, "sha256": mac}))
            assert run_cli("check", "--format", "json").stdout == failing.stdout


@pytest.mark.parametrize(
    "damage",
    [
        "folder writable by others",
        "key readable by others",
        "key is a link",
        "folder is a link",
        "folder of another user",
    ],
)
def test_a_cache_others_could_write_is_not_used(cached_workspace, tmp_path, damage):
    from dshaudit.platform.cache import FORMAT

    first = run_cli("check", "--format", "json")
    root = cached_workspace / "cache" / f"cache-v{FORMAT}"
    if damage == "folder writable by others":
        root.chmod(0o777)
    elif damage == "key readable by others":
        (root / "key").chmod(0o644)
    elif damage == "key is a link":
        elsewhere = tmp_path / "planted-key"
        elsewhere.write_text("f" * 64)
        (root / "key").unlink()
        (root / "key").symlink_to(elsewhere)
    elif damage == "folder is a link":
        moved = tmp_path / "planted-cache"
        root.rename(moved)
        root.symlink_to(moved)
    else:
        if os.geteuid() != 0:
            pytest.skip("needs root to give the folder away")
        os.chown(root, 65534, 65534)
    run = run_cli("check", "--format", "json")
    assert run.exit_code == first.exit_code and run.stdout == first.stdout
    assert "not using the cache at" in run.stderr and "internal error" not in run.stderr


def test_the_cache_lock_is_opened_without_following_a_symlink(cached_workspace, tmp_path):
    from dshaudit.platform.cache import FORMAT

    root = cached_workspace / "cache" / f"cache-v{FORMAT}"
    target = tmp_path / "created-outside"
    for lock in root.rglob("*.lock"):
        lock.unlink()
        lock.symlink_to(target)
    for shard in root.rglob("*.json"):
        shard.unlink()  # so the next run has entries to write, and takes the locks
    run = run_cli("check", "--format", "json")
    assert run.exit_code in (0, 1) and "internal error" not in run.stderr and not target.exists()


# -- 7. cost of hints -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def big_tree(tmp_path_factory):
    """A repository of 8,000 files in 1,000 folders (one blob under every name), built in one commit."""
    import subprocess

    root = tmp_path_factory.mktemp("bigtree")
    subprocess.run(["git", "init", "-q", "-b", "main", str(root)], check=True)
    blob = (
        subprocess.run(
            ["git", "-C", str(root), "hash-object", "-w", "--stdin"],
            input=b"export const x = 1\n",
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .strip()
    )
    names = ["index.ts", "types.ts", "package.json", "README.md", "service.ts", "client.tsx", "utils.ts", "spec.ts"]
    paths = [
        f"packages/group{g % 10}/pkg{g}/src/{n}" if n != "package.json" else f"packages/group{g % 10}/pkg{g}/{n}"
        for g in range(1000)
        for n in names
    ]
    index = "".join(f"100644 {blob}\t{p}\n" for p in paths).encode()
    env = {**os.environ, "GIT_INDEX_FILE": str(root / "tmp-index")}
    subprocess.run(["git", "-C", str(root), "update-index", "--add", "--index-info"], input=index, env=env, check=True)
    tree = subprocess.run(["git", "-C", str(root), "write-tree"], env=env, capture_output=True, check=True).stdout
    commit = (
        subprocess.run(
            [
                "git",
                "-C",
                str(root),
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "commit-tree",
                tree.decode().strip(),
                "-m",
                "big",
            ],
            capture_output=True,
            check=True,
        )
        .stdout.decode()
        .strip()
    )
    return root, commit, paths


def _missing(paths: list[str]) -> list[str]:
    import random

    rnd = random.Random(15)
    out = []
    for i in range(1000):
        p = rnd.choice(paths)
        folder, _, name = p.rpartition("/")
        out.append(
            [
                f"{folder}/x{name}",
                f"moved/{p}",
                f"{folder}/invented{i}.ts",
                f"zz{i}/yy/qq{i}.ts",
                f"packages/group{i % 10}/none{i}/src/{name}",
            ][i % 5]
        )
    return out


def test_1000_missing_paths_get_their_hints_in_two_seconds(big_tree):
    from dshaudit.git.repository import DshRepository

    root, commit, paths = big_tree
    snap = DshRepository.open(str(root), "big").snapshot(commit)
    missing = _missing(paths)
    start = time.perf_counter()
    hints = [snap.closest_paths(m) for m in missing]
    elapsed = time.perf_counter() - start
    assert elapsed < 2.0, elapsed
    assert all(h and h[0] in set(paths) for h, m in zip(hints, missing) if not m.startswith("zz"))
    # A file of the same name, in the folder the path names when it has one.
    assert snap.closest_paths("packages/group3/pkg13/src/xindex.ts") == ["packages/group3/pkg13/src/index.ts"]
    assert snap.closest_paths("moved/packages/group3/pkg13/src/service.ts")[0].endswith("/service.ts")


def test_1000_missing_paths_checked_in_bounded_time(big_tree, tmp_path, monkeypatch):
    root, commit, paths = big_tree
    (tmp_path / "findings").mkdir()
    (tmp_path / "dshaudit.toml").write_text(f'[pins]\nbig = "{commit}"\n')
    body = "".join(f"- `{m}:1` → `x`\n" for m in _missing(paths))
    (tmp_path / "findings" / "f.md").write_text("---\npin: big\n---\n" + body)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DSH_REPO", str(root))
    monkeypatch.setenv("DSHAUDIT_NO_CACHE", "1")
    run, elapsed = timed("check", "--format", "json")
    assert run.exit_code == 1 and elapsed < 10, elapsed
    statuses = {c["status"] for c in run.json["citations"]}
    assert statuses <= {"missing_path", "ambiguous_path", "content_mismatch", "ok"}
    assert sum("closest existing path" in c["message"] for c in run.json["citations"]) >= 700


# -- 8. pins that are not commits; annotated tags peeled -------------------------------------------


@pytest.fixture
def tagged_repo(tmp_path, monkeypatch):
    """Two commits; `rel` an annotated tag of the second, `treetag` an annotated tag of a tree."""
    from fixture_repo import _commit, _write, git

    root = tmp_path / "tagged"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    _write(root, "src/a.ts", "export const one = 1\n")
    first = _commit(root, "one", "2026-08-01T10:00:00Z", "t1")
    _write(root, "src/a.ts", "// moved down\nexport const one = 1\n")
    second = _commit(root, "two", "2026-08-02T10:00:00Z", "t2")
    git(root, "tag", "-a", "rel", "-m", "release", second)
    tree = git(root, "rev-parse", f"{first}^{{tree}}")
    git(root, "tag", "-a", "treetag", "-m", "a tree", tree)
    objects = {
        "first": first,
        "second": second,
        "tree": tree,
        "blob": git(root, "rev-parse", f"{first}:src/a.ts"),
        "tag": git(root, "rev-parse", "rel"),
        "treetag": git(root, "rev-parse", "treetag"),
    }
    work = tmp_path / "w"
    (work / "findings").mkdir(parents=True)
    (work / "dshaudit.toml").write_text(f'[pins]\nfirst = "{first}"\n')
    (work / "findings" / "f.md").write_text("---\npin: first\n---\n`src/a.ts:1` → `export const one`\n")
    monkeypatch.chdir(work)
    monkeypatch.setenv("DSH_REPO", str(root))
    monkeypatch.setenv("DSHAUDIT_CACHE_DIR", str(tmp_path / "cache"))
    return work, objects


@pytest.mark.parametrize("kind", ["tree", "blob", "treetag"])
def test_a_tree_or_blob_given_as_a_pin_is_named_as_such(tagged_repo, kind):
    work, objects = tagged_repo
    sha = objects[kind]
    what = {"tree": "a tree", "blob": "a blob", "treetag": "an annotated tag of a tree"}[kind]
    one_line_error(run_cli("check", "--pin", sha), 2, f"--pin: {sha} is {what} of the DSH clone, not a commit")
    one_line_error(run_cli("show", f"src/a.ts:1@{sha}"), 2, "@PIN or --pin: " + sha)
    (work / "findings" / "g.md").write_text(f"---\npin: {sha}\n---\n`src/a.ts:1` → `export`\n")
    one_line_error(run_cli("check", "findings/g.md"), 2, f"findings/g.md:2: front matter: {sha} is {what}")
    (work / "findings" / "g.md").write_text(f"---\npin: first\n---\n`src/a.ts:1@{sha}` → `export`\n")
    run = run_cli("check", "findings/g.md", "--format", "json")
    (v,) = run.json["citations"]
    assert run.exit_code == 1 and v["status"] == "unknown_pin" and f"is {what}" in v["message"]
    (work / "dshaudit.toml").write_text(f'[pins]\nfirst = "{objects["first"]}"\nbad = "{sha}"\n')
    run = run_cli("check", "--pin", "bad")
    assert run.exit_code == 2 and "not a commit" in run.stderr and "missing" not in run.stderr, run.stderr


def test_a_tag_naming_a_tree_is_named_as_such(tagged_repo):
    one_line_error(run_cli("check", "--pin", "treetag"), 2, "--pin: tag 'treetag' names a tree, not a commit")


def test_annotated_tags_are_peeled_to_their_commit_in_every_output(tagged_repo):
    import json

    work, objects = tagged_repo
    tag, commit = objects["tag"], objects["second"]
    outputs = []
    for ref in ("rel", tag):
        outputs += [
            run_cli("check", "--pin", ref, "--format", "json").stdout,
            run_cli("check", "--pin", ref, "--format", "sarif").stdout,
            run_cli("report", "--pin", "first", "--pin", ref, "--format", "json").stdout,
            run_cli("report", "--pin", ref, "--format", "html").stdout,
            run_cli("rebase", "--to", ref, "--format", "json").stdout,
            run_cli("facts", "--pin", ref, "--format", "json").stdout,
            run_cli("bisect", "findings/f.md:4", "--good", "first", "--bad", ref, "--format", "json").stdout,
            run_cli("show", f"src/a.ts:2@{ref}").stdout,
        ]
    assert all(outputs) and commit[:12] in "".join(outputs)
    assert tag[:12] not in "".join(outputs)
    (work / "findings" / "f.md").write_text(
        f"---\npin: {tag}\n---\n`src/a.ts:2` → `export const one`\n`src/a.ts:2@{tag}` → `export const one`\n"
    )
    run = run_cli("check", "--format", "json")
    assert run.exit_code == 0 and {c["target"]["sha"] for c in run.json["citations"]} == {commit}
    assert run_cli("rebase", "--to", "first", "--write").exit_code == 0
    assert (work / "findings" / "f.md").read_text().startswith("---\npin: first\n---\n`src/a.ts:1` → ")
    (work / "dshaudit.toml").write_text(f'[pins]\nfirst = "{objects["first"]}"\nbytag = "{tag}"\n')
    run = run_cli("check", "--pin", "bytag")
    assert run.exit_code == 2 and f"write its commit {commit} instead" in run.stderr
    (work / "findings" / "f.md").write_text(f"---\npin: {commit}\n---\n`src/a.ts:2` → `export const one`\n")
    assert json.loads(run_cli("check", "--format", "json").stdout)["citations"][0]["status"] == "ok"


def test_a_document_with_names_but_no_citation_was_checked(workspace, fixture_repo):
    write_findings(workspace, "The registry is `AgentRegistry`, filled by `setFactoryNowhere`.\n")
    run = run_cli("check", "findings")
    assert run.exit_code == 1 and "nothing_checked" not in run.stdout and "phantom" in run.stdout, run.stdout
