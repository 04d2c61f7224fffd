"""The names a document's own repository defines.

A document written about DSH from another project (a course, a port, a
handbook with examples) names its own classes and functions beside DSH's. Those
are not claims about DSH: the code files its repository tracks are read, and
the names they define (a class, a function, a module-level binding, a method)
are the document's own. Definitions are found by their shape, per language,
without parsing: what matters is that a name is defined there, not what it is.

Bounded: at most `MAX_FILES` code files of at most `MAX_FILE_BYTES` each, listed
by `git ls-files` (so what the repository ignores is not read), and never
through a symbolic link.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType

from dshaudit.core.errors import InputError, RepoError
from dshaudit.git import run
from dshaudit.platform.writing import read_regular

MAX_FILES = 5000
MAX_FILE_BYTES = 1024 * 1024
_PYTHON = (".py",)
_SCRIPT = (".ts", ".tsx", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts")
# A definition's name, by the shape of the line that starts it.
_DEFINITIONS = {
    _PYTHON: re.compile(
        r"^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+([A-Za-z_]\w*)|^([A-Za-z_]\w*)[ \t]*(?::[^=\n]*)?=(?!=)",
        re.MULTILINE,
    ),
    _SCRIPT: re.compile(
        r"^[ \t]*(?:export[ \t]+)?(?:default[ \t]+)?(?:declare[ \t]+)?(?:abstract[ \t]+)?(?:async[ \t]+)?"
        r"(?:function\*?|class|interface|type|enum|const|let|var|namespace)[ \t]+([A-Za-z_$][\w$]*)"
        # A method: indented, its modifiers, its name, its parameters on the line, then its body.
        r"|^[ \t]+(?:(?:public|private|protected|static|readonly|async|get|set)[ \t]+)*"
        r"([A-Za-z_$][\w$]*)[ \t]*\([^)\n]*\)[ \t]*(?::[^{\n]*)?\{",
        re.MULTILINE,
    ),
}


def defined_in(text: str, path: str) -> list[tuple[str, int]]:
    """The names the code defines, with their 1-based lines, by the shapes of `path`'s
    language (none for a file of another)."""
    pattern = next((p for endings, p in _DEFINITIONS.items() if path.endswith(endings)), None)
    if pattern is None:
        return []
    return [
        (name, text.count("\n", 0, m.start()) + 1) for m in pattern.finditer(text) if (name := m.group(1) or m.group(2))
    ]


def repository_root(document: Path) -> Path | None:
    """The working tree the document lies in: the nearest folder above it with a `.git`."""
    return _root_from(Path(os.path.realpath(document)).parent)


def _root_from(folder: Path) -> Path | None:
    """The nearest of `folder` and the folders above it that holds a `.git`."""
    for above in (folder, *folder.parents):
        if (above / ".git").exists():
            return above
    return None


def own_definitions(document: Path) -> Mapping[str, str]:
    """The names the code files of the document's own repository define, each with
    where (`path:line`, from the repository's top); empty outside a repository. Read
    once per repository and process: every document of a run shares the one answer."""
    root = repository_root(document)
    return _definitions(str(root)) if root is not None else {}


def _code_files(root: str) -> list[str]:
    """The code files the repository at `root` tracks, from its top, sorted (at most MAX_FILES)."""
    try:
        listed = run.run(["ls-files", "-z", "--", *(f"*{e}" for e in _PYTHON + _SCRIPT)], None, cwd=root)
        return sorted(p for p in run.nul_fields(listed.output()) if p)[:MAX_FILES]
    except (RepoError, OSError):
        return []


class RepositoryStates:
    """What `own_definitions` reads for each document of one run, as a line that changes
    when it may change (`of`). Each folder's repository is found once, and each repository
    listed once (`git ls-files`): a run's documents mostly lie in one repository."""

    def __init__(self) -> None:
        self._roots: dict[Path, Path | None] = {}
        self._states: dict[Path | None, str] = {}

    def of(self, real_document: Path) -> str:
        """The state of the repository of a document given by its real path (no symbolic
        link in it): its code files with their sizes and modification times."""
        folder = real_document.parent
        if folder not in self._roots:
            self._roots[folder] = _root_from(folder)
        root = self._roots[folder]
        if root not in self._states:
            self._states[root] = _state_of(root)
        return self._states[root]


def _state_of(root: Path | None) -> str:
    if root is None:
        return ""
    stamps = []
    for rel in _code_files(str(root)):
        try:
            st = os.lstat(root / rel)
        except OSError:
            continue
        stamps.append(f"{rel}\0{st.st_size}\0{st.st_mtime_ns}")
    return f"{root}\n" + "\n".join(stamps)


@lru_cache(maxsize=8)
def _definitions(root: str) -> Mapping[str, str]:
    paths = _code_files(root)
    found: dict[str, str] = {}
    for rel in paths:
        full = Path(root) / rel
        if full.is_symlink():
            continue
        try:
            text = read_regular(full, rel, MAX_FILE_BYTES, follow=False).data.decode("utf-8", "replace")
        except InputError:
            continue  # too large, not a regular file, or gone: not read
        for name, line in defined_in(text, rel):
            found.setdefault(name, f"{rel}:{line}")
    return MappingProxyType(found)  # shared by every caller: read-only
