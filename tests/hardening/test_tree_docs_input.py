"""`--tree-docs PIN[:DIR]` is untrusted: folders that climb out of the tree,
absolute folders, pathological globs, pins that look like options and control
characters end in the tree's own documents or a one-line error (exit 2), in
bounded time, and nothing outside the clone's objects is ever read.

The spec's parsing errors of tests/cli/test_treedocs.py (an unknown pin, a
folder with no Markdown, `..`, no pin) are not repeated here."""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import run_cli, write_findings
from hardening.helpers import one_line_error, timed

# The fixture repository holds one Markdown file at v1: docs/architecture.md.
TREE_DOC = "docs/architecture.md"


@pytest.fixture
def tree_workspace(workspace):
    write_findings(workspace, "Nothing cited here.\n")
    return workspace


@pytest.mark.parametrize(
    "where, message",
    [
        ("../docs", "pathspec '../docs': '.' and '..' are not allowed"),
        ("docs/../..", "'.' and '..' are not allowed"),
        ("docs/./x", "'.' and '..' are not allowed"),
        ("./docs", "'.' and '..' are not allowed"),
        ("docs/**/../../..", "'.' and '..' are not allowed"),
        ("C:\\docs", "paths are relative to the tree's root, with '/'"),
        ("..\\..\\docs", "paths are relative to the tree's root, with '/'"),
    ],
)
def test_folders_that_climb_out_of_the_tree_are_refused(tree_workspace, where, message):
    run = run_cli("check", "--tree-docs", f"v1:{where}")
    one_line_error(run, 2, f"--tree-docs {f'v1:{where}'!r}: ")
    assert message in run.stderr


@pytest.mark.parametrize("where", ["%2e%2e", "%2e%2e/%2e%2e/etc", "~", "~/docs", "$HOME", ".git", "etc/passwd"])
def test_folders_that_only_look_like_a_way_out_name_nothing_in_the_tree(tree_workspace, where):
    # Not decoded, not expanded: a folder of the tree by that very name, which the tree lacks.
    one_line_error(
        run_cli("check", "--tree-docs", f"v1:{where}"), 2, f"--tree-docs v1:{where}: no Markdown file there at v1"
    )


def test_an_absolute_folder_is_the_tree_s_own_folder_never_the_disk(tree_workspace, tmp_path):
    # A leading `/` is the tree's root: `/docs` is the tree's docs, `/etc` the tree's (absent) etc.
    run = run_cli("check", "--tree-docs", "v1:/docs", "--format", "json")
    assert run.exit_code == 0, run.stderr
    plain = run_cli("check", "--tree-docs", "v1:docs", "--format", "json")
    assert run.stdout == plain.stdout
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("`vendor/cordis/src/context.ts:14` → `this.fiber`\n")
    one_line_error(
        run_cli("check", "--tree-docs", f"v1:{outside}"),
        2,
        f"--tree-docs v1:{str(outside).strip('/')}: no Markdown file there at v1",
    )
    one_line_error(run_cli("check", "--tree-docs", "v1:/etc"), 2, "--tree-docs v1:etc: no Markdown file there at v1")


@pytest.mark.parametrize(
    "glob",
    [
        "*" * 5000 + "q",  # a run of stars: one star
        "*a" * 60 + "q",  # stars that could split a path every way
        "*?" * 60 + "q",
        "*/" * 60 + "q",
        "*[ac]*[a-z]" * 40 + "q",
        "**/" * 2000 + "nothing.md",
    ],
)
def test_pathological_globs_end_in_bounded_time(tree_workspace, glob):
    run, elapsed = timed("check", "--tree-docs", f"v1:{glob}")
    assert elapsed < 20, elapsed
    one_line_error(run, 2, "--tree-docs v1:")
    assert run.stderr.rstrip().endswith(": no Markdown file there at v1")


def test_globs_that_match_select_the_tree_s_markdown(tree_workspace):
    for glob in ("*", "**", "*" * 5000, "d*c*/*.md", "*a*r*c*h*i*t*e*c*t*u*r*e*.md", "docs/[a-z]*.md"):
        run = run_cli("check", "--tree-docs", f"v1:{glob}", "--format", "json")
        assert run.exit_code == 0, (glob, run.stderr)


def test_a_glob_stuck_on_a_long_path_is_linear(tmp_path):
    """The glob machinery alone, on a path of a thousand letters: many stars, each tried once."""
    import time

    from dshaudit.git.pathspec import selected

    path = "a/" * 500 + "b.md"
    start = time.perf_counter()
    assert not selected(path, ("*a" * 200 + "q",))
    assert not selected(path, ("*" * 200 + "q",))
    assert selected(path, ("*a" * 200 + "*.md",))
    assert time.perf_counter() - start < 5


@pytest.mark.parametrize(
    "spec",
    [
        "--upload-pack=touch pwned:docs",
        "-x:docs",
        "--help:docs",
        "--output=pwned:docs",
        "HEAD:docs",
        "v1~1:docs",
        "v1^{tree}:docs",
        "v1..v3:docs",
        "@{-1}:docs",
    ],
)
def test_pins_that_look_like_options_or_revisions_never_reach_git(tree_workspace, spec):
    pin = spec.rsplit(":", 1)[0]
    one_line_error(run_cli("check", "--tree-docs", spec), 2, f"--tree-docs PIN: pin {pin!r} is not in dshaudit.toml")
    assert not Path("pwned").exists()


def test_a_folder_that_looks_like_an_option_is_a_folder(tree_workspace):
    one_line_error(run_cli("check", "--tree-docs", "v1:-x"), 2, "--tree-docs v1:-x: no Markdown file there at v1")
    one_line_error(
        run_cli("check", "--tree-docs", "v1:--output=pwned"), 2, "--tree-docs v1:--output=pwned: no Markdown file"
    )
    assert not Path("pwned").exists()


@pytest.mark.parametrize("ch", ["\x00", "\x07", "\x1b", "\t", "\r", "\x7f", "\u202e", "\u200b"])
def test_control_characters_are_refused_and_never_written_raw(tree_workspace, ch):
    for spec in (f"v1:do{ch}cs", f"v{ch}1:docs"):
        run = run_cli("check", "--tree-docs", spec)
        assert run.exit_code == 2 and len(run.stderr.splitlines()) == 1, (spec, run.stderr)
        # The terminal is shown the character escaped, never the character itself.
        assert ch not in run.stderr and "Traceback" not in run.stderr


def test_surrounding_blanks_and_a_trailing_slash_are_the_folder(tree_workspace):
    plain = run_cli("check", "--tree-docs", "v1:docs", "--format", "json").stdout
    for spec in ("v1:docs/", "v1: docs \n", "v1:docs//"):
        run = run_cli("check", "--tree-docs", spec, "--format", "json")
        assert run.exit_code == 0 and run.stdout == plain, (spec, run.stderr)
