"""`dshaudit history` on a small repository where each event is planted at a known commit:
a break, an edit of cited lines under a still-matching anchor, a break and a
restoration, a changed claim, a rename and a merged branch."""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

import pytest

from conftest import run_cli
from dshaudit.git.log import read_steps
from dshaudit.git.repository import DshRepository
from dshaudit.git.snapshot import Snapshot
from dshaudit.moves.history_result import pull_request
from fixture_repo import _commit, _write, git

CONTEXT = "export class Context {\n  constructor() {\n    this.fiber = new Fiber()\n  }\n}\n"
AGENT = "export const defaults = {\n  maxDepth: 3,\n  surfaceOp: 'append',\n  name: 'agent',\n}\n"
LOOP = "export function runLoop() {\n  return step()\n}\n"
EVENTS = "export const KNOWN_SESSION_EVENT_TYPES: ReadonlySet<string> = new Set([\n{}])\n"

FINDINGS = """\
---
pin: old
---
# Planted

A: `src/context.ts:3` → `this.fiber`.
B: `src/agent.ts:2-4` → `maxDepth`.
C: `src/loop.ts:1` → `runLoop`.
D: `src/loop.ts:1-2` → `return step`.

`claim: session.known-event-types.count == 2`
"""
LINE = {"A": 6, "B": 7, "C": 8, "D": 9, "claim": 11}


def _events(*names: str) -> str:
    return EVENTS.format("".join(f"  '{n}',\n" for n in names))


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    """The repository, and the SHA of each commit by the event planted there."""
    root = tmp_path_factory.mktemp("history") / "dsh"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    shas = {}

    def commit(name: str, subject: str, day: int, files: dict[str, str]) -> None:
        for path, text in files.items():
            _write(root, path, text)
        shas[name] = _commit(root, subject, f"2026-09-{day:02d}T10:00:00Z", name)

    events = "packages/core/session/src/known-event-types.ts"
    commit(
        "old",
        "base",
        1,
        {
            "src/context.ts": CONTEXT,
            "src/agent.ts": AGENT,
            "src/loop.ts": LOOP,
            events: _events("a/one", "a/two"),
            "NOTES.md": "notes\n",
        },
    )
    commit("notes", "Notes only (#11)", 2, {"NOTES.md": "notes, again\n"})
    commit(
        "shift",
        "Two header lines above the constructor (#12)",
        3,
        {"src/context.ts": "// header\n// header\n" + CONTEXT},
    )
    commit(
        "edit", "Edit a cited line, keep its anchor (#13)", 4, {"src/agent.ts": AGENT.replace("'append'", "'replace'")}
    )
    commit("break", "Rename runLoop (#14)", 5, {"src/loop.ts": LOOP.replace("runLoop", "runAgentLoop")})
    commit("restore", "Name it runLoop again (#15)", 6, {"src/loop.ts": LOOP})
    commit("claim", "A third event type (#16)", 7, {events: _events("a/one", "a/two", "a/three")})
    git(root, "mv", "src/agent.ts", "src/agents.ts")
    commit("rename", "Move the agent defaults (#17)", 8, {})
    git(root, "checkout", "-q", "-b", "feature")
    _write(root, "src/loop.ts", LOOP.replace("step()", "step(1)"))
    git(
        root,
        "commit",
        "-q",
        "-am",
        "feature work",
        env={"GIT_AUTHOR_DATE": "2026-09-09T10:00:00Z", "GIT_COMMITTER_DATE": "2026-09-09T10:00:00Z"},
    )
    git(root, "checkout", "-q", "main")
    git(
        root,
        "merge",
        "-q",
        "--no-ff",
        "-m",
        "Merge pull request #34 from someone/feature",
        "feature",
        env={"GIT_AUTHOR_DATE": "2026-09-10T10:00:00Z", "GIT_COMMITTER_DATE": "2026-09-10T10:00:00Z"},
    )
    shas["merge"] = git(root, "rev-parse", "HEAD")
    return root, shas


@pytest.fixture
def work(planted, tmp_path, monkeypatch):
    root, shas = planted
    _audit(tmp_path, monkeypatch, root, shas["old"], shas["merge"], FINDINGS)
    return shas


