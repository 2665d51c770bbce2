"""The retrieval pipeline, written once for sync and async ("sans-IO").

:func:`graph_pipeline` is a generator: it does the pure work itself (expansion, pool,
ordering, documents) and *yields* an effect object whenever it needs I/O — a runnable
call, an embedding call, Milvus searches. The retriever's sync executor answers each
effect with blocking calls, its async executor with ``await``. Both run this same code,
so the two paths cannot drift apart; failures of an effect are thrown back into the
generator, which decides where to fall back (reranker, entity extractor) and where to
fail (Milvus).
"""

from __future__ import annotations

import logging
from collections.abc import Generator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from langchain_core.documents import Document
from langchain_core.runnables import Runnable

from langchain_graphrag_milvus import expr
from langchain_graphrag_milvus.graph import GraphIndex
from langchain_graphrag_milvus.milvus_schema import Kind
from langchain_graphrag_milvus.normalize import id_to_key, key_to_id
from langchain_graphrag_milvus.store import Hit

logger = logging.getLogger("langchain_graphrag_milvus")

__all__ = ["RetrievalParams", "Candidate", "graph_pipeline", "naive_pipeline"]

PASSAGE_FIELDS = ("text", "$meta")


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


Effect = Invoke | Embed | Search | Fetch | Gather | GetGraph | LinkEntities


