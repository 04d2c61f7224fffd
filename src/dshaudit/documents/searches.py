"""The syntax of searches as claims: `search(...)`, `files(...)` and `tree-docs(...)`
read, checked and normalised (index/search.py runs them against a tree).

A finding that states a search result writes it as a claim:

    `claim: search(-i -E 'unshare|network', 'packages/sandbox/**', ':!*.spec.ts').count == 8`
    `claim: search(-F 'retired policy baseline').files == 2`
    `claim: files('packages/*/*/package.json').count == 237`

Only what is read here reaches git: the flags -i, -w, -E and -F, one quoted
pattern, and pathspecs that are paths or globs inside the tree, optionally
excluded with a leading `:!` or `:^`. No other flag or pathspec magic, no `.`
or `..` component, no absolute path, no control character (a tab aside).

A pattern is also refused when git's regular expressions could take without
bound to run it (`bounded`): a back-reference, a repeated part that holds a
repetition, or counted repetitions asking for more than MAX_REPEAT copies. What
git is left to run is bounded in time and output by index/search.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

KINDS = ("search", "files", "tree-docs")


FLAGS = {"-i": "--ignore-case", "-w": "--word-regexp", "-E": "--extended-regexp", "-F": "--fixed-strings"}


# Copies of a pattern's parts that its counted repetitions (`x{3}`, `[a-z]{0,40}`) ask for, all
# together: git's regular expressions unroll each count, so their cost grows with the total.
MAX_REPEAT = 255

_TOKEN_RE = re.compile(r"""\s*(?:'([^']*)'|"([^"]*)"|(-[A-Za-z]+)|(,))""")


class SearchSyntaxError(ValueError):
    pass


@dataclass(frozen=True)
class Search:
    """One `search(...)` or `files(...)` expression, checked and normalised."""

    kind: str  # "search" or "files"
    flags: tuple[str, ...]
    pattern: str | None
    pathspecs: tuple[str, ...]
    text: str  # the expression as written: the fact's id
    at: str | None = None  # tree-docs: the pin the documents are checked at (default: their own)
    of: str | None = None  # tree-docs: the pin whose tree the documents are read from (default: the claim's)

    @property
    def definition(self) -> str:
        if self.kind == "files":
            return f"files of the tree selected by {_specs(self.pathspecs)}"
        if self.kind == "tree-docs":
            at = f"checked at {self.at}" if self.at else "checked at their own commit"
            tree = f"at {self.of}" if self.of else "at the pin"
            return (
                f"citations of the Markdown documents under {_specs(self.pathspecs)} in the tree {tree}, "
                f"{at} (check --tree-docs)"
            )
        how = " ".join(self.flags) or "(basic regular expression)"
        return (
            f"lines matching {self.pattern!r} {how} in {_specs(self.pathspecs)} "
            "(git grep over the tree at the pin, binary files skipped)"
        )


def _specs(pathspecs: tuple[str, ...]) -> str:
    return ", ".join(pathspecs) if pathspecs else "the whole tree"


def split(ref: str) -> tuple[str, str | None] | None:
    """`search(...).files` -> (`search(...)`, `files`); None when `ref` is not a search."""
    head = ref.split("(", 1)[0]
    if head not in KINDS or "(" not in ref:
        return None
    quote = None
    for i, ch in enumerate(ref):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == ")":
            rest = ref[i + 1 :]
            if rest and not rest.startswith("."):
                return None
            return ref[: i + 1], rest[1:] or None
    return None


