"""Text from DSH and from findings is untrusted: it must not drive the terminal."""

from __future__ import annotations

import re

# C0 and C1 controls (ESC starts ANSI sequences), DEL, and bidi overrides, except tab.
_CONTROL_RE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def terminal_safe(text: str) -> str:
    """Replace control characters with visible escapes (`\\x1b`), one line out."""
    return _CONTROL_RE.sub(lambda m: "\\x%02x" % ord(m.group()) if ord(m.group()) < 0x100 else "\\u%04x" % ord(m.group()), text)
