"""A document's front matter: the leading `---` YAML block, read within limits,
and its `pin: NAME` line, the one form of the pin that is read and rewritten."""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import yaml

from dshaudit.core.errors import InputError
from dshaudit.documents.frontblock import MAX_FRONT_MATTER_BYTES, find_block


class FrontMatterError(InputError):
    """The front matter cannot be read (lint reports it under its own code)."""


# Limits on what a findings file may make dshaudit do (MAX_FRONT_MATTER_BYTES with them).
MAX_FRONT_MATTER_DEPTH = 16  # mappings and lists inside one another
MAX_FRONT_MATTER_NODES = 10_000
MAX_YAML_INT_DIGITS = 100


class _FrontMatterLoader(yaml.SafeLoader):
    """YAML's safe loader with limits, and without choices made silently: no
    aliases (a few lines of them expand to gigabytes), bounded nesting and
    size, and a key given twice is an error, not the last one winning."""

    def __init__(self, stream: str):
        super().__init__(stream)
        self._depth = 0
        self._nodes = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        event = self.peek_event()
        mark: Any = event.start_mark
        if isinstance(event, yaml.AliasEvent):
            raise yaml.composer.ComposerError(None, None, "YAML aliases (*name) are not allowed in front matter", mark)
        self._nodes += 1
        if self._nodes > MAX_FRONT_MATTER_NODES:
            raise yaml.composer.ComposerError(
                None, None, f"more than {MAX_FRONT_MATTER_NODES} values in front matter", mark
            )
        collection = isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent))
        if collection:
            self._depth += 1
            if self._depth > MAX_FRONT_MATTER_DEPTH:
                raise yaml.composer.ComposerError(
                    None, None, f"nested more than {MAX_FRONT_MATTER_DEPTH} levels deep", mark
                )
        try:
            return super().compose_node(parent, index)
        finally:
            if collection:
                self._depth -= 1

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        seen: dict[object, int] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            try:
                first = seen.get(key)
            except TypeError:
                continue  # unhashable: the safe loader reports it
            if first is not None:
                raise yaml.constructor.ConstructorError(
                    None, None, f"key {key!r} is given twice (first on line {first + 2}); keep one", key_node.start_mark
                )
            seen[key] = key_node.start_mark.line
        return super().construct_mapping(node, deep)

    def construct_yaml_timestamp(self, node: Any) -> Any:
        try:
            return super().construct_yaml_timestamp(node)
        except ValueError as exc:  # 2026-13-45: a date that looks like one
            raise yaml.constructor.ConstructorError(None, None, str(exc), node.start_mark) from None

    def construct_yaml_int(self, node: Any) -> Any:
        digits = sum(ch.isdigit() for ch in str(node.value))
        if digits > MAX_YAML_INT_DIGITS:
            raise yaml.constructor.ConstructorError(
                None, None, f"a number of {digits} digits (at most {MAX_YAML_INT_DIGITS})", node.start_mark
            )
        return super().construct_yaml_int(node)


_FrontMatterLoader.add_constructor("tag:yaml.org,2002:int", _FrontMatterLoader.construct_yaml_int)
_FrontMatterLoader.add_constructor("tag:yaml.org,2002:timestamp", _FrontMatterLoader.construct_yaml_timestamp)


@dataclass(frozen=True)
class FrontMatter:
    data: dict
    skip: int  # lines it spans, both `---` included (0: none)
    key_lines: dict[str, int] = field(default_factory=dict)  # top-level key -> line of the file (1-based)


def read_front_matter(text: str, where: str) -> FrontMatter:
    """A leading `---` YAML block, parsed within limits, with the line of each top-level key."""
    block = find_block(text)
    if block is None:
        return FrontMatter({}, 0)
    if block.too_long_at is not None:
        raise FrontMatterError(
            f"front matter is longer than the {MAX_FRONT_MATTER_BYTES} characters dshaudit reads",
            file=where,
            line=block.too_long_at + 1,
        )
    if block.end is None:
        raise FrontMatterError("front matter opened with '---' is never closed", file=where, line=1)
    lines, i = block.lines, block.end
    try:
        data, key_lines = _parsed_block("\n".join(lines[1:i]))
    except _BlockError as exc:
        raise FrontMatterError(exc.problem, file=where, line=exc.line) from None
    # Each reader of a document asks again (its pin, its names, its claims): the block is
    # parsed once, and each gets a copy of its own.
    return FrontMatter(copy.deepcopy(data), i + 1, dict(key_lines))


class _BlockError(Exception):
    def __init__(self, problem: str, line: int | None):
        super().__init__(problem)
        self.problem, self.line = problem, line


@lru_cache(maxsize=256)
def _parsed_block(block: str) -> tuple[dict, dict[str, int]]:
    """A front matter block's mapping, and the line of each top-level key (the file's,
    below the opening `---`)."""
    loader = None
    try:
        loader = _FrontMatterLoader(block)
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise _BlockError(f"malformed front matter: {problem}", mark.line + 2 if mark is not None else None) from None
    except (ValueError, TypeError, OverflowError, RecursionError) as exc:  # what a constructor raises on odd input
        raise _BlockError(f"malformed front matter: {exc}", 2) from None
    finally:
        if loader is not None:
            loader.dispose()
    data = data or {}
    if not isinstance(data, dict):
        raise _BlockError("front matter must be a YAML mapping", 2)
    key_lines: dict[str, int] = {}
    if isinstance(node, yaml.MappingNode):
        for key_node, _ in node.value:
            if isinstance(key_node, yaml.ScalarNode):
                key_lines.setdefault(str(key_node.value), key_node.start_mark.line + 2)
    return data, key_lines


def split_front_matter(text: str, where: str) -> tuple[dict, int]:
    """Parse a leading `---` YAML block; return it and the number of lines it spans."""
    front = read_front_matter(text, where)
    return front.data, front.skip


# The one form of the front matter's pin that is read and rewritten: `pin: NAME`,
# quoted or not, with a comment or not. Another (a quoted key, a tag, a block)
# is refused when read, so `rebase --write` never moves citations but not the pin.
_PIN_LINE_RE = re.compile(
    r"""(?P<key>pin[ \t]*:[ \t]*)"""
    r"""(?:"(?P<dq>[^"\\]*)"|'(?P<sq>[^']*)'|(?P<plain>[^'"\s#][^\s]*(?:[ \t]+[^\s#][^\s]*)*))"""
    r"""(?P<tail>[ \t]*(?:#.*)?)"""
)


@dataclass(frozen=True)
class PinLine:
    """`pin: NAME` as written: the key and what follows it, the quote, the value, the comment."""

    key: str
    quote: str
    value: str
    tail: str

    def with_value(self, value: str) -> str:
        return f"{self.key}{self.quote}{value}{self.quote}{self.tail}"


def parse_pin_line(line: str) -> PinLine | None:
    m = _PIN_LINE_RE.fullmatch(line)
    if m is None:
        return None
    for quote, group in (('"', "dq"), ("'", "sq"), ("", "plain")):
        if m.group(group) is not None:
            return PinLine(m.group("key"), quote, m.group(group), m.group("tail"))
    return None
