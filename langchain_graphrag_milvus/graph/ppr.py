"""Personalised PageRank over the entity–relation–passage graph (numpy and scipy).

The graph has one node per entity, relation and passage; a relation is linked to its
two entities and to the passages that support it (undirected, unit weights). A walker
restarts at the seed nodes with probability ``1 - damping`` and otherwise follows a
random edge. Power iteration on a column-stochastic ``scipy.sparse`` matrix runs until
the L1 change falls below ``tol`` or, with ``settle=k``, until the order of the top ``k``
passages is settled (:func:`passages_settled`): a ranking that reads only those stops
there, at about half the sweeps.

With a relation mask (and a passage mask: a tenant view), the walk runs on the allowed
subgraph alone: masked-out relations and passages have no edges at all, so degrees count
only what is allowed and the scores equal those of a graph that never held the rest
(nothing outside a tenant's view changes its scores). The result is a probability vector
over the allowed graph. Each iteration is a Gauss-Seidel sweep over the bipartite
structure (relations on one side, entities and passages on the other), which halves the matrix work of
plain power iteration for the same accuracy.

Example:
    >>> from langchain_graphrag_milvus.graph import GraphIndex
    >>> g = GraphIndex.from_relations(relation_keys=[1, 2], subject_keys=[10, 20],
    ...     object_keys=[20, 30], passage_ids=[["p1"], ["p2"]])
    >>> r = personalized_pagerank(g, entity_weights={0: 1.0})
    >>> round(float(r.entity.sum() + r.relation.sum() + r.passage.sum()), 6)
    1.0
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy.sparse import csr_matrix

try:  # the kernel behind ``csr_matrix @ vector``, called into a buffer the walk keeps (see _product)
    from scipy.sparse._sparsetools import csr_matvec as _CSR_MATVEC
except ImportError:  # pragma: no cover - a scipy without it: ``@``
    _CSR_MATVEC = None

from langchain_graphrag_milvus.graph.index import GraphIndex

__all__ = ["PPRResult", "passages_settled", "personalized_pagerank", "transition_matrices"]

F32 = npt.NDArray[np.float32]
_MASKED_CACHE = 8
Weights = Mapping[int, float] | tuple[npt.ArrayLike, npt.ArrayLike] | None


@dataclass(frozen=True)
class PPRResult:
    """Stationary scores split by node type (together they sum to 1).

    ``converged``: the last L1 change fell below ``tol``; ``settled``: the sweeps stopped
    earlier, when the order of the top ``settle`` passages was settled.
    """

    entity: F32
    relation: F32
    passage: F32
    iterations: int
    converged: bool
    residual: float
    settled: bool = False


def transition_matrices(
    index: GraphIndex,
    relation_mask: npt.NDArray[np.bool_] | None = None,
    passage_mask: npt.NDArray[np.bool_] | None = None,
) -> tuple[csr_matrix, csr_matrix]:
    """The two halves of the walk on the bipartite relation / (entity + passage) graph.

    Every edge joins a relation to an entity or a passage, so the walk alternates
    between the two layers. With ``A`` the (E+P)×R incidence matrix:
    ``to_nodes = A · D_R⁻¹`` moves mass from relations to entities and passages and
    ``to_relations = Aᵀ · D_EP⁻¹`` moves it back. With ``relation_mask``, only the
    allowed relations' edges exist (and with ``passage_mask``, only edges to allowed
    passages). Cached per index (and per pair of masks, the last few).
    """
    key: Any = "ppr_transitions"
    masked = relation_mask is not None or passage_mask is not None
    if masked:
        digest = hashlib.blake2b(digest_size=16)
        for m in (relation_mask, passage_mask):
            digest.update(b"-" if m is None else np.packbits(np.asarray(m, dtype=bool)).tobytes() + b"|")
        key = ("ppr_transitions", digest.hexdigest())
    cached = index._cache.get(key)
    if cached is not None:
        return cached  # type: ignore[no-any-return]
    n_e, n_r, n_p = index.n_entities, index.n_relations, index.n_passages
    er_rows = np.repeat(np.arange(n_e, dtype=np.int64), np.diff(index.ent_rel.indptr))
    rp_rows = n_e + np.repeat(np.arange(n_p, dtype=np.int64), np.diff(index.pas_rel.indptr))
    rows = np.concatenate([er_rows, rp_rows])
    cols = np.concatenate([index.ent_rel.indices, index.pas_rel.indices]).astype(np.int64)
    if masked:
        keep = np.ones(rows.size, bool)
        if relation_mask is not None:
            keep &= np.asarray(relation_mask, dtype=bool)[cols]
        if passage_mask is not None:
            node_ok = np.concatenate([np.ones(n_e, bool), np.asarray(passage_mask, dtype=bool)])
            keep &= node_ok[rows]
        rows, cols = rows[keep], cols[keep]
    deg_nodes = np.bincount(rows, minlength=n_e + n_p).astype(np.float32)
    deg_rel = np.bincount(cols, minlength=n_r).astype(np.float32)
    inv_nodes = np.divide(1.0, deg_nodes, out=np.zeros_like(deg_nodes), where=deg_nodes > 0)
    inv_rel = np.divide(1.0, deg_rel, out=np.zeros_like(deg_rel), where=deg_rel > 0)
    to_nodes = csr_matrix((inv_rel[cols], (rows, cols)), shape=(n_e + n_p, n_r), dtype=np.float32)
    to_relations = csr_matrix((inv_nodes[rows], (cols, rows)), shape=(n_r, n_e + n_p), dtype=np.float32)
    for m in (to_nodes, to_relations):
        if m.nnz < 2**31:
            m.indices = m.indices.astype(np.int32)
            m.indptr = m.indptr.astype(np.int32)
    if masked:  # keep the last few masks' matrices (one per tenant view in use)
        older = [k for k in index._cache if isinstance(k, tuple) and k[0] == "ppr_transitions"]
        for old in older[: max(0, len(older) - _MASKED_CACHE + 1)]:
            index._cache.pop(old, None)
    index._cache[key] = (to_nodes, to_relations)
    return to_nodes, to_relations


def seed_arrays(weights: Weights, size: int, what: str) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """Validated ``(indices, weights)`` of one node type's restart weights (empty for ``None``).

    Raises:
        ValueError: Indices and values differ in length, or a weight is negative or not finite.
        IndexError: An index is outside ``0..size - 1``.
    """
    if weights is None:
        return np.empty(0, np.int64), np.empty(0, np.float64)
    if isinstance(weights, Mapping):
        idx = np.fromiter(weights.keys(), dtype=np.int64, count=len(weights))
        w = np.fromiter(weights.values(), dtype=np.float64, count=len(weights))
    else:
        idx = np.asarray(weights[0], dtype=np.int64).ravel()
        w = np.asarray(weights[1], dtype=np.float64).ravel()
    if idx.size != w.size:
        raise ValueError(f"{what} weights: indices and values differ in length")
    if idx.size == 0:
        return idx, w
    if idx.min() < 0 or idx.max() >= size:
        raise IndexError(f"{what} index out of range 0..{size - 1}")
    if np.any(w < 0) or not np.all(np.isfinite(w)):
        raise ValueError(f"{what} weights must be finite and non-negative")
    return idx, w


def _add_weights(vec: F32, offset: int, size: int, weights: Weights, what: str) -> None:
    idx, w = seed_arrays(weights, size, what)
    if idx.size:
        np.add.at(vec, offset + idx, w.astype(np.float32))


def personalized_pagerank(
    index: GraphIndex,
    *,
    entity_weights: Weights = None,
    relation_weights: Weights = None,
    passage_weights: Weights = None,
    damping: float = 0.5,
    tol: float = 1e-4,
    max_iter: int = 100,
    relation_mask: npt.NDArray[np.bool_] | None = None,
    passage_mask: npt.NDArray[np.bool_] | None = None,
    settle: int = 0,
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
        relation_mask: Optional boolean mask; the walk runs on the allowed relations'
            subgraph (masked-out relations are not edges, get no mass, count in no degree).
        passage_mask: Optional boolean mask over passages, likewise.
        settle: Also stop as soon as the order of the ``settle`` best passages is settled
            (:func:`passages_settled`); 0: only at ``tol``. Never more sweeps than without it.

    Returns:
        Scores per node type. With no (positive) seed weight, all scores are zero.
    """
    if not 0.0 <= damping < 1.0:
        raise ValueError("damping must be in [0, 1)")
    n_e, n_r, n_p = index.n_entities, index.n_relations, index.n_passages
    restart = _restart_vector(index, (entity_weights, relation_weights, passage_weights), relation_mask, passage_mask)
    if restart is None:
        zeros = np.zeros(n_e + n_r + n_p, np.float32)
        return PPRResult(zeros[:n_e], zeros[n_e : n_e + n_r], zeros[n_e + n_r :], 0, True, 0.0)
    to_nodes, to_relations = transition_matrices(index, relation_mask, passage_mask)
    s_nodes = np.concatenate([restart[:n_e], restart[n_e + n_r :]])
    s_rel = restart[n_e : n_e + n_r]
    blocked = None if relation_mask is None else np.flatnonzero(~relation_mask)
    x_nodes, x_rel, iterations, residual, settled = _sweeps(
        to_nodes, to_relations, s_nodes, s_rel, blocked, (damping, tol, max_iter), (n_e, max(0, int(settle)))
    )
    # mass lost to masked relations returns to the restart set: with a restart vector
    # proportional to the seeds, that is the same as normalising the fixed point
    total_mass = float(x_nodes.sum() + x_rel.sum())
    if total_mass > 0:
        x_nodes /= total_mass
        x_rel /= total_mass
    x = np.concatenate([x_nodes[:n_e], x_rel, x_nodes[n_e:]]).astype(np.float32, copy=False)
    return PPRResult(
        entity=x[:n_e],
        relation=x[n_e : n_e + n_r],
        passage=x[n_e + n_r :],
        iterations=iterations,
        converged=residual < tol,
        residual=residual,
        settled=settled,
    )


