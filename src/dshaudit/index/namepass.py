"""The names pass: where names and word-only absence claims occur at one commit.

The names not yet known are looked up together, in one `git grep -o` pass
over the commit (or over a base's changed files) per group of up to `CHUNK`
names, joined into one alternation: one regex is far faster in git than
hundreds of `-e` patterns. With Perl regexes (`-P`, when git has them) the
whole-word test is part of the pattern, so a longer name that is no whole word
at a place gives way to a shorter one there; the names inside a match with
other characters (`dsh` in `@scope/dsh-base`) are read from the match, and a
name with other characters the pass still misses (one that only overlaps
another) is looked up again on its own (`alone`). Without `-P` the pass is
`-w -E`, and a name with other characters that begins with a word looked for
(`dsh-base` and `dsh`) gets a pass of its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from dshaudit.documents.searches import escape_ere
from dshaudit.index.absence import Absences
from dshaudit.index.namegrep import CommitGrep, Running
from dshaudit.index.namestore import ABSENCE_PLACES
from dshaudit.index.screen import alternation
from dshaudit.index.words import WORD_RE, any_case, any_case_ere, first_word, is_word, whole_word

if TYPE_CHECKING:
    from dshaudit.git.snapshot import Snapshot

CHUNK = 300  # names per alternation
# A match's line number where a line starts: looked for after a line break, a literal the
# regular expression engine finds first (a `^` would be tried at every character).
_LINE_NUMBER_RE = re.compile(r"\n[0-9]+\0")


def _pass_args(syntax: list[str], pattern: str, lines: bool) -> list[str]:
    """`git grep` of one pass: each match alone (`-o`), under its file's path once
    (`--heading`, `-z`), with its line number when claims need places (`lines`)."""
    return ["grep", "-o", "-z", *(["-n"] if lines else []), "--heading", "--break", "-I", *syntax, "-e", pattern]


class Inside:
    """What a match of the names pass holds as whole words: the names (itself,
    and those inside a match with other characters, `dsh` and `dsh-base` in
    `@scope/dsh-base`, which git does not report again) and the absence claims
    (a word that reads as the claim, in any case for a claim with no capital
    letter). Worked out once per distinct match."""

    def __init__(self, names: list[str], claims: list[str]):
        self._words = {n for n in names if is_word(n)}
        self._others = {
            n: re.compile(rf"(?<![A-Za-z0-9_]){re.escape(n)}(?![A-Za-z0-9_])") for n in names if not is_word(n)
        }
        self._exact = {t for t in claims if not any_case(t)}
        self._folded = {t for t in claims if any_case(t)}
        self._names: dict[str, tuple[str, ...]] = {}
        self._claims: dict[str, tuple[str, ...]] = {}

    def names(self, match: str) -> tuple[str, ...]:
        if match not in self._names:
            if is_word(match):
                held = {match} & self._words
            else:
                held = {w for w in WORD_RE.findall(match) if w in self._words}
                held |= {n for n, word in self._others.items() if n in match and word.search(match)}
            self._names[match] = tuple(sorted(held))
        return self._names[match]

    def claims(self, match: str) -> tuple[str, ...]:
        if not (self._exact or self._folded):
            return ()
        if match not in self._claims:
            words = WORD_RE.findall(match)
            held = {w for w in words if w in self._exact} | {w.lower() for w in words if w.lower() in self._folded}
            self._claims[match] = tuple(sorted(held))
        return self._claims[match]


@dataclass
class NameSearch:
    """One search over the whole tree (`files` None) or some of its files: where
    `names` occur and the first places of the absence claims `texts`, its git
    processes started. Word names and word-only claims share one pass: a
    claim's letters are written as [aA] so that it is found in any case."""

    names: list[str]
    texts: list[str]
    files: list[str] | None
    looked_up: list[str] = field(default_factory=list)  # what the passes search for, the names and more
    checked: list[str] = field(default_factory=list)  # names looked for in Python, in the files of their first word
    # (names, claims, process, whether it is an -o pass or a -F pass for claims only)
    runs: list[tuple[list[str], list[str], Running, bool]] = field(default_factory=list)

    def stop(self) -> None:
        for _, _, started, _ in self.runs:
            started.stop()


