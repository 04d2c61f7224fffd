#!/usr/bin/env python3
"""Benchmark dshaudit on real DSH, against ast-grep and git grep as references.

Not a test: it prints figures and ratios for a person to read.

    DSH_REPO=/path/to/deepseek-harness python bench/run.py [--runs 5]

Each command runs as a whole process, several times; min and median wall
seconds are printed, with the peak resident memory of the process itself.
"Cold" runs start from an empty cache folder; "warm" ones from a cache filled
by a previous run. ast-grep (the `ast-grep` or `sg` command, or one installed
with npm under node_modules/.bin) scans an extracted rc7 tree with rules
equivalent to three of dshaudit's detectors; without it, that reference and
its ratios are skipped with a note.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RC7 = "99f6f02fecdb7dff40c3fbc9470f5907c29f74ca"
RC2 = "b150a551b8d465e31e418e1b2eaf5e79bbb7d28e"
ROOT = Path(__file__).resolve().parent.parent

# Three detectors, as ast-grep rules, for .ts and .tsx: surfaceOp properties,
# snapshot-form sources, and the services the Cordis Context constructor builds.
RULES = {
    "surface-op": """
rule:
  kind: pair
  has: {field: key, regex: "^surfaceOp$"}
""",
    "snapshot-form": """
rule:
  kind: pair
  all:
    - has: {field: key, regex: "^form$"}
    - has: {field: value, regex: "^'snapshot'"}
""",
    "context-services": """
rule:
  pattern: this.$NAME = new $IMPL($$$ARGS)
  inside:
    kind: method_definition
    has: {field: name, regex: "^constructor$"}
    stopBy: end
""",
}


def run_once(cmd: list[str], env: dict, cwd: Path) -> tuple[float, int, int]:
    """Wall seconds, peak RSS in MiB (the process itself), exit code."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    return wall, usage.ru_maxrss // 1024, os.waitstatus_to_exitcode(status)


def measure(label: str, cmd: list[str], runs: int, env: dict, cwd: Path, before=None) -> dict:
    walls, peaks = [], []
    for _ in range(runs):
        if before:
            before()
        wall, peak, code = run_once(cmd, env, cwd)
        if code not in (0, 1):
            raise SystemExit(f"bench: {label}: `{' '.join(cmd)}` exited {code}")
        walls.append(wall)
        peaks.append(peak)
    row = {"label": label, "min": min(walls), "median": statistics.median(walls), "peak": max(peaks)}
    print(
        f"  {label:<44} min {row['min']:6.3f} s  median {row['median']:6.3f} s  peak {row['peak']:4d} MiB", flush=True
    )
    return row


def in_turn(runs: int, commands: list) -> dict[str, list[float]]:
    """Commands (label, text, argv, env, set-up or None) run one after another, `runs`
    rounds: each figure of a pair is taken next to the other, so that the machine's
    drift falls on both. Prints a row per command; returns the wall seconds by label."""
    walls: dict[str, list[float]] = {label: [] for label, *_ in commands}
    peaks: dict[str, list[int]] = {label: [] for label, *_ in commands}
    for _ in range(runs):
        for label, _, cmd, env, before in commands:
            if before:
                before()
            wall, peak, code = run_once(cmd, env, ROOT)
            if code not in (0, 1):
                raise SystemExit(f"bench: `{' '.join(cmd)}` exited {code}")
            walls[label].append(wall)
            peaks[label].append(peak)
    for label, text, *_ in commands:
        print(
            f"  {text:<44} min {min(walls[label]):6.3f} s  median {statistics.median(walls[label]):6.3f} s  "
            f"peak {max(peaks[label]):4d} MiB",
            flush=True,
        )
    return walls


def find_ast_grep() -> str | None:
    for name in ("ast-grep", "sg"):
        path = shutil.which(name)
        if path and "ast-grep" in subprocess.run([path, "--version"], capture_output=True, text=True).stdout:
            return path
    for base in (ROOT, Path.cwd(), Path("/tmp/sg")):
        candidate = base / "node_modules" / ".bin" / "ast-grep"
        if candidate.exists():
            return str(candidate)
    return None


