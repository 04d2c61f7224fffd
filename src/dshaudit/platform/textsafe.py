"""Text from DSH and from findings is untrusted: it must not drive the terminal."""

from __future__ import annotations

import re

# C0 and C1 controls (ESC starts ANSI sequences), DEL, bidi overrides, and the
# characters that show as nothing (soft hyphen, zero-width space and joiners,
# word joiner, byte order mark), except tab: a message naming a path that holds
# one shows it.
_CONTROL_RE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f\xad\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff]")


def terminal_safe(text: str) -> str:
    """Replace control characters with visible escapes (`\\x1b`), one line out."""
    return _CONTROL_RE.sub(
        lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100 else f"\\u{ord(m.group()):04x}", text
    )


# ASCII punctuation that means something inline in GitHub Markdown; `<`, `>` and
# `&` become HTML entities instead, which every Markdown renderer shows as text.
_MARKDOWN_ACTIVE_RE = re.compile(r"([\\`*_\[\]|~!#])")
_HTML_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}


def markdown_text(text: str, limit: int | None = None) -> str:
    """Plain text inside Markdown (a table cell, a heading): on one line, every
    character Markdown or HTML could act on backslash-escaped (`|` cannot split
    a row, a backtick cannot open code, `[` cannot open a link; `<` is `&lt;`), and
    control characters visible. Longer than `limit`: shortened with an ellipsis."""
    text = " ".join(text.replace("\r\n", "\n").replace("\r", "\n").split("\n"))
    if limit is not None and len(text) > limit:
        text = text[: limit - 1] + "…"
    text = re.sub(r"[&<>]", lambda m: _HTML_ENTITIES[m.group()], terminal_safe(text))
    return _MARKDOWN_ACTIVE_RE.sub(r"\\\1", text)


def markdown_code(text: str) -> str:
    """Inline code that survives any backticks inside it and is safe in a table
    cell (a `|` would end the cell even inside code, so it becomes `¦`)."""
    text = terminal_safe(text.replace("\n", " ")).replace("|", "¦")
    if not text:
        return ""
    fence = "`" * (max((len(r) for r in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"
