"""Commands load what they use: `dshaudit --help` and `dshaudit lint` import
neither git nor the parsers, so they answer at once, on any machine.

Each probe runs the command line in a fresh interpreter and lists the modules
it has loaded by the end."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from conftest import write_findings

PROBE = """
import sys
from dshaudit.cli import main
try:
    main(sys.argv[1:], prog_name="dshaudit")
except SystemExit:
    pass
print("-- modules --")
print("\\n".join(sorted(sys.modules)))
"""
# GitPython (git, gitdb), the parsers, and the layers that read DSH.
HEAVY = ("git", "gitdb", "tree_sitter", "tree_sitter_typescript", "dshaudit.git", "dshaudit.index", "dshaudit.facts")


def loaded(*args: str, cwd: Path) -> tuple[str, set[str]]:
    run = subprocess.run([sys.executable, "-c", PROBE, *args], cwd=cwd, capture_output=True, text=True, check=True)
    out, _, modules = run.stdout.partition("-- modules --\n")
    return out, set(modules.split())


def heavy(modules: set[str]) -> set[str]:
    return {m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY)}


def test_help_loads_no_git_and_no_parser(tmp_path):
    out, modules = loaded("--help", cwd=tmp_path)
    assert "Start here:" in out and "dshaudit.cli.options" in modules
    assert heavy(modules) == set()
    assert not {m for m in modules if m.startswith(("dshaudit.documents", "dshaudit.app", "jinja2", "yaml"))}


def test_lint_loads_no_git_and_no_parser(tmp_path):
    (tmp_path / "doc.md").write_text(
        "---\npin: rc7\n---\n# A finding\n\n`packages/core/src/a.ts:3` → `start`\n"
        "- `claim: core.context-builtin-services.count == 5`\n"
    )
    out, modules = loaded("lint", "doc.md", cwd=tmp_path)
    assert out == "1 files linted: 0 errors, 0 warnings\n" and "dshaudit.checking.lint" in modules
    # Lint knows the fact ids (registry.toml, read by facts.specs) and resolves pin
    # names and SHAs with git.pins, which never opens a clone: nothing more of either layer.
    assert heavy(modules) == {"dshaudit.facts", "dshaudit.facts.specs", "dshaudit.git", "dshaudit.git.pins"}


def test_facts_loads_no_check_until_a_tree_docs_fact_is_measured(tmp_path):
    """`facts` answers from the cache or the detectors: the whole check a `tree-docs(...)`
    fact runs (moves.treedocs_fact, and checking under it) is loaded only to measure one."""
    out, modules = loaded("facts", "--repo", str(tmp_path / "no-clone"), cwd=tmp_path)
    assert "dshaudit.facts.book" in modules
    assert not {m for m in modules if m.startswith(("dshaudit.moves", "dshaudit.checking"))}


def test_a_check_read_back_from_its_kept_outcome_loads_no_parser(workspace):
    """Run again on the same inputs, `check` reads the outcome the first run kept: it parses
    no Markdown, no YAML front matter (whether a document names a pin is kept by its digest)
    and measures no fact, so it loads none of their parsers (a warm run is mostly start-up)."""
    write_findings(workspace, "Cited: `vendor/cordis/src/context.ts:14` → `this.fiber`.\n")
    parsers = ("markdown_it", "yaml", "dshaudit.documents.markdown", "dshaudit.facts.book", "tree_sitter_typescript")
    first, modules = loaded("check", cwd=workspace)
    assert {m for m in modules if m.startswith(parsers)}  # the first run parses: the probe can tell
    again, modules = loaded("check", cwd=workspace)
    assert again == first and "1 citations" in again
    assert not {m for m in modules if m.startswith(parsers)}
    # Nor what work beside it, a file it does not write, or a format it does not render, would need.
    assert not {m for m in modules if m.startswith(("multiprocessing", "concurrent", "tempfile", "xml", "jinja2"))}
    assert "dshaudit.output.formats.text" in modules and "dshaudit.output.formats.junit" not in modules


def test_a_page_not_written_for_dshaudit_is_read_back_without_a_yaml_parser(workspace):
    """Its front matter names no pin, which its letters tell: the key of its kept outcome
    needs no YAML."""
    page = workspace / "guide.md"
    page.write_text("---\ntitle: A guide\ntags: [agents]\n---\n# Guide\n\nSee `vendor/cordis/src/context.ts:14`.\n")
    first, modules = loaded("check", "guide.md", "--pin", "v1", cwd=workspace)
    assert "yaml" in modules  # the first run reads the front matter: the probe can tell
    again, modules = loaded("check", "guide.md", "--pin", "v1", cwd=workspace)
    assert again == first and "1 citations" in again
    assert "yaml" not in modules