def changed_parse_seconds(repo: str) -> tuple[int, float]:
    """Files the detectors parse that differ between rc7 and rc2, and the time to parse them once."""
    sys.path.insert(0, str(ROOT / "src"))
    from dshaudit.facts.book import registry
    from dshaudit.facts.engine import FactContext
    from dshaudit.git.repository import DshRepository
    from dshaudit.lang.symbols import parse

    repository = DshRepository.open(repo, "unused")
    old = FactContext(repository.snapshot(RC7))
    new = FactContext(repository.snapshot(RC2))
    wanted = set()
    for spec in registry().values():
        if spec.query:
            paths = (
                new.files_with(spec.needle, list(spec.paths), spec.exclude_tests)
                if spec.needle
                else new.paths(list(spec.paths))
            )
            wanted |= {p for p in paths if old.blob_ids().get(p) != new.blob_ids()[p]}
    sources = [(p, new.read(p)) for p in sorted(wanted)]
    start = time.perf_counter()
    for path, source in sources:
        parse(path, source)
    return len(sources), time.perf_counter() - start


def reference_lookup_seconds(repo: str, cache_dir: Path, runs: int, count: int = 200) -> tuple[int, float, float]:
    """`count` checkable names and fragments of findings/ looked up at rc7, in-process:
    (names, cold seconds, best warm seconds). Warm starts with nothing in memory and
    the cache on disk, as a new process would; Python's own start-up is not counted."""
    sys.path.insert(0, str(ROOT / "src"))
    from dshaudit.checking.mentions import document_names
    from dshaudit.checking.plans import classify
    from dshaudit.checking.references import check_references
    from dshaudit.core.model import SourceLocation
    from dshaudit.git.repository import DshRepository
    from dshaudit.index import nameindex
    from dshaudit.platform import cache

    items = []
    for path in sorted((ROOT / "findings").glob("*.md")):
        text = path.read_text(encoding="utf-8")
        items += [(n, SourceLocation(path.name, line, col)) for n, line, col in document_names(text) if classify(n)]
    items = items[:count]
    before = os.environ.get("DSHAUDIT_CACHE_DIR")
    os.environ["DSHAUDIT_CACHE_DIR"] = str(cache_dir)
    try:
        snapshot = DshRepository.open(repo, "unused").snapshot(RC7)

        def once() -> float:
            nameindex.forget()
            cache.begin()
            start = time.perf_counter()
            check_references(items, snapshot, exempt=set(), absent=[])
            took = time.perf_counter() - start
            cache.end()
            return took

        cold = once()
        warm = min(once() for _ in range(runs))
    finally:
        if before is None:
            os.environ.pop("DSHAUDIT_CACHE_DIR", None)
        else:
            os.environ["DSHAUDIT_CACHE_DIR"] = before
    return len(items), cold, warm


