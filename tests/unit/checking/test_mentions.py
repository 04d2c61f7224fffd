"""A document's names (checking/mentions.py), cached by its text and dshaudit's rules."""

from __future__ import annotations

import pytest

from dshaudit.checking import mentions

TEXT = """---
pin: v1
---
# Notes

`AgentRegistry.setFactory` builds the `SessionStore` (`packages/core/a.ts:3`), and
`DEFAULT_TIMEOUT_MS = 600000` bounds it; `absent: LegacyLoop`.
"""


def test_a_documents_names_are_found_once_then_read_from_the_cache(fresh_cache, monkeypatch):
    first = mentions.document_names(TEXT)
    assert {n.text for n, _, _ in first} >= {"AgentRegistry.setFactory", "SessionStore"}
    monkeypatch.setattr(mentions, "_document_names", lambda text: pytest.fail("the names were found again"))
    assert mentions.document_names(TEXT) == first


def test_another_text_is_read_for_names_again(fresh_cache, monkeypatch):
    mentions.document_names(TEXT)
    found = []
    real = mentions._document_names
    monkeypatch.setattr(mentions, "_document_names", lambda text: found.append(text) or real(text))
    changed = TEXT.replace("SessionStore", "SessionPool")
    assert "SessionPool" in {n.text for n, _, _ in mentions.document_names(changed)}
    assert found == [changed]


def test_names_from_the_cache_keep_their_places_and_folders(fresh_cache):
    text = TEXT + "\nSee `packages/core/` and `agent/src/index.ts` there.\n"
    first = mentions.document_names(text)
    again = mentions.document_names(text)
    assert again == first
    assert [(n.start, n.end, n.folder, line, column) for n, line, column in again] == [
        (n.start, n.end, n.folder, line, column) for n, line, column in first
    ]


def test_an_edit_reads_the_changed_run_of_prose_alone_and_places_every_name_anew(fresh_cache, monkeypatch):
    """At each keystroke the language server asks again: a paragraph it has read keeps its
    names, which are placed where the edit moved them."""
    text = TEXT + "\nSee `packages/core/` and `agent/src/index.ts` there.\n"
    mentions.document_names(text)
    read = []
    real = mentions.code_names
    monkeypatch.setattr(mentions, "code_names", lambda chunk, skip: read.append(chunk) or real(chunk, skip))
    edited = text.replace("# Notes", "# Notes on the `SessionPool`\n\nA line more.")
    names = mentions.document_names(edited)
    assert len(read) == 2 and "SessionPool" in read[0]
    mentions._chunk_names.cache_clear()
    assert names == mentions._document_names(edited)