# ---------------------------------------------------------------------- parameters
@dataclass(frozen=True, kw_only=True)
class RetrievalParams:
    """Everything one retrieval call needs; per-call kwargs override the retriever's fields."""

    k: int = 4
    entity_top_k: int = 3
    relation_top_k: int = 3
    hops: int = 1
    max_candidates: int = 50
    max_neighbors: int | None = 100
    max_frontier: int | None = 1000
    decay: float = 0.8
    rerank_select: int = 3
    filter: str | None = None
    entities: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        for name in ("k", "entity_top_k", "relation_top_k", "max_candidates", "rerank_select"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if self.hops not in (0, 1, 2, 3):
            raise ValueError(f"hops must be 0, 1, 2 or 3, got {self.hops!r}")
        if not 0.0 < self.decay <= 1.0:
            raise ValueError(f"decay must be in (0, 1], got {self.decay!r}")
        if self.filter is not None and not isinstance(self.filter, str):
            raise ValueError("filter must be a Milvus expression string")


@dataclass
class Candidate:
    """A relation in the candidate pool."""

    id: str
    text: str
    passage_ids: list[str]
    similarity: float
    graph_score: float
    hop: int


@dataclass
class _Ranked:
    """A passage on its way to becoming a Document."""

    id: str
    score: float
    ranked_by: str
    relations: list[Candidate] = field(default_factory=list)


# ---------------------------------------------------------------------- pure stages
def _indices(keys_lookup: Any, hits: Sequence[Hit]) -> tuple[np.ndarray, np.ndarray]:
    if not hits:
        return np.empty(0, np.int32), np.empty(0, np.float32)
    found = keys_lookup.find(np.array([id_to_key(h.id) for h in hits], dtype=np.uint64))
    scores = np.array([h.score for h in hits], np.float32)
    keep = found >= 0
    if not keep.all():
        logger.debug("%d search hits are not in the graph index (ingested elsewhere?)", int((~keep).sum()))
    return found[keep], scores[keep]


def expand_hits(
    graph: GraphIndex, entity_hits: Sequence[Sequence[Hit]], relation_hits: Sequence[Hit], p: RetrievalParams
) -> tuple[list[str], dict[str, tuple[float, int]]]:
    """Expand Milvus hits on the graph: candidate relation ids with (graph score, hop)."""
    e_idx, e_sc = _indices(graph.entities, [h for per in entity_hits for h in per])
    r_idx, r_sc = _indices(graph.relations, relation_hits)
    expansion = graph.expand(
        entity_seeds=e_idx,
        entity_scores=e_sc,
        relation_seeds=r_idx,
        relation_scores=r_sc,
        hops=p.hops,
        max_neighbors=p.max_neighbors,
        max_frontier=p.max_frontier,
        max_relations=max(4 * p.max_candidates, 200),
        decay=p.decay,
    )
    ids = [key_to_id(k) for k in graph.relations.keys[expansion.relations].tolist()]
    info = {rid: (float(s), int(h)) for rid, s, h in zip(ids, expansion.scores.tolist(), expansion.hops.tolist())}
    return ids, info


def build_pool(pool_hits: Sequence[Hit], info: dict[str, tuple[float, int]], max_candidates: int) -> list[Candidate]:
    """Candidates pre-ordered by similarity to the query (filtered kNN), capped."""
    pool = []
    for hit in pool_hits:
        graph_score, hop = info.get(hit.id, (0.0, 0))
        pool.append(
            Candidate(
                id=hit.id,
                text=str(hit.fields.get("text", "")),
                passage_ids=[str(p) for p in hit.fields.get("passage_ids") or []],
                similarity=hit.score,
                graph_score=graph_score,
                hop=hop,
            )
        )
    pool.sort(key=lambda c: (-c.similarity, c.hop, c.id))
    return pool[:max_candidates]


def order_from_positions(pool: list[Candidate], positions: Sequence[int] | None) -> list[Candidate]:
    """The pool's relations the reranker chose, in its order; invalid positions dropped."""
    if not positions:
        return []
    chosen: list[Candidate] = []
    seen: set[int] = set()
    for pos in positions:
        if isinstance(pos, bool) or not isinstance(pos, (int, np.integer)):
            continue
        pos = int(pos)
        if 0 <= pos < len(pool) and pos not in seen:
            seen.add(pos)
            chosen.append(pool[pos])
    return chosen


def rank_passages(
    chosen: list[Candidate], pool: list[Candidate], passage_hits: Sequence[Hit], k: int, *, reranked: bool
) -> list[_Ranked]:
    """Passages in rank order: from chosen relations, then the pool order, then similarity."""
    ranked: dict[str, _Ranked] = {}
    sources = [(chosen, "llm"), (pool, "graph")] if reranked else [(pool, "graph")]
    for relations, how in sources:
        for cand in relations:
            for pid in cand.passage_ids:
                entry = ranked.get(pid)
                if entry is None:
                    if len(ranked) >= k:
                        continue
                    ranked[pid] = entry = _Ranked(pid, cand.similarity, how)
                if cand not in entry.relations:
                    entry.relations.append(cand)
    for hit in passage_hits:
        if len(ranked) >= k:
            break
        if hit.id not in ranked:
            ranked[hit.id] = _Ranked(hit.id, hit.score, "passage_similarity")
    return list(ranked.values())[:k]


def passage_document(
    pid: str, row: dict[str, Any], ranked: _Ranked | None = None, score: float | None = None
) -> Document:
    """A passage row as a Document with the user's metadata and provenance keys."""
    meta = {k: v for k, v in row.items() if k not in ("pk", "text", "vector", "doc_hash", "$meta")}
    meta.update(row.get("$meta") or {})
    meta.pop("doc_hash", None)
    meta["_passage_id"] = pid
    if ranked is not None:
        meta["_score"] = ranked.score
        meta["_ranked_by"] = ranked.ranked_by
        meta["_relations"] = [c.text for c in ranked.relations]
        meta["_relation_ids"] = [c.id for c in ranked.relations]
        meta["_hops"] = min((c.hop for c in ranked.relations), default=None)
    elif score is not None:
        meta["_score"] = score
        meta["_ranked_by"] = "passage_similarity"
    return Document(id=pid, page_content=str(row.get("text", "")), metadata=meta)


# ---------------------------------------------------------------------- pipelines
def graph_pipeline(
    query: str,
    p: RetrievalParams,
    *,
    entity_extractor: Runnable[str, list[str]] | None,
    reranker: Runnable[dict[str, Any], list[int]] | None,
) -> Generator[Effect, Any, list[Document]]:
    """The seed's pipeline; yields effects, returns the Documents."""
    if not isinstance(query, str):
        raise TypeError(f"query must be a string, got {type(query).__name__}")
    # 1. query entities
    if p.entities is not None:
        entities = list(p.entities)
    else:
        entities = []
        if entity_extractor is not None:
            try:
                entities = list((yield Invoke(entity_extractor, query)) or [])
            except Exception as exc:  # a failing LLM must not fail retrieval
                logger.warning("entity extraction failed (%s); using the offline linker", exc)
                entity_extractor = None
        if entity_extractor is None:
            entities = list((yield LinkEntities(query)) or [])
    entities = [e for e in dict.fromkeys(str(e).strip() for e in entities) if e]
    graph: GraphIndex = yield GetGraph()

    # 2. one embedding call, 3. batched searches
    vectors = yield Embed((query, *entities))
    qvec = tuple(map(float, vectors[0]))
    evecs = tuple(tuple(map(float, v)) for v in vectors[1:])
    entity_hits, relation_hits, passage_hits = yield Gather(
        (
            Search("entities", evecs, p.entity_top_k),
            Search("relations", (qvec,), p.relation_top_k),
            Search("passages", (qvec,), p.k, p.filter, PASSAGE_FIELDS),
        )
    )
    passage_hits = passage_hits[0] if passage_hits else []

    # 4. expansion and candidate pool, pre-ordered by similarity (filtered kNN)
    candidate_ids, info = expand_hits(graph, entity_hits, relation_hits[0] if relation_hits else [], p)
    pool: list[Candidate] = []
    if candidate_ids:
        pool_hits = yield Search(
            "relations",
            (qvec,),
            len(candidate_ids),
            expr.in_list("pk", candidate_ids),
            ("text", "passage_ids"),
        )
        pool = build_pool(pool_hits[0], info, p.max_candidates)

    # 5. rerank (falls back to the pre-order)
    chosen: list[Candidate] = []
    if reranker is not None and pool:
        try:
            positions = yield Invoke(
                reranker,
                {
                    "question": query,
                    "relations": [c.text for c in pool],
                    "select": p.rerank_select,
                },
            )
            chosen = order_from_positions(pool, positions)
            if not chosen:
                logger.warning("reranker chose no valid relation; using the similarity order")
        except Exception as exc:
            logger.warning("reranker failed (%s); using the similarity order", exc)
    ranked = rank_passages(chosen, pool, passage_hits, p.k, reranked=bool(chosen))

    # 6. passages as Documents (restricted by the filter)
    rows = yield Fetch("passages", tuple(r.id for r in ranked), PASSAGE_FIELDS, p.filter)
    docs = [passage_document(r.id, rows[r.id], r) for r in ranked if r.id in rows]
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
