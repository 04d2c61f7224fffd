"""Which parser and grammar build the syntax trees, light to import: what is
cached from a parse is keyed by it, and commands that parse nothing still read it."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path


@lru_cache(maxsize=1)
def library_versions() -> str:
    """The parser and grammar that build the syntax trees: a new release can
    parse the same file differently, so it must not reuse what the old one cached.
    Read from the modules and their install records directly: importlib.metadata
    would scan every installed package, which costs a warm run tens of milliseconds."""
    import tree_sitter
    import tree_sitter_typescript

    grammar = Path(tree_sitter_typescript.__file__).resolve().parent
    records = sorted(p.name for p in grammar.parent.glob("tree_sitter_typescript-*.dist-info"))
    # `tree_sitter_typescript-0.23.2.dist-info`; with no record, where the grammar is stands in for its version.
    grammar_version = ", ".join(r.removeprefix("tree_sitter_typescript-").removesuffix(".dist-info") for r in records)
    return (
        f"tree-sitter=={getattr(tree_sitter, '__version__', 'unknown')}; "
        f"tree-sitter-typescript=={grammar_version or grammar}"
    )