def _restart_vector(
    index: GraphIndex,
    weights: tuple[Weights, Weights, Weights],
    relation_mask: npt.NDArray[np.bool_] | None,
    passage_mask: npt.NDArray[np.bool_] | None,
) -> F32 | None:
    """Restart weights over entities, relations, passages (in that order), masked, summing to 1.

    ``None`` when no allowed seed has a positive weight.
    """
    n_e, n_r, n_p = index.n_entities, index.n_relations, index.n_passages
    restart = np.zeros(n_e + n_r + n_p, np.float32)
    _add_weights(restart, 0, n_e, weights[0], "entity")
    _add_weights(restart, n_e, n_r, weights[1], "relation")
    _add_weights(restart, n_e + n_r, n_p, weights[2], "passage")
    if relation_mask is not None:
        restart[n_e : n_e + n_r][~relation_mask] = 0.0
    if passage_mask is not None:
        restart[n_e + n_r :][~passage_mask] = 0.0
    total = float(restart.sum())
    if total <= 0.0:
        return None
    restart /= total
    return restart


def _sweeps(
    to_nodes: csr_matrix,
    to_relations: csr_matrix,
    s_nodes: F32,
    s_rel: F32,
    blocked: npt.NDArray[np.intp] | None,
    setting: tuple[float, float, int],
    settle: tuple[int, int] = (0, 0),
) -> tuple[F32, F32, int, float, bool]:
    """Iterate to the fixed point: (node scores, relation scores, iterations, last L1 change, settled).

    Gauss-Seidel sweeps on the bipartite graph: each sweep reads every edge once in
    each direction and contracts the error by damping**2 (plain power iteration
    needs two full matrix products for the same contraction).

    A sweep allocates nothing: the products go into buffers made once per solve (scipy's own
    kernel, :func:`_product`), the restart share ``(1 - damping) · s`` is computed once, and the
    buffers of this sweep and the last are swapped. Every value is computed by the same float32
    operations as ``(1 - damping) * s + damping * (A @ x)``, so the scores and the number of
    sweeps are bit for bit those of that expression (``tests/unit/test_ppr.py``).

    ``settle``: (where the passages start among the nodes, how many of the best must be settled;
    0: stop at ``tol`` only). The check reads the passages' last changes, already in hand.
    """
    damping, tol, max_iter = setting
    first_passage, top = settle
    ratio = damping**2 / (1.0 - damping**2)  # the remaining change of a sweep's change (see passages_settled)
    settled = False
    keep_nodes = (1.0 - damping) * s_nodes
    keep_rel = (1.0 - damping) * s_rel
    x_nodes, x_rel = s_nodes.copy(), s_rel.copy()
    new_nodes, new_rel = np.empty_like(x_nodes), np.empty_like(x_rel)
    diff_nodes, diff_rel = np.empty_like(x_nodes), np.empty_like(x_rel)
    residual = float("inf")
    iterations = 0
    for iterations in range(1, max_iter + 1):
        _damped(to_nodes, x_rel, new_nodes, damping, keep_nodes)
        _damped(to_relations, new_nodes, new_rel, damping, keep_rel)
        if blocked is not None:
            new_rel[blocked] = 0.0
        np.abs(np.subtract(new_nodes, x_nodes, out=diff_nodes), out=diff_nodes)
        np.abs(np.subtract(new_rel, x_rel, out=diff_rel), out=diff_rel)
        residual = float(diff_nodes.sum() + diff_rel.sum())
        x_nodes, new_nodes = new_nodes, x_nodes
        x_rel, new_rel = new_rel, x_rel
        if residual < tol:
            break
        if top and passages_settled(x_nodes[first_passage:], diff_nodes[first_passage:] * ratio, top):
            settled = True
            break
    return x_nodes, x_rel, iterations, residual, settled