class NamePasses:
    """The passes of one commit's name index: started (`start`), then collected (`finish`)."""

    def __init__(self, snapshot: Snapshot, grep: CommitGrep, absences: Absences):
        self.snapshot = snapshot
        self.sha = snapshot.sha
        self.grep = grep
        self.absences = absences

    def start(self, names: list[str], texts: list[str], files: list[str] | None) -> NameSearch:
        """The passes that find where `names` occur and where the claims `texts` do: started now."""
        search = NameSearch(names, texts, files)
        claims = [t for t in texts if is_word(t)]
        if self.grep.perl():
            self._start_perl(search, claims)
            return search
        # A name with other characters shares the word names' pass, and the
        # words inside a match of it are read from the match, unless it begins
        # with one of the words looked for (`dsh-base` and `dsh`): where it is
        # no whole word (`dsh-basement`), git would resume after its start,
        # past the word. Over the whole tree such a name has a pass of its
        # own; among a base's changed files it is looked for in the files
        # that hold its first word.
        starts = {n for n in names if is_word(n)} | set(claims) | {t.lower() for t in claims if any_case(t)}
        shared = [n for n in names if is_word(n) or first_word(n) not in starts]
        apart = [n for n in names if n not in set(shared)]
        if files is not None:
            search.checked = apart
            shared += sorted({first_word(n) for n in apart} - set(names))
            apart = []
        search.looked_up = shared + apart
        groups = [(shared[i : i + CHUNK], claims if i == 0 else []) for i in range(0, len(shared), CHUNK)]
        groups = groups or [([], claims)]
        groups += [(apart[i : i + CHUNK], []) for i in range(0, len(apart), CHUNK)]
        for group, with_claims in groups:
            if not group and not with_claims:
                continue
            # --heading names each file once above its matches: on DSH the
            # output is a tenth of what a path on every match line makes. -z
            # writes the path as it is (no C quotes around a tab or a quote).
            pattern = (
                "("
                + "|".join(
                    sorted(
                        [escape_ere(n) for n in group] + [any_case_ere(t) for t in with_claims], key=len, reverse=True
                    )
                )
                + ")"
            )
            args = _pass_args(["-w", "-E"], pattern, bool(with_claims))
            search.runs += [(group, with_claims, started, True) for started in self.grep.start(args, files)]
        rest = [t for t in texts if not is_word(t)]
        if rest:
            search.runs += [([], rest, started, False) for started in self.absences.start(rest, files)]
        return search

    def _start_perl(self, search: NameSearch, claims: list[str]) -> None:
        """One pass for every name and word-only claim, with `-P`: a whole word
        is part of the pattern (lookarounds), so where a longer name is no whole
        word (`dsh-base` in `dsh-basement`) the shorter one is tried at the same
        place (`dsh`). Longest first, since the first alternative that matches
        wins; the names inside a match are read from it. The C locale keeps
        git from matching as UTF-8, so `(?i)` folds ASCII letters only."""
        names = search.names
        search.looked_up = list(names)
        for i in range(0, max(len(names), 1), CHUNK):
            group, with_claims = names[i : i + CHUNK], claims if i == 0 else []
            if not group and not with_claims:
                continue
            # The names and exact claims as a trie (`alternation`): PCRE tries far fewer
            # branches at each place than with one alternative a name. A claim in any case
            # is (?i:...), after them: PCRE looks for a caseless word faster than for
            # [aA][bB]..., and a name before it that matches where it does is the same
            # word or a longer one, which is what longest first would pick too.
            exact = alternation([*group, *(t for t in with_claims if not any_case(t))], re.escape)
            folded = [f"(?i:{t})" for t in sorted((t for t in with_claims if any_case(t)), key=len, reverse=True)]
            pattern = "(?<![A-Za-z0-9_])(?:" + "|".join([exact, *folded] if exact else folded) + ")(?![A-Za-z0-9_])"
            args = _pass_args(["-P"], pattern, bool(with_claims))
            search.runs += [
                (group, with_claims, started, True)
                for started in self.grep.start(args, search.files, env={"LC_ALL": "C"})
            ]
        rest = [t for t in search.texts if not is_word(t)]
        if rest:
            search.runs += [([], rest, started, False) for started in self.absences.start(rest, search.files)]

    def finish(self, search: NameSearch) -> tuple[dict[str, set[str]], dict[str, list[tuple[str, int]]]]:
        """The files each name occurs in, and the first lines of each claim, in path order.
        Each run prints its files in path order, but the runs do not follow one another
        in it (the files an index lists, then those named as pathspecs): the first
        lines of each run are kept, and the first of them all picked at the end."""
        found: dict[str, set[str]] = {n: set() for n in search.names + search.looked_up}
        lines: dict[str, list[tuple[str, int]]] = {t: [] for t in search.texts}
        prefix = self.sha + ":"
        # One reader of matches for the runs that share their claims (all but the first have
        # none): built once, not once a run, since it costs as much as the names it knows.
        insides: dict[tuple[str, ...], Inside] = {}
        for _, texts, started, matches_only in search.runs:
            out = started.output(self.sha)
            if not matches_only:
                for t, places in self.absences.lines(out, texts).items():
                    lines[t] += places
                continue
            taken = dict.fromkeys(texts, 0)
            inside = insides.get(tuple(texts)) or insides.setdefault(tuple(texts), Inside(list(found), texts))
            for block in out.decode("utf-8", "replace").split("\n\n"):
                head, _, body = block.partition("\n")
                path = head.removeprefix(prefix)
                # Each distinct match once: a file repeats the same names many times.
                matches = _LINE_NUMBER_RE.sub("\n", "\n" + body)[1:] if texts else body
                distinct = set(matches.split("\n"))
                claimed = False
                for text in distinct:
                    for name in inside.names(text):
                        found[name].add(path)
                    claimed = claimed or bool(inside.claims(text))
                if not claimed:
                    continue
                seen: dict[str, set[str]] = {}
                for row in body.split("\n"):
                    number, _, text = row.partition("\0")
                    for claim in inside.claims(text):
                        if taken[claim] < ABSENCE_PLACES and number not in seen.setdefault(claim, set()):
                            seen[claim].add(number)
                            taken[claim] += 1
                            lines[claim].append((path, int(number)))
        if search.checked:
            found.update(self._check_in_files(search.checked, found))
        # Names with non-word characters can hide one another within a line
        # (`a/b` and `a/b/c`): over the whole tree, those the pass missed are looked up apart.
        if search.files is None:
            found.update(self.alone([n for n in search.names if not is_word(n) and not found[n]]))
        return found, {t: sorted(places)[:ABSENCE_PLACES] for t, places in lines.items()}

    def _check_in_files(self, names: list[str], found: dict[str, set[str]]) -> dict[str, set[str]]:
        """Where each name with other characters is a whole word, among the files
        the pass found its first word in (a whole word of any file that holds it)."""
        blobs = self.snapshot.blob_ids()
        candidates = {n: sorted(p for p in found[first_word(n)] if p in blobs) for n in names}
        data = self.snapshot.read_many(sorted({blobs[p] for paths in candidates.values() for p in paths}))
        out = {}
        for name in names:
            word = whole_word(name, fold=False)
            out[name] = {p for p in candidates[name] if word.search(data.get(blobs[p], b""))}
        return out

    def alone(self, names: list[str]) -> dict[str, set[str]]:
        """The files that hold each name as a whole word, each name apart from the others:
        one `git grep -l -F` finds the files that hold any of them as a string, and the
        whole-word test (`-w`) is made on those files here, name by name."""
        if not names:
            return {}
        patterns = "".join(f"{n}\n" for n in names).encode("utf-8")
        out = self.grep.output("grep", "-l", "-z", "-I", "-F", "-f", "-", self.sha, input=patterns)
        prefix = self.sha + ":"
        objects = self.snapshot.index()
        paths = sorted({p.removeprefix(prefix) for p in out.decode("utf-8", "replace").split("\0") if p} & set(objects))
        data = self.snapshot.read_many(sorted({objects[p][2] for p in paths}))
        held: dict[str, set[str]] = {}
        for name in names:
            word = whole_word(name, fold=False)
            held[name] = {p for p in paths if word.search(data.get(objects[p][2], b""))}
        return held