def _audit(tmp_path, monkeypatch, root, old: str, new: str, document: str) -> None:
    """An audit here of the repository at `root`, with the pins `old` and `new` and one
    findings file, `document`; the CLI run here reads it."""
    (tmp_path / "findings").mkdir()
    (tmp_path / "dshaudit.toml").write_text(
        f'[upstream]\nurl = "https://example.invalid/dsh"\n\n[pins]\nold = "{old}"\nnew = "{new}"\n'
    )
    (tmp_path / "findings" / "a.md").write_text(document)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DSH_REPO", str(root))
    monkeypatch.setenv("DSHAUDIT_CACHE_DIR", str(tmp_path / "cache"))


def _two_commits(tmp_path, before: dict[str, str], after: dict[str, str], subject: str) -> tuple:
    """A repository at `tmp_path/dsh` with a first commit of the files `before`, and a second,
    `subject`, that writes the files `after`; (its root, the first SHA, the second SHA)."""
    root = tmp_path / "dsh"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    shas = []
    for files, title, day in ((before, "base", 1), (after, subject, 2)):
        for path, text in files.items():
            _write(root, path, text)
        shas.append(_commit(root, title, f"2026-09-{day:02d}T10:00:00Z", f"c{day}"))
    return root, *shas


def _citation(doc: dict, name: str) -> dict:
    (c,) = [c for c in doc["citations"] if c["source"]["line"] == LINE[name]]
    return c


def test_each_planted_event_is_found_at_its_commit(work):
    run = run_cli("history", "--from", "old", "--to", "new", "--format", "json")
    assert run.exit_code == 1, run.stderr  # A and B fail at `new`, and the claim
    doc = run.json
    assert list(doc) == ["from", "to", "commits", "citations", "claims"]
    assert doc["from"] == {"pin": "old", "sha": work["old"]} and doc["to"] == {"pin": "new", "sha": work["merge"]}
    a, b, c, d = (_citation(doc, n) for n in "ABCD")
    # A break: the lines moved down, so the citation as written stops holding where they moved.
    assert a["first_broken"]["sha"] == work["shift"] and a["status_at_to"] == "content_mismatch"
    assert a["first_broken"]["subject"].endswith("(#12)") and a["first_broken"]["date"].startswith("2026-09-03")
    assert a["now_at"] == "src/context.ts:5" and a["edited_at"] == [] and a["restored_at"] == []
    # An edit of the cited lines while the anchor still stands on them; later the file is renamed.
    assert [e["sha"] for e in b["edited_at"]] == [work["edit"]]
    assert b["first_broken"]["sha"] == work["rename"] and b["status_at_to"] == "missing_path"
    assert b["now_at"] == "src/agents.ts:2-4"
    # A break and a restoration.
    assert c["first_broken"]["sha"] == work["break"]
    assert [r["sha"] for r in c["restored_at"]] == [work["restore"]] and c["status_at_to"] == "ok"
    # D shares C's line: the rename and its undoing edit D's lines under its anchor, and so does the
    # merged branch, found through the merge's first-parent diff.
    assert [e["sha"] for e in d["edited_at"]] == [work["break"], work["restore"], work["merge"]]
    assert d["first_broken"] is None and d["status_at_to"] == "ok"
    (claim,) = doc["claims"]
    assert claim["first_changed"]["sha"] == work["claim"]
    assert (claim["before"], claim["after"], claim["status_at_to"]) == ("2", "3", "contradicted")

    commits = {c["sha"]: c for c in doc["commits"]}
    assert [c["sha"] for c in doc["commits"]] == [
        work[k] for k in ("notes", "shift", "edit", "break", "restore", "claim", "rename", "merge")
    ]
    counts = {
        k: {f: commits[work[k]][f] for f in ("shifted", "edited", "broken", "restored", "claims_changed")}
        for k in work
        if k != "old"
    }
    assert counts["notes"] == dict.fromkeys(counts["notes"], 0)
    assert counts["shift"] == {"shifted": 1, "edited": 0, "broken": 1, "restored": 0, "claims_changed": 0}
    assert counts["edit"] == {"shifted": 0, "edited": 1, "broken": 0, "restored": 0, "claims_changed": 0}
    assert counts["break"] == {"shifted": 0, "edited": 1, "broken": 1, "restored": 0, "claims_changed": 0}
    assert counts["restore"] == {"shifted": 0, "edited": 1, "broken": 0, "restored": 1, "claims_changed": 0}
    assert counts["merge"] == {"shifted": 0, "edited": 1, "broken": 0, "restored": 0, "claims_changed": 0}
    assert counts["claim"]["claims_changed"] == 1
    assert counts["rename"] == {"shifted": 1, "edited": 0, "broken": 1, "restored": 0, "claims_changed": 0}
    assert commits[work["merge"]]["pull_request"] == 34 and commits[work["shift"]]["pull_request"] == 12
    assert [c["holding"] for c in doc["commits"]] == [4, 3, 3, 2, 3, 3, 2, 2]


