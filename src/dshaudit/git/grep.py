"""git grep over the tree of one commit: git scans every blob in C, faster
than Python reads the few it needs. (Searches of lines are search.py's.)"""

from __future__ import annotations

from dshaudit.git import run

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # every git knows it
_PERL: dict[str, bool] = {}  # git dir -> whether its git greps with -P


def greps_with_perl(git_dir: str) -> bool:
    """Whether this git greps with Perl regexes (`-P`, built with PCRE2), asked once per clone."""
    if git_dir not in _PERL:
        _PERL[git_dir] = run.run(["grep", "-P", "-e", "x", EMPTY_TREE], git_dir).returncode in (0, 1)
    return _PERL[git_dir]


class Grep:
    """git grep at one commit."""

    def __init__(self, git_dir: str, sha: str):
        self.git_dir = git_dir
        self.sha = sha

    def needles(self, needles: list[str], paths: list[str]) -> dict[str, set[str] | None]:
        """Which of `needles` (fixed strings) occur in each of `paths`: one `git grep -o`
        a thousand paths, named as literal pathspecs, instead of reading every blob;
        None for a file where git's answer may leave one out (`_hiding`), which the
        caller reads."""
        found: dict[str, set[str]] = {p: set() for p in paths}
        args = ["-o", "-z", "-a", "-F", "--no-color"] + [a for n in needles for a in ("-e", n)]
        prefix = self.sha + ":"
        for i in range(0, len(paths), 1000):
            named = [self.sha, "--", *(f":(literal){p}" for p in paths[i : i + 1000])]
            done = run.run(["grep", *args, *named], self.git_dir, env=run.C_LOCALE)
            # 1: nothing matched, unless git says why (a blob it could not read).
            out = run.text(done.output(no_match_ok=True, commit=self.sha), keep_newline=True)
            for record in out.split("\n"):
                if record:
                    path, _, text = record.partition("\0")
                    path = path.removeprefix(prefix)
                    if path in found:
                        found[path].add(text)
        # A needle of several lines is several patterns to git: its matches say too little.
        hiding = set(needles) if any("\n" in n for n in needles) else _hiding(needles)
        return {
            p: None
            if texts and (texts & hiding or not texts <= set(needles))
            else {n for n in needles if any(n in t for t in texts)}
            for p, texts in found.items()
        }

    def files_holding(self, lines: list[str]) -> list[str]:
        """The files that hold any of `lines` (each of one line), its spacing aside, sorted.
        The patterns read the same as Perl and as extended regexes; git matches them several
        times faster with Perl's (in the C locale, byte by byte either way)."""
        patterns = [a for line in lines for a in ("-e", _spacing_free(line))]
        syntax = "-P" if greps_with_perl(self.git_dir) else "-E"
        done = run.run(
            ["grep", "-l", "-z", "-a", syntax, "--no-color", *patterns, self.sha, "--"], self.git_dir, env=run.C_LOCALE
        )
        out = run.text(done.output(no_match_ok=True, commit=self.sha), keep_newline=True)
        prefix = self.sha + ":"
        return sorted(p.removeprefix(prefix) for p in out.split("\0") if p)


def _spacing_free(line: str) -> str:
    """A regular expression, extended or Perl's, for the line with any run of spaces in it,
    and none, where it has some: every character either syntax gives a meaning is escaped."""
    words = ["".join("\\" + ch if ch in ".[]()*+?{}|^$\\" else ch for ch in word) for word in line.split()]
    return "[[:space:]]*".join(words)


def _hiding(needles: list[str]) -> set[str]:
    """The needles whose match may hide another needle from `git grep -o`. git reports
    the leftmost match (the longest of those that begin there) and goes on after
    its end, so a needle at a place inside a reported match is not reported. If it
    ends inside that match it is part of the match's text, and read from it; if it
    ends past it (a suffix of the match begins it: `maxDepth` and `hasOwn` in
    `maxDepthasOwn`), only the file tells. A file with a match of these is read."""
    return {
        m
        for m in needles
        for n in needles
        if n != m and n not in m and any(m.endswith(n[:k]) for k in range(1, min(len(m), len(n))))
    }
