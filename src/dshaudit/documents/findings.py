"""Findings files: a Markdown document read from disk (or an editor's buffer)
into its front matter (frontmatter.py), citations and claims (markdown.py).

A file is read within limits and once: what a writer later replaces is
checked to be the file that was read (platform/writing.py).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from dshaudit.core.errors import InputError
from dshaudit.core.model import Citation, Claim
from dshaudit.platform.writing import ReadFile, read_regular

MAX_FINDINGS_BYTES = 20 * 1024 * 1024
MARKDOWN_ENDINGS = (".md", ".markdown", ".mdx")  # what a Markdown document is named (lowercased)


@dataclass(frozen=True)
class FindingsFile:
    path: str  # as shown in messages: relative to the working directory when possible
    front_matter: dict
    citations: tuple[Citation, ...]
    pin: str | None = field(default=None)
    claims: tuple[Claim, ...] = ()
    digest: str = ""  # sha256 of the bytes read: a writer checks the file is still what was read
    text: str = field(default="", repr=False)  # the decoded text, for the names and quoted code it holds
    written_at: str | None = None  # the pin a document was read from (treedocs.py): its citations describe that commit
    pin_line: int = 0  # the line of `pin: NAME` in the front matter (0: none)
    read: ReadFile | None = field(default=None, repr=False)  # the file as read: a writer checks it is still that


def normalise_text(text: str) -> str:
    """A findings file's text as every reader sees it: a leading byte order
    mark dropped, and CRLF and a lone CR read as line ends, as CommonMark (and
    markdown-it) read them, so lines are counted the same everywhere."""
    return text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")


def raw_lines(text: str) -> tuple[str, list[tuple[str, str]]]:
    """A file's decoded text as (byte order mark, [(line, its line end)]),
    lines numbered as `normalise_text` numbers them, so a writer can change
    a line and put every other byte back as it was."""
    bom = text[: len(text) - len(text.lstrip("\ufeff"))]
    parts = re.split(r"(\r\n|\r|\n)", text[len(bom) :])
    return bom, [(parts[i], parts[i + 1] if i + 1 < len(parts) else "") for i in range(0, len(parts), 2)]


def join_raw_lines(bom: str, lines: list[tuple[str, str]]) -> str:
    return bom + "".join(line + end for line, end in lines)


# Text that looks like a citation, whether or not the grammar reads it: a file
# ending followed by a line (`x.ts:12`, `x.ts#L12`, `x.ts (line 12)`, `x.ts, lines
# 1-2`, `x.ts L12`, `x.ts（第 12 行）`), however it is spaced. Each match starts
# at a `.` and looks a bounded way ahead: linear in the text.
_CITATION_SHAPED_RE = re.compile(
    r"(?<=\w)\.[A-Za-z][A-Za-z0-9]{0,5}"
    r"(?=[:#]L?\d|`?[\s\u00a0]{0,3}[(（][\s\u00a0]{0,3}(?:lines?|L|第)[\s\u00a0]{0,3}\d"
    r"|`?,[\s\u00a0]{0,3}lines?[\s\u00a0]{1,3}\d|`?[\s\u00a0]{1,3}L\d)"
)


def citation_shaped(text: str, skip_lines: int = 0) -> tuple[int, str] | None:
    """The first line below the front matter holding text shaped like a
    citation (anywhere: prose, code blocks, comments), and that text; None
    when there is none. A file with such text and no citation found was not
    checked as its author meant it to be."""
    start = 0
    for _ in range(skip_lines):
        start = text.find("\n", start) + 1
        if start == 0:
            return None
    m = _CITATION_SHAPED_RE.search(text, start)
    if m is None:
        return None
    line_start = text.rfind("\n", 0, m.start()) + 1
    line_end = text.find("\n", m.end())
    line = text[line_start : line_end if line_end != -1 else len(text)]
    column = m.start() - line_start
    lo = max((line.rfind(ch, 0, column) for ch in " \t`("), default=-1) + 1
    word = line[max(lo, column - 60) : column + 16].split()[0] if line[lo : column + 16].strip() else ""
    return text.count("\n", 0, m.start()) + 1, word.strip("`")


def no_citations_message(line: int, word: str) -> str:
    """What `check` and `lint` say of a file with citation-shaped text and no citation."""
    return (
        f"no citation found in the file, though line {line} holds citation-shaped text `{word}` "
        "(in a code block or comment, or in a form dshaudit does not read)"
    )


def display_path(path: Path) -> str:
    """The path as the user sees it: relative to the working directory when
    inside it (without following a symbolic link's target)."""
    try:
        return Path(os.path.abspath(path)).relative_to(Path(os.path.abspath(Path.cwd()))).as_posix()
    except ValueError:
        return path.as_posix()


def load_findings_file(path: Path, web_url: str | None = None) -> FindingsFile:
    """A findings file, parsed; with `web_url` (DSH's web address), permalinks into it
    are citations."""
    shown = display_path(path)
    try:
        if path.is_symlink() and not path.resolve().is_relative_to(Path.cwd().resolve()):
            raise InputError("is a symbolic link out of the working directory; refusing to read it", file=shown)
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror or exc}", file=shown) from None
    read = read_regular(path, shown, MAX_FINDINGS_BYTES)
    data = read.data
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = len(re.split(rb"\r\n|\r|\n", data[: exc.start].removeprefix(b"\xef\xbb\xbf")))
        raise InputError(
            f"not UTF-8 (byte 0x{data[exc.start]:02x}); findings must be UTF-8", file=shown, line=line
        ) from None
    return parse_findings(text, shown, web_url, read)