def test_first_broken_is_bisects_answer(work):
    doc = run_cli("history", "--from", "old", "--to", "new", "--format", "json").json
    broken = [c for c in doc["citations"] if c["first_broken"]]
    assert len(broken) == 3
    for c in broken:
        if c["restored_at"]:
            continue  # bisect assumes one change between good and bad; a restored citation has two
        found = run_cli(
            "bisect", f"findings/a.md:{c['source']['line']}", "--good", "old", "--bad", "new", "--format", "json"
        )
        assert found.json["first"]["sha"] == c["first_broken"]["sha"], c["citation"]


def test_text_ranks_commits_and_lists_what_to_reread(work):
    run = run_cli("history", "--from", "old", "--to", "new")
    assert run.exit_code == 1
    lines = run.stdout.splitlines()
    assert lines[0].startswith("history from old (") and "8 first-parent commits" in lines[0]
    start = lines.index("commits that matter, most impactful first:") + 1
    ranked = lines[start : lines.index("", start)]
    # A break and an edit first (the earlier of two such), then the other; the lone edit of the merge after the breaks.
    assert [r.split()[0] for r in ranked[:2]] == [work["break"][:12], work["restore"][:12]]
    assert [r.split()[0] for r in ranked].index(work["merge"][:12]) > [r.split()[0] for r in ranked].index(
        work["shift"][:12]
    )
    reread = "\n".join(lines[lines.index("citations to re-read:") :])
    assert (
        "findings/a.md:6:5: src/context.ts:3: content_mismatch at new; first broken at " + work["shift"][:12] in reread
    )
    assert f"lines edited at {work['edit'][:12]} (#13, 2026-09-04)" in reread
    assert "claims that changed:" in run.stdout and "2 -> 3 at " + work["claim"][:12] in run.stdout


class _Strict(HTMLParser):
    """Fails on an element closed out of order; collects the SVGs."""

    VOID = {"meta", "br", "path", "line", "link", "img", "input", "hr"}

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.svgs: list[dict] = []
        self.tags: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag == "svg":
            self.svgs.append({**dict(attrs), "children": []})
        elif self.svgs and "svg" in self.stack:
            self.svgs[-1]["children"].append(tag)
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.tags.append(tag)
        if self.svgs and "svg" in self.stack:
            self.svgs[-1]["children"].append(tag)

    def handle_endtag(self, tag):
        if tag in self.VOID:
            return
        assert self.stack and self.stack[-1] == tag, f"</{tag}> closes <{self.stack[-1] if self.stack else None}>"
        self.stack.pop()


def test_html_section_draws_the_timeline_without_script(work, tmp_path):
    run = run_cli("history", "--from", "old", "--to", "new", "--format", "html", "--output", str(tmp_path / "h.html"))
    assert run.exit_code == 1 and run.stdout == ""
    html = (tmp_path / "h.html").read_text()
    parser = _Strict()
    parser.feed(html)
    parser.close()
    assert parser.stack == [] and "script" not in parser.tags
    assert "Upstream changes since the pin" in html
    chart, *sparks = parser.svgs
    # Readable at any width: a viewBox stretched by CSS, never a width in pixels; a title and a description.
    assert chart["viewbox"] == "0 0 1000 100" and chart["preserveaspectratio"] == "none" and "width" not in chart
    assert chart["children"][:2] == ["title", "desc"] and chart["role"] == "img"
    assert len(sparks) == 1 and sparks[0]["children"][0] == "title" and "width" not in sparks[0]
    assert "svg.timeline-chart { width: 100%;" in html and "@media print" in html
    assert f'href="https://example.invalid/dsh/commit/{work["shift"]}"' in html
    assert 'href="https://example.invalid/dsh/pull/34"' in html
    # The chart's description says the numbers in words.
    assert "4 citations hold at old and 2 at new, over 8 first-parent commits." in html


