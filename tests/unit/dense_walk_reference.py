"""A frozen copy of the dense chained-walk ranking (before the walks went sparse): the tests' reference.

``retrieval/walk_ranking.py`` now keeps every vector sparse (only the nodes a walk reached);
this is the implementation it replaced, over dense arrays of the whole graph, kept verbatim
so ``test_sparse_walk.py`` can check that the sparse one returns the same order and scores.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import numpy as np
import numpy.typing as npt

from langchain_graphrag_milvus.graph import GraphIndex
from langchain_graphrag_milvus.graph.local_ppr import push_pagerank
from langchain_graphrag_milvus.graph.ppr import personalized_pagerank
from langchain_graphrag_milvus.retrieval.ranking import entity_passage_counts
from langchain_graphrag_milvus.retrieval.walk_ranking import WalkParams, WalkSeeds

F32 = npt.NDArray[np.float32]
I32 = npt.NDArray[np.int32]


def _softmax(scores: F32, temperature: float) -> F32:
    s = np.asarray(scores, dtype=np.float64)
    z = np.exp((s - s.max()) / temperature)
    out: F32 = (z / z.sum()).astype(np.float32)
    return out


def seed_weights(
    graph: GraphIndex, seeds: WalkSeeds, params: WalkParams, masks: tuple[Any, Any] = (None, None)
) -> tuple[F32, F32, F32]:
    """Restart weights (entities, relations, passages), each group summing to 1 or empty (all zero).

    ``masks``: (relation mask, passage mask) of a tenant view; specificities count only those.
    """
    ent = np.zeros(graph.n_entities, np.float32)
    rel = np.zeros(graph.n_relations, np.float32)
    pas = np.zeros(graph.n_passages, np.float32)
    r_idx, r_sc = seeds.relation_idx[: params.relation_seeds], seeds.relation_scores[: params.relation_seeds]
    r_sc, r_idx = r_sc[r_idx >= 0], r_idx[r_idx >= 0]
    if r_idx.size:
        np.add.at(rel, r_idx, _softmax(r_sc, params.temperature))
    p_idx, p_sc = seeds.passage_idx[: params.passage_seeds], seeds.passage_scores[: params.passage_seeds]
    p_sc, p_idx = p_sc[p_idx >= 0], p_idx[p_idx >= 0]
    if p_idx.size:
        np.add.at(pas, p_idx, _softmax(p_sc, params.temperature))
    e_idx = np.unique(seeds.entity_idx)
    if e_idx.size:
        spec = 1.0 / np.maximum(entity_passage_counts(graph, e_idx, *masks), 1)
        ent[e_idx] = spec / spec.sum()
    return ent, rel, pas


def _walk(
    graph: GraphIndex,
    ent: F32,
    rel: F32,
    pas: F32,
    params: WalkParams,
    relation_mask: npt.NDArray[np.bool_] | None,
    passage_mask: npt.NDArray[np.bool_] | None = None,
) -> tuple[F32, F32]:
    """Passage and entity mass of one walk (zeros when there is no seed); masks: a tenant view's subgraph."""
    e_idx, r_idx, p_idx = np.flatnonzero(ent), np.flatnonzero(rel), np.flatnonzero(pas)  # weights are >= 0
    if not (e_idx.size or r_idx.size or p_idx.size):
        return np.zeros(graph.n_passages, np.float32), np.zeros(graph.n_entities, np.float32)
    solve = personalized_pagerank
    if params.ppr_method == "push":
        solve = partial(push_pagerank, epsilon=params.push_epsilon)
    res = solve(
        graph,
        entity_weights=(e_idx, ent[e_idx]),
        relation_weights=(r_idx, rel[r_idx]),
        passage_weights=(p_idx, pas[p_idx]),
        damping=params.damping,
        relation_mask=relation_mask,
        passage_mask=passage_mask,
    )
    return res.passage, res.entity


def _order(scores: F32, exclude: set[int]) -> list[int]:
    positive = np.flatnonzero(scores > 0)
    order = positive[np.lexsort((positive, -scores[positive]))].tolist()
    return [int(p) for p in order if p not in exclude]


