"""Where a document's front matter lies, found without reading YAML: the lines
between a leading `---` and the next `---` or `...` (frontmatter.py parses them)."""

from __future__ import annotations

from typing import NamedTuple

# Limits on what a findings file may make dshaudit do: beyond them a file is
# refused with its line (exit 2), never parsed at any cost (SECURITY.md).
MAX_FRONT_MATTER_BYTES = 64 * 1024


class Block(NamedTuple):
    """A leading `---` block: the document's lines, and where the block ends."""

    lines: list[str]
    end: int | None  # index of the closing line; None when there is none
    too_long_at: int | None  # index of the first line past MAX_FRONT_MATTER_BYTES, if one is


def find_block(text: str) -> Block | None:
    """The document's front matter block; None when the document opens with none."""
    lines = text.split("\n")
    if not lines or lines[0].rstrip() != "---":
        return None
    size = 0
    for i in range(1, len(lines)):
        if lines[i].rstrip() in ("---", "..."):
            return Block(lines, i, None)
        size += len(lines[i]) + 1
        if size > MAX_FRONT_MATTER_BYTES:
            return Block(lines, None, i)
    return Block(lines, None, None)


def may_name_pin(text: str) -> bool:
    """False only when the front matter names no pin: there is none, or its block
    does not hold the letters `pin` (the key spelled with YAML escapes is a form the
    pin's reader refuses). Most documents not written for dshaudit are told so without
    a YAML parse. A block that cannot be read may: its reader says why."""
    block = find_block(text)
    if block is None:
        return False
    if block.end is None:
        return True
    return any("pin" in line for line in block.lines[1 : block.end])