def parse(expression: str) -> Search:
    """Read `search(FLAGS 'PATTERN', 'SPEC', ...)` or `files('SPEC', ...)`; SearchSyntaxError says why not."""
    kind, _, rest = expression.partition("(")
    kind = kind.strip()
    if kind not in KINDS or not rest.endswith(")"):
        raise SearchSyntaxError(
            "expected search(FLAGS 'PATTERN', 'PATHSPEC', ...), files('PATHSPEC', ...) or tree-docs('DIR'[, 'PIN'])"
        )
    body = rest[:-1]
    flags: list[str] = []
    strings: list[str] = []
    pos = 0
    while pos < len(body.rstrip()):
        m = _TOKEN_RE.match(body, pos)
        if not m:
            raise SearchSyntaxError(f"cannot read {body[pos:].strip()[:40]!r}: quote patterns and pathspecs")
        single, double, flag, _comma = m.groups()
        if flag is not None:
            if strings:
                raise SearchSyntaxError(f"flag {flag} after the pattern: flags come first")
            for letter in flag[1:]:
                if f"-{letter}" not in FLAGS or kind != "search":
                    allowed = "none" if kind != "search" else "-i, -w, -E, -F"
                    raise SearchSyntaxError(f"flag -{letter} is not allowed (allowed: {allowed})")
                flags.append(f"-{letter}")
        elif single is not None or double is not None:
            strings.append(single if single is not None else double or "")
        pos = m.end()
    if "-E" in flags and "-F" in flags:
        raise SearchSyntaxError("-E and -F cannot go together")
    # git reads its arguments as C strings, and a line as a line: a NUL or a line break in one is
    # no pattern or pathspec git can be given. Other control characters match nothing a
    # reader can see, and would reach terminals and logs in messages: refused alike.
    for text in strings:
        bad = next((ch for ch in text if _control(ch)), None)
        if bad is not None:
            raise SearchSyntaxError(f"a pattern or pathspec cannot hold {bad!r} (a control character)")
    at = of = None
    if kind == "search":
        if not strings or not strings[0]:
            raise SearchSyntaxError("search() needs a non-empty pattern in quotes")
        pattern, specs = strings[0], strings[1:]
    elif kind == "tree-docs":
        if not 1 <= len(strings) <= 2:
            raise SearchSyntaxError("expected tree-docs('[PIN:]DIR') or tree-docs('[PIN:]DIR', 'CHECKED_AT')")
        of, _, folder = strings[0].rpartition(":") if not strings[0].startswith(":") else ("", "", strings[0])
        pattern, specs = None, [folder]
        for name in (of, *strings[1:]):
            if name and not re.fullmatch(r"[\w][\w.\-/]*", name):
                raise SearchSyntaxError(f"{name!r} is not a pin name, tag or SHA")
        of = of or None
        at = strings[1] if len(strings) == 2 else None
    else:
        if not strings:
            raise SearchSyntaxError("files() needs at least one pathspec in quotes")
        pattern, specs = None, strings
    for spec in specs:
        _check_pathspec(spec)
    if kind == "search" and pattern is not None and "-F" not in flags:
        bounded(pattern, extended="-E" in flags)
    return Search(
        kind,
        tuple(dict.fromkeys(flags)),
        pattern,
        tuple(specs),
        expression.strip(),
        at,
        of if kind == "tree-docs" else None,
    )


def _check_pathspec(spec: str) -> None:
    path = spec[2:] if spec.startswith((":!", ":^")) else spec
    if not path:
        raise SearchSyntaxError(f"pathspec {spec!r} is empty")
    if path.startswith(":"):
        raise SearchSyntaxError(f"pathspec {spec!r}: only ':!' and ':^' (exclude) are allowed before a path")
    if path.startswith("/") or "\\" in path:
        raise SearchSyntaxError(f"pathspec {spec!r}: paths are relative to the tree's root, with '/'")
    if any(part in ("..", ".") for part in path.split("/")):
        raise SearchSyntaxError(f"pathspec {spec!r}: '.' and '..' are not allowed")
    if any(ord(c) < 32 for c in path):
        raise SearchSyntaxError(f"pathspec {spec!r}: control characters are not allowed")


def _control(ch: str) -> bool:
    """A control character other than a tab: C0, DEL or C1."""
    return ch != "\t" and (ord(ch) < 32 or 0x7F <= ord(ch) <= 0x9F)


_INTERVAL_RE = re.compile(r"\{(\d*)(?:(,)(\d*))?\}")
_BRE_INTERVAL_RE = re.compile(r"\\\{(\d*)(?:(,)(\d*))?\\\}")
_BRACKET_RE = re.compile(r"\[\^?\]?(?:\[:[^\]]*:\]|\[=[^\]]*=\]|\[\.[^\]]*\.\]|[^\]])*\]")


