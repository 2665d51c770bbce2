"""The seed notebook's expansion by full adjacency products, kept as a reference.

Used by the tests (our frontier expansion must return exactly this set with the caps
off) and by ``benchmarks/bench_expansion.py`` (to measure what the products cost). Do
not use it for retrieval: ``Aᵀ·A`` has ~14 billion non-zeros at 1M relations.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy.sparse import csr_matrix

from langchain_graphrag_milvus.graph.index import GraphIndex

__all__ = ["SeedMatrices"]


@dataclass
class SeedMatrices:
    """``entity_relation_adj_target_degree`` and ``relation_adj_target_degree`` of the seed."""

    entity_relation: Any
    relation_relation: Any

    @classmethod
    def build(cls, index: GraphIndex, hops: int) -> SeedMatrices:
        """Compute the seed's matrices for ``hops`` (its ``target_degree``), as the notebook does.

        The notebook fills a dense ``np.zeros((E, R))`` first; that alone would need
        E·R·8 bytes, so the same float64 matrix is built sparse directly. Everything after
        that follows the notebook line by line, including its matrix formats (``A.T`` is
        CSC, so ``Aᵀ·A`` stays CSC and its rows are slow to read, as in the notebook).
        """
        n_e, n_r = index.n_entities, index.n_relations
        rows = np.repeat(np.arange(n_e), np.diff(index.ent_rel.indptr))
        data = np.ones(rows.size, dtype=np.float64)
        entity_relation_adj = csr_matrix((data, (rows, index.ent_rel.indices)), shape=(n_e, n_r))
        entity_adj_1_degree = entity_relation_adj @ entity_relation_adj.T
        relation_adj_1_degree = entity_relation_adj.T @ entity_relation_adj
        entity_adj_target_degree = entity_adj_1_degree
        for _ in range(hops - 1):
            entity_adj_target_degree = entity_adj_target_degree * entity_adj_1_degree
        relation_adj_target_degree = relation_adj_1_degree
        for _ in range(hops - 1):
            relation_adj_target_degree = relation_adj_target_degree * relation_adj_1_degree
        entity_relation_adj_target_degree = entity_adj_target_degree @ entity_relation_adj
        return cls(entity_relation_adj_target_degree, relation_adj_target_degree)

    @property
    def nbytes(self) -> int:
        """Bytes held by the two matrices."""
        return sum(
            int(m.data.nbytes + m.indices.nbytes + m.indptr.nbytes)
            for m in (self.entity_relation, self.relation_relation)
        )

    def expand(self, entity_seeds: npt.ArrayLike, relation_seeds: npt.ArrayLike) -> set[int]:
        """The seed's candidate relations: union of the non-zeros of the seeds' rows."""
        out: set[int] = set()
        for r in np.asarray(relation_seeds, dtype=np.int64).ravel().tolist():
            out.update(self.relation_relation[r].nonzero()[1].tolist())
        for e in np.asarray(entity_seeds, dtype=np.int64).ravel().tolist():
            out.update(self.entity_relation[e].nonzero()[1].tolist())
        return out
