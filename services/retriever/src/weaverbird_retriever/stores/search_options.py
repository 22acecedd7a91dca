"""How a search is asked for: its mode, the fusion of its legs and their weights.

Its own module so that the store contract (base) and the figure prior (figures, which base calls
for the payload) both read it without importing each other in a circle.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

FilterValue = str | int
# Exact payload matches, ANDed; None or empty for none.
Filters = Mapping[str, FilterValue] | None

# Which legs a search runs: dense (cosine HNSW), lexical (sparse BM25) or both fused in the store.
SearchMode = Literal["dense", "lexical", "hybrid"]
# How the two legs of a hybrid search are merged: reciprocal rank or distribution-based score fusion.
FusionKind = Literal["rrf", "dbsf"]


@dataclass(frozen=True)
class SearchOptions:
    """How to search: the mode, the query text for the lexical leg, and the fusion of the two legs.

    prefetch: candidates each leg hands to the fusion (at least k).
    lexical_weight: weight of the lexical leg against the dense leg's 1. DBSF: a whole number, the
    lexical leg's normalised scores count that many times (see lexical_copies). RRF: its ranks are
    divided by it (see RRF_K for what that does at k = 60).
    """

    mode: SearchMode = "dense"
    text: str = ""
    fusion: FusionKind = "dbsf"
    prefetch: int = 50
    lexical_weight: float = 1.0
    # Hybrid questions also search the glossary concepts they name (lexical.LexicalEncoder.query); off
    # only to measure what that adds.
    concepts: bool = True
    # Payload values no hit may have, e.g. {"origin": "web"}; the evaluation leaves a filing out this way.
    exclude: Mapping[str, FilterValue] = field(default_factory=dict)
    # Hybrid mode: each of the fusion's first max(k, prefetch) candidates gains figure_weight times its
    # number density before the cut to k, in the store's score formula, unless the question asks for a
    # description (figures.py). 0 = the fusion's order.
    figure_weight: float = 0.0

    @property
    def expands_concepts(self) -> bool:
        """Whether the lexical query adds the question's concepts: hybrid questions only; lexical mode
        stays a literal look-up."""
        return self.mode == "hybrid" and self.concepts
