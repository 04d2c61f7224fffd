"""A blob's declarations (index/declarations.py): parsed once, then read from this
process or from the cache, and the same either way."""

from __future__ import annotations

import pytest

from dshaudit.index import declarations
from dshaudit.lang import symbols

SOURCE = b"""export class AgentRegistry {
  setFactory(f: Factory) {
    this.f = f
  }
}

export const LIMIT = 3
function helper() {}
"""


def test_a_blobs_table_is_built_once_and_then_read_back_alike(fresh_cache, monkeypatch):
    reads = []
    first = declarations.symbol_table("a.ts", "b" * 40, lambda: reads.append(1) or SOURCE)
    assert first.resolve("AgentRegistry.setFactory") and first.resolve("LIMIT")
    assert reads == [1]
    monkeypatch.setattr(declarations, "build_symbol_table", lambda *a: pytest.fail("the blob was parsed again"))
    assert declarations.symbol_table("a.ts", "b" * 40, lambda: pytest.fail("the blob was read again")) == first
    declarations.forget({"b" * 40})  # out of the process: read back from the cache
    again = declarations.symbol_table("a.ts", "b" * 40, lambda: pytest.fail("the blob was read again"))
    assert again == first
    assert list(again.spans) == list(first.spans)  # the order of declarations too


def test_the_same_blob_under_another_ending_is_parsed_by_its_own_grammar(fresh_cache):
    ts = declarations.symbol_table("a.ts", "c" * 40, lambda: SOURCE)
    tsx = declarations.symbol_table("a.tsx", "c" * 40, lambda: SOURCE)
    assert tsx == symbols.build_symbol_table("a.tsx", SOURCE)
    assert ts == symbols.build_symbol_table("a.ts", SOURCE)


def test_a_parse_error_line_is_kept(fresh_cache):
    broken = b"export const A = 1\nfunction (\n"
    built = symbols.build_symbol_table("x.ts", broken)
    assert built.first_error_line is not None
    declarations.symbol_table("x.ts", "d" * 40, lambda: broken)
    declarations.forget({"d" * 40})
    assert declarations.symbol_table("x.ts", "d" * 40, lambda: broken).first_error_line == built.first_error_line
