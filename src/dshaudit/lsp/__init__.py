"""`dshaudit lsp`: a language server for findings, over stdio.

An editor talks to it as it talks to ruff or marksman: diagnostics as a
Markdown document is opened and edited (every verdict `check` gives, with the
same status and message, on the citation itself), hover (the cited lines at
the pin; a claim's measured value, counting rule and evidence), completion
(paths, #Symbols, fact ids, pin names), code actions (anchor a citation, move
it to where its anchor is now, carry it to another pin) and go to definition
(the cited blob as a read-only `dshaudit:` document the server serves).

- `engine.py` keeps the state (one Verifier, FactBook and cache for as long
  as the editor runs) and checks a document through the pipeline `check`
  uses; it knows nothing of the protocol's transport.
- `features.py` answers hover, completion, code actions, definition and
  the virtual documents from an engine's analysis of a document.
- `server.py` is the pygls server: it debounces edits, runs the engine on
  one worker thread, publishes only the latest version's diagnostics, and
  reports opening (or cloning) DSH through `$/progress`.
"""

from __future__ import annotations


def serve(repo: str | None, config_path: str | None) -> None:
    """Run the server on stdin and stdout until the editor says exit."""
    from dshaudit.lsp.server import build_server

    build_server(repo, config_path).start_io()