def parse_findings(text: str, shown: str, web_url: str | None = None, read: ReadFile | None = None) -> FindingsFile:
    """A findings file from its text: read from disk by `load_findings_file` (`read`
    is the file as read, for a writer to check), or an editor's buffer (the
    language server); `shown` names it in messages."""
    # Imported here, not above: a run that reads a kept outcome back lists and hashes the
    # findings without parsing them, and YAML and Markdown are most of what it would load.
    from dshaudit.documents.frontmatter import FrontMatterError, parse_pin_line, read_front_matter
    from dshaudit.documents.markdown import citations_in_markdown, claims_in_markdown

    text = normalise_text(text)
    front = read_front_matter(text, shown)
    pin = front.data.get("pin")
    pin_line = front.key_lines.get("pin", 2)
    if pin is not None and not isinstance(pin, str):
        raise FrontMatterError(
            f"front matter 'pin' must be a pin name or a full SHA, not {pin!r}", file=shown, line=pin_line
        )
    if pin is not None:
        written = parse_pin_line(text.split("\n", pin_line)[pin_line - 1])
        if written is None or written.value != pin:
            raise FrontMatterError(
                "front matter: write the pin on a line of its own as `pin: NAME` (quotes "
                "and a comment allowed), the one form `rebase --write` rewrites",
                file=shown,
                line=pin_line,
            )
    skip = front.skip
    return FindingsFile(
        path=shown,
        front_matter=front.data,
        # A document with no pin of its own was not written for dshaudit: shape alone flags nothing there.
        citations=tuple(citations_in_markdown(text, shown, skip, web_url, by_shape=pin is not None)),
        pin=pin,
        claims=tuple(claims_in_markdown(text, shown, skip)),
        digest=read.digest if read is not None else "",
        text=text,
        pin_line=pin_line if pin is not None else 0,
        read=read,
    )


def collect_markdown(paths: list[Path]) -> list[Path]:
    """Expand directories to the Markdown files below them, sorted, for a stable order."""
    files: list[Path] = []
    for p in paths:
        if p.is_dir():
            files.extend(sorted(q for q in p.rglob("*.md") if q.is_file() or q.is_symlink()))
        elif p.exists() or p.is_symlink():
            files.append(p)
        else:
            raise InputError(f"{p}: no such file or directory")
    seen = set()
    unique = []
    for f in files:
        key = f.resolve() if not f.is_symlink() else f.absolute()
        if key not in seen:
            seen.add(key)
            unique.append(f)
    return unique