def test_markdown_has_the_table_and_report_since_has_the_section(work, tmp_path):
    md = run_cli("history", "--from", "old", "--to", "new", "--format", "markdown").stdout
    assert "| commit | pull request | date | subject | broken |" in md
    assert f"[`{work['shift'][:12]}`](https://example.invalid/dsh/commit/{work['shift']}) | [#12](" in md
    run = run_cli("report", "--pin", "new", "--since", "old")
    assert run.exit_code == 1 and 'id="history"' in run.stdout and 'href="#history"' in run.stdout
    assert (
        "## Upstream changes since the pin"
        in run_cli("report", "--pin", "new", "--since", "old", "--format", "markdown").stdout
    )
    # Without --pin, the files' own pin is where the changes lead to: here, nowhere.
    assert "0 first-parent commits" in run_cli("report", "--since", "old").stdout


def test_output_format_to_path_writes_each_format_of_one_run(work, tmp_path):
    walk = ("history", "--from", "old", "--to", "new")
    run = run_cli(*walk, "--output", f"json={tmp_path / 'h.json'}", "--output", f"html={tmp_path / 'h.html'}")
    assert run.exit_code == 1 and run.stdout == ""
    assert (tmp_path / "h.json").read_text() == run_cli(*walk, "--format", "json").stdout
    assert (tmp_path / "h.html").read_text() == run_cli(*walk, "--format", "html").stdout
    # With --format, stdout keeps it: the terminal reads text while a file gets Markdown.
    run = run_cli(*walk, "--format", "text", "--output", f"markdown={tmp_path / 'h.md'}")
    assert run.stdout == run_cli(*walk).stdout and run.stdout.startswith("history from old")
    assert (tmp_path / "h.md").read_text() == run_cli(*walk, "--format", "markdown").stdout


def test_bad_input_is_one_line(work):
    run = run_cli("history", "--from", "new", "--to", "old")
    assert run.exit_code == 2 and "is not an ancestor of" in run.stderr and "--from before --to" in run.stderr
    run = run_cli("history", "--from", "nosuch", "--to", "new")
    assert run.exit_code == 2 and run.stderr.startswith("dshaudit: --from: pin 'nosuch'")


def test_pull_request_numbers():
    assert pull_request("Fix the thing (#123)") == 123
    assert pull_request("Merge pull request #2908 from deepseek-harness/release") == 2908
    assert pull_request("Bump to 1.2 #3") is None and pull_request("plain") is None


def test_a_derived_tree_is_the_listed_one(fixture_repo):
    """Renames, a symbolic link and a submodule: the tree built from the parent's
    and the commit's changes is the one `git ls-tree` lists."""
    repository = DshRepository.open(str(fixture_repo.path), "unused")
    tree = repository.snapshot(fixture_repo.shas["v1"])
    for step in read_steps(repository, fixture_repo.shas["v1"], fixture_repo.shas["v3"]):
        tree = step.tree(tree)
        listed = Snapshot(repository, step.commit.sha).index()
        assert {p: v if v[1] != "tree" else "tree" for p, v in tree.index().items()} == {
            p: v if v[1] != "tree" else "tree" for p, v in listed.items()
        }


def test_one_processor_gives_the_same_history(work, monkeypatch):
    """With two processors the claims are walked in a second process; with one, here, after the citations."""
    both = run_cli("history", "--from", "old", "--to", "new", "--format", "json").stdout
    monkeypatch.setenv("DSHAUDIT_WORKERS", "1")
    assert run_cli("history", "--from", "old", "--to", "new", "--format", "json").stdout == both


def test_the_claims_jobs_start_with_from_tree_listed(work, monkeypatch):
    """FROM's tree is listed once, before the claims' jobs start: each takes the listing
    along instead of running `git ls-tree` again (and two threads of one job, at once)."""
    from dshaudit.moves.history import Walk

    listed_at_start = []
    real = Walk._claims_job

    def spy(self, repo, claims, steps):
        listed_at_start.append(repo.snapshot(self.from_pin.sha)._index is not None)
        return real(self, repo, claims, steps)

    monkeypatch.setattr(Walk, "_claims_job", spy)
    run_cli("history", "--from", "old", "--to", "new")
    assert listed_at_start == [True, True]


