"""The community handbook of DSH ($HANDBOOK_REPO), checked as written against a real DSH
clone ($DSH_REPO): a corpus nobody wrote for dshaudit. Skipped, with the reason, when
either clone is not named."""

from __future__ import annotations

import io
import re
import subprocess
import tarfile
from collections import Counter

import pytest

from conftest import run_cli

pytestmark = pytest.mark.dsh

COMMIT = "717ca66"  # the handbook as it was measured
DSH_WEB = "https://github.com/deepseek-ai/deepseek-harness"
# Every link into DSH at a ref: to lines, a file, a folder, or the raw file.
LINK_RE = re.compile(
    r"https://(?:github\.com/deepseek-ai/deepseek-harness/(?:blob|tree|raw)|raw\.githubusercontent\.com/"
    r"deepseek-ai/deepseek-harness)/[A-Za-z0-9][\w.\-]*/[^\s#?()\[\]<>\"'`]+"
)


@pytest.fixture
def handbook(tmp_path, handbook_repo, dsh_repo, monkeypatch):
    """The handbook's docs/en at COMMIT, extracted; the cwd."""
    git_dir = handbook_repo / ".git" if (handbook_repo / ".git").is_dir() else handbook_repo
    archive = subprocess.run(
        ["git", f"--git-dir={git_dir}", "archive", COMMIT, "docs/en"], capture_output=True, check=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        # The "data" filter (3.11.4 and later) refuses links and paths that leave the folder.
        tar.extractall(tmp_path, **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DSH_REPO", str(dsh_repo))
    monkeypatch.setenv("DSHAUDIT_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path


def test_every_permalink_is_read_as_a_citation_at_its_own_commit(handbook):
    written = Counter()
    for page in (handbook / "docs/en").rglob("*.md"):
        written[page.relative_to(handbook).as_posix()] += len(LINK_RE.findall(page.read_text(encoding="utf-8")))
    run = run_cli("check", "docs/en", "--format", "json")
    assert run.exit_code in (0, 1), run.stderr
    read = Counter(c["source"]["file"] for c in run.json["citations"] if c["form"] in ("permalink", "tree-permalink"))
    assert sum(written.values()) > 400 and read == +written
    # A link to a whole file or a folder at a commit holds when it is there, and every one here is.
    whole = [c for c in run.json["citations"] if not c["target"]["lines"]]
    assert whole and all(c["status"] in ("ok", "unpinned") for c in whole), [
        (c["target"]["path"], c["target"]["pin"], c["status"]) for c in whole if c["status"] not in ("ok", "unpinned")
    ]
    assert {c["target"]["pin"] for c in whole if c["status"] == "unpinned"} == {"master"}


# The line citations whose lines hold other code than their link text says, at their own commit
# (read by hand: see METHOD.md), and the lines where that code is.
WRONG_AT_HOME = {
    ("docs/en/integrations/acp-permission-request-ui.md", 144): "268-284",
    ("docs/en/troubleshooting/code-mode-skill-context.md", 146): "1621-1639",
    ("docs/en/troubleshooting/stuck-tool-cancellation.md", 155): "2534-2549",
    ("docs/en/troubleshooting/http2-invalid-session.md", 150): "270-279",
}
# The one whose range ends past its file.
PAST_THE_END = ("docs/en/troubleshooting/live-session-log-durability.md", 175)


def test_wrong_numbers_are_traced_to_the_version_they_were_read_from(handbook):
    run = run_cli("check", "docs/en", "--format", "json")
    traced = [c for c in run.json["citations"] if "these numbers match the file from" in c["message"]]
    # The range that ends past its file is traced to a longer version of it too.
    assert {(c["source"]["file"], c["source"]["line"]) for c in traced} == set(WRONG_AT_HOME) | {PAST_THE_END}
    assert {c["suggested"] for c in traced if c["status"] == "suspect"} == set(WRONG_AT_HOME.values())


def test_line_citations_wrong_at_their_own_commit_are_flagged_with_the_right_lines(handbook):
    run = run_cli("check", "docs/en", "--format", "json")
    assert run.exit_code in (0, 1), run.stderr
    lined = [c for c in run.json["citations"] if c["target"]["lines"]]
    flagged = {
        (c["source"]["file"], c["source"]["line"]): c["message"] for c in lined if c["status"] not in ("ok", "unpinned")
    }
    for where, lines in WRONG_AT_HOME.items():
        assert where in flagged and lines in flagged[where], (where, flagged.get(where))
    # The one that ends past its file, and nothing else: shape alone flags nothing here.
    others = set(flagged) - set(WRONG_AT_HOME)
    assert others == {PAST_THE_END}, others


def test_only_names_tied_to_dsh_are_checked(handbook):
    run = run_cli("check", "docs/en", "--pin", "rc2", "--format", "json")
    assert run.exit_code in (0, 1), run.stderr
    checked = {r["text"] for r in run.json["references"]}
    failed = [r for r in run.json["references"] if r["status"] not in ("ok", "absent")]
    # Error codes of other tools are not claims about DSH; DSH's own packages are, except in
    # the text of a link to another site (an npm page).
    assert not {"ETARGET", "ERR_PNPM_ADDING_TO_ROOT", "llama.cpp"} & checked
    assert "@deepseek-ai/dsh-hook-protocol" in checked
    assert "@deepseek-ai/dsh-client-schema-form" not in checked
    assert not failed, [(r["text"], r["status"]) for r in failed]


def _masked(text: str) -> str:
    """The text with every link target into DSH, its line fragment included, masked."""
    return re.sub(LINK_RE.pattern + r"(?:#L\d+(?:-L\d+)?)?", "LINK", text)


def test_moving_the_handbook_to_rc2_bumps_its_links_and_leaves_the_rest(handbook):
    """`rebase --write` pins the links at a commit and those at a branch to rc2's commit, moves the
    three that moved by a line, leaves the edited ones, and changes nothing but link targets."""
    pages = {p: p.read_text(encoding="utf-8") for p in (handbook / "docs/en").rglob("*.md")}
    run = run_cli("rebase", "docs/en", "--to", "rc2", "--write", "--format", "json")
    assert run.exit_code == 1, run.stderr  # the edited ones need a person
    statuses = Counter(c["status"] for c in run.json["citations"])
    assert statuses["unchanged"] + statuses["shifted"] >= 400, statuses
    moved = {(c["source"]["file"], c["source"]["line"]) for c in run.json["citations"] if c["status"] == "shifted"}
    assert {
        ("docs/en/troubleshooting/live-session-log-durability.md", 172),
        ("docs/en/troubleshooting/remote-web-secure-context.md", 276),
        ("docs/en/troubleshooting/workspace-moved-spawn-enoent.md", 175),
    } <= moved
    assert statuses["lost"] == 3
    rc2 = "b150a551b8d465e31e418e1b2eaf5e79bbb7d28e"
    bumped = sum(p.read_text(encoding="utf-8").count(f"/{rc2}/") for p in pages)
    assert bumped - sum(text.count(f"/{rc2}/") for text in pages.values()) >= 400
    assert all(_masked(p.read_text(encoding="utf-8")) == _masked(text) for p, text in pages.items())
