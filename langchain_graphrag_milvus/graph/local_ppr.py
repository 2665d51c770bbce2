"""Local personalised PageRank by residual pushes (Andersen–Chung–Lang), costing the seeds' neighbourhood.

The same walk as :func:`~langchain_graphrag_milvus.graph.ppr.personalized_pagerank` (one
node per entity, relation and passage; a relation is linked to its entities and to the
passages that support it; restart at the seeds with probability ``1 - damping``; relation
and passage masks remove those nodes' edges, so a tenant view's scores equal those of a
graph that never held the rest), solved locally instead of by power iteration over the
whole graph.

Every node ``u`` holds an estimate ``p(u)`` and a residual ``r(u)`` (the restart mass not
yet spread); at the start ``r`` is the restart vector. A *push* at ``u`` keeps
``(1 - damping)·r(u)`` in ``p(u)`` and hands ``damping·r(u)/deg(u)`` to each neighbour.
Nodes are pushed while ``r(u) ≥ epsilon·deg(u)``; the pushes run in rounds over the
bipartite graph (all eligible relations at once, then all eligible entities and
passages), so each round is a handful of numpy operations on the frontier only. Nothing
is ever computed for a node no residual reached: the work is bounded by
``1 / (epsilon·(1 - damping))`` edge visits whatever the graph's size (ACL 2006). What
follows the graph's size is paid once per graph and cached with it: the neighbour lists
(the global solver's edges, as two CSRs) and a few dense work arrays, reused by later
calls with only the reached entries reset. A mask adds no per-graph work (masked degrees
are counted for the reached nodes only).

Guarantees, with ``x`` the exact solution of ``x = (1-d)·s + d·P·x`` (``s``: the restart
weights normalised to sum 1; ``P``: the walk; mass reaching a node without edges is
lost, as in the global solver before its final normalisation):

* per node, ``0 ≤ x(v) − p(v) < epsilon·deg(v)`` (the undirected-graph ACL bound; it
  holds on every masked subgraph, since that is an undirected graph too);
* ``Σ_v (x(v) − p(v)) ≤ R``, the residual mass left (``LocalPPR.residual``); after both
  sides are normalised to sum 1 (what :class:`~.ppr.PPRResult` holds) their L1 distance
  is at most ``2·R / (Σp + R)`` (``PPRResult.residual`` of :func:`push_pagerank`).

Example:
    >>> from langchain_graphrag_milvus.graph import GraphIndex
    >>> g = GraphIndex.from_relations(relation_keys=[1, 2], subject_keys=[10, 20],
    ...     object_keys=[20, 30], passage_ids=[["p1"], ["p2"]])
    >>> r = push_pagerank(g, entity_weights={0: 1.0}, epsilon=1e-9)
    >>> round(float(r.entity.sum() + r.relation.sum() + r.passage.sum()), 6)
    1.0
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from langchain_graphrag_milvus.graph.data import GraphData
from langchain_graphrag_milvus.graph.ppr import PPRResult, Weights, seed_arrays
from langchain_graphrag_milvus.graph.push_walk import Mask, PushWalk

__all__ = ["LocalPPR", "local_pagerank", "push_pagerank"]

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]


@dataclass(frozen=True)
class LocalPPR:
    """The nodes a push reached and their estimates (un-normalised: the restart sums to 1).

    Attributes:
        entity_idx: Entities with a positive estimate (ascending).
        entity: Their estimates ``p``.
        relation_idx: Relations likewise.
        relation: Their estimates.
        passage_idx: Passages likewise.
        passage: Their estimates.
        residual: Restart mass not yet spread (``Σ r``): an upper bound on ``Σ (x − p)``.
        rounds: Push rounds run (one round: every eligible relation, then every eligible
            entity and passage).
        pushes: Node pushes in all.
        touched: Nodes that ever held residual (the work's footprint).
        edges: Edges the pushes traversed.
        converged: Every residual ended below ``epsilon·degree`` (False: ``max_rounds`` hit).
    """

    entity_idx: I64
    entity: F64
    relation_idx: I64
    relation: F64
    passage_idx: I64
    passage: F64
    residual: float
    rounds: int
    pushes: int
    touched: int
    edges: int
    converged: bool

    @property
    def mass(self) -> float:
        """``Σ p`` over all nodes."""
        return float(self.entity.sum() + self.relation.sum() + self.passage.sum())

    def to_result(self, graph: GraphData) -> PPRResult:
        """Dense scores normalised to sum 1, like the global solver's (zeros without seeds)."""
        total = self.mass
        scale = 1.0 / total if total > 0 else 0.0
        out = []
        for n, idx, val in (
            (graph.n_entities, self.entity_idx, self.entity),
            (graph.n_relations, self.relation_idx, self.relation),
            (graph.n_passages, self.passage_idx, self.passage),
        ):
            dense = np.zeros(n, np.float32)
            dense[idx] = val * scale
            out.append(dense)
        bound = 2.0 * self.residual / (total + self.residual) if total > 0 else 0.0
        return PPRResult(out[0], out[1], out[2], self.rounds, self.converged, bound)


def _distinct(values: I64, stamp: I64) -> I64:
    """The distinct values, without sorting (``stamp``: scratch array indexed by value, any content)."""
    pos = np.arange(values.size, dtype=np.int64)
    stamp[values] = pos
    out: I64 = values[stamp[values] == pos]
    return out


def _restart(
    graph: GraphData, weights: tuple[Weights, Weights, Weights], relation_mask: Mask, passage_mask: Mask
) -> tuple[I64, F64, I64, F64]:
    """Seeds (entities and passages as nodes ``E + p``; relations), normalised to sum 1 (empty if none)."""
    n_e = graph.n_entities
    e_idx, e_w = seed_arrays(weights[0], n_e, "entity")
    r_idx, r_w = seed_arrays(weights[1], graph.n_relations, "relation")
    p_idx, p_w = seed_arrays(weights[2], graph.n_passages, "passage")
    if relation_mask is not None:
        keep = np.asarray(relation_mask, dtype=bool)[r_idx]
        r_idx, r_w = r_idx[keep], r_w[keep]
    if passage_mask is not None:
        keep = np.asarray(passage_mask, dtype=bool)[p_idx]
        p_idx, p_w = p_idx[keep], p_w[keep]
    n_idx, n_w = np.concatenate([e_idx, n_e + p_idx]), np.concatenate([e_w, p_w])
    total = float(n_w.sum() + r_w.sum())
    if total <= 0.0:
        return n_idx[:0], n_w[:0], r_idx[:0], r_w[:0]
    return n_idx, n_w / total, r_idx, r_w / total


def local_pagerank(
    graph: GraphData,
    *,
    entity_weights: Weights = None,
    relation_weights: Weights = None,
    passage_weights: Weights = None,
    damping: float = 0.5,
    epsilon: float = 1e-6,
    max_rounds: int = 10_000,
    relation_mask: Mask = None,
    passage_mask: Mask = None,
) -> LocalPPR:
    """Push-based personalised PageRank: the reached nodes' un-normalised estimates (sparse).

    Args:
        graph: The graph.
        entity_weights: ``{entity_index: weight}`` or ``(indices, weights)``.
        relation_weights: Same for relations.
        passage_weights: Same for passages.
        damping: Probability of following an edge.
        epsilon: Residual tolerance per unit of degree: pushing stops when every node's
            residual is below ``epsilon·deg``. Smaller is closer to the exact scores and
            costs more (work ≤ ``1 / (epsilon·(1 - damping))`` edge visits).
        max_rounds: Upper bound on push rounds (``converged`` is False when it is hit).
        relation_mask: Optional boolean mask; masked-out relations are not part of the walk.
        passage_mask: Optional boolean mask over passages, likewise.

    Returns:
        The estimates of the nodes reached, and the work done.

    Raises:
        ValueError: ``damping`` outside [0, 1), ``epsilon`` not positive, bad weights.
        IndexError: A seed index out of range.
    """
    if not 0.0 <= damping < 1.0:
        raise ValueError("damping must be in [0, 1)")
    if not (epsilon > 0.0 and np.isfinite(epsilon)):
        raise ValueError("epsilon must be positive")
    weights = (entity_weights, relation_weights, passage_weights)
    n_idx, n_w, r_idx, r_w = _restart(graph, weights, relation_mask, passage_mask)
    walk = PushWalk(graph, relation_mask, passage_mask)
    state = _State.take(graph)
    np.add.at(state.res["relations"], r_idx, r_w)
    np.add.at(state.res["nodes"], n_idx, n_w)
    cand = {"relations": _distinct(r_idx, state.stamp["relations"]), "nodes": _distinct(n_idx, state.stamp["nodes"])}
    seen: dict[str, list[I64]] = {"relations": [cand["relations"]], "nodes": [cand["nodes"]]}
    work = _rounds(walk, state, cand, seen, (damping, epsilon, max_rounds))
    reached = {side: np.sort(_distinct(np.concatenate(seen[side]), state.stamp[side])) for side in seen}
    out = _collect(graph, state, reached, work)
    state.give_back(graph, reached)
    return out


class _State:
    """Dense residuals, estimates and scratch of one push; a small pool per graph, one state per call.

    Handed back with only the reached entries reset, so later calls pay no allocation or page faults.
    """

    _POOL = 4

    def __init__(self, n_r: int, n_n: int) -> None:
        self.res = {"relations": np.zeros(n_r), "nodes": np.zeros(n_n)}
        self.est = {"relations": np.zeros(n_r), "nodes": np.zeros(n_n)}
        self.stamp = {"relations": np.empty(n_r, np.int64), "nodes": np.empty(n_n, np.int64)}

    @classmethod
    def take(cls, graph: GraphData) -> _State:
        """A clean state for ``graph`` (from its pool, or a new one)."""
        pool: list[_State] = graph._cache.setdefault("push_states", [])
        try:
            return pool.pop()
        except IndexError:
            return cls(graph.n_relations, graph.n_entities + graph.n_passages)

    def give_back(self, graph: GraphData, reached: dict[str, I64]) -> None:
        """Reset the reached entries and return the state to the graph's pool."""
        for side, nodes in reached.items():
            self.res[side][nodes] = 0.0
            self.est[side][nodes] = 0.0
        pool: list[_State] = graph._cache.setdefault("push_states", [])
        if len(pool) < self._POOL:
            pool.append(self)


def _rounds(
    walk: PushWalk,
    state: _State,
    cand: dict[str, I64],
    seen: dict[str, list[I64]],
    setting: tuple[float, float, int],
) -> tuple[int, int, int, bool]:
    """Push rounds until no residual is at or above ``epsilon·deg``: (rounds, pushes, edges, converged)."""
    damping, epsilon, max_rounds = setting
    # mass > 0 and mass ≥ epsilon·deg, in one comparison: mass ≥ max(epsilon·deg, the least positive double)
    keep, least = 1.0 - damping, np.nextafter(0.0, 1.0)
    res, est, stamp = state.res, state.est, state.stamp
    other = {"relations": "nodes", "nodes": "relations"}
    rounds = pushes = edges = 0
    while (cand["relations"].size or cand["nodes"].size) and rounds < max_rounds:
        rounds += 1
        for side in ("relations", "nodes"):
            nodes, to = cand[side], other[side]
            if not nodes.size:
                continue
            deg = walk.degrees(side, nodes)
            r, e = res[side], est[side]
            mass = r[nodes]
            act = mass >= np.maximum(epsilon * deg, least)
            nodes, mass, deg = nodes[act], mass[act], deg[act]
            pushes += nodes.size
            e[nodes] += keep * mass
            r[nodes] = 0.0
            share = np.divide(damping * mass, deg, out=np.zeros(mass.size), where=deg > 0)
            targets, values = walk.spread(side, nodes, share)
            edges += targets.size
            np.add.at(res[to], targets, values)
            new = _distinct(np.concatenate([cand[to], targets]), stamp[to])
            cand[side], cand[to] = nodes[:0], new
            seen[to].append(new)
    return rounds, pushes, edges, not (cand["relations"].size or cand["nodes"].size)


def _collect(graph: GraphData, state: _State, reached: dict[str, I64], work: tuple[int, int, int, bool]) -> LocalPPR:
    """The sparse result from the dense state of the nodes the push reached."""
    n_e = graph.n_entities
    res, est = state.res, state.est
    rel, nod = reached["relations"], reached["nodes"]
    residual = float(res["relations"][rel].sum() + res["nodes"][nod].sum())
    touched = rel.size + nod.size
    rel, nod = rel[est["relations"][rel] > 0], nod[est["nodes"][nod] > 0]
    ent, pas = nod[nod < n_e], nod[nod >= n_e]
    rounds, pushes, edges, converged = work
    return LocalPPR(
        entity_idx=ent,
        entity=est["nodes"][ent],
        relation_idx=rel,
        relation=est["relations"][rel],
        passage_idx=pas - n_e,
        passage=est["nodes"][pas],
        residual=residual,
        rounds=rounds,
        pushes=pushes,
        touched=int(touched),
        edges=edges,
        converged=converged,
    )


def push_pagerank(
    graph: GraphData,
    *,
    entity_weights: Weights = None,
    relation_weights: Weights = None,
    passage_weights: Weights = None,
    damping: float = 0.5,
    epsilon: float = 1e-6,
    max_rounds: int = 10_000,
    relation_mask: Mask = None,
    passage_mask: Mask = None,
) -> PPRResult:
    """:func:`local_pagerank` as dense scores summing to 1: a drop-in for ``personalized_pagerank``.

    Args:
        graph: The graph.
        entity_weights: ``{entity_index: weight}`` or ``(indices, weights)``.
        relation_weights: Same for relations.
        passage_weights: Same for passages.
        damping: Probability of following an edge.
        epsilon: Residual tolerance per unit of degree (see :func:`local_pagerank`).
        max_rounds: Upper bound on push rounds.
        relation_mask: Optional boolean mask; masked-out relations are not part of the walk.
        passage_mask: Optional boolean mask over passages, likewise.

    Returns:
        Scores per node type (zeros without a positive seed); ``iterations`` counts push
        rounds and ``residual`` bounds the L1 distance to the exact normalised scores.
        The dense arrays cost O(graph) to allocate; :func:`local_pagerank` stays sparse.
    """
    local = local_pagerank(
        graph,
        entity_weights=entity_weights,
        relation_weights=relation_weights,
        passage_weights=passage_weights,
        damping=damping,
        epsilon=epsilon,
        max_rounds=max_rounds,
        relation_mask=relation_mask,
        passage_mask=passage_mask,
    )
    return local.to_result(graph)