def lsp_keystroke_seconds(
    repo: str, cache_dir: Path, runs: int, citations: int = 250
) -> tuple[int, float, list[float], list[float]]:
    """The language server's re-check after a keystroke, in-process: a document of
    about `citations` citations (paragraphs of findings/, at rc7) opened and
    checked once, then typed into, one character per keystroke in a line with
    a citation, each version checked as the server checks it (parse, check,
    diagnostics; no JSON-RPC, no debounce). (citations, first check seconds,
    wall seconds of each keystroke's re-check, CPU seconds of each: on a busy
    machine the wall time also counts what other processes took.)"""
    sys.path.insert(0, str(ROOT / "src"))
    from dshaudit.documents.frontmatter import split_front_matter
    from dshaudit.documents.grammar import find_citations
    from dshaudit.lsp.engine import EditorCache, Engine
    from dshaudit.platform import cache

    paragraphs, found = [], 0
    for path in sorted((ROOT / "findings").glob("*.md")):
        text = path.read_text(encoding="utf-8")
        _, skip = split_front_matter(text, path.name)
        for paragraph in "\n".join(text.split("\n")[skip:]).split("\n\n"):
            if found >= citations:
                break
            paragraphs.append(paragraph)
            found += len(find_citations(paragraph))
    text = "---\npin: rc7\n---\n" + "\n\n".join(paragraphs) + "\n"
    document = ROOT / "findings" / "lsp-bench.md"  # never written: only its folder finds dshaudit.toml
    uri = document.as_uri()
    before = os.environ.get("DSHAUDIT_CACHE_DIR")
    os.environ["DSHAUDIT_CACHE_DIR"] = str(cache_dir)
    try:
        cache.begin(EditorCache)
        engine = Engine(repo)
        start = time.perf_counter()
        first = engine.analyse(uri, text, 1)
        first_s = time.perf_counter() - start
        assert first.file is not None and first.result is not None, first.diagnostics
        count = len(first.file.citations)
        lines = text.split("\n")
        # Prose typed at the end of a sentence that holds a citation, halfway down.
        typed = next(
            c.source.line - 1
            for c in first.file.citations[count // 2 :]
            if lines[c.source.line - 1].rstrip().endswith(".")
        )
        words = " and the same holds at the next pin as the text says" * 10
        seconds, cpu_seconds = [], []
        for version in range(2, 2 + max(runs, 1) * 10):
            lines[typed] += words[version - 2]
            start, cpu = time.perf_counter(), time.process_time()
            engine.analyse(uri, "\n".join(lines), version)
            seconds.append(time.perf_counter() - start)
            cpu_seconds.append(time.process_time() - cpu)
        engine.close()
        cache.end()
    finally:
        if before is None:
            os.environ.pop("DSHAUDIT_CACHE_DIR", None)
        else:
            os.environ["DSHAUDIT_CACHE_DIR"] = before
    return count, first_s, seconds, cpu_seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="timed runs of each command (default 5)")
    parser.add_argument(
        "--only",
        choices=("new-sha", "history", "history-pairs"),
        help="one section alone: the check at a new SHA against the warm check (new-sha), "
        "the history section (history), or its paired runs without the naive extrapolation",
    )
    args = parser.parse_args()
    repo = os.environ.get("DSH_REPO")
    if not repo:
        raise SystemExit("bench: set DSH_REPO to a clone of deepseek-ai/deepseek-harness")
    if args.only in ("history", "history-pairs"):
        history_section(repo, args.runs, extrapolate=args.only == "history")
        return
    if args.only == "new-sha":
        new_sha_section(repo, args.runs)
        return
    exe = shutil.which("dshaudit") or str(Path(sys.executable).parent / "dshaudit")
    work = Path(tempfile.mkdtemp(prefix="dshaudit-bench-"))
    env = {**os.environ, "DSH_REPO": repo}
    cache = work / "cache"

    def empty_cache():
        shutil.rmtree(cache, ignore_errors=True)

    env["DSHAUDIT_CACHE_DIR"] = str(cache)
    print(f"dshaudit bench: DSH at {repo}; {args.runs} runs each; {os.cpu_count()} cores")
    rows = {}
    try:
        print("dshaudit (findings/ of this repository):")
        rows["check_cold"] = measure(
            "check, cold cache (citations + all facts)", [exe, "check"], args.runs, env, ROOT, empty_cache
        )
        rows["check_warm"] = measure("check, warm cache", [exe, "check"], args.runs, env, ROOT)
        rows["facts_cold"] = measure("facts, cold cache", [exe, "facts"], args.runs, env, ROOT, empty_cache)
        rows["facts_warm"] = measure("facts, warm cache", [exe, "facts"], args.runs, env, ROOT)
        rows["rebase"] = measure(
            "rebase --from rc7 --to rc2, warm cache",
            [exe, "rebase", "--from", "rc7", "--to", "rc2"],
            args.runs,
            env,
            ROOT,
        )
        rows["rebase_cold"] = measure(
            "rebase --from rc7 --to rc2, cold cache",
            [exe, "rebase", "--from", "rc7", "--to", "rc2"],
            args.runs,
            env,
            ROOT,
            empty_cache,
        )

        print("references:")
        tree = work / "rc7"
        tree.mkdir()
        archive = subprocess.run(["git", f"--git-dir={repo}", "archive", RC7], capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
        rows["git_grep"] = measure(
            "git grep -n KNOWN_SESSION_EVENT_TYPES (rc7)",
            ["git", f"--git-dir={repo}", "grep", "-n", "KNOWN_SESSION_EVENT_TYPES", RC7],
            args.runs,
            env,
            ROOT,
        )
        sg = find_ast_grep()
        if sg:
            rules = work / "rules"
            rules.mkdir()
            for name, body in RULES.items():
                for lang in ("typescript", "tsx"):
                    (rules / f"{name}-{lang}.yml").write_text(
                        f"id: {name}-{lang}\nlanguage: {lang}\nseverity: info\n{body}"
                    )
            (work / "sgconfig.yml").write_text(f"ruleDirs:\n  - {rules}\n")
            rows["ast_grep"] = measure(
                f"ast-grep scan, {len(RULES) * 2} rules (3 detectors)",
                [sg, "scan", "-c", str(work / "sgconfig.yml"), str(tree)],
                args.runs,
                env,
                work,
            )
        else:
            print("  ast-grep not found (npm install @ast-grep/cli, or put ast-grep on PATH): its ratios are skipped")

        names, refs_cold, refs_warm = reference_lookup_seconds(repo, work / "cache-references", args.runs)
        print("names and quoted code (references.py), in-process:")
        print(f"  {names} names and fragments of findings/ at rc7    cold {refs_cold:6.3f} s  warm {refs_warm:6.3f} s")

        lsp_citations, lsp_first, keystrokes, keystrokes_cpu = lsp_keystroke_seconds(
            repo, work / "cache-lsp", args.runs
        )
        print("language server (dshaudit lsp), in-process:")
        print(
            f"  {lsp_citations} citations at rc7: first check {lsp_first:6.3f} s; re-check after a keystroke "
            f"median {statistics.median(keystrokes) * 1000:5.1f} ms (CPU {statistics.median(keystrokes_cpu) * 1000:5.1f} ms), "
            f"max {max(keystrokes) * 1000:5.1f} ms ({len(keystrokes)} keystrokes)"
        )

        med = {k: v["median"] for k, v in rows.items()}
        print("ratios and targets (medians):")
        if "ast_grep" in med:
            print(
                f"  cold check / ast-grep scan            {med['check_cold'] / med['ast_grep']:5.2f}x   (target <= 1.0x)"
            )
        print(f"  cold check                            {med['check_cold']:5.2f} s   (target <= 3 s)")
        print(f"  warm check                            {med['check_warm']:5.2f} s   (target <= 0.5 s)")
        print(f"  rebase rc7 -> rc2 (warm)              {med['rebase']:5.2f} s   (target <= 1 s)")
        print(f"  rebase rc7 -> rc2 (cold)              {med['rebase_cold']:5.2f} s")
        print(f"  cold check / git grep                 {med['check_cold'] / med['git_grep']:5.1f}x")
        print(f"  {names} names looked up, warm          {refs_warm:5.2f} s   (target <= 0.3 s)")
        print(
            f"  keystroke re-check, {lsp_citations} citations {statistics.median(keystrokes) * 1000:5.0f} ms  (target <= 150 ms)"
        )
        print(
            f"  peak memory, largest                  {max(r['peak'] for r in rows.values()):5d} MiB (target <= 200 MiB)"
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    new_sha_section(repo, args.runs)  # warm and new-SHA checks in turn, with the target
    history_section(repo, args.runs)


def new_sha_section(repo: str, runs: int) -> None:
    """The warm check and the check at rc2 from a cache warm at rc7, alone, with their
    target. The two are run in turn (warm, new, warm, new ...), as history's pairs
    are: this machine's speed drifts by a third within a minute, and runs of one
    kind after all of the other would put the drift into the ratio."""
    exe = shutil.which("dshaudit") or str(Path(sys.executable).parent / "dshaudit")
    work = Path(tempfile.mkdtemp(prefix="dshaudit-bench-new-sha-"))
    warm_cache, new_cache, seeded = work / "cache", work / "cache-new", work / "cache-rc7"
    env = {**os.environ, "DSH_REPO": repo, "DSHAUDIT_CACHE_DIR": str(warm_cache)}
    new_env = {**env, "DSHAUDIT_CACHE_DIR": str(new_cache)}

    print("dshaudit (findings/ of this repository), new SHA:", flush=True)
    try:
        run_once([exe, "check"], env, ROOT)
        shutil.copytree(warm_cache, seeded)

        def from_rc7() -> None:
            shutil.rmtree(new_cache, ignore_errors=True)
            shutil.copytree(seeded, new_cache)

        walls = in_turn(
            runs,
            [
                ("warm", "check, warm cache", [exe, "check"], env, None),
                ("new", "check --pin rc2, cache warm from rc7", [exe, "check", "--pin", "rc2"], new_env, from_rc7),
            ],
        )
        changed, parse_s = changed_parse_seconds(repo)
        print(f"  parsing the {changed} detector files that changed rc7 -> rc2, once, in-process: {parse_s:.3f} s")
        warm, new = statistics.median(walls["warm"]), statistics.median(walls["new"])
        budget = 1.5 * warm + parse_s
        pairs = [n / (1.5 * w + parse_s) for w, n in zip(walls["warm"], walls["new"])]
        print(
            f"  check at rc2 from a warm rc7 cache    {new:5.2f} s   "
            f"(target <= 1.5 x warm + parse of changed = {budget:.2f} s; ratio {new / budget:.2f}; "
            f"pairs: {', '.join(f'{r:.2f}' for r in pairs)})"
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


# -- history (a section of its own) ------------------------------------------------


def history_section(repo: str, runs: int, extrapolate: bool = True) -> None:
    """`history --from rc7 --to rc2` against one cold `check --pin rc2`, both from an
    empty cache, run in turn (A B A B ...) so that each ratio compares neighbours;
    and the naive way to learn the same: a `check` at every 10th first-parent
    commit (from a cache warm at rc7, each check warming it for the next),
    extrapolated to all of them."""
    exe = shutil.which("dshaudit") or str(Path(sys.executable).parent / "dshaudit")
    work = Path(tempfile.mkdtemp(prefix="dshaudit-bench-history-"))
    cache = work / "cache"
    env = {**os.environ, "DSH_REPO": repo, "DSHAUDIT_CACHE_DIR": str(cache)}
    print("history (findings/ of this repository, rc7 -> rc2):", flush=True)
    try:

        def empty() -> None:
            shutil.rmtree(cache, ignore_errors=True)

        walls = in_turn(
            runs,
            [
                (
                    "history",
                    "history --from rc7 --to rc2, cold cache",
                    [exe, "history", "--from", "rc7", "--to", "rc2"],
                    env,
                    empty,
                ),
                ("check", "check --pin rc2, cold cache", [exe, "check", "--pin", "rc2"], env, empty),
            ],
        )
        ratios = [h / c for h, c in zip(walls["history"], walls["check"])]
        ratio_line = (
            f"  history / cold check --pin rc2        {statistics.median(ratios):5.2f}x   (target <= 2.0x; pairs: "
            + ", ".join(f"{r:.2f}" for r in ratios)
            + ")"
        )
        if not extrapolate:
            print("ratios and targets (medians):")
            print(ratio_line)
            return
        commits = subprocess.run(
            ["git", f"--git-dir={repo}", "rev-list", "--first-parent", "--reverse", f"{RC7}..{RC2}"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        shutil.rmtree(cache, ignore_errors=True)
        run_once([exe, "check", "--pin", "rc7"], env, ROOT)  # the cache a reviewer at rc7 has
        sampled = commits[9::10]
        naive = 0.0
        for sha in sampled:
            wall, _, code = run_once([exe, "check", "--pin", sha], env, ROOT)
            if code not in (0, 1):
                raise SystemExit(f"bench: check --pin {sha} exited {code}")
            naive += wall
        per_check = naive / len(sampled)
        print(
            f"  check at every 10th commit ({len(sampled)} of {len(commits)}), from a cache warm at rc7: "
            f"{naive:.2f} s, {per_check:.2f} s each",
            flush=True,
        )
        print("ratios and targets (medians):")
        print(ratio_line)
        print(
            f"  naive: a check at each of the {len(commits)} commits, extrapolated   {per_check * len(commits):6.1f} s   "
            f"({per_check * len(commits) / statistics.median(walls['history']):.0f}x history, which also finds edits "
            "under a matching anchor and restorations that per-commit checks of status alone would not say)"
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