def test_searches_are_followed_commit_by_commit(work, tmp_path):
    """A search claim changes where a commit changes a file it searches; files() where one is
    added, deleted or renamed; both agree with `check --pin` at the end."""
    (tmp_path / "findings" / "a.md").write_text(
        "---\npin: old\n---\n"
        "`claim: search('runLoop', 'src/**').count == 1`\n"
        "`claim: search(-F \"'append'\").paths == [src/agent.ts]`\n"
        "`claim: files('src/*.ts').paths == [src/agent.ts, src/context.ts, src/loop.ts]`\n"
        "`claim: search('header').count == 0`\n"
    )
    run = run_cli("history", "--from", "old", "--to", "new", "--format", "json")
    loop, append, files, header = run.json["claims"]
    # runLoop left at `break` and came back at `restore`.
    assert [c["sha"] for c in loop["changed_at"]] == [work["break"], work["restore"]]
    assert (loop["before"], loop["after"], loop["status_at_to"]) == ("1", "0", "confirmed")
    assert append["first_changed"]["sha"] == work["edit"] and append["after"] == "[]"
    assert files["first_changed"]["sha"] == work["rename"] and files["status_at_to"] == "contradicted"
    assert files["after"] == "[src/agents.ts, src/context.ts, src/loop.ts]"
    assert header["first_changed"]["sha"] == work["shift"] and header["after"] == "2"
    check = run_cli("check", "--pin", "new", "--format", "json")
    assert [c["status"] for c in check.json["claims"]] == [c["status_at_to"] for c in run.json["claims"]]
    assert all(c["followed"] for c in run.json["claims"])


def test_tree_docs_claims_walked_here_and_the_rest_elsewhere_give_one_history(work, tmp_path, monkeypatch):
    """With two processors the claims of facts measured at the ends only (tree-docs) are
    measured in this process, the others in the worker: the claims keep their order and
    the commits' counts add up, as with one processor."""
    (tmp_path / "findings" / "b.md").write_text(
        "---\npin: old\n---\n"
        "`claim: search('runLoop', 'src/**').count == 1`\n"
        "`claim: tree-docs('NOTES.md').documents == 1`\n"
        "`claim: files('src/*.ts').count == 3`\n"
        "`claim: tree-docs('NOTES.md', 'new').count == 0`\n"
        "`claim: search('header').count == 0`\n"
    )
    both = run_cli("history", "--from", "old", "--to", "new", "--format", "json")
    kinds = [c["claim"].split("(", 1)[0] for c in both.json["claims"]]
    assert kinds[-5:] == ["search", "tree-docs", "files", "tree-docs", "search"], kinds
    assert [c["followed"] for c in both.json["claims"][-5:]] == [True, False, True, False, True]
    assert sum(c["claims_changed"] for c in both.json["commits"]) > 0
    monkeypatch.setenv("DSHAUDIT_WORKERS", "1")
    assert run_cli("history", "--from", "old", "--to", "new", "--format", "json").stdout == both.stdout


def test_a_citation_that_goes_from_ok_to_suspect_is_named_where(tmp_path, monkeypatch):
    """Unanchored, it holds as long as its file is there, but where the name its sentence
    gives leaves the cited line for another, it turns suspect: history names that commit."""
    root, first, moved = _two_commits(
        tmp_path,
        {"src/loop.ts": LOOP},
        {"src/loop.ts": "export const other = 1\n\n" + LOOP},
        "A constant above the loop (#21)",
    )
    _audit(
        tmp_path,
        monkeypatch,
        root,
        first,
        moved,
        "---\npin: old\n---\nThe loop starts in `runLoop` (`src/loop.ts:1`).\n",
    )
    run = run_cli("history", "--from", "old", "--to", "new", "--format", "json")
    (c,) = run.json["citations"]
    assert (c["status_at_from"], c["status_at_to"]) == ("ok", "suspect")
    assert c["first_suspect"]["sha"] == moved and c["first_broken"] is None
    text = run_cli("history", "--from", "old", "--to", "new").stdout
    assert f"first suspect at {moved[:8]}" in text and "1 turned suspect" in text
    page = run_cli("history", "--from", "old", "--to", "new", "--format", "html").stdout
    assert "first suspect at <a href=" in page and f"<code>{moved[:8]}" in page


