"""The output layer: every command's `Outcome` in any format.

Each format is a module of formats/, held to one protocol (`Format`,
interface.py). All of them read the same diagnostics and the same
precomputed summary, so they report the same things in the same order; none
of them runs git or reads a file. The pages of `report` and `history` are
outcomes too (pages.py), laid out by templates in HTML and Markdown. `emit`
(emit.py) renders one run into several formats at once: stdout and
`--output FORMAT=PATH`.
"""
