"""Hostile permalinks: traversal in the path, plain and percent-encoded; absurd,
zero and backwards `#L` ranges; links to another owner's repository; SHAs the
clone lacks and ambiguous SHA prefixes; query strings; `tree/` links. Each gets
a verdict of its own, and none reads anything but the clone's objects.

The permalink forms themselves (a commit, a branch, a missing commit, a whole
file, a folder, raw links) are in tests/cli/test_wild.py; a ref of 200,000
characters is in test_resource_limits.py."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

import pytest

from conftest import extend_fixture, run_cli, write_findings
from hardening.helpers import one_verdict

WEB = "https://example.invalid/dsh"  # the fixture config's upstream URL
CONTEXT = "vendor/cordis/src/context.ts"


@pytest.fixture
def v1(fixture_repo):
    return fixture_repo.shas["v1"]


def verdicts(workspace, body: str) -> list[dict]:
    write_findings(workspace, body)
    run = run_cli("check", "--format", "json")
    assert run.exit_code in (0, 1), run.stderr
    return run.json["citations"]


# -- traversal -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path, said",
    [
        (f"vendor/../{CONTEXT}", "'.' and '..' are not allowed"),
        ("../../etc/passwd", "'.' and '..' are not allowed"),
        (f"./{CONTEXT}", "'.' and '..' are not allowed"),
        (f"/{CONTEXT}", "absolute paths are not repository paths"),
        (f"vendor/%2e%2e/{CONTEXT}", "'.' and '..' are not allowed"),
        ("%2e%2e/%2e%2e/etc/passwd", "(percent-decoded: '../../etc/passwd')"),
        ("%2E%2E/%2E%2E/etc/passwd", "(percent-decoded: '../../etc/passwd')"),
        (f".%2e/{CONTEXT}", "'.' and '..' are not allowed"),
        (f"%2e/{CONTEXT}", "'.' and '..' are not allowed"),
        ("vendor%2f..%2f..%2fetc%2fpasswd", "'.' and '..' are not allowed"),
        (f"%2f{CONTEXT}", "absolute paths are not repository paths"),
        (f"%252e%252e/{CONTEXT}", "(percent-decoded: '../vendor"),  # encoded twice
        ("vendor%5c..%5c..%5cetc%5cpasswd", "backslashes are not path separators"),
        (f"{CONTEXT}%00.png", "a control character is no part of a repository path"),
        (f"vendor%0a/{CONTEXT}", "a control character"),
        ("%2egit/config", "paths inside .git are not repository content"),
    ],
)
def test_traversal_in_the_path_is_an_invalid_citation(workspace, v1, path, said):
    for link in (f"{WEB}/blob/{v1}/{path}#L1", f"{WEB}/blob/{v1}/{path}", f"{WEB}/tree/{v1}/{path}"):
        v = one_verdict(workspace, link)
        assert v["status"] == "invalid_citation" and said in v["message"], (link, v)


def test_percent_encoded_names_that_climb_nowhere_are_looked_up_as_written(workspace, v1):
    # Only what decodes to a way out is refused: other escapes name a path the tree lacks.
    v = one_verdict(workspace, f"{WEB}/blob/{v1}/vendor/cordis/src/%63ontext.ts#L14")
    assert v["status"] == "missing_path" and f"closest existing path: {CONTEXT}" in v["message"]
    assert one_verdict(workspace, f"{WEB}/blob/{v1}/vendor/100%25/x.ts#L1")["status"] == "missing_path"


def test_nothing_outside_the_object_database_is_read(workspace, v1, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("TOP SECRET\n")
    for path in (f"..%2f{secret.name}", f"%2e%2e/{secret.name}", str(secret).lstrip("/")):
        v = one_verdict(workspace, f"{WEB}/blob/{v1}/{path}#L1 → `TOP SECRET`")
        assert v["status"] in ("invalid_citation", "missing_path") and "TOP SECRET" not in v["message"], v


# -- #L ranges -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "fragment, status, said",
    [
        ("#L0", "invalid_citation", "line numbers start at 1"),
        ("#L0-L3", "invalid_citation", "line numbers start at 1"),
        ("#L20-L14", "invalid_citation", "range 20-14 runs backwards"),
        ("#L15-L14", "invalid_citation", "runs backwards"),
        ("#L999999999999", "invalid_citation", "beyond any file dshaudit reads"),
        ("#L" + "9" * 5000, "invalid_citation", "a line number 5000 digits long"),
        ("#L14-L" + "9" * 30, "invalid_citation", "a line number 30 digits long"),
        ("#L900", "out_of_range", ""),
        ("#L30-L900", "out_of_range", ""),
        ("#L14-L14", "ok", ""),
        ("#L14C5-L15C9", "ok", ""),  # columns, as GitHub writes a selection
    ],
)
def test_absurd_zero_and_backwards_ranges(workspace, v1, fragment, status, said):
    v = one_verdict(workspace, f"{WEB}/blob/{v1}/{CONTEXT}{fragment} → `this.fiber`")
    assert v["status"] == status and said in v["message"], v


def test_a_column_range_checks_both_of_its_lines(workspace, v1):
    # Line 15 holds `this.reflect`, line 14 does not: read as line 14 alone, it would fail.
    v = one_verdict(workspace, f"{WEB}/blob/{v1}/{CONTEXT}#L14C3-L15C9 → `this.reflect`")
    assert (v["status"], v["target"]["lines"]) == ("ok", "14-15")
    v = one_verdict(workspace, f"{WEB}/blob/{v1}/{CONTEXT}#L12C3-L13C9 → `this.reflect`")
    assert v["status"] == "content_mismatch"


# -- another owner's repository ------------------------------------------------------------------


@pytest.mark.parametrize(
    "link",
    [
        "https://example.invalid/other/blob/{sha}/{path}#L14",
        "https://example.invalid/dsh-fork/blob/{sha}/{path}#L14",
        "https://example.invalid/dshx/blob/{sha}/{path}#L14",
        "https://example.invalid.evil.invalid/dsh/blob/{sha}/{path}#L14",
        "https://evil.invalid/example.invalid/dsh/blob/{sha}/{path}#L14",
        "https://evil.invalid/?to=https://example.invalid/dsh/blob/{sha}/{path}#L14",
        "http://example.invalid@evil.invalid/dsh/blob/{sha}/{path}#L14",
    ],
)
def test_a_link_to_another_repository_is_never_checked_against_dsh(workspace, v1, link):
    # A fork shares DSH's commits, but not what its files say: no verdict against DSH's clone.
    assert verdicts(workspace, link.format(sha=v1, path=CONTEXT) + " → `this.fiber`\n") == []


def test_on_github_only_the_configured_owner_and_name_are_dsh(workspace, v1):
    config = workspace / "dshaudit.toml"
    config.write_text(config.read_text().replace(WEB, "https://github.com/owner/dsh"))
    links = [
        f"https://github.com/owner/dsh/blob/{v1}/{CONTEXT}#L14",
        f"https://raw.githubusercontent.com/owner/dsh/{v1}/{CONTEXT}",
        f"https://github.com/attacker/dsh/blob/{v1}/{CONTEXT}#L14",
        f"https://raw.githubusercontent.com/attacker/dsh/{v1}/{CONTEXT}",
        f"https://github.com/owner/dsh2/blob/{v1}/{CONTEXT}#L14",
        f"https://github.com/owner/dsh.git/blob/{v1}/{CONTEXT}#L14",
        f"https://gist.github.com/owner/dsh/blob/{v1}/{CONTEXT}#L14",
    ]
    got = verdicts(workspace, "".join(f"- {link}\n" for link in links))
    assert [(c["source"]["line"], c["status"]) for c in got] == [(4, "ok"), (5, "ok")]


# -- SHAs absent and ambiguous -------------------------------------------------------------------


def test_shas_the_clone_lacks_are_unknown_pins(workspace, fixture_repo, v1):
    blob = subprocess.run(
        ["git", "-C", str(fixture_repo.path), "rev-parse", f"{v1}:{CONTEXT}"], capture_output=True, text=True
    ).stdout.strip()
    cases = [
        ("b" * 40, "not in the DSH clone"),
        ("b" * 12, "no single commit of the DSH clone has an id starting bbbbbbbbbbbb"),
        (v1[:5], "too short to name one commit"),
        (blob, "is a blob of the DSH clone, not a commit"),
        (v1.upper(), "not in dshaudit.toml"),
        (v1 + "0" * 24, "not in dshaudit.toml"),  # a SHA-256 length
    ]
    for ref, said in cases:
        v = one_verdict(workspace, f"{WEB}/blob/{ref}/{CONTEXT}#L14 → `this.fiber`")
        assert v["status"] == "unknown_pin" and said in v["message"], (ref, v)
    assert run_cli("check").exit_code == 1


def _colliding_commits(repo: Path, parent: str, digits: int = 7) -> tuple[str, str]:
    """Two commits of `parent`'s tree whose ids share their first `digits` hex digits:
    messages are tried until two ids collide there, then both are written."""
    tree = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", f"{parent}^{{tree}}"], capture_output=True, text=True, check=True
    ).stdout.strip()
    head = f"tree {tree}\nparent {parent}\nauthor A <a@example.invalid> 1790000000 +0000\n"
    head += "committer A <a@example.invalid> 1790000000 +0000\n\n"
    seen: dict[str, bytes] = {}
    n = 0
    while True:
        body = f"{head}probe {n}\n".encode()
        sha = hashlib.sha1(b"commit %d\0" % len(body) + body).hexdigest()
        if sha[:digits] in seen:
            break
        seen[sha[:digits]] = body
        n += 1
    written = []
    for content in (seen[sha[:digits]], body):
        out = subprocess.run(
            ["git", "-C", str(repo), "hash-object", "-t", "commit", "-w", "--stdin"],
            input=content,
            capture_output=True,
            check=True,
        )
        written.append(out.stdout.decode().strip())
    return written[0], written[1]


def test_an_ambiguous_sha_prefix_is_refused_and_a_longer_one_resolves(workspace, fixture_repo, tmp_path, monkeypatch):
    extend_fixture(workspace, fixture_repo, tmp_path, monkeypatch, ("extra", {"NOTE.md": "x\n"}))
    repo = Path(os.environ["DSH_REPO"])
    one, other = _colliding_commits(repo, fixture_repo.shas["v1"])
    assert one != other and one[:7] == other[:7]
    subprocess.run(["git", "-C", str(repo), "tag", "one", one], check=True)
    subprocess.run(["git", "-C", str(repo), "tag", "other", other], check=True)
    shared = os.path.commonprefix([one, other])
    v = one_verdict(workspace, f"{WEB}/blob/{shared}/{CONTEXT}#L14 → `this.fiber`")
    assert v["status"] == "unknown_pin" and "none has, or several have" in v["message"], v
    # One digit more tells them apart: the permalink is checked at the commit it names.
    v = one_verdict(workspace, f"{WEB}/blob/{one[: len(shared) + 1]}/{CONTEXT}#L14 → `this.fiber`")
    assert v["status"] == "ok" and v["resolved"]["sha"] == one, v


# -- query strings and tree/ links ---------------------------------------------------------------


@pytest.mark.parametrize(
    "query",
    ["?plain=1", "?plain=1&x=y", "?raw=true", "?", "?short_path=abc&plain=1", "?a=%2e%2e%2f&b="],
)
def test_a_query_string_never_hides_the_lines_or_their_anchor(workspace, v1, query):
    held = one_verdict(workspace, f"{WEB}/blob/{v1}/{CONTEXT}{query}#L14 → `this.fiber`")
    assert (held["status"], held["target"]["lines"]) == ("ok", "14"), held
    # Dropping the lines would check the whole file, which is there: the anchor must still fail.
    wrong = one_verdict(workspace, f"{WEB}/blob/{v1}/{CONTEXT}{query}#L14 → `not in the file`")
    assert wrong["status"] == "content_mismatch", wrong


def test_a_question_mark_ending_a_sentence_is_not_part_of_the_link(workspace, v1):
    got = verdicts(workspace, f"Is it {WEB}/blob/{v1}/{CONTEXT}? Or {WEB}/blob/{v1}/nowhere.ts?\n")
    assert [(c["target"]["path"], c["status"]) for c in got] == [(CONTEXT, "ok"), ("nowhere.ts", "missing_path")]


@pytest.mark.parametrize(
    "path, status",
    [
        ("vendor/cordis", "ok"),
        ("vendor/cordis/", "ok"),
        ("vendor/cordis?x=1", "ok"),
        (CONTEXT, "missing_path"),  # a file, not a folder
        ("vendor/nowhere", "missing_path"),
        ("vendor/../vendor", "invalid_citation"),
        ("vendor/%2e%2e/%2e%2e", "invalid_citation"),
        (".git", "invalid_citation"),
        ("vendor/submodule", "missing_path"),  # at v1 the submodule is not there yet
    ],
)
def test_tree_links(workspace, v1, path, status):
    (v,) = verdicts(workspace, f"See {WEB}/tree/{v1}/{path} here.\n")
    assert (v["form"], v["status"]) == ("tree-permalink", status), v


def test_a_tree_link_with_lines_is_a_folder_link(workspace, v1):
    # A folder has no lines: the fragment does not make it a citation of lines.
    (v,) = verdicts(workspace, f"{WEB}/tree/{v1}/vendor/cordis#L3\n")
    assert (v["form"], v["status"], v["target"]["lines"]) == ("tree-permalink", "ok", None)
