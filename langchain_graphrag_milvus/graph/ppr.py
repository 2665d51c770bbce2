"""Personalised PageRank over the entity–relation–passage graph (numpy and scipy).

The graph has one node per entity, relation and passage; a relation is linked to its
two entities and to the passages that support it (undirected, unit weights). A walker
restarts at the seed nodes with probability ``1 - damping`` and otherwise follows a
random edge. Power iteration on a column-stochastic ``scipy.sparse`` matrix runs until
the L1 change falls below ``tol``.

Mass that would flow into masked-out relations (tenant filters) or out of nodes without
edges is returned to the restart distribution, so the result is always a probability
vector over the allowed graph.

Example:
    >>> from langchain_graphrag_milvus.graph import GraphIndex
    >>> g = GraphIndex.from_relations(relation_keys=[1, 2], subject_keys=[10, 20],
    ...     object_keys=[20, 30], passage_ids=[["p1"], ["p2"]])
    >>> r = personalized_pagerank(g, entity_weights={0: 1.0})
    >>> round(float(r.entity.sum() + r.relation.sum() + r.passage.sum()), 6)
    1.0
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy.sparse import csr_matrix

from langchain_graphrag_milvus.graph.index import GraphIndex

__all__ = ["PPRResult", "personalized_pagerank", "transition_matrix"]

F32 = npt.NDArray[np.float32]
Weights = Mapping[int, float] | tuple[npt.ArrayLike, npt.ArrayLike] | None


@dataclass(frozen=True)
class PPRResult:
    """Stationary scores split by node type (together they sum to 1)."""

    entity: F32
    relation: F32
    passage: F32
    iterations: int
    converged: bool
    residual: float


def transition_matrix(index: GraphIndex) -> csr_matrix:
    """Column-stochastic transition matrix of the E+R+P node graph (cached per index)."""
    cached = index._cache.get("ppr_transition")
    if cached is not None:
        return cached
    n_e, n_r, n_p = index.n_entities, index.n_relations, index.n_passages
    n = n_e + n_r + n_p
    er_rows = np.repeat(np.arange(n_e, dtype=np.int64), np.diff(index.ent_rel.indptr))
    er_cols = n_e + index.ent_rel.indices.astype(np.int64)
    rp_rows = n_e + np.repeat(np.arange(n_r, dtype=np.int64), np.diff(index.rel_pas.indptr))
    rp_cols = n_e + n_r + index.rel_pas.indices.astype(np.int64)
    rows = np.concatenate([er_rows, er_cols, rp_rows, rp_cols])
    cols = np.concatenate([er_cols, er_rows, rp_cols, rp_rows])
    degree = np.bincount(cols, minlength=n).astype(np.float32)
    inv = np.zeros(n, np.float32)
    np.divide(1.0, degree, out=inv, where=degree > 0)
    data = inv[cols]
    matrix = csr_matrix((data, (rows, cols)), shape=(n, n), dtype=np.float32)
    matrix.sum_duplicates()
    if matrix.indices.dtype != np.int32 and matrix.nnz < 2**31:
        matrix.indices = matrix.indices.astype(np.int32)
        matrix.indptr = matrix.indptr.astype(np.int32)
    index._cache["ppr_transition"] = matrix
    return matrix


def _add_weights(vec: F32, offset: int, size: int, weights: Weights, what: str) -> None:
    if weights is None:
        return
    if isinstance(weights, Mapping):
        idx = np.fromiter(weights.keys(), dtype=np.int64, count=len(weights))
        w = np.fromiter(weights.values(), dtype=np.float64, count=len(weights))
    else:
        idx = np.asarray(weights[0], dtype=np.int64).ravel()
        w = np.asarray(weights[1], dtype=np.float64).ravel()
    if idx.size != w.size:
        raise ValueError(f"{what} weights: indices and values differ in length")
    if idx.size == 0:
        return
    if idx.min() < 0 or idx.max() >= size:
        raise IndexError(f"{what} index out of range 0..{size - 1}")
    if np.any(w < 0) or not np.all(np.isfinite(w)):
        raise ValueError(f"{what} weights must be finite and non-negative")
    np.add.at(vec, offset + idx, w.astype(np.float32))


def personalized_pagerank(
    index: GraphIndex,
    *,
    entity_weights: Weights = None,
    relation_weights: Weights = None,
    passage_weights: Weights = None,
    damping: float = 0.5,
    tol: float = 1e-6,
    max_iter: int = 100,
    relation_mask: npt.NDArray[np.bool_] | None = None,
) -> PPRResult:
    """Personalised PageRank seeded by weighted entities, relations and passages.

    Args:
        index: The graph.
        entity_weights: ``{entity_index: weight}`` or ``(indices, weights)``.
        relation_weights: Same for relations.
        passage_weights: Same for passages.
        damping: Probability of following an edge (HippoRAG uses 0.5).
        tol: Stop when the L1 change between iterations is below this.
        max_iter: Upper bound on iterations.
        relation_mask: Optional boolean mask; masked-out relations get no mass and
            pass none on.

    Returns:
        Scores per node type. With no (positive) seed weight, all scores are zero.
    """
    if not 0.0 <= damping < 1.0:
        raise ValueError("damping must be in [0, 1)")
    n_e, n_r, n_p = index.n_entities, index.n_relations, index.n_passages
    n = n_e + n_r + n_p
    restart = np.zeros(n, np.float32)
    _add_weights(restart, 0, n_e, entity_weights, "entity")
    _add_weights(restart, n_e, n_r, relation_weights, "relation")
    _add_weights(restart, n_e + n_r, n_p, passage_weights, "passage")
    if relation_mask is not None:
        restart[n_e : n_e + n_r][~relation_mask] = 0.0
    total = float(restart.sum())
    if total <= 0.0:
        zeros = np.zeros(n, np.float32)
        return PPRResult(zeros[:n_e], zeros[n_e : n_e + n_r], zeros[n_e + n_r :], 0, True, 0.0)
    restart /= total
    matrix = transition_matrix(index)
    blocked = None if relation_mask is None else n_e + np.flatnonzero(~relation_mask)
    x = restart.copy()
    residual = float("inf")
    iterations = 0
    for iterations in range(1, max_iter + 1):
        y = matrix @ x
        y *= damping
        if blocked is not None:
            y[blocked] = 0.0
        y += (1.0 - float(y.sum())) * restart  # restart + mass lost to dead ends / masks
        residual = float(np.abs(y - x).sum())
        x = y
        if residual < tol:
            break
    return PPRResult(
        entity=x[:n_e],
        relation=x[n_e : n_e + n_r],
        passage=x[n_e + n_r :],
        iterations=iterations,
        converged=residual < tol,
        residual=residual,
    )
