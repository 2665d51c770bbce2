"""The retrieval pipeline, written once for sync and async ("sans-IO").

:func:`graph_pipeline` is a generator: it does the pure work itself (ranking, pool,
documents) and *yields* an effect object whenever it needs I/O — a runnable call, an
embedding call, Milvus searches. The retriever's sync executor answers each effect with
blocking calls, its async executor with ``await``. Both run this same code, so the two
paths cannot drift apart; failures of an effect are thrown back into the generator,
which decides where to fall back (reranker, entity extractor) and where to fail (Milvus).

Two rankings share the pipeline:

* ``"ppr"`` (default): the no-LLM ranking of :mod:`langchain_graphrag_milvus.ranking`;
  with a reranker, its pool is one relation per passage of the graph ∪ vector ranking.
* ``"similarity"``: the seed notebook's method — entity top-k and relation top-k,
  ``hops`` of expansion, candidates ordered by their similarity to the query.
"""

from __future__ import annotations

import logging
from collections.abc import Generator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from langchain_core.documents import Document
from langchain_core.runnables import Runnable

from langchain_graphrag_milvus import expr
from langchain_graphrag_milvus.graph import GraphIndex, GraphView
from langchain_graphrag_milvus.milvus_schema import Kind
from langchain_graphrag_milvus.normalize import entity_id, id_to_key, key_to_id
from langchain_graphrag_milvus.ranking import (
    PPRRankingParams,
    bridge_choice,
    interleave,
    order_passages,
    ppr_passage_scores,
    predicate_overlap,
)
from langchain_graphrag_milvus.store import MAX_TOP_K, Hit

logger = logging.getLogger("langchain_graphrag_milvus")

__all__ = ["RetrievalParams", "Candidate", "graph_pipeline", "naive_pipeline"]

PASSAGE_FIELDS = ("text", "$meta")
RELATION_FIELDS = ("text", "passage_ids", "predicate")


# ---------------------------------------------------------------------- effects
@dataclass(frozen=True)
class Invoke:
    """Run a runnable (with the retriever's child callbacks)."""

    runnable: Runnable[Any, Any]
    input: Any


@dataclass(frozen=True)
class Embed:
    """Embed texts in one call."""

    texts: tuple[str, ...]


@dataclass(frozen=True)
class Search:
    """One batched vector search."""

    kind: Kind
    vectors: tuple[tuple[float, ...], ...]
    limit: int
    filter_expr: str | None = None
    output_fields: tuple[str, ...] = ("pk",)


@dataclass(frozen=True)
class Fetch:
    """Rows by primary key."""

    kind: Kind
    ids: tuple[str, ...]
    output_fields: tuple[str, ...]
    filter_expr: str | None = None


@dataclass(frozen=True)
class Gather:
    """Several effects; the async executor runs them concurrently."""

    effects: tuple[Any, ...]


@dataclass(frozen=True)
class GetGraph:
    """The store's graph index (built from Milvus on first use)."""


@dataclass(frozen=True)
class LinkEntities:
    """Known entity names found in the query by the store's offline linker."""

    query: str


@dataclass(frozen=True)
class ViewOf:
    """The part of the graph whose passages pass a filter (:meth:`MilvusGraphStore.graph_view`)."""

    filter_expr: str


@dataclass(frozen=True)
class EntityNames:
    """Display names of entities, by id."""

    ids: tuple[str, ...]


Effect = Invoke | Embed | Search | Fetch | Gather | GetGraph | LinkEntities | EntityNames | ViewOf


