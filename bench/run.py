#!/usr/bin/env python3
"""Benchmark dshaudit on real DSH against what a user could run instead.

Not a test: it prints figures, targets and ratios for a person to read.

    DSH_REPO=/path/to/dsh-clone [HANDBOOK_REPO=/path/to/handbook-clone] \\
        python bench/run.py [--runs 3] [--only SECTION] [--dshaudit PATH]

Speed is set beside two references rather than beside dshaudit itself: an
ast-grep scan of the rc7 tree extracted to a folder, with six rules (three of
dshaudit's detectors, each for .ts and .tsx), is a tool a user could pick
instead; one `git grep` of an identifier over the rc7 tree is the cost of
reading the data once. Each section times whole processes and prints the
median of `--runs` rounds; a figure and the reference it is compared with run
in turn within each round (A B A B ...), so that a drift of the machine's
speed falls on both. Each reference runs once untimed first, so that both
sides read from a warm page cache. A process that runs past its timeout is
stopped and counted at the timeout, marked as such. The sections, each of
which `--only` runs alone and each printing its targets: cold, warm, new-pin,
handbook, history, lsp.

"Cold" starts from an empty cache folder; "warm" from one a previous run
filled. dshaudit is the `--dshaudit` executable (default: the one next to
this Python); measure it installed as the README installs it, not editable,
since compiled bytecode changes the warm figures. The language-server section
runs in the Python that executable's script names, so that it measures the
same installation.

ast-grep is the `ast-grep` or `sg` command on PATH (when its `--version` says
ast-grep), one next to this Python, or one under node_modules/.bin;
`pip install ast-grep-cli` or `npm install @ast-grep/cli` provides it. Without
it, the ratios to it are skipped with a note. The handbook section needs
HANDBOOK_REPO, a clone of the community handbook of DSH (bare or not): its
`docs/en` at a fixed commit is a corpus nobody wrote for dshaudit.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

RC7 = "99f6f02fecdb7dff40c3fbc9470f5907c29f74ca"
RC2 = "b150a551b8d465e31e418e1b2eaf5e79bbb7d28e"
HANDBOOK_COMMIT = "717ca66"
HANDBOOK_FOLDER = "docs/en"
GREP_IDENTIFIER = "KNOWN_SESSION_EVENT_TYPES"
ROOT = Path(__file__).resolve().parent.parent
TIMEOUT = 600.0
HANDBOOK_TIMEOUT = 1800.0  # the cold handbook check reads many names and can take minutes
LSP_CITATIONS = 250
SECTIONS = ("cold", "warm", "new-pin", "handbook", "history", "lsp")

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
LANGUAGES = ("typescript", "tsx")


# -- timing -------------------------------------------------------------------------


@dataclass
class Outcome:
    """One process: wall seconds, peak resident memory of the process itself, whether
    it was stopped at its timeout, whether it left processes of its own running, and
    the CPU seconds of it and of every process it waited for (its threads' included)."""

    wall: float
    peak_mib: int
    timed_out: bool
    left_running: bool = False
    cpu: float = 0.0


def _left_in_group(group: int) -> bool:
    """Whether a process of the group is still running (zombies aside), by /proc; where
    there is no /proc, whether the group can still be signalled at all."""
    proc = Path("/proc")
    if not proc.is_dir():
        try:
            os.killpg(group, 0)
        except OSError:
            return False
        return True
    for stat in proc.glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rpartition(")")[2].split()
        except OSError:
            continue  # ended meanwhile
        if len(fields) > 2 and fields[2] == str(group) and fields[0] != "Z":
            return True
    return False


def run_once(argv: list[str], env: dict[str, str], cwd: Path, timeout: float = TIMEOUT) -> Outcome:
    """Time one process. It runs in a process group of its own: whatever it leaves running
    when it exits (a git it did not stop) is stopped then, and said, since it would go on
    spending the CPU of the figure timed next."""
    proc = subprocess.Popen(
        argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    stopped = threading.Event()

    def stop() -> None:
        stopped.set()
        _stop_group(proc.pid)

    stopper = threading.Timer(timeout, stop)
    start = time.perf_counter()
    stopper.start()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    stopper.cancel()
    timed_out = stopped.is_set()
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here; keeps Popen from waiting again
    left = _left_in_group(proc.pid)
    if left:
        _stop_group(proc.pid)
    if not timed_out and proc.returncode not in (0, 1):
        raise SystemExit(f"bench: `{' '.join(argv)}` exited {proc.returncode}")
    cpu = usage.ru_utime + usage.ru_stime
    return Outcome(min(wall, timeout) if timed_out else wall, usage.ru_maxrss // 1024, timed_out, left, cpu)


def _stop_group(group: int) -> None:
    try:
        os.killpg(group, signal.SIGKILL)
    except OSError:
        pass  # every process of it has ended


@dataclass
class Timed:
    """What one figure times: processes run one after another, from `before`'s set-up,
    their wall seconds summed. `rounds` holds each round's outcomes, one per process."""

    text: str
    steps: list[list[str]]
    env: dict[str, str]
    cwd: Path = ROOT
    before: Callable[[], None] | None = None
    timeout: float = TIMEOUT
    rounds: list[list[Outcome]] = field(default_factory=list)

    def run(self) -> None:
        if self.before:
            self.before()
        self.rounds.append([run_once(argv, self.env, self.cwd, self.timeout) for argv in self.steps])

    def totals(self, step: int | None = None) -> list[float]:
        return [sum(o.wall for o in r) if step is None else r[step].wall for r in self.rounds]

    def median(self, step: int | None = None) -> float:
        return statistics.median(self.totals(step))

    def cpu_median(self, step: int | None = None) -> float:
        """The median over rounds of the CPU seconds the figure's processes spent."""
        return statistics.median(sum(o.cpu for o in r) if step is None else r[step].cpu for r in self.rounds)

    def timed_out(self, step: int | None = None) -> bool:
        return any(o.timed_out for r in self.rounds for o in (r if step is None else [r[step]]))

    def line(self, step: int | None = None, text: str | None = None) -> str:
        """The figure's median, each round's seconds, the median CPU seconds and the largest peak memory."""
        runs = ", ".join(f"{s:.2f}" for s in self.totals(step))
        peak = max(o.peak_mib for r in self.rounds for o in (r if step is None else [r[step]]))
        over = f" (stopped at the {self.timeout:.0f} s timeout)" if self.timed_out(step) else ""
        outcomes = [o for r in self.rounds for o in (r if step is None else [r[step]])]
        if any(o.left_running for o in outcomes):
            over += " (left processes running when it exited: stopped, not timed)"
        cpu = self.cpu_median(step)
        return (
            f"  {text or self.text:<52} median {self.median(step):7.3f} s{over}"
            f"  (runs {runs}; CPU {cpu:.2f} s; peak {peak} MiB)"
        )


def in_turn(runs: int, *figures: Timed) -> None:
    """`runs` rounds, each running every figure once, in the order given."""
    for _ in range(runs):
        for figure in figures:
            figure.run()
    for figure in figures:
        print(figure.line(), flush=True)


def verdict(value: float, target: float) -> str:
    return "meets the target" if value <= target else "over the target"


def ratio_line(text: str, numerator: float, denominator: float, target: float, goal: str = "") -> str:
    ratio = numerator / denominator
    return f"  -> {text:<49} {ratio:6.2f}x   target <= {target:.1f}x{goal}: {verdict(ratio, target)}"


def cpu_line(text: str, numerator: float, denominator: float) -> str:
    """CPU seconds against CPU seconds: how much work, whatever the cores it kept busy."""
    return f"  -> {text:<49} {numerator / denominator:6.2f}x   (CPU against CPU, for reference: no target)"


def seconds_line(text: str, seconds: float, target: float) -> str:
    return f"  -> {text:<49} {seconds:6.3f} s   target <= {target:.1f} s: {verdict(seconds, target)}"


# -- the references ---------------------------------------------------------------


def find_ast_grep() -> str | None:
    for name in ("ast-grep", "sg"):
        path = shutil.which(name)
        if path and "ast-grep" in subprocess.run([path, "--version"], capture_output=True, text=True).stdout:
            return path
    beside = Path(sys.executable).parent / "ast-grep"
    if beside.exists():
        return str(beside)
    for base in (ROOT, Path.cwd()):
        candidate = base / "node_modules" / ".bin" / "ast-grep"
        if candidate.exists():
            return str(candidate)
    return None


def extract(git_dir: str, commit: str, into: Path, *paths: str) -> None:
    """The tree at `commit` (or those `paths` of it) written under `into`, as files.
    The archive streams from git to tar: held here, it would raise this process's
    memory, which every process it starts afterwards counts in its own peak."""
    into.mkdir(parents=True)
    archive = subprocess.Popen(["git", f"--git-dir={git_dir}", "archive", commit, *paths], stdout=subprocess.PIPE)
    subprocess.run(["tar", "-x", "-C", str(into)], stdin=archive.stdout, check=True)
    assert archive.stdout is not None
    archive.stdout.close()
    if archive.wait() != 0:
        raise SystemExit(f"bench: git archive {commit} failed in {git_dir}")


def checkout(clone: str, commit: str, into: Path) -> None:
    """A working tree of `clone` (bare or not) at `commit`, in `into`: the folder a user who
    cloned the repository would run in (a `.git` of its own, its code files tracked)."""
    for argv in (
        ["git", "clone", "--quiet", "--no-checkout", clone, str(into)],
        ["git", "-C", str(into), "checkout", "--quiet", commit],
    ):
        if subprocess.run(argv, capture_output=True).returncode != 0:
            raise SystemExit(f"bench: {' '.join(argv[:3])} failed for {clone}")


def git_dir(clone: str) -> str:
    """The git directory of a clone, bare or not."""
    dot_git = Path(clone) / ".git"
    return str(dot_git) if dot_git.exists() else clone


# -- the sections -----------------------------------------------------------------


class Bench:
    """One run of the benchmark: the clones, the executables and a scratch folder."""

    def __init__(self, repo: str, handbook: str | None, exe: str, runs: int, work: Path):
        self.repo, self.handbook, self.exe, self.runs, self.work = repo, handbook, exe, runs, work
        self.env = {**os.environ, "DSH_REPO": repo}
        self.ast_grep = find_ast_grep()

    def cache_env(self, name: str) -> tuple[dict[str, str], Path]:
        cache = self.work / name
        return {**self.env, "DSHAUDIT_CACHE_DIR": str(cache)}, cache

    @staticmethod
    def emptied(cache: Path) -> Callable[[], None]:
        return lambda: shutil.rmtree(cache, ignore_errors=True)

    @staticmethod
    def copied(seed: Path, cache: Path) -> Callable[[], None]:
        def copy() -> None:
            shutil.rmtree(cache, ignore_errors=True)
            shutil.copytree(seed, cache)

        return copy

    @cached_property
    def scan(self) -> Timed | None:
        """The ast-grep scan of the extracted rc7 tree, run once untimed; a fresh
        Timed for every section (see `reference`)."""
        if not self.ast_grep:
            return None
        tree, rules = self.work / "rc7", self.work / "rules"
        extract(git_dir(self.repo), RC7, tree)
        rules.mkdir()
        for name, body in RULES.items():
            for language in LANGUAGES:
                rule = f"id: {name}-{language}\nlanguage: {language}\nseverity: info\n{body}"
                (rules / f"{name}-{language}.yml").write_text(rule, encoding="utf-8")
        (self.work / "sgconfig.yml").write_text(f"ruleDirs:\n  - {rules}\n", encoding="utf-8")
        text = f"ast-grep scan, {len(RULES) * len(LANGUAGES)} rules, rc7 tree"
        scan = Timed(text, [[self.ast_grep, "scan", "-c", str(self.work / "sgconfig.yml"), str(tree)]], self.env)
        run_once(scan.steps[0], scan.env, scan.cwd)
        return scan

    def reference(self) -> Timed | None:
        """The ast-grep scan, timed anew beside the figure it is compared with."""
        scan = self.scan
        return Timed(scan.text, scan.steps, scan.env) if scan else None

    def no_ast_grep(self) -> None:
        print("  ast-grep not found (pip install ast-grep-cli, or put ast-grep on PATH): its ratio is skipped")

    def cold(self) -> None:
        """Cold `check` and `facts` of findings/ at rc7 against the ast-grep scan,
        and against one `git grep` over the rc7 tree, for reference."""
        print("cold: check + facts of findings/ at rc7, each pair from an empty cache", flush=True)
        env, cache = self.cache_env("cache-cold")
        pair = Timed(
            "cold check + cold facts (sum)", [[self.exe, "check"], [self.exe, "facts"]], env, before=self.emptied(cache)
        )
        grep = Timed(
            f"git grep of {GREP_IDENTIFIER}, rc7",
            [["git", f"--git-dir={git_dir(self.repo)}", "grep", "-n", GREP_IDENTIFIER, RC7]],
            self.env,
        )
        run_once(grep.steps[0], grep.env, grep.cwd)
        scan = self.reference()
        in_turn(self.runs, *[f for f in (pair, scan, grep) if f])
        if scan:
            print(ratio_line("cold check + facts / ast-grep scan", pair.median(), scan.median(), 1.0, " (goal 0.5x)"))
            print(cpu_line("CPU of the cold check + facts / of the scan", pair.cpu_median(), scan.cpu_median()))
        else:
            self.no_ast_grep()
        print(
            f"  -> {'cold check + facts / git grep (reading the data once)':<49} {pair.median() / grep.median():6.1f}x"
        )

    def warm(self) -> None:
        """`check` and `facts` of findings/ at rc7 from a warm cache, each against 0.3 s."""
        print("warm: check and facts of findings/ at rc7, from a warm cache", flush=True)
        env, _ = self.cache_env("cache-warm")
        run_once([self.exe, "check"], env, ROOT)
        run_once([self.exe, "facts"], env, ROOT)
        check = Timed("warm check", [[self.exe, "check"]], env)
        facts = Timed("warm facts", [[self.exe, "facts"]], env)
        in_turn(self.runs, check, facts)
        print(seconds_line("warm check", check.median(), 0.3))
        print(seconds_line("warm facts", facts.median(), 0.3))

    def new_pin(self) -> None:
        """`check --pin rc2` from a cache warm at rc7 against the ast-grep scan."""
        print("new-pin: check --pin rc2 of findings/, from a cache warm at rc7", flush=True)
        seed_env, seed = self.cache_env("cache-rc7")
        run_once([self.exe, "check"], seed_env, ROOT)
        env, cache = self.cache_env("cache-new-pin")
        check = Timed(
            "check --pin rc2, cache warm at rc7",
            [[self.exe, "check", "--pin", "rc2"]],
            env,
            before=self.copied(seed, cache),
        )
        scan = self.reference()
        in_turn(self.runs, *[f for f in (check, scan) if f])
        if scan:
            print(ratio_line("check --pin rc2 from rc7 / ast-grep scan", check.median(), scan.median(), 1.0))
        else:
            self.no_ast_grep()

    def handbook_section(self) -> None:
        """The handbook's docs/en checked at rc2, cold against the ast-grep scan and warm against 0.3 s."""
        print(f"handbook: check {HANDBOOK_FOLDER} --pin rc2 of the community handbook at {HANDBOOK_COMMIT}", flush=True)
        if not self.handbook:
            print("  skipped: HANDBOOK_REPO is not set (it names a clone of the community handbook of DSH)")
            return
        corpus = self.work / "handbook"
        checkout(self.handbook, HANDBOOK_COMMIT, corpus)
        env, cache = self.cache_env("cache-handbook")
        argv = [self.exe, "check", HANDBOOK_FOLDER, "--pin", "rc2"]
        # Run from the handbook's own working tree, as its writers would: no dshaudit.toml there, so
        # the packaged default names the pins, and the names its own code defines are read as theirs.
        cold = Timed(f"cold {' '.join(argv[1:])}", [argv], env, corpus, self.emptied(cache), HANDBOOK_TIMEOUT)
        warm = Timed(f"warm {' '.join(argv[1:])}", [argv], env, corpus, timeout=HANDBOOK_TIMEOUT)
        scan = self.reference()
        in_turn(self.runs, *[f for f in (cold, scan, warm) if f])
        if scan:
            print(ratio_line("cold handbook check / ast-grep scan", cold.median(), scan.median(), 1.0))
            print(cpu_line("CPU of the cold handbook check / of the scan", cold.cpu_median(), scan.cpu_median()))
        else:
            self.no_ast_grep()
        print(seconds_line("warm handbook check", warm.median(), 0.3))

    def history(self) -> None:
        """`history --from rc7 --to rc2` against one `check --pin rc2`, both cold."""
        print("history: history --from rc7 --to rc2 of findings/ against check --pin rc2, both cold", flush=True)
        env, cache = self.cache_env("cache-history")
        history = Timed(
            "cold history --from rc7 --to rc2",
            [[self.exe, "history", "--from", "rc7", "--to", "rc2"]],
            env,
            before=self.emptied(cache),
        )
        check = Timed("cold check --pin rc2", [[self.exe, "check", "--pin", "rc2"]], env, before=self.emptied(cache))
        in_turn(self.runs, history, check)
        print(ratio_line("history / check --pin rc2", history.median(), check.median(), 2.0))
        print(cpu_line("CPU of history / of check --pin rc2", history.cpu_median(), check.cpu_median()))

    def lsp(self) -> None:
        """The language server's re-check after a keystroke, in the Python of the
        measured installation (a process of its own that prints its figures as JSON)."""
        print(f"lsp: re-check after a keystroke in a document of {LSP_CITATIONS} citations at rc7", flush=True)
        env, _ = self.cache_env("cache-lsp")
        argv = [python_of(self.exe), str(Path(__file__).resolve()), "--lsp-child", "--runs", str(self.runs)]
        proc = subprocess.run(argv, env=env, cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT)
        if proc.returncode != 0:
            raise SystemExit(f"bench: the language-server measurement failed:\n{proc.stderr}")
        figures = json.loads(proc.stdout.strip().splitlines()[-1])
        walls, cpus = figures["seconds"], figures["cpu_seconds"]
        print(
            f"  {figures['citations']} citations: first check {figures['first']:.3f} s; {len(walls)} keystrokes: "
            f"median {statistics.median(walls) * 1000:.1f} ms (CPU {statistics.median(cpus) * 1000:.1f} ms), "
            f"max {max(walls) * 1000:.1f} ms"
        )
        median_ms = statistics.median(walls) * 1000
        print(f"  -> {'re-check after a keystroke':<49} {median_ms:6.1f} ms  target <= 50 ms: {verdict(median_ms, 50)}")


def python_of(exe: str) -> str:
    """The Python a console script runs in (the one its first line names), else this one."""
    try:
        with open(exe, "rb") as script:
            first = script.readline().decode("utf-8", "replace").strip()
    except OSError:
        return sys.executable
    if first.startswith("#!") and Path(first[2:].strip()).is_file():
        return first[2:].strip()
    return sys.executable


# -- the language server, in-process ----------------------------------------------


def lsp_document(citations: int) -> str:
    """A document of `citations` citations pinned at rc7: paragraphs of findings/ in
    order, leaving out any that would carry the count past `citations`."""
    from dshaudit.documents.frontmatter import split_front_matter
    from dshaudit.documents.grammar import find_citations

    paragraphs, found = [], 0
    for path in sorted((ROOT / "findings").glob("*.md")):
        text = path.read_text(encoding="utf-8")
        _, skip = split_front_matter(text, path.name)
        for paragraph in "\n".join(text.split("\n")[skip:]).split("\n\n"):
            count = len(find_citations(paragraph))
            if found + count <= citations:
                paragraphs.append(paragraph)
                found += count
            if found == citations:
                return "---\npin: rc7\n---\n" + "\n\n".join(paragraphs) + "\n"
    raise SystemExit(f"bench: findings/ holds fewer than {citations} citations")


def lsp_keystroke_seconds(repo: str, runs: int, citations: int = LSP_CITATIONS) -> dict:
    """The language server's re-check after a keystroke: the document opened and
    checked once, then typed into, one character per keystroke at the end of a
    sentence that holds a citation, halfway down; each version checked as the
    server checks it (parse, check, diagnostics; no JSON-RPC, no debounce).
    Wall and CPU seconds of each re-check: on a busy machine the wall time also
    counts what other processes took. The cache folder is DSHAUDIT_CACHE_DIR."""
    from dshaudit.lsp.engine import EditorCache, Engine
    from dshaudit.platform import cache

    text = lsp_document(citations)
    uri = (ROOT / "findings" / "lsp-bench.md").as_uri()  # never written: its folder finds dshaudit.toml
    cache.begin(EditorCache)
    engine = Engine(repo)
    start = time.perf_counter()
    first = engine.analyse(uri, text, 1)
    first_s = time.perf_counter() - start
    assert first.file is not None and first.result is not None, first.diagnostics
    count = len(first.file.citations)
    lines = text.split("\n")
    typed = next(
        c.source.line - 1 for c in first.file.citations[count // 2 :] if lines[c.source.line - 1].rstrip().endswith(".")
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
    return {"citations": count, "first": first_s, "seconds": seconds, "cpu_seconds": cpu_seconds}


# -- main ---------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="rounds of each section; medians are printed (default 3)")
    parser.add_argument("--only", choices=SECTIONS, help="run one section alone")
    parser.add_argument(
        "--dshaudit",
        default=str(Path(sys.executable).parent / "dshaudit"),
        help="the dshaudit executable to measure (default: the one next to this Python)",
    )
    parser.add_argument("--lsp-child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    repo = os.environ.get("DSH_REPO")
    if not repo:
        raise SystemExit("bench: set DSH_REPO to a clone of deepseek-ai/deepseek-harness")
    if args.lsp_child:
        print(json.dumps(lsp_keystroke_seconds(repo, args.runs)))
        return
    if not Path(args.dshaudit).is_file():
        raise SystemExit(f"bench: no dshaudit at {args.dshaudit} (pass --dshaudit PATH)")
    work = Path(tempfile.mkdtemp(prefix="dshaudit-bench-"))
    try:
        bench = Bench(repo, os.environ.get("HANDBOOK_REPO"), args.dshaudit, args.runs, work)
        print(
            f"dshaudit bench: {args.dshaudit}; DSH at {repo}; ast-grep {bench.ast_grep or 'not found'}; "
            f"medians of {args.runs} rounds; {os.cpu_count()} cores",
            flush=True,
        )
        sections = {
            "cold": bench.cold,
            "warm": bench.warm,
            "new-pin": bench.new_pin,
            "handbook": bench.handbook_section,
            "history": bench.history,
            "lsp": bench.lsp,
        }
        for name in [args.only] if args.only else SECTIONS:
            sections[name]()
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