def passages_settled(scores: F32, remaining: F32, top: int) -> bool:
    """Whether the order of the ``top`` best passages is settled: no remaining change can reorder it.

    ``remaining``: each passage's estimated change still to come. A sweep contracts the error by
    ``c = damping²`` (the walk alternates between the bipartite graph's two layers, each step a
    stochastic map scaled by ``damping``), so the changes of later sweeps sum to at most
    ``c / (1 - c)`` times the last one (in L1, over all nodes); the walk applies that to each
    passage's own last change, an a-posteriori estimate. The order is settled when every two
    neighbours among the best ``top`` and the last of them and every other passage are further
    apart than their estimates together: ``score − remaining`` of each stays above
    ``score + remaining`` of the next. Ties are never settled (nor are fewer than ``top``
    passages with a score), so a walk with them runs to its tolerance as before.

    Args:
        scores: The passages' scores after the last sweep.
        remaining: Their estimated remaining changes (non-negative).
        top: How many of the best passages must be in their final order.
    """
    n = scores.size
    if top <= 0 or n < top:
        return False
    best = np.argpartition(-scores, top - 1)[:top] if n > top else np.arange(n)
    best = best[np.lexsort((best, -scores[best]))]  # score descending, then index: the walk's order
    low = scores[best] - remaining[best]
    if np.any(low[:-1] <= scores[best[1:]] + remaining[best[1:]]) or low[-1] <= 0.0:
        return False
    if n == top:
        return True
    high = scores + remaining
    high[best] = -np.inf
    return bool(low[-1] > high.max())


def _damped(matrix: csr_matrix, x: F32, out: F32, damping: float, keep: F32) -> None:
    """``out = keep + damping * (matrix @ x)``, in place (the same float32 operations, in another order of operands)."""
    _product(matrix, x, out)
    np.multiply(out, damping, out=out)
    np.add(out, keep, out=out)


def _product(matrix: csr_matrix, x: F32, out: F32) -> None:
    """``out = matrix @ x``, written into ``out`` by scipy's own CSR kernel (what ``@`` calls after allocating).

    Falls back to ``@`` when that kernel is not there (a scipy that moved it) or the types are
    not the float32 ones the walk builds.
    """
    if (
        _CSR_MATVEC is not None
        and matrix.data.dtype == x.dtype == out.dtype == np.float32
        and matrix.indices.dtype == matrix.indptr.dtype
        and x.flags.c_contiguous
    ):
        out.fill(0.0)  # the kernel adds the row sums to what ``out`` holds
        _CSR_MATVEC(matrix.shape[0], matrix.shape[1], matrix.indptr, matrix.indices, matrix.data, x, out)
    else:
        out[...] = matrix @ x