def bounded(pattern: str, *, extended: bool) -> None:
    """Refuse (SearchSyntaxError) a regular expression whose cost git cannot bound:
    a back-reference (`\\1`: matching one is exponential in the line's length), a
    repetition of a part that holds a repetition (`(a*)*`, `(x{2}){9}`: each level
    multiplies what git unrolls or tries), and counted repetitions that ask for more
    than MAX_REPEAT copies in all (`[a-z]{0,255}` eighty times takes git minutes to
    compile). Read as git reads it: a basic expression groups with `\\(` `\\)` and
    counts with `\\{` `\\}` (`\\+` and `\\?` repeat, as GNU's do); an extended
    one with `(` `)` `{` `}` `+` `?`. A bracket expression is one character."""
    groups = [False]  # for each open group: whether it holds a repetition
    last_group: bool | None = None  # the part just read is a group (holding a repetition, or not); None: not a group
    copies = 0
    i = 0
    while i < len(pattern):
        ch = pattern[i]
        repeat: tuple[int, int | None] | None = None  # (least, most) of a repetition read here
        step = 1
        if ch == "[":
            bracket = _BRACKET_RE.match(pattern, i)
            step = bracket.end() - i if bracket else 1
        elif ch == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            step = 2
            if nxt in "123456789":
                raise SearchSyntaxError(f"a back-reference (\\{nxt}) has no bound on its cost: not allowed in a search")
            if not extended and nxt == "(":
                groups.append(False)
            elif not extended and nxt == ")" and len(groups) > 1:
                held = groups.pop()
                groups[-1] |= held
                last_group = held
                i += step
                continue
            elif not extended and nxt in "+?":
                repeat = (0 if nxt == "?" else 1, 1 if nxt == "?" else None)
            elif not extended and nxt == "{" and (m := _BRE_INTERVAL_RE.match(pattern, i)):
                repeat, step = _counts(m), m.end() - i
        elif extended and ch == "(":
            groups.append(False)
        elif extended and ch == ")" and len(groups) > 1:
            held = groups.pop()
            groups[-1] |= held
            last_group = held
            i += 1
            continue
        elif ch == "*":
            repeat = (0, None)
        elif extended and ch in "+?":
            repeat = (0 if ch == "?" else 1, 1 if ch == "?" else None)
        elif extended and ch == "{" and (m := _INTERVAL_RE.match(pattern, i)):
            repeat, step = _counts(m), m.end() - i
        if repeat is not None:
            least, most = repeat
            if last_group and most != 1:
                raise SearchSyntaxError(
                    "a repeated part that holds a repetition (as in '(a*)*') has no bound on its cost: "
                    "not allowed in a search"
                )
            copies += max(least, most or 0)
            if copies > MAX_REPEAT:
                raise SearchSyntaxError(
                    f"counted repetitions ask for {copies} copies or more; a search allows {MAX_REPEAT} in all"
                )
            groups[-1] = True
        last_group = None
        i += step


def _counts(m: re.Match[str]) -> tuple[int, int | None]:
    """(least, most) of an interval `{m}`, `{m,}`, `{,n}` or `{m,n}`; most None when unbounded.
    Digits beyond what any bound allows are read as that many copies."""
    least = int(m.group(1)[:6] or 0)
    if not m.group(2):
        return least, least
    return least, int(m.group(3)[:6]) if m.group(3) else None


def of(flags: tuple[str, ...], pattern: str, pathspecs: tuple[str, ...] = ()) -> Search:
    """The search these parts make, written as a finding writes it: a detector
    that counts text is a search like any other, derived and cached the same way."""

    def quoted(text: str) -> str:
        if "'" not in text:
            return f"'{text}'"
        if '"' not in text:
            return f'"{text}"'
        raise SearchSyntaxError(f"cannot quote {text!r}: it holds both kinds of quote")

    return parse(f"search({', '.join([' '.join([*flags, quoted(pattern)]), *map(quoted, pathspecs)])})")


_ERE_SPECIAL_RE = re.compile(r"([.\[\]{}()*+?^$|\\])")


def escape_ere(text: str) -> str:
    """`text` as an extended regular expression that matches it and nothing else."""
    return _ERE_SPECIAL_RE.sub(r"\\\1", text)


def extended(search: Search) -> str:
    """The search's pattern as an extended regular expression (`git log -G` reads one)."""
    assert search.pattern is not None
    if "-F" in search.flags or ("-E" not in search.flags and plain(search.pattern)):
        return escape_ere(search.pattern)
    if "-E" in search.flags:
        return search.pattern
    raise ValueError(f"{search.text}: a basic regular expression has no extended form here")


def plain(text: str) -> bool:
    """Whether `text`, read as a basic regex, matches itself and nothing else: it holds
    none of a basic regex's special characters."""
    return not BRE_META & set(text)


BRE_META = set(".[]*^$\\")
