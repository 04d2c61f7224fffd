"""The detectors as data: `registry.toml` read into one `DetectorSpec` each, the
literals they filter files on, and the version that keys what each one caches."""

from __future__ import annotations

import json
import tomllib
from dataclasses import asdict, dataclass, field, fields
from functools import cache, lru_cache
from importlib import resources
from typing import Any

from dshaudit.lang.versions import library_versions
from dshaudit.platform.cache import digest

# Bump when the engine's way of measuring changes what a detector returns.
ENGINE_VERSION = "1"


@lru_cache(maxsize=1)
def registry_toml() -> dict[str, Any]:
    """registry.toml, parsed once: the detectors (`[[fact]]`) and where things
    are in the repository they read (`[layout]`)."""
    return tomllib.loads(resources.files(__package__).joinpath("registry.toml").read_text(encoding="utf-8"))


def all_needles() -> list[str]:
    """Every literal a detector filters on, in a stable order (bit k of a blob's mask is needle k)."""
    needles = {n for spec in load_specs().values() for n in spec.needle or ()}
    needles |= {spec.params["mention"] for spec in load_specs().values() if "mention" in spec.params}
    return sorted(needles)


def PARSED_NEEDLE_MASK() -> int:  # noqa: N802 - a constant, computed once the registry is loaded
    """Needles of query detectors: blobs holding one will be parsed, so their bytes are kept."""
    needles = all_needles()
    return sum(1 << needles.index(n) for s in load_specs().values() if s.query for n in s.needle or ())


@dataclass(frozen=True)
class DetectorSpec:
    id: str
    definition: str
    paths: tuple[str, ...]
    reduce: str
    query: str | None = None
    needle: tuple[str, ...] | None = None  # any of these literals; files without one are never parsed
    exclude_tests: bool = False
    params: dict[str, Any] = field(default_factory=dict)
    reads: tuple[str, ...] = ()  # globs of other files whose content the reducer reads
    lists: tuple[str, ...] = ()  # globs of files whose names (not content) the reducer reads
    names_only: bool = False  # the reducer reads the names of the files of `paths`, never their content

    @property
    def kind(self) -> str:
        """A `query` detector works file by file; a `whole` one reads the tree at once
        (book.registry checks that this agrees with the reducer)."""
        return "query" if self.query else "whole"

    @property
    def content_globs(self) -> tuple[str, ...]:
        """Files whose content can change the fact's value (history re-measures where one changes)."""
        return (() if self.names_only else self.paths) + self.reads

    @property
    def name_globs(self) -> tuple[str, ...]:
        """Files whose coming, going or renaming (not their edits) can change the fact's value."""
        return (self.paths if self.names_only else ()) + self.lists


@lru_cache(maxsize=1)
def load_specs() -> dict[str, DetectorSpec]:
    """The detectors of registry.toml, read once; `book.registry` checks each against its reducer."""
    data = registry_toml()
    specs = {}
    known_keys = {f.name for f in fields(DetectorSpec)}
    for entry in data["fact"]:
        if set(entry) - known_keys:
            # A key the spec does not carry would change nothing, silently, and escape the cache key.
            raise RuntimeError(f"registry.toml: {entry.get('id')}: unknown keys {sorted(set(entry) - known_keys)}")
        spec = DetectorSpec(
            id=entry["id"],
            definition=entry["definition"],
            paths=tuple(entry["paths"]),
            reduce=entry["reduce"],
            query=entry.get("query"),
            needle=(entry["needle"],)
            if isinstance(entry.get("needle"), str)
            else tuple(entry.get("needle", ())) or None,
            exclude_tests=entry.get("exclude_tests", False),
            params=entry.get("params", {}),
            reads=tuple(entry.get("reads", ())),
            lists=tuple(entry.get("lists", ())),
            names_only=entry.get("names_only", False),
        )
        specs[spec.id] = spec
    return specs


@lru_cache(maxsize=1)
def _code_digest() -> str:
    """The code that computes facts: any edit to it invalidates what it cached.
    (Coarser than one function's source, and far cheaper than inspecting it.)
    lang/ is in it for parsing and reading nodes; git/grep.py for the
    whole-tree searches that the marker and absent-string facts count."""
    here, top = resources.files(__package__), resources.files("dshaudit")
    return digest(
        *(
            here.joinpath(name).read_bytes()
            for name in (
                "specs.py",
                "engine.py",
                "reducing.py",
                "syntax_reducers.py",
                "tree_reducers.py",
                "reducers.py",
                "perfile.py",
                "book.py",
            )
        ),
        *(
            top.joinpath(*name.split("/")).read_bytes()
            for name in ("lang/symbols.py", "lang/parsing.py", "lang/versions.py", "git/grep.py")
        ),
    )


@cache
def _query_text(name: str) -> str:
    return resources.files(__package__).joinpath("queries", name).read_text(encoding="utf-8")


def detector_version(spec: DetectorSpec) -> str:
    """Changes whenever anything that decides a detector's results does: every
    field of its registry entry (paths, exclude_tests, reduce, definition and
    the rest, not only the query), the `[layout]` table (which files are tests,
    which folders packages), its query's text, the code, and the versions
    of tree-sitter and its TypeScript grammar. Not memoised by id: a spec
    changed under the same id must get a new version."""
    entry = json.dumps(asdict(spec), sort_keys=True)
    layout = json.dumps(registry_toml()["layout"], sort_keys=True)
    query = _query_text(spec.query) if spec.query else ""
    return digest(ENGINE_VERSION, entry, layout, query, _code_digest(), library_versions())


def needle_mask(data: bytes) -> int:
    """Bit k set when needle k of all_needles() occurs in the blob."""
    return sum(1 << k for k, n in enumerate(_encoded_needles()) if n in data)


@lru_cache(maxsize=1)
def _encoded_needles() -> tuple[bytes, ...]:
    return tuple(n.encode("utf-8") for n in all_needles())
