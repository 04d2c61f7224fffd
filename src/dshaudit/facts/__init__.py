"""Structural facts about DSH, measured at a pin.

The detectors are listed in `registry.toml` and read by `specs.py`; their
tree-sitter queries are in `queries/`; `engine.py` runs a query over a file
and `reducers.py` turns its matches into values; `perfile.py` is one
detector's work on one file, the same in this process and in the workers of
`parallel.py`; `book.py` measures the facts asked for over one snapshot,
sharing reads and parses between them and caching per-file work by blob id.
"""
