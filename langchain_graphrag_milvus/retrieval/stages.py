"""The ranking stages of the pipeline: the seed's similarity order and the no-LLM PageRank order.

Generators like the pipeline itself: they yield :mod:`~langchain_graphrag_milvus.retrieval.effects`
and return ``(ranked passages, reranker pool)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from langchain_graphrag_milvus.graph import GraphIndex, GraphView
from langchain_graphrag_milvus.graph.csr import gather_rows
from langchain_graphrag_milvus.milvus import expr
from langchain_graphrag_milvus.milvus.reads import MAX_TOP_K, Hit
from langchain_graphrag_milvus.milvus.schema import Kind
from langchain_graphrag_milvus.retrieval.effects import Search, Steps, ask
from langchain_graphrag_milvus.retrieval.pair_order import PairParams, dense_bonus, graph_pair_order
from langchain_graphrag_milvus.retrieval.ranked import Candidate, QueryHits, Ranked, StageSettings
from langchain_graphrag_milvus.retrieval.ranking import interleave
from langchain_graphrag_milvus.retrieval.sparse_vectors import at
from langchain_graphrag_milvus.retrieval.walk_params import WalkParams
from langchain_graphrag_milvus.retrieval.walk_ranking import WalkSeeds, ranked_walks
from langchain_graphrag_milvus.text.clauses import clause_queries
from langchain_graphrag_milvus.text.names import entity_id

__all__ = [
    "Candidate",
    "Ranked",
    "QueryHits",
    "relation_similarities",
    "similarity_ranking",
    "ppr_ranking",
    "order_from_positions",
    "merge",
    "from_relations",
    "allowed",
    "search_in_view",
    "exact_entities",
    "entity_seeds",
    "query_texts",
]

RELATION_FIELDS = ("text", "passage_ids", "predicate")


def relation_similarities(qvec: tuple[float, ...], ids: Sequence[str], known: Sequence[Hit]) -> Steps[list[Hit]]:
    """The relations ``ids`` as hits scored against the query, most similar first.

    The hits already in hand (``known``: an earlier search with the same query vector and
    :data:`RELATION_FIELDS`) are reused; only the other ids are searched, in one search
    restricted to them. With nothing in hand, exactly that one search's answer.
    """
    have = {h.id: h for h in known}
    missing = [i for i in ids if i not in have]
    hits: list[Hit] = []
    if missing:
        (hits,) = yield from ask(
            Search("relations", (qvec,), len(missing), expr.in_list("pk", missing), RELATION_FIELDS, tuple(missing))
        )
    reused = [have[i] for i in dict.fromkeys(ids) if i in have]
    if not reused:
        return list(hits)
    return sorted([*hits, *reused], key=lambda h: -h.score)  # stable: a search's own order kept on ties


def _graph_indices(lookup: Any, ids: Sequence[str]) -> np.ndarray:
    if not ids:
        return np.empty(0, np.int32)
    found: np.ndarray = lookup.find_ids(ids)
    return found


def _candidates(
    hits: Sequence[Hit], hops: dict[str, int] | None = None, view: GraphView | None = None
) -> list[Candidate]:
    """Relation hits as candidates; with a view, only the passages it allows are listed."""
    out = []
    for h in hits:
        pids = [str(p) for p in h.fields.get("passage_ids") or []]
        if view is not None:
            pids = [pid for pid in pids if pid in view.passage_ids]
            if not pids:
                continue
        hop = None if hops is None else hops.get(h.id)
        out.append(Candidate(h.id, str(h.fields.get("text", "")), pids, h.score, hop))
    return out


def allowed(lookup: Any, hits: Sequence[Hit], mask: np.ndarray) -> list[Hit]:
    """Hits the mask allows (unknown ids dropped); equal scores by id (Milvus' storage order varies)."""
    idx = _graph_indices(lookup, [h.id for h in hits])
    return sorted((h for h, i in zip(hits, idx.tolist()) if i >= 0 and mask[i]), key=lambda h: (-h.score, h.id))


def search_in_view(
    kind: Kind,
    vectors: tuple[tuple[float, ...], ...],
    k: int,
    lookup: Any,
    mask: np.ndarray,
    output_fields: tuple[str, ...] = ("pk",),
    *,
    first: tuple[int, Sequence[Sequence[Hit]]] | None = None,
    min_score: float | None = None,
) -> Steps[list[list[Hit]]]:
    """The top ``k`` hits per vector *among the items the mask allows*.

    What a search over only the view's items would return, whatever lies outside it:
    the search is repeated with a larger limit (×8, up to Milvus' top-k cap) while a
    vector has fewer than ``k`` allowed hits and the last answer was full. With
    ``min_score``, a vector is also done once its hits fall below that score. ``first``:
    ``(limit, results)`` of a search already made.
    """
    limit, results = first if first is not None else (min(max(4 * k, 32), MAX_TOP_K), None)
    while True:
        if results is None:
            results = yield from ask(Search(kind, vectors, limit, None, output_fields))
        kept = [allowed(lookup, per, mask)[:k] for per in results]
        done = all(
            len(mine) >= k or len(per) < limit or (min_score is not None and per and per[-1].score < min_score)
            for mine, per in zip(kept, results)
        )
        if done or limit >= MAX_TOP_K:
            return kept
        limit, results = min(limit * 8, MAX_TOP_K), None


def order_from_positions(pool: list[Candidate], positions: Sequence[int] | None) -> list[Candidate]:
    """The pool's relations the reranker chose, in its order; invalid positions dropped.

    Linear and capped: the scan stops once every pool relation has been chosen, so an
    answer listing 200,000 positions costs at most one pass (usually a few items).

    Raises:
        TypeError: ``positions`` is not a list or tuple (the pipeline falls back).
    """
    if positions is None:
        return []
    if not isinstance(positions, (list, tuple)):
        raise TypeError(f"the reranker answered {type(positions).__name__}, not a list of positions")
    chosen: list[Candidate] = []
    seen: set[int] = set()
    for pos in positions:
        if len(chosen) >= len(pool):
            break
        if isinstance(pos, bool) or not isinstance(pos, (int, np.integer)):
            continue
        pos = int(pos)
        if 0 <= pos < len(pool) and pos not in seen:
            seen.add(pos)
            chosen.append(pool[pos])
    return chosen


def merge(k: int, *groups: Sequence[Ranked]) -> list[Ranked]:
    """First k distinct passages across groups in order, merging their relation lists."""
    merged: dict[str, Ranked] = {}
    for group in groups:
        for item in group:
            entry = merged.get(item.id)
            if entry is None:
                if len(merged) < k:
                    merged[item.id] = item
                continue
            entry.relations += [c for c in item.relations if c not in entry.relations]
            if entry.hops is None:
                entry.hops = item.hops
    return list(merged.values())


def from_relations(relations: Sequence[Candidate], how: str) -> list[Ranked]:
    """The passages of these relations, in relation order, each with the relations behind it."""
    out: dict[str, Ranked] = {}
    for cand in relations:
        for pid in cand.passage_ids:
            entry = out.setdefault(pid, Ranked(pid, cand.similarity, how, hops=cand.hop))
            if cand not in entry.relations:
                entry.relations.append(cand)
    return list(out.values())


def similarity_ranking(
    q: QueryHits, p: StageSettings, hops: int, decay: float, trace: dict[str, Any] | None = None
) -> Steps[tuple[list[Ranked], list[Candidate]]]:
    """The seed's method: expand the hits ``hops`` deep, order the candidates by similarity to the query."""
    graph, view = q.graph, q.view
    relation_seeds = q.relation_hits[: p.relation_top_k]
    e_idx = _graph_indices(graph.entities, [h.id for per in q.entity_hits for h in per])
    e_sc = np.array([h.score for per in q.entity_hits for h in per], np.float32)
    r_idx = _graph_indices(graph.relations, [h.id for h in relation_seeds])
    r_sc = np.array([h.score for h in relation_seeds], np.float32)
    expansion = graph.expand(
        entity_seeds=e_idx[e_idx >= 0],
        entity_scores=e_sc[e_idx >= 0],
        relation_seeds=r_idx[r_idx >= 0],
        relation_scores=r_sc[r_idx >= 0],
        hops=hops,
        max_neighbors=p.max_neighbors,
        max_frontier=p.max_frontier,
        max_relations=min(max(4 * p.max_candidates, 200), MAX_TOP_K),
        decay=decay,
        relation_mask=None if view is None else view.relations,
    )
    if trace is not None:
        trace["expansion"] = expansion
    ids = graph.relations.ids_at(expansion.relations)
    if not ids:
        return [], []
    hop_of = dict(zip(ids, expansion.hops.tolist()))
    hits = yield from relation_similarities(q.qvec, ids, q.relation_hits)
    pool = sorted(_candidates(hits, hop_of, view), key=lambda c: (-c.similarity, c.hop, c.id))[: p.max_candidates]
    return from_relations(pool, "graph"), pool


def ppr_ranking(
    q: QueryHits,
    p: StageSettings,
    params: WalkParams,
    want_pool: bool,
    trace: dict[str, Any] | None = None,
    settle: int | None = None,
    pair: PairParams | None = None,
) -> Steps[tuple[list[Ranked], list[Candidate]]]:
    """The no-LLM ranking (chained PageRank walks) and, if wanted, its one-relation-per-passage pool.

    ``settle``: how much of the walks' order is read (see :func:`~.walk_ranking.ranked_walks`;
    default: all of it). ``pair``: the pair step's constants (:mod:`.pair_order`; None: off).
    """
    graph, view = q.graph, q.view
    ents = entity_seeds(q)
    seeds_r = q.relation_hits[: params.relation_seeds]
    r_idx = _graph_indices(graph.relations, [h.id for h in seeds_r])
    seeds_p = q.passage_hits[: params.passage_seeds]
    p_idx = np.asarray(graph.passages.find([h.id for h in seeds_p]), np.int32)
    seeds = WalkSeeds(
        r_idx.astype(np.int32),
        np.array([h.score for h in seeds_r], np.float32),
        p_idx,
        np.array([h.score for h in seeds_p], np.float32),
        np.array(sorted(set(ents)), np.int32),
        tuple(_clause_seeds(graph, hits[: params.passage_seeds]) for hits in q.clause_passage_hits),
    )
    walks = ranked_walks(
        graph,
        seeds,
        params,
        limit=p.walk_limit,
        relation_mask=None if view is None else view.relations,
        allowed_passages=None if view is None else view.passages,
        settle=settle,
    )
    by_passage: dict[str, list[Candidate]] = {}
    for cand in _candidates(seeds_r, view=view):
        for pid in cand.passage_ids:
            by_passage.setdefault(pid, []).append(cand)
    order = walks.order
    if pair is not None:  # the top two chosen as a pair (pair_order.py), before the merge with the dense order
        bonus = None
        if pair.dense:  # the dense top's similarities above its last (graph indices; outside the graph: dropped)
            above = dense_bonus([(h.id, h.score) for h in q.passage_hits], pair.dense_depth)
            found = graph.passages.find(list(above))
            bonus = {int(g): b for g, b in zip(found, above.values()) if g >= 0}
        order = np.asarray(graph_pair_order(graph, order.tolist(), ents, pair, bonus), np.int32)
    hop_of = _passage_hops(graph, ents, (r_idx[r_idx >= 0], p_idx[p_idx >= 0]), order, p, view)
    if trace is not None:
        trace.update(entity_seeds=sorted(set(ents)), ppr_scores=walks.dense(graph.n_passages))
    ranked = []
    scores = at((walks.passage_idx, walks.passage_scores), order).tolist()  # the reached passages only
    for g, score in zip(order.tolist(), scores):
        pid = graph.passages.ids[g]
        ranked.append(Ranked(pid, float(score), "graph", list(by_passage.get(pid, [])), hops=hop_of.get(g)))
    pool: list[Candidate] = []
    if want_pool:
        listed = interleave([r.id for r in ranked], [h.id for h in q.passage_hits])[: p.max_candidates]
        pool = yield from _one_relation_per_passage(q, listed)
    return ranked, pool


def query_texts(query: str, ranking: Any) -> tuple[str, ...]:
    """The query and, when the ranking searches them (``clause_seeds``), its own sub-questions (``split_clauses``)."""
    return (query, *(clause_queries(query) if ranking.searches_clauses() else ()))


def _clause_seeds(graph: GraphIndex, hits: Sequence[Hit]) -> tuple[np.ndarray, np.ndarray]:
    """A sub-question's passage hits as walk seeds (graph indices, ``-1`` when not in the graph; scores)."""
    idx = np.asarray(graph.passages.find([h.id for h in hits]), np.int32)
    return idx, np.array([h.score for h in hits], np.float32)


def exact_entities(graph: GraphIndex, names: Sequence[str], view: GraphView | None) -> np.ndarray:
    """The graph entity each name is exactly (``-1``: none, or one outside the view).

    With per-tenant rows (the view's ``cache["tenants"]``) a name is its id under one of the view's tenants.
    """
    exact = np.full(len(names), -1, np.int64)
    for tenant in (view.cache.get("tenants") if view is not None else None) or (None,):
        found = _graph_indices(graph.entities, [entity_id(n, tenant) for n in names]).astype(np.int64)
        if view is not None and found.size:
            found = np.where((found >= 0) & view.entities[np.maximum(found, 0)], found, -1)
        exact = np.where(exact >= 0, exact, found) if found.size else exact
    return exact


def entity_seeds(q: QueryHits) -> list[int]:
    """Entity seeds: exact names first, else the best vector hit of that name.

    Under a view, an entity outside it counts as no entity at all (its name resolves by
    vector, inside).
    """
    graph, view = q.graph, q.view
    exact = exact_entities(graph, q.names, view)
    ents = [int(e) for e in exact if e >= 0]
    for name_idx, per in enumerate(q.entity_hits):
        if exact[name_idx] < 0 and per:
            found = _graph_indices(graph.entities, [per[0].id])
            ents += [int(e) for e in found if e >= 0]
    if view is not None:
        ents = [e for e in ents if view.entities[e]]
    return ents


def _passage_hops(
    graph: GraphIndex,
    entities: list[int],
    seeds: tuple[np.ndarray, np.ndarray],
    ranked: np.ndarray,
    p: StageSettings,
    view: GraphView | None,
) -> dict[int, int]:
    """Graph distance from the seeds (the seed notebook's hop count) of the ``ranked`` passages.

    0 for seed passages and passages of hit relations or hit entities, 1 for those one
    relation further (``seeds``: relation and passage indices). Only the ranked passages'
    relations are looked up in the expansion.
    """
    relations, passages = seeds
    expansion = graph.expand(
        entity_seeds=np.array(sorted(set(entities)), np.int32),
        relation_seeds=relations,
        hops=1,
        max_neighbors=p.max_neighbors,
        max_relations=None,
        relation_mask=None if view is None else view.relations,
    )
    ranked = np.asarray(ranked, np.int64)
    hop = np.full(ranked.size, np.iinfo(np.int64).max, np.int64)
    if expansion.relations.size and ranked.size:
        by_index = np.argsort(expansion.relations, kind="stable")
        reached, reached_hop = expansion.relations[by_index], expansion.hops[by_index]
        owner, rels = gather_rows(graph.pas_rel, ranked.astype(np.int32))
        pos = np.minimum(np.searchsorted(reached, rels), reached.size - 1)
        hit = reached[pos] == rels
        np.minimum.at(hop, owner[hit], reached_hop[pos[hit]].astype(np.int64))
    hop[np.isin(ranked, passages)] = 0
    return {g: h for g, h in zip(ranked.tolist(), hop.tolist()) if h != np.iinfo(np.int64).max}


def _one_relation_per_passage(q: QueryHits, passage_ids: list[str]) -> Steps[list[Candidate]]:
    """For each passage, the relation to show the reranker.

    One that links to another listed passage (a hop the LLM can follow) if there is one,
    else the most similar to the query.
    """
    graph, view = q.graph, q.view
    gidx = [int(i) for i in graph.passages.find(passage_ids) if i >= 0]
    if not gidx:
        return []
    rel_idx = np.unique(np.concatenate([graph.pas_rel.row(g) for g in gidx]))[:MAX_TOP_K]
    rel_ids = graph.relations.ids_at(rel_idx)
    hits = yield from relation_similarities(q.qvec, rel_ids, q.relation_hits)
    entity_passages: dict[int, set[str]] = {}
    for g in gidx:
        for ent in graph.passage_entities(g)[0].tolist():
            entity_passages.setdefault(ent, set()).add(graph.passages.ids[g])
    hit_idx = _graph_indices(graph.relations, [h.id for h in hits])
    best: dict[str, tuple[bool, Candidate]] = {}
    for cand, r in zip(_candidates(hits, view=view), hit_idx.tolist()):  # hits come most similar first
        ends = () if r < 0 else (int(graph.rel_subject[r]), int(graph.rel_object[r]))
        for pid in cand.passage_ids:
            links = any(entity_passages.get(e, set()) - {pid} for e in ends)
            current = best.get(pid)
            if current is None or (links and not current[0]):
                best[pid] = (links, cand)
    pool: list[Candidate] = []
    seen: set[str] = set()
    for pid in passage_ids:
        choice = best.get(pid)
        if choice is not None and choice[1].id not in seen:
            seen.add(choice[1].id)
            pool.append(choice[1])
    return pool