def _continuation(
    graph: GraphIndex,
    picked: list[int],
    seeds: WalkSeeds,
    entity_mass: F32,
    params: WalkParams,
    masks: tuple[Any, Any] = (None, None),
) -> tuple[F32, F32]:
    """Entity restart for the next pick: uncovered query entities and the picked passages' bridges."""
    query_ents = set(np.unique(seeds.entity_idx).tolist())
    picked_ents: set[int] = set()
    for p in picked:
        picked_ents |= set(graph.passage_entities(p)[0].tolist())
    bridge = np.zeros(graph.n_entities, np.float32)
    if params.chain_mode == "entities":
        cand = np.array(sorted(picked_ents - query_ents), np.int64)
        if cand.size:
            bridge[cand] = entity_mass[cand]
    query_w = np.zeros(graph.n_entities, np.float32)
    keep = sorted(query_ents - picked_ents) if params.cover_query_entities else sorted(query_ents)
    if keep:
        spec = 1.0 / np.maximum(entity_passage_counts(graph, keep, *masks), 1)
        query_w[keep] = spec / spec.sum()
    return query_w, bridge


def _novel(
    graph: GraphIndex, picked: list[int], rel: F32, pas: F32, bridge: F32, masks: tuple[Any, Any], mode: str
) -> tuple[F32, F32, F32]:
    """The relation, passage and bridge seeds the picked passages do not already supply (renormalised)."""
    rel2, pas2, bridge2 = rel.copy(), pas.copy(), bridge.copy()
    if mode == "all":
        for p in picked:
            rel2[graph.pas_rel.row(p)] = 0
        pas2[picked] = 0
    cand = np.flatnonzero(bridge2)
    if cand.size:
        only_picked = entity_passage_counts(graph, cand, *masks) <= _picked_mentions(graph, picked, cand)
        bridge2[cand[only_picked]] = 0
    return tuple(x / x.sum() if x.any() else x for x in (rel2, pas2, bridge2))  # type: ignore[return-value]


def _picked_mentions(graph: GraphIndex, picked: list[int], cand: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """How many of the picked passages mention each candidate entity."""
    counts = np.zeros(cand.size, np.int64)
    for p in picked:
        counts += np.isin(cand, graph.passage_entities(p)[0])
    return counts


def dense_walk_ranking(
    graph: GraphIndex,
    seeds: WalkSeeds,
    params: WalkParams,
    *,
    limit: int,
    relation_mask: npt.NDArray[np.bool_] | None = None,
    allowed_passages: npt.NDArray[np.bool_] | None = None,
) -> tuple[I32, F32]:
    """Graph passages best first (at most ``limit``) and the first walk's passage scores.

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
    masks = (relation_mask, allowed_passages)  # a tenant view: walks and counts see only its subgraph
    ent, rel, pas = seed_weights(graph, seeds, params, masks)
    scores, entity_mass = _walk(graph, ent, rel, pas, params, *masks)
    if allowed_passages is not None:
        scores = np.where(allowed_passages, scores, 0).astype(np.float32)
    order = _order(scores, set())
    picked: list[int] = []
    for _ in range(params.chain):
        if not order:
            break
        picked.append(order.pop(0))
        query_w, bridge = _continuation(graph, picked, seeds, entity_mass, params, masks)
        if params.chain_mode == "passages":
            p2 = pas.copy()
            p2[picked] += 1.0 / len(picked)
            nxt, _ = _walk(graph, query_w, rel, p2 / p2.sum(), params, *masks)
        else:
            rel2, pas2 = rel, pas
            if params.novel_seeds != "none":
                rel2, pas2, bridge = _novel(graph, picked, rel, pas, bridge, masks, params.novel_seeds)
            e2 = query_w + (bridge / bridge.sum() if bridge.any() else bridge)
            nxt, _ = _walk(graph, e2, rel2, pas2, params, *masks)
        if allowed_passages is not None:
            nxt = np.where(allowed_passages, nxt, 0).astype(np.float32)
        rest = _order(nxt, set(picked))
        seen = set(rest)
        order = rest + [p for p in order if p not in seen]
    full = (picked + order)[:limit]
    return np.array(full, np.int32), scores
