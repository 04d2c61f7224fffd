"""Every reducer, registered: how matches become a fact's value.

The registries and what a reducer is are in reducing.py; the reducers of
detectors that read syntax are in syntax_reducers.py, those about the tree as
a whole in tree_reducers.py. Each registers itself when its module is
imported, so the registries are complete once this module is.
"""

from __future__ import annotations

from dshaudit.facts import syntax_reducers, tree_reducers
from dshaudit.facts.reducing import COMBINE, PER_FILE, SEARCHES, WHOLE, Partial, Partials, evidence

# Imported for the reducers they register; named here so that the registries' sources are in one place.
REDUCER_MODULES = (syntax_reducers, tree_reducers)

__all__ = ["COMBINE", "PER_FILE", "SEARCHES", "WHOLE", "Partial", "Partials", "evidence"]
