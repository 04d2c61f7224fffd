"""Pins are untrusted: a pin suffix, an option-like or short pin, an ambiguous short
SHA or a non-SHA in dshaudit.toml never reaches git; a tree, a blob or a tag of
one is named as what it is, and an annotated tag is peeled to its commit in
every output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import run_cli, write_findings
from fixture_repo import _commit, _write, git
from hardening.helpers import one_line_error, one_verdict

# -- pins and SHAs -----------------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", ["--upload-pack=touch%20pwned", "-x", "6d1214af", "zzzz", "HEAD", "v1~1"])
def test_pin_suffixes_never_reach_git(workspace, suffix):
    write_findings(workspace, f"`vendor/cordis/src/context.ts:14@{suffix}` → `this.fiber`\n")
    run = run_cli("check", "--format", "json")
    statuses = [c["status"] for c in run.json["citations"]] if run.json["citations"] else ["not a citation"]
    # Either the grammar refuses the suffix, or it is an unknown pin: never resolved through git.
    assert statuses in (["unknown_pin"], ["not a citation"], ["ok"]), statuses
    if statuses == ["ok"]:
        # Only a suffix that is not part of the citation at all (it stops at `-`): checked at the file's pin.
        assert run.json["citations"][0]["target"]["pin"] == "v1"
    assert not Path("pwned").exists()


@pytest.mark.parametrize("pin", ["--upload-pack=touch pwned", "-x", "6d1214af", "HEAD"])
def test_option_like_or_short_pins_are_input_errors(workspace, pin):
    write_findings(workspace, "`vendor/cordis/src/context.ts:14` → `this.fiber`\n", pin=json.dumps(pin))
    one_line_error(run_cli("check"), 2, "findings/f.md:2: front matter: pin")
    one_line_error(run_cli("check", f"--pin={pin}"), 2, f"--pin: pin {pin!r} is not in dshaudit.toml")
    one_line_error(
        run_cli("report", f"--pin={pin}", "--format", "json"), 2, f"--pin: pin {pin!r} is not in dshaudit.toml"
    )
    assert not Path("pwned").exists()


def test_ambiguous_short_sha_is_not_resolved(workspace, fixture_repo):
    short = fixture_repo.shas["v1"][:4]  # short enough to be ambiguous in a bigger repository
    assert (
        one_verdict(workspace, f"`vendor/cordis/src/context.ts:14@{short}` → `this.fiber`")["status"] == "unknown_pin"
    )


def test_config_pins_must_be_full_shas(workspace):
    (workspace / "dshaudit.toml").write_text('[pins]\nbad = "--upload-pack=x"\n')
    write_findings(workspace, "`a/b.ts:1` → `x`\n", pin="bad")
    one_line_error(run_cli("check"), 2, f"{workspace / 'dshaudit.toml'}: pin 'bad' must be a full 40-hex")


@pytest.mark.parametrize("url", ["ext::sh -c touch% pwned", "file::/etc", "fd::3", "-u", "--upload-pack=touch pwned"])
def test_clone_urls_with_other_schemes_are_refused(workspace, url, monkeypatch):
    monkeypatch.delenv("DSH_REPO")
    write_findings(workspace, "`vendor/cordis/src/context.ts:14` → `this.fiber`\n")
    run = run_cli("check", f"--repo={url}")
    assert run.exit_code in (2, 3) and len(run.stderr.splitlines()) == 1, run.stderr
    assert not Path("pwned").exists()


# -- pins that are not commits; annotated tags peeled ------------------------------------------------


@pytest.fixture
def tagged_repo(tmp_path, monkeypatch):
    """Two commits; `rel` an annotated tag of the second, `treetag` an annotated tag of a tree."""
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
