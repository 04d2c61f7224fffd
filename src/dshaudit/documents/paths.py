"""What a cited path and its lines look like: which tokens are paths, how a
line list reads, and which paths can never name a file of a repository."""

from __future__ import annotations

from functools import lru_cache
from pathlib import PurePosixPath

from dshaudit.core.model import LineRange

# File endings that make a slash-less token a path (`package.json:5`).
# With a slash, any name is a path; without one, `example.com:8080` must not be.
ROOT_FILE_EXTENSIONS = frozenset(
    "ts tsx mts cts js jsx mjs cjs json jsonc json5 md mdx yml yaml toml txt sh "
    "py lock css scss html scm patch cfg ini".split()
)
# Symbols are TypeScript/JavaScript declarations; `docs/x.md#heading` is a link, not a citation.
SYMBOL_EXTENSIONS = frozenset("ts tsx mts cts js jsx mjs cjs".split())

SEGMENT = r"[\w.\-@+]+"
PART = r"\d+(?:[-–]\d+)?"

MAX_LINE_NUMBER = 10_000_000  # larger numbers are malformed, not just out of range
MAX_LINE_PARTS = 100  # `path:a,b,c,…`: more parts than this are malformed


def extension(path: str) -> str:
    base = path.rsplit("/", 1)[-1]
    return base.rsplit(".", 1)[-1].lower() if "." in base.strip(".") else ""


def looks_like_path(path: str) -> bool:
    if "/" in path.strip("/"):
        return True
    return extension(path) in ROOT_FILE_EXTENSIONS


def parse_lines(spec: str) -> tuple[tuple[LineRange, ...], str | None]:
    """`15-16,492` -> ranges, and what is wrong with them, if anything."""
    ranges = []
    problem = None
    parts = spec.split(",")
    if len(parts) > MAX_LINE_PARTS:
        # Each part is checked and carried on its own: thousands of them are a list, not a citation.
        first = parse_lines(",".join(parts[:MAX_LINE_PARTS]))[0]
        return first, f"{len(parts)} line ranges in one citation; at most {MAX_LINE_PARTS}"
    for part in parts:
        a, _, b = part.replace("–", "-").partition("-")
        longest = max(len(a), len(b))
        if longest > 12:
            # int() of thousands of digits is slow, then refused: never convert them.
            problem = problem or f"a line number {longest} digits long is beyond any file dshaudit reads"
            ranges.append(LineRange(MAX_LINE_NUMBER + 1, MAX_LINE_NUMBER + 1))
            continue
        start = int(a)
        end = int(b) if b else start
        if start < 1:
            problem = problem or "line numbers start at 1"
        elif end < start:
            problem = problem or f"range {start}-{end} runs backwards"
        elif end > MAX_LINE_NUMBER:
            problem = problem or f"line {end} is beyond any file dshaudit reads"
        ranges.append(LineRange(min(start, MAX_LINE_NUMBER + 1), min(end, MAX_LINE_NUMBER + 1)))
    return tuple(ranges), problem


# Remembered by the path: `history` asks it of each citation again at every commit that touches its file.
@lru_cache(maxsize=1 << 14)
def path_problem(path: str) -> str | None:
    """Why a cited path can never name a file in a repository, if it can't. A path
    written percent-encoded (a permalink's) is judged as what it decodes to, however
    many times it was encoded: `%2e%2e` climbs out of the tree as `..` does."""
    if "%" in path:
        from urllib.parse import unquote

        decoded = path
        for _ in range(4):  # `%252e` is `%2e` once decoded, `.` twice
            decoded, before = unquote(decoded), decoded
            if decoded == before:
                break
        if decoded != path:
            problem = path_problem(decoded.replace("%", "_"))
            return f"{problem} (percent-decoded: {decoded!r})" if problem else None
    if any(ord(c) < 32 or ord(c) == 127 for c in path):
        return "a control character is no part of a repository path"
    if path.startswith("/"):
        return "absolute paths are not repository paths"
    if "\\" in path:
        return "backslashes are not path separators in a git tree"
    parts = PurePosixPath(path).parts
    if any(p in ("..", ".") for p in path.split("/")) or not parts:
        return "'.' and '..' are not allowed in a repository path"
    if any(p == ".git" for p in parts):
        return "paths inside .git are not repository content"
    return None
