"""Whether a document's front matter may name a pin, told without reading YAML."""

import pytest

from dshaudit.documents.frontblock import MAX_FRONT_MATTER_BYTES, find_block, may_name_pin
from dshaudit.documents.frontmatter import split_front_matter


@pytest.mark.parametrize(
    "text, may",
    [
        ("# No front matter\npin: rc7\n", False),  # a `pin:` in the body is no pin
        ("---\ntitle: A guide\n---\nAll about pinning.\n", False),
        ("---\npin: rc7\n---\n", True),
        ("---\ntitle: x\n'pin': rc7\n...\n", True),  # closed by `...`, the key quoted
        ("---\nspinner: yes\n---\n", True),  # the letters alone: the parse decides
        ("---\ntitle: never closed\n", True),  # unreadable: the reader says why
    ],
)
def test_only_a_block_holding_the_letters_pin_may_name_one(text, may):
    assert may_name_pin(text) is may
    if not may:
        assert not split_front_matter(text, "doc.md")[0].get("pin")


def test_a_block_is_found_as_the_reader_finds_it():
    assert find_block("no front matter\n---\n") is None
    block = find_block("---\na: 1\n---  \nbody\n")
    assert block is not None and (block.end, block.too_long_at) == (2, None)
    long = "---\n" + "a: 1\n" * (MAX_FRONT_MATTER_BYTES // 5 + 1)
    block = find_block(long)
    assert block is not None and block.end is None and block.too_long_at == MAX_FRONT_MATTER_BYTES // 5 + 1
