"""Helpers the rankings share: entity specificity counts and the LLM pool's round-robin merge.

The previous no-LLM ranking (``PPRRankingParams``, ``ppr_passage_scores``, ``bridge_choice``...),
which no retriever used any more, moved out of the package to ``benchmarks/baseline_ranking.py``
(``benchmarks/cv_ranking.py`` runs it as the "old default" baseline); the graph retriever's
rankings are the values of :mod:`.rankings` (``PageRankWalk``, ``SimilarityExpansion``).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from langchain_graphrag_milvus.graph import GraphIndex

__all__ = ["entity_passage_counts", "interleave"]

#: The names that moved to ``benchmarks/baseline_ranking.py`` (an import of one says where).
MOVED = frozenset(
    {
        "PPRRankingParams",
        "ppr_passage_scores",
        "order_passages",
        "bridge_choice",
        "softmax_weights",
        "predicate_overlap",
        "content_words",
    }
)


def entity_passage_counts(
    graph: GraphIndex,
    entities: npt.ArrayLike,
    relation_mask: npt.NDArray[np.bool_] | None = None,
    passage_mask: npt.NDArray[np.bool_] | None = None,
) -> npt.NDArray[np.int64]:
    """For each entity, the distinct passages its relations come from (inside the masks, if given)."""
    return graph.entity_passage_counts(entities, relation_mask, passage_mask)


def interleave(*rankings: Sequence[str]) -> list[str]:
    """Round-robin merge of rankings, first occurrence kept."""
    out: dict[str, None] = {}
    for group in itertools.zip_longest(*rankings):
        for item in group:
            if item is not None:
                out.setdefault(item, None)
    return list(out)


def __getattr__(name: str) -> object:
    """Says where a name of the old ranking went."""
    if name in MOVED:
        raise AttributeError(
            f"{__name__}.{name} was the previous no-LLM ranking; it is no longer part of the package: "
            "see benchmarks/baseline_ranking.py in the source distribution, or use "
            "langchain_graphrag_milvus.PageRankWalk / SimilarityExpansion"
        )
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
