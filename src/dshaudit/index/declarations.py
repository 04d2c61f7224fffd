"""The declarations of a blob (lang/symbols.py's symbol table), found once per blob:
kept in this process, since several checks of one run read the same blobs (a
tree-docs fact checks DSH's documents at two pins, which share most files), and
in the cache, since a blob's declarations never change. Keyed by the blob and its
file ending (which grammar parses it), under the version of dshaudit's rules and
of the parser."""

from __future__ import annotations

from collections.abc import Callable

from dshaudit.core.model import LineRange
from dshaudit.lang.symbols import SymbolTable, build_symbol_table
from dshaudit.lang.versions import library_versions
from dshaudit.platform import cache

_TABLES: dict[tuple[str, str], SymbolTable] = {}
_TABLES_LIMIT = 4096  # tables kept in the process; past that they are read from the cache again
_SHAPE = cache.shaped({"spans": {str: [[int, int]]}, "error": (int, type(None))})


def symbol_table(path: str, blob: str, read: Callable[[], bytes]) -> SymbolTable:
    """The declarations of the file at `path` whose blob is `blob`; `read` gives its bytes
    when they must be parsed."""
    key = (blob, path.rsplit(".", 1)[-1])
    table = _TABLES.get(key)
    if table is None:
        shard = cache.current().shard("declarations", cache.digest(cache.code_version(), library_versions()), _SHAPE)
        stored = shard.get(f"{blob}.{key[1]}")
        if stored is not None:
            spans = {name: tuple(LineRange(a, b) for a, b in ranges) for name, ranges in stored["spans"].items()}
            table = SymbolTable(spans, stored["error"])
        else:
            table = build_symbol_table(path, read())
            spans_out = {name: [[r.start, r.end] for r in ranges] for name, ranges in table.spans.items()}
            shard.put(f"{blob}.{key[1]}", {"spans": spans_out, "error": table.first_error_line})
        if len(_TABLES) >= _TABLES_LIMIT:
            _TABLES.clear()
        _TABLES[key] = table
    return table


def forget(blobs: set[str]) -> None:
    """Let go of the tables of these blobs in this process (the cache keeps them)."""
    for key in [k for k in _TABLES if k[0] in blobs]:
        del _TABLES[key]