@pytest.fixture(scope="module")
def marked(tmp_path_factory):
    """A repository whose commits change a marked file's markers, a file without any, a binary
    file holding one, and a marked file's other line; the SHA of each commit by its name."""
    root = tmp_path_factory.mktemp("marked") / "dsh"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    _write(root, "src/a.ts", "// TODO one\nexport const a = 1\n")
    _write(root, "src/b.ts", "export const b = 1\n")
    shas = {"old": _commit(root, "base", "2026-09-01T10:00:00Z", "old")}
    steps = [
        ("marker", "src/a.ts", "// TODO one\n// TODO two\nexport const a = 1\n"),
        ("plain", "src/b.ts", "export const b = 2\n"),
        ("binary", "src/c.ts", b"\0// TODO in a binary file\n"),
        ("beside", "src/a.ts", "// TODO one\n// TODO two\nexport const a = 2\n"),
    ]
    for day, (name, path, text) in enumerate(steps, start=2):
        _write(root, path, text)
        shas[name] = _commit(root, f"{name} (#{day})", f"2026-09-{day:02d}T10:00:00Z", name)
    return root, shas


def test_a_fact_that_counts_searches_is_touched_only_where_a_line_it_can_match_changes(marked, tmp_path, monkeypatch):
    """A detector that counts searches (scale.markers) is measured again only at commits whose
    changed lines match, in files where its search matches in some version: not where a file
    without a marker changes, nor a marked file's other lines, nor a binary file, which the
    search skips whatever bytes it holds."""
    root, shas = marked
    _audit(
        tmp_path, monkeypatch, root, shas["old"], shas["beside"], "---\npin: old\n---\n`claim: scale.markers == 1`\n"
    )
    text = run_cli("history", "--from", "old", "--to", "new").stdout
    assert "4 first-parent commits, 1 touch what the findings read" in text, text
    (claim,) = run_cli("history", "--from", "old", "--to", "new", "--format", "json").json["claims"]
    assert [c["sha"] for c in claim["changed_at"]] == [shas["marker"]]
    assert (claim["before"], claim["after"]) == ("1", "2")


def test_a_fact_whose_search_matches_are_not_known_is_watched_in_every_file_of_its_globs(marked):
    """Where a search the fact counts reached its bound (at FROM, or in the walk), the files
    where it matches are not known: the pickaxe reads every file of the fact's globs, as
    `git log -G --text` does, the binary file included."""
    from dshaudit.git.repository import DshRepository
    from dshaudit.index.search import SearchBound
    from dshaudit.moves.watch import FactWatch

    root, shas = marked
    git_dir = str(root / ".git")

    def commits_touching(found, matched_at_from) -> set[str]:
        watch = FactWatch("scale.markers", DshRepository(Path(git_dir), git_dir), shas["old"], shas["beside"])
        for search in watch.searches:
            search.found = found
        watch.follow(matched_at_from)
        try:
            return {name for name, sha in shas.items() for p in watch._pickaxes or () if sha in p.commits()}
        finally:
            watch.close()

    at_from = lambda _query: [("src/a.ts", 1)]  # noqa: E731
    assert commits_touching({(shas["marker"], "src/a.ts"): [1, 2]}, at_from) == {"marker"}
    assert commits_touching(None, at_from) == {"marker", "binary"}  # the walk's search reached its bound

    def past_its_bound(_query):
        raise SearchBound("stopped at its bound")

    assert commits_touching({}, past_its_bound) == {"marker", "binary"}


def test_a_file_of_the_same_name_elsewhere_touches_only_citations_that_abbreviate_their_path(tmp_path, monkeypatch):
    """A path read as written names that file whatever other file of its name comes: the commit
    that adds one touches no citation of it. A citation that gives the file name alone, read
    as the only file whose path ends so, is checked again there, and becomes ambiguous."""
    root, first, added = _two_commits(
        tmp_path,
        {"src/core/index.ts": "export const core = 1\n"},
        {"src/extra/index.ts": "export const extra = 1\n"},
        "Another index (#22)",
    )
    exact = "---\npin: old\n---\nThe core constant (`src/core/index.ts:1`).\n"
    _audit(tmp_path, monkeypatch, root, first, added, exact)
    text = run_cli("history", "--from", "old", "--to", "new").stdout
    assert "1 first-parent commits, 0 touch what the findings read" in text, text
    (tmp_path / "findings" / "a.md").write_text("---\npin: old\n---\nThe core constant (`index.ts:1`).\n")
    (c,) = run_cli("history", "--from", "old", "--to", "new", "--format", "json").json["citations"]
    assert c["first_broken"]["sha"] == added
