"""The aggregated relation index: one entry per connected entity pair, for path search.

:func:`~langchain_graphrag_milvus.graph.paths.find_paths` reads neighbours from it, so a
hub's row lists distinct neighbours instead of every relation. Both names are re-exported
by :mod:`langchain_graphrag_milvus.graph.paths` and :mod:`langchain_graphrag_milvus.graph`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from langchain_graphrag_milvus.graph.csr import CSR, csr_from_pairs

if TYPE_CHECKING:
    from langchain_graphrag_milvus.graph.index import GraphIndex

__all__ = ["AggregatedIndex", "aggregated_index"]


@dataclass(frozen=True)
class AggregatedIndex:
    """One entry per connected entity pair (both directions) with its relation count.

    ``neighbors.row(e)`` lists the distinct neighbours of entity ``e``, ordered for
    capping: more relations with ``e`` first, then the neighbour with fewer distinct
    neighbours of its own, then the lower index. ``counts`` is aligned with
    ``neighbors.indices``.
    """

    neighbors: CSR
    counts: npt.NDArray[np.int32]
    n_relations: int
    degree: npt.NDArray[np.int64]

    @property
    def n_pairs(self) -> int:
        """Connected (unordered) entity pairs."""
        return int(self.neighbors.indices.size // 2)

    @property
    def nbytes(self) -> int:
        """Memory held."""
        return self.neighbors.nbytes + int(self.counts.nbytes) + int(self.degree.nbytes)


def aggregated_index(graph: GraphIndex, relation_mask: npt.NDArray[np.bool_] | None = None) -> AggregatedIndex:
    """The aggregated relation index of a graph, or of the relations in ``relation_mask``.

    The unmasked index is cached on the graph (graphs are immutable); callers cache a
    masked one themselves (e.g. per tenant view). Self-relations are left out: they
    connect nothing.
    """
    if relation_mask is None:
        cached = graph._cache.get("aggregated")
        if cached is not None:
            return cached  # type: ignore[no-any-return]
    n = graph.n_entities
    subj, obj = graph.rel_subject, graph.rel_object
    if relation_mask is not None:
        subj, obj = subj[relation_mask], obj[relation_mask]
    a = np.concatenate([subj, obj]).astype(np.int64)
    b = np.concatenate([obj, subj]).astype(np.int64)
    keep = a != b
    # a relation s→o adds (s, o) and (o, s) once each: a directed pair's count is the
    # number of relations between the two entities, in either direction
    keys, counts = np.unique(a[keep] * n + b[keep], return_counts=True)
    rows, cols = keys // n, keys % n
    degree = np.bincount(rows, minlength=n)
    order = np.lexsort((cols, degree[cols], -counts, rows))
    neighbors = csr_from_pairs(rows[order], cols[order], n)  # stable: keeps that order within rows
    result = AggregatedIndex(neighbors, counts[order].astype(np.int32), int(subj.size), degree.astype(np.int64))
    if relation_mask is None:
        graph._cache["aggregated"] = result
    return result
