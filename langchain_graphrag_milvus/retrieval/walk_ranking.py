"""The chained-walk ranking: personalised PageRank, then walks that continue from what was picked.

A pure function of the graph and the query's seeds (numpy and the graph core only), so
the retriever's stage and the cross-validation script (``benchmarks/cv_ranking.py``)
run the very same code.

1. **One walk from the query.** Personalised PageRank over the entity–relation–passage
   graph restarts at three equal-weight groups of seeds: the relations most similar to
   the query, the passages most similar to it (both weighted by a softmax of their
   similarity) and the entities the query names (weighted by specificity,
   1 / number of passages that mention them). Equal shares: none of the three sources
   is known in advance to be more reliable, and each one alone misses questions the
   others find.
2. **A walk that continues from the picked passage** (query decomposition by the
   graph). A multi-hop question names the first entity; the passage that answers the
   first hop names the *next* one (the bridge), which the query never mentions. After
   the first passage is picked, the next ones come from a second walk whose restart
   keeps the query's relation and passage seeds and replaces the entity group by (a)
   the query entities the picked passage does *not* cover (so "Which is older, A or
   B?" gets a passage for each side) and (b) the picked passage's other entities,
   weighted by the mass the first walk gave them (how strongly the query's evidence
   reaches them; normalised to one share, like every other seed group). No constant
   of its own: the weights come from the first walk and the graph.

Free constants (:class:`WalkParams`, their one home): the damping, the softmax temperature,
the relation and passage seeds and the chained picks, chosen by 5-fold cross-validation
(``benchmarks/cv_ranking.py``; results in ``benchmarks/README.md``).

Every vector here is sparse (:mod:`.sparse_vectors`: the seeds, or the nodes a walk
reached), masks are looked up at those nodes only and an order is a partition of the
reached passages, so with the push solver nothing per query costs the graph's size. With
the global solver the results are bit-identical to the former dense implementation; with
push, a group's sum runs over its non-zero entries (``tests/unit/test_sparse_walk.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from langchain_graphrag_milvus.graph import GraphIndex
from langchain_graphrag_milvus.graph.local_ppr import local_pagerank
from langchain_graphrag_milvus.graph.ppr import personalized_pagerank
from langchain_graphrag_milvus.retrieval.ranking import entity_passage_counts
from langchain_graphrag_milvus.retrieval.sparse_vectors import (
    EMPTY,
    Sparse,
    accumulate,
    add,
    at,
    keep,
    normalised,
    restrict,
    sparse,
)
from langchain_graphrag_milvus.retrieval.walk_params import (
    AUTO_MID_PUSH_EPSILON,
    AUTO_PUSH_RELATIONS,
    AUTO_WALK_PUSH_RELATIONS,
    WalkParams,
)

__all__ = [
    "AUTO_PUSH_RELATIONS",
    "WalkParams",
    "WalkSeeds",
    "WalkResult",
    "walk_ranking",
    "ranked_walks",
    "seed_weights",
    "walk_epsilon",
    "walk_method",
]

F32 = npt.NDArray[np.float32]
I32 = npt.NDArray[np.int32]
I64 = npt.NDArray[np.int64]
Mask = npt.NDArray[np.bool_] | None


def walk_method(params: WalkParams, graph: GraphIndex) -> str:
    """``"global"`` or ``"push"``: the solver ``params`` asks for on this graph (``"auto"`` resolved)."""
    if params.ppr_method != "auto":
        return params.ppr_method
    return "push" if graph.n_relations >= AUTO_WALK_PUSH_RELATIONS else "global"


def walk_epsilon(params: WalkParams, graph: GraphIndex) -> float:
    """The push tolerance on this graph.

    ``push_epsilon``, or for ``"auto"`` below :data:`AUTO_PUSH_RELATIONS` relations the smaller
    of it and :data:`AUTO_MID_PUSH_EPSILON`.
    """
    if params.ppr_method == "auto" and graph.n_relations < AUTO_PUSH_RELATIONS:
        return min(params.push_epsilon, AUTO_MID_PUSH_EPSILON)
    return params.push_epsilon


@dataclass(frozen=True)
class WalkSeeds:
    """The query's seeds as graph indices, most similar first (scores: similarities).

    Relation and passage hits keep their search order; ``-1`` marks a hit that is not in
    the graph (a passage without relations): it still counts towards the number of seeds.
    """

    relation_idx: I32
    relation_scores: F32
    passage_idx: I32
    passage_scores: F32
    entity_idx: I32
    #: Each sub-question's passage hits (index, similarity), like the query's: they share the passage group.
    clause_passages: tuple[tuple[I32, F32], ...] = ()


@dataclass(frozen=True)
class WalkResult:
    """What :func:`ranked_walks` found: the order, and the first walk's passage mass (sparse).

    Attributes:
        order: Passage indices best first (at most ``limit``; positive score only).
        passage_idx: Passages the first walk reached (ascending; inside the allowed ones).
        passage_scores: Their mass (the walk's scores normalised to sum 1 over all nodes).
    """

    order: I32
    passage_idx: I64
    passage_scores: F32

    def dense(self, n_passages: int) -> F32:
        """The first walk's mass as a dense array over all passages."""
        out = np.zeros(n_passages, np.float32)
        out[self.passage_idx] = self.passage_scores
        return out


def _softmax(scores: F32, temperature: float) -> F32:
    s = np.asarray(scores, dtype=np.float64)
    z = np.exp((s - s.max()) / temperature)
    out: F32 = (z / z.sum()).astype(np.float32)
    return out


# ---------------------------------------------------------------------- the walks
def seed_weights(
    graph: GraphIndex, seeds: WalkSeeds, params: WalkParams, masks: tuple[Any, Any] = (None, None)
) -> tuple[Sparse, Sparse, Sparse]:
    """Restart weights (entities, relations, passages), sparse, each group summing to 1 or empty.

    ``masks``: (relation mask, passage mask) of a tenant view; specificities count only those.
    """
    r_idx, r_sc = seeds.relation_idx[: params.relation_seeds], seeds.relation_scores[: params.relation_seeds]
    r_sc, r_idx = r_sc[r_idx >= 0], r_idx[r_idx >= 0]
    rel = accumulate(r_idx, _softmax(r_sc, params.temperature)) if r_idx.size else EMPTY
    pas = EMPTY
    groups = [(seeds.passage_idx, seeds.passage_scores), *seeds.clause_passages]
    for p_idx, p_sc in groups:  # the question and each sub-question: an equal share of the group
        p_idx, p_sc = p_idx[: params.passage_seeds], p_sc[: params.passage_seeds]
        p_sc, p_idx = p_sc[p_idx >= 0], p_idx[p_idx >= 0]
        if p_idx.size:
            share = accumulate(p_idx, _softmax(p_sc, params.temperature))
            pas = share if pas is EMPTY else add(pas, share)
    if len(groups) > 1 and pas[0].size:
        pas = (pas[0], (pas[1] / pas[1].sum()).astype(np.float32))
    return _specific(graph, np.unique(seeds.entity_idx), masks), rel, pas


def _specific(graph: GraphIndex, entities: npt.NDArray[Any], masks: tuple[Any, Any]) -> Sparse:
    """Entities weighted by specificity (1 / passages mentioning them), summing to 1."""
    if not entities.size:
        return EMPTY
    spec = 1.0 / np.maximum(entity_passage_counts(graph, entities, *masks), 1)
    return sparse(entities, spec / spec.sum())


def _walk(
    graph: GraphIndex, seeds: tuple[Sparse, Sparse, Sparse], params: WalkParams, method: str, masks: tuple[Any, Any],
    settle: int = 0,
) -> tuple[Sparse, Sparse]:  # fmt: skip
    """Passage and entity mass of one walk (empty when there is no seed); masks: a tenant view's subgraph.

    ``settle``: the global solver may stop once the order of that many best passages is settled.
    """
    ent, rel, pas = seeds
    if not (ent[0].size or rel[0].size or pas[0].size):
        return EMPTY, EMPTY
    kwargs: dict[str, Any] = dict(
        entity_weights=ent, relation_weights=rel, passage_weights=pas, damping=params.damping,
        relation_mask=masks[0], passage_mask=masks[1],
    )  # fmt: skip
    if method == "push":
        local = local_pagerank(graph, epsilon=walk_epsilon(params, graph), **kwargs)
        total = local.mass
        scale = 1.0 / total if total > 0 else 0.0  # normalised to sum 1, as push_pagerank's dense scores
        return sparse(local.passage_idx, local.passage * scale), sparse(local.entity_idx, local.entity * scale)
    res = personalized_pagerank(graph, settle=settle if params.ppr_stop == "order" else 0, **kwargs)
    p_nz, e_nz = np.flatnonzero(res.passage), np.flatnonzero(res.entity)
    return (p_nz.astype(np.int64), res.passage[p_nz]), (e_nz.astype(np.int64), res.entity[e_nz])


def _order(scores: Sparse, exclude: set[int], limit: int) -> list[int]:
    """The best ``limit`` positive entries not excluded: score descending, then index (a partition, then a sort)."""
    idx, val = scores
    keep = val > 0
    if exclude:
        keep &= ~np.isin(idx, np.fromiter(exclude, np.int64, len(exclude)))
    idx, val = idx[keep], val[keep]
    if idx.size > limit > 0:
        kth = np.partition(val, idx.size - limit)[idx.size - limit]
        top = val >= kth  # ties at the cut stay in; the sort decides
        idx, val = idx[top], val[top]
    order = np.lexsort((idx, -val))[:limit]
    return [int(p) for p in idx[order].tolist()]


def _continuation(
    graph: GraphIndex, picked: list[int], seeds: WalkSeeds, entity_mass: Sparse, params: WalkParams, masks: Any
) -> tuple[Sparse, Sparse]:
    """Entity restart for the next pick: uncovered query entities and the picked passages' bridges."""
    query_ents = set(np.unique(seeds.entity_idx).tolist())
    picked_ents: set[int] = set()
    for p in picked:
        picked_ents |= set(graph.passage_entities(p)[0].tolist())
    bridge = EMPTY
    if params.chain_mode == "entities":
        cand = np.array(sorted(picked_ents - query_ents), np.int64)
        if cand.size:
            bridge = sparse(cand, at(entity_mass, cand))
    uncovered = sorted(query_ents - picked_ents) if params.cover_query_entities else sorted(query_ents)
    return _specific(graph, np.array(uncovered, np.int64), masks), bridge


def _novel(
    graph: GraphIndex, picked: list[int], seeds: tuple[Sparse, Sparse, Sparse], masks: Any, params: WalkParams,
    dense_sum: bool,
) -> tuple[Sparse, Sparse, Sparse]:  # fmt: skip
    """The relation, passage and bridge seeds the picked passages do not already supply (renormalised)."""
    rel, pas, bridge = seeds
    if params.novel_seeds == "all":
        supplied = np.concatenate([graph.pas_rel.row(p) for p in picked]).astype(np.int64)
        rel = keep(rel, ~np.isin(rel[0], supplied))
        pas = keep(pas, ~np.isin(pas[0], np.array(picked, np.int64)))
    if bridge[0].size:
        only_picked = entity_passage_counts(graph, bridge[0], *masks) <= _picked_mentions(graph, picked, bridge[0])
        bridge = keep(bridge, ~only_picked)
    sizes = (graph.n_relations, graph.n_passages, graph.n_entities)
    rel, pas, bridge = (normalised(x, n, dense_sum) for x, n in zip((rel, pas, bridge), sizes))
    return rel, pas, bridge


def _picked_mentions(graph: GraphIndex, picked: list[int], cand: I64) -> I64:
    """How many of the picked passages mention each candidate entity."""
    counts = np.zeros(cand.size, np.int64)
    for p in picked:
        counts += np.isin(cand, graph.passage_entities(p)[0])
    return counts


def _next_walk(
    graph: GraphIndex,
    picked: list[int],
    seeds: WalkSeeds,
    first: tuple[tuple[Sparse, Sparse, Sparse], Sparse],
    params: WalkParams,
    method: str,
    masks: Any,
    settle: int = 0,
) -> Sparse:
    """The passage mass of the walk that continues from the picked passages."""
    (_, rel, pas), entity_mass = first
    dense_sum = method == "global"
    query_w, bridge = _continuation(graph, picked, seeds, entity_mass, params, masks)
    if params.chain_mode == "passages":
        where = np.array(sorted(picked), np.int64)
        p2 = add(pas, sparse(where, np.full(where.size, 1.0 / len(picked), np.float32)))
        p2 = normalised(p2, graph.n_passages, dense_sum)
        return _walk(graph, (query_w, rel, p2), params, method, masks, settle)[0]
    if params.novel_seeds != "none":
        rel, pas, bridge = _novel(graph, picked, (rel, pas, bridge), masks, params, dense_sum)
    e2 = add(query_w, normalised(bridge, graph.n_entities, dense_sum))
    return _walk(graph, (e2, rel, pas), params, method, masks, settle)[0]


def ranked_walks(
    graph: GraphIndex,
    seeds: WalkSeeds,
    params: WalkParams,
    *,
    limit: int,
    relation_mask: Mask = None,
    allowed_passages: Mask = None,
    settle: int | None = None,
) -> WalkResult:
    """Graph passages best first (at most ``limit``) and the first walk's passage mass, sparse.

    Args:
        graph: The graph.
        seeds: The query's seeds.
        params: The ranking's constants (``ppr_method="auto"``: see :func:`walk_method`).
        limit: How many passages to return at most.
        relation_mask: Relations the walks may use (tenant views).
        allowed_passages: Passages that may be returned (tenant views).
        settle: How many of the order's first passages the caller reads (default: ``limit``).
            Under ``ppr_stop="order"`` each global walk stops once the order of its that many
            best passages is settled (a continued walk's include what was picked, so it
            settles at least the ones that follow them); the rest of the order is the one
            it had then.

    Returns:
        The order (positive score only) and the first walk's mass of the allowed passages.
    """
    masks = (relation_mask, allowed_passages)  # a tenant view: walks and counts see only its subgraph
    method = walk_method(params, graph)
    read = limit if settle is None else min(settle, limit)
    restart = seed_weights(graph, seeds, params, masks)
    scores, entity_mass = _walk(graph, restart, params, method, masks, read)
    scores = restrict(scores, allowed_passages)
    order = _order(scores, set(), limit)
    picked: list[int] = []
    for _ in range(params.chain):
        if not order:
            break
        picked.append(order.pop(0))
        nxt = _next_walk(graph, picked, seeds, (restart, entity_mass), params, method, masks, read)
        rest = _order(restrict(nxt, allowed_passages), set(picked), limit)
        seen = set(rest)
        order = (rest + [p for p in order if p not in seen])[:limit]
    return WalkResult(np.array((picked + order)[:limit], np.int32), scores[0], scores[1])


def walk_ranking(
    graph: GraphIndex,
    seeds: WalkSeeds,
    params: WalkParams,
    *,
    limit: int,
    relation_mask: Mask = None,
    allowed_passages: Mask = None,
) -> tuple[I32, F32]:
    """:func:`ranked_walks` with the first walk's mass as a dense array over all passages.

    Args:
        graph: The graph.
        seeds: The query's seeds.
        params: The ranking's constants.
        limit: How many passages to return at most.
        relation_mask: Relations the walks may use (tenant views).
        allowed_passages: Passages that may be returned (tenant views).

    Returns:
        ``(order, scores)``: passage indices (positive score only) and the first walk's mass.
    """
    result = ranked_walks(
        graph, seeds, params, limit=limit, relation_mask=relation_mask, allowed_passages=allowed_passages
    )
    return result.order, result.dense(graph.n_passages)
