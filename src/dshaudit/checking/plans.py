"""How each name a document mentions is checked (references.py's docstring
says what each kind means): the names that must all occur, a path of the
tree, or a fragment of code to compare; or nothing, when it is not checked."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from dshaudit.documents.names import (
    CODE,
    COMMIT,
    DOTTED,
    IDENTIFIER,
    PACKAGE,
    PATH,
    STRING,
    Name,
    is_file_name,
    is_identifier_like,
    lookalike,
    without_invisible,
)
from dshaudit.lang.fragments import Fragment, parse_fragment


@dataclass(frozen=True)
class Plan:
    """How one name is checked: the names that must all occur, or a fragment."""

    kind: str
    lookups: tuple[str, ...] = ()
    fragment: Fragment | None = None
    folder: str | None = None  # a path's: the folder it may be relative to


_IDENT_RE = re.compile(r"[A-Za-z_$][\w$]*")
_DOTTED_RE = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+")
_PACKAGE_RE = re.compile(r"(@[a-z0-9][\w.-]*/[a-z0-9][\w.-]*)(?:@\d[\w.+-]*)?")
# An identifier or a dotted name whose letters may be of any script (a look-alike's shape).
_ANY_SCRIPT_RE = re.compile(r"(?:[^\W\d]|\$)[\w$]*(?:\.(?:[^\W\d]|\$)[\w$]*)*")
_QUOTED_RE = re.compile(r"""'([^'\\\n]+)'|"([^"\\\n]+)\"""")
_KEBAB_RE = re.compile(r"[a-z][a-z0-9]*(?:-[a-z0-9]+)+")
# A path of the tree: folders and a file (or a folder with its `/`); no glob, no `.` or `..` part.
PATH_RE = re.compile(r"(?!\.{1,2}/)[\w@-][\w.@-]*(?:/(?!\.{1,2}(?:/|$))[\w.@-]+)+/?")
_NOT_NAMES = ("absent:", "claim:", "prior:", "quoted:")
# 7 to 40 hex digits, digits and letters both: a commit's id, whole or abbreviated.
COMMIT_RE = re.compile(r"(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}")
MAX_STRING_CHARS = 80


def classify(name: Name) -> Plan | None:
    """How a name from `names.code_names` is checked; None when it is not (module docstring)."""
    return _classified(name.text, name.kind, name.folder)


# A plan depends on the name's text, kind and folder only. The language server classifies every
# name of a document at each keystroke, and all but the typed ones are the names it had; a name
# written twice shares one plan (its fragment's verdict is the same).
@lru_cache(maxsize=1 << 13)
def _classified(written: str, kind: str, folder: str | None) -> Plan | None:
    text = written.strip()
    if kind == IDENTIFIER:
        return Plan(IDENTIFIER, (text,))
    if kind == DOTTED:
        return _dotted(text)
    if kind == PACKAGE:
        return _package(text)
    if kind == STRING:
        return Plan(STRING, (text,)) if _code_like(text) else None
    if kind == CODE:
        return _code(text, folder)
    return None


def _dotted(text: str) -> Plan | None:
    return None if is_file_name(text) else Plan(DOTTED, tuple(dict.fromkeys(text.split("."))))


def _package(text: str) -> Plan | None:
    m = _PACKAGE_RE.fullmatch(text)
    return Plan(PACKAGE, (m.group(1),)) if m else None


def _code_like(text: str) -> bool:
    """A string in running prose that reads as code, not as a quotation."""
    if not text or any(c.isspace() for c in text) or "\\" in text or not any(c.isalpha() for c in text):
        return False
    return any(c in "/_.:@$" for c in text) or is_identifier_like(text)


def _code(text: str, folder: str | None) -> Plan | None:
    if text.startswith(_NOT_NAMES):
        return None
    if COMMIT_RE.fullmatch(text):
        return Plan(COMMIT, (text,))
    bare = re.sub(r"(?:\(\)|\[\])$", "", text)
    if _IDENT_RE.fullmatch(bare):
        return Plan(IDENTIFIER, (bare,))
    if _DOTTED_RE.fullmatch(bare):
        return _dotted(bare)
    if lookalike(bare) and _ANY_SCRIPT_RE.fullmatch(without_invisible(bare)):
        # A name that passes for a Latin one (a Cyrillic А first, a zero-width space inside):
        # looked up as written, it holds only where DSH spells it so, never as the name it mimics.
        return _dotted(bare) if "." in bare else Plan(IDENTIFIER, (bare,))
    if _PACKAGE_RE.fullmatch(text):
        return _package(text)
    if PATH_RE.fullmatch(text):
        return Plan(PATH, (text.rstrip("/"),), folder=folder)
    if _KEBAB_RE.fullmatch(text):
        return Plan(STRING, (text,))  # `dsh-compaction-basic`: a plugin, package or event name
    m = _QUOTED_RE.fullmatch(text)
    if m:
        inner = m.group(1) if m.group(1) is not None else m.group(2)
        ok = inner.strip() == inner and len(inner) <= MAX_STRING_CHARS
        return Plan(STRING, (inner,)) if ok else None
    fragment = parse_fragment(text)
    return Plan("fragment", fragment=fragment) if fragment is not None else None