# ---------------------------------------------------------------------- parameters
@dataclass(frozen=True, kw_only=True)
class RetrievalParams:
    """Everything one retrieval call needs; per-call kwargs override the retriever's fields."""

    k: int = 4
    ranking: Literal["ppr", "similarity"] = "ppr"
    entity_top_k: int = 3
    relation_top_k: int = 3
    hops: int = 1
    max_neighbors: int | None = 100
    max_frontier: int | None = None
    decay: float = 0.8
    ppr_relation_seeds: int = 50
    ppr_passage_seeds: int = 3
    ppr_damping: float = 0.7
    bridge_candidates: int = 10
    max_candidates: int = 50
    rerank_select: int = 3
    filter: str | None = None
    entities: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        for name in (
            "k",
            "entity_top_k",
            "relation_top_k",
            "max_candidates",
            "rerank_select",
            "ppr_relation_seeds",
            "ppr_passage_seeds",
            "bridge_candidates",
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if self.ranking not in ("ppr", "similarity"):
            raise ValueError(f"ranking must be 'ppr' or 'similarity', got {self.ranking!r}")
        if self.hops not in (0, 1, 2, 3):
            raise ValueError(f"hops must be 0, 1, 2 or 3, got {self.hops!r}")
        if not 0.0 < self.decay <= 1.0:
            raise ValueError(f"decay must be in (0, 1], got {self.decay!r}")
        if not 0.0 <= self.ppr_damping < 1.0:
            raise ValueError(f"ppr_damping must be in [0, 1), got {self.ppr_damping!r}")
        if self.filter is not None and not isinstance(self.filter, str):
            raise ValueError("filter must be a Milvus expression string")

    @property
    def ppr(self) -> PPRRankingParams:
        """The no-LLM ranking settings."""
        return PPRRankingParams(
            relation_seeds=self.ppr_relation_seeds,
            passage_seeds=self.ppr_passage_seeds,
            damping=self.ppr_damping,
            bridge_candidates=self.bridge_candidates,
        )


@dataclass
class Candidate:
    """A relation in the candidate pool (what a reranker chooses from)."""

    id: str
    text: str
    passage_ids: list[str]
    similarity: float
    hop: int | None = None


@dataclass
class Ranked:
    """A passage on its way to becoming a Document."""

    id: str
    score: float
    ranked_by: str
    relations: list[Candidate] = field(default_factory=list)
    hops: int | None = None


# ---------------------------------------------------------------------- pure helpers
def _graph_indices(lookup: Any, ids: Sequence[str]) -> np.ndarray:
    if not ids:
        return np.empty(0, np.int32)
    found: np.ndarray = lookup.find(np.array([id_to_key(i) for i in ids], dtype=np.uint64))
    return found


def _relation_scores(query: str, hits: Sequence[Hit], lexical_weight: float) -> np.ndarray:
    """Dense similarity plus the lexical predicate bonus of :func:`predicate_overlap`."""
    dense = np.array([h.score for h in hits], np.float32)
    if not lexical_weight or not hits:
        return dense
    return dense + lexical_weight * predicate_overlap(query, [str(h.fields.get("predicate", "")) for h in hits])


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


def _allowed(lookup: Any, hits: Sequence[Hit], mask: np.ndarray) -> list[Hit]:
    """The hits whose graph index the mask allows (unknown ids are dropped too)."""
    idx = _graph_indices(lookup, [h.id for h in hits])
    return [h for h, i in zip(hits, idx.tolist()) if i >= 0 and mask[i]]


def order_from_positions(pool: list[Candidate], positions: Sequence[int] | None) -> list[Candidate]:
    """The pool's relations the reranker chose, in its order; invalid positions dropped."""
    chosen: list[Candidate] = []
    seen: set[int] = set()
    for pos in positions or []:
        if isinstance(pos, bool) or not isinstance(pos, (int, np.integer)):
            continue
        pos = int(pos)
        if 0 <= pos < len(pool) and pos not in seen:
            seen.add(pos)
            chosen.append(pool[pos])
    return chosen


def _merge(k: int, *groups: Sequence[Ranked]) -> list[Ranked]:
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


def _from_relations(relations: Sequence[Candidate], how: str) -> list[Ranked]:
    out: dict[str, Ranked] = {}
    for cand in relations:
        for pid in cand.passage_ids:
            entry = out.setdefault(pid, Ranked(pid, cand.similarity, how, hops=cand.hop))
            if cand not in entry.relations:
                entry.relations.append(cand)
    return list(out.values())


def passage_document(
    pid: str, row: dict[str, Any], ranked: Ranked | None = None, score: float | None = None
) -> Document:
    """A passage row as a Document with the user's metadata and provenance keys."""
    meta = {k: v for k, v in row.items() if k not in ("pk", "text", "vector", "doc_hash", "$meta")}
    meta.update(row.get("$meta") or {})
    meta.pop("doc_hash", None)
    meta["_passage_id"] = pid
    if ranked is not None:
        meta["_score"] = float(ranked.score)
        meta["_ranked_by"] = ranked.ranked_by
        meta["_relations"] = [c.text for c in ranked.relations]
        meta["_relation_ids"] = [c.id for c in ranked.relations]
        meta["_hops"] = ranked.hops
    elif score is not None:
        meta["_score"] = float(score)
        meta["_ranked_by"] = "passage_similarity"
    return Document(id=pid, page_content=str(row.get("text", "")), metadata=meta)


# ---------------------------------------------------------------------- stages
def _query_entities(
    query: str, p: RetrievalParams, extractor: Runnable[str, list[str]] | None
) -> Generator[Effect, Any, list[str]]:
    if p.entities is not None:
        names = list(p.entities)
    else:
        names = []
        if extractor is not None:
            try:
                names = list((yield Invoke(extractor, query)) or [])
            except Exception as exc:  # a failing LLM must not fail retrieval
                logger.warning("entity extraction failed (%s); using the offline linker", exc)
                extractor = None
        if extractor is None:
            names = list((yield LinkEntities(query)) or [])
    return [e for e in dict.fromkeys(str(e).strip() for e in names) if e]


def _similarity_ranking(
    graph: GraphIndex,
    qvec: tuple[float, ...],
    entity_hits: Sequence[Sequence[Hit]],
    relation_hits: Sequence[Hit],
    p: RetrievalParams,
    view: GraphView | None,
) -> Generator[Effect, Any, tuple[list[Ranked], list[Candidate]]]:
    """The seed's method: expand the hits, order the candidates by similarity to the query."""
    e_idx = _graph_indices(graph.entities, [h.id for per in entity_hits for h in per])
    e_sc = np.array([h.score for per in entity_hits for h in per], np.float32)
    r_idx = _graph_indices(graph.relations, [h.id for h in relation_hits])
    r_sc = np.array([h.score for h in relation_hits], np.float32)
    expansion = graph.expand(
        entity_seeds=e_idx[e_idx >= 0],
        entity_scores=e_sc[e_idx >= 0],
        relation_seeds=r_idx[r_idx >= 0],
        relation_scores=r_sc[r_idx >= 0],
        hops=p.hops,
        max_neighbors=p.max_neighbors,
        max_frontier=p.max_frontier,
        max_relations=min(max(4 * p.max_candidates, 200), MAX_TOP_K),
        decay=p.decay,
        relation_mask=None if view is None else view.relations,
    )
    ids = [key_to_id(k) for k in graph.relations.keys[expansion.relations].tolist()]
    if not ids:
        return [], []
    hops = dict(zip(ids, expansion.hops.tolist()))
    (hits,) = yield Search("relations", (qvec,), len(ids), expr.in_list("pk", ids), RELATION_FIELDS)
    pool = sorted(_candidates(hits, hops, view), key=lambda c: (-c.similarity, c.hop, c.id))[: p.max_candidates]
    return _from_relations(pool, "graph"), pool


def _ppr_ranking(
    graph: GraphIndex,
    query: str,
    qvec: tuple[float, ...],
    names: list[str],
    entity_hits: Sequence[Sequence[Hit]],
    relation_hits: Sequence[Hit],
    passage_hits: Sequence[Hit],
    p: RetrievalParams,
    want_pool: bool,
    view: GraphView | None,
) -> Generator[Effect, Any, tuple[list[Ranked], list[Candidate]]]:
    """The no-LLM ranking (PageRank + bridge) and, if wanted, its one-relation-per-passage pool."""
    params = p.ppr
    # entity seeds: exact names first, else the best vector hit of that name
    exact = _graph_indices(graph.entities, [entity_id(n) for n in names])
    ents = [int(e) for e in exact if e >= 0]
    for name_idx, per in enumerate(entity_hits):
        if exact[name_idx] < 0 and per:
            found = _graph_indices(graph.entities, [per[0].id])
            ents += [int(e) for e in found if e >= 0]
    if view is not None:
        ents = [e for e in ents if view.entities[e]]
    seeds_r = relation_hits[: params.relation_seeds]
    r_idx = _graph_indices(graph.relations, [h.id for h in seeds_r])
    r_scores = _relation_scores(query, seeds_r, params.lexical_weight)
    seeds_p = passage_hits[: params.passage_seeds]
    p_idx = graph.passages.find([h.id for h in seeds_p])
    scores = ppr_passage_scores(
        graph,
        relation_idx=r_idx[r_idx >= 0],
        relation_scores=r_scores[r_idx >= 0],
        passage_idx=p_idx[p_idx >= 0],
        passage_scores=np.array([h.score for h in seeds_p], np.float32)[p_idx >= 0],
        entity_idx=np.array(sorted(set(ents)), np.int32),
        params=params,
        relation_mask=None if view is None else view.relations,
    )
    if view is not None:
        scores = np.where(view.passages, scores, 0).astype(np.float32)
    order = order_passages(scores, max(p.k, p.max_candidates, params.bridge_candidates)).tolist()
    seed_rel = _candidates(seeds_r, view=view)
    by_passage: dict[str, list[Candidate]] = {}
    for cand in seed_rel:
        for pid in cand.passage_ids:
            by_passage.setdefault(pid, []).append(cand)

    bridged = None
    if len(order) >= 2:  # bridge: the second slot continues the top passage's best fact
        top_rels = np.unique(np.concatenate([graph.pas_rel.row(g) for g in order[: params.bridge_candidates]]))
        rel_ids = [key_to_id(k) for k in graph.relations.keys[top_rels].tolist()]
        (hits,) = yield Search("relations", (qvec,), len(rel_ids), expr.in_list("pk", rel_ids), ("predicate",))
        sim_idx = _graph_indices(graph.relations, [h.id for h in hits])
        boosted = _relation_scores(query, hits, params.lexical_weight)
        sims = {int(i): float(v) for i, v in zip(sim_idx.tolist(), boosted) if i >= 0}
        predicates = {int(i): str(h.fields.get("predicate", "")) for i, h in zip(sim_idx.tolist(), hits) if i >= 0}
        ent_idx, _ = graph.passage_entities(order[0])
        ent_ids = [key_to_id(k) for k in graph.entities.keys[ent_idx].tolist()]
        names_by_id = yield EntityNames(tuple(ent_ids))
        ent_names = {int(i): names_by_id.get(eid, "") for i, eid in zip(ent_idx.tolist(), ent_ids)}
        bridged = bridge_choice(graph, order[: params.bridge_candidates], sims, predicates, ent_names, query, params)
        if bridged is not None:
            order.remove(bridged)
            order.insert(1, bridged)
    hop_of = _passage_hops(graph, ents, r_idx[r_idx >= 0], p_idx[p_idx >= 0], p, view)
    ranked = [
        Ranked(
            graph.passages.ids[g],
            float(scores[g]),
            "graph",
            list(by_passage.get(graph.passages.ids[g], [])),
            hops=hop_of.get(g),
        )
        for g in order
    ]
    pool: list[Candidate] = []
    if want_pool:
        pool = yield from _one_relation_per_passage(
            graph, qvec, interleave([r.id for r in ranked], [h.id for h in passage_hits])[: p.max_candidates], view
        )
    return ranked, pool


def _passage_hops(
    graph: GraphIndex,
    entities: list[int],
    relations: np.ndarray,
    passages: np.ndarray,
    p: RetrievalParams,
    view: GraphView | None,
) -> dict[int, int]:
    """Graph distance of passages from the seeds (the seed notebook's hop count).

    0 for seed passages and passages of hit relations or hit entities, 1 for those one
    relation further.
    """
    expansion = graph.expand(
        entity_seeds=np.array(sorted(set(entities)), np.int32),
        relation_seeds=relations,
        hops=1,
        max_neighbors=p.max_neighbors,
        max_relations=None,
        relation_mask=None if view is None else view.relations,
    )
    hop_of: dict[int, int] = {}
    for rel, hop in zip(expansion.relations.tolist(), expansion.hops.tolist()):
        for pas in graph.rel_pas.row(rel).tolist():
            hop_of[pas] = min(hop, hop_of.get(pas, hop))
    for pas in passages.tolist():
        hop_of[int(pas)] = 0
    return hop_of


def _one_relation_per_passage(
    graph: GraphIndex, qvec: tuple[float, ...], passage_ids: list[str], view: GraphView | None
) -> Generator[Effect, Any, list[Candidate]]:
    """For each passage, the relation to show the reranker.

    One that links to another listed passage (a hop the LLM can follow) if there is one,
    else the most similar to the query.
    """
    gidx = [int(i) for i in graph.passages.find(passage_ids) if i >= 0]
    if not gidx:
        return []
    rel_idx = np.unique(np.concatenate([graph.pas_rel.row(g) for g in gidx]))[:MAX_TOP_K]
    rel_ids = [key_to_id(k) for k in graph.relations.keys[rel_idx].tolist()]
    (hits,) = yield Search("relations", (qvec,), len(rel_ids), expr.in_list("pk", rel_ids), RELATION_FIELDS)
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


# ---------------------------------------------------------------------- pipelines
def graph_pipeline(
    query: str,
    p: RetrievalParams,
    *,
    entity_extractor: Runnable[str, list[str]] | None,
    reranker: Runnable[dict[str, Any], list[int]] | None,
) -> Generator[Effect, Any, list[Document]]:
    """The whole retrieval; yields effects, returns the Documents."""
    if not isinstance(query, str):
        raise TypeError(f"query must be a string, got {type(query).__name__}")
    names = yield from _query_entities(query, p, entity_extractor)
    graph: GraphIndex = yield GetGraph()

    vectors = yield Embed((query, *names))  # one embedding call for the query and its entities
    qvec = tuple(map(float, vectors[0]))
    evecs = tuple(tuple(map(float, v)) for v in vectors[1:])
    relation_limit = max(p.relation_top_k, p.ppr_relation_seeds if p.ranking == "ppr" else 0)
    if p.filter:  # hits of other tenants are dropped below: ask for more
        relation_limit = min(4 * relation_limit, MAX_TOP_K)
    passage_limit = max(p.k, p.ppr_passage_seeds, p.max_candidates if reranker is not None else 0)
    entity_hits, relation_hits, passage_hits = yield Gather(
        (
            Search("entities", evecs, p.entity_top_k),
            Search("relations", (qvec,), relation_limit, None, RELATION_FIELDS),
            Search("passages", (qvec,), passage_limit, p.filter, PASSAGE_FIELDS),
        )
    )
    relation_hits = relation_hits[0] if relation_hits else []
    passage_hits = passage_hits[0] if passage_hits else []
    view: GraphView | None = None
    if p.filter:  # the graph itself is restricted to the passages that pass the filter
        view = yield ViewOf(p.filter)
        relation_hits = _allowed(graph.relations, relation_hits, view.relations)
        entity_hits = [_allowed(graph.entities, per, view.entities) for per in entity_hits]

    if p.ranking == "similarity":
        ranked, pool = yield from _similarity_ranking(
            graph, qvec, entity_hits, relation_hits[: p.relation_top_k], p, view
        )
    else:
        ranked, pool = yield from _ppr_ranking(
            graph, query, qvec, names, entity_hits, relation_hits, passage_hits, p, reranker is not None, view
        )

    chosen: list[Candidate] = []
    if reranker is not None and pool:
        try:
            positions = yield Invoke(
                reranker,
                {
                    "question": query,
                    "relations": [c.text for c in pool],
                    "select": p.rerank_select,
                    "candidates": [{"id": c.id, "text": c.text, "passage_ids": list(c.passage_ids)} for c in pool],
                },
            )
            chosen = order_from_positions(pool, positions)
            if not chosen:
                logger.warning("reranker chose no valid relation; using the retriever's own order (%s)", p.ranking)
        except Exception as exc:
            logger.warning("reranker failed (%s); using the retriever's own order (%s)", exc, p.ranking)
    dense = [Ranked(h.id, h.score, "passage_similarity") for h in passage_hits]
    final = _merge(p.k, _from_relations(chosen, "llm"), ranked, dense)

    rows = yield Fetch("passages", tuple(r.id for r in final), PASSAGE_FIELDS, p.filter)
    docs = [passage_document(r.id, rows[r.id], r) for r in final if r.id in rows]
    if len(docs) < p.k:  # a filter removed some graph passages: fill from similarity
        have = {d.id for d in docs}
        extra = [h for h in passage_hits if h.id not in have][: p.k - len(docs)]
        docs += [passage_document(h.id, dict(h.fields), score=h.score) for h in extra]
    return docs


def naive_pipeline(query: str, k: int, filter_expr: str | None) -> Generator[Effect, Any, list[Document]]:
    """Plain top-k passage search, returning the same Document format."""
    (vector,) = yield Embed((query,))
    hits = yield Search("passages", (tuple(map(float, vector)),), k, filter_expr, PASSAGE_FIELDS)
    return [passage_document(h.id, dict(h.fields), score=h.score) for h in hits[0]]
