"""The language server's engine without the protocol: positions, and the dshaudit: URIs."""

from __future__ import annotations

import pytest
from lsprotocol import types

from dshaudit.lsp.engine import blob_uri, parse_blob_uri


def at(line: int, character: int) -> types.Position:
    return types.Position(line=line, character=character)


@pytest.mark.parametrize("encoding", ["utf-16", "utf-8", "utf-32"])
def test_columns_are_counted_in_the_agreed_encoding(encoding):
    from dshaudit.lsp.engine import Lines

    line = "😀 中文 (`vendor/cordis/src/context.ts:20`"
    lines = Lines.of("first\n" + line, encoding)
    column = line.index("vendor")
    units = len(line[:column].encode(encoding.replace("utf-16", "utf-16-le").replace("utf-32", "utf-32-le")))
    units //= {"utf-16": 2, "utf-8": 1, "utf-32": 4}[encoding]
    assert lines.position(1, column) == at(1, units)
    assert lines.column(at(1, units)) == column
    assert lines.column(at(1, 10_000)) == len(line)


def test_blob_uris_round_trip():
    sha = "99f6f02fecdb7dff40c3fbc9470f5907c29f74ca"
    uri = blob_uri(sha, "packages/@scope/a b/index.ts")
    assert uri == f"dshaudit://{sha}/packages/@scope/a%20b/index.ts"
    assert parse_blob_uri(uri) == (sha, "packages/@scope/a b/index.ts")
    assert parse_blob_uri("file:///tmp/x.md") is None
    assert parse_blob_uri("dshaudit://notasha/x.ts") is None
