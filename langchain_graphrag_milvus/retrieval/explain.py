"""Building :class:`~langchain_graphrag_milvus.subgraph.Subgraph` s: behind one query, or from the store.

:func:`query_subgraph` runs the retriever once with a trace (the pipeline records its
query entities, hits, graph expansion, scores and the reranker's choice) and turns what
it did into nodes and edges. :func:`store_subgraph` reads the stored graph (all of it,
the part a filter allows, or a capped number of relations).
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

import numpy as np
from langchain_core.documents import Document

from langchain_graphrag_milvus.graph import Expansion, GraphIndex
from langchain_graphrag_milvus.milvus import expr
from langchain_graphrag_milvus.milvus.reads import MAX_TOP_K
from langchain_graphrag_milvus.retrieval.documents import source_label
from langchain_graphrag_milvus.retrieval.store_api import RetrievalStore
from langchain_graphrag_milvus.retrieval.subgraph_model import Subgraph, SubgraphEdge, SubgraphNode

__all__ = [
    "query_subgraph",
    "query_subgraph_async",
    "query_documents_and_subgraph",
    "store_subgraph",
    "TracedRetriever",
]


class TracedRetriever(Protocol):
    """What the subgraph builder needs of a graph retriever: its store and a traced run."""

    store: RetrievalStore

    def _traced(self, query: str, kwargs: dict[str, Any]) -> tuple[list[Document], dict[str, Any]]: ...

    async def _atraced(self, query: str, kwargs: dict[str, Any]) -> tuple[list[Document], dict[str, Any]]: ...


REL_FIELDS = ("text", "subject_id", "object_id", "predicate", "passage_ids")
_LABEL_CHARS = 90
_TEXT_CHARS = 600


def _check_caps(max_relations: int, display_hops: int) -> None:
    if isinstance(max_relations, bool) or not isinstance(max_relations, int) or max_relations < 1:
        raise ValueError(f"max_relations must be a positive integer, got {max_relations!r}")
    if display_hops not in (0, 1, 2, 3):
        raise ValueError(f"display_hops must be 0, 1, 2 or 3, got {display_hops!r}")


def query_subgraph(
    retriever: TracedRetriever, query: str, *, max_relations: int = 30, display_hops: int = 2, **kwargs: Any
) -> Subgraph:
    """What ``retriever`` did for ``query``, as a subgraph.

    Nodes: the query's entities, the entities they matched (hop 0, with the match
    scores), the relations reached hop by hop from them (score: similarity to the query),
    and the passages returned (score: the retriever's ``_score``, hop: its ``_hops``; data:
    ``source``, the file and page it comes from, and its ``similarity`` to the query).
    Every relation behind a returned passage is shown; the others are the most similar
    to the query, at most ``max_relations`` in all, plus the relations that connect them
    back to hop 0. With the default ``ranking="ppr"``, every relation hit seeds the
    PageRank, so hops are counted from the matched entities (the retriever's entity seeds
    and every entity hit with positive similarity; ``display_hops`` deep); with
    ``ranking="similarity"`` they are the retriever's own expansion. A relation behind a
    returned passage that no entity path reaches (a vector hit) has ``hop=None``.

    Args:
        retriever: The retriever.
        query: The query.
        max_relations: Relations shown besides those behind returned passages and their links.
        display_hops: Expansion depth used for hop numbers in the ``"ppr"`` ranking (0 to 3).
        **kwargs: Per-call retrieval settings, as for ``invoke`` (``k``, ``filter``, ``entities``...).

    Returns:
        The subgraph; ``settings`` holds the retrieval parameters used.
    """
    return query_documents_and_subgraph(
        retriever, query, max_relations=max_relations, display_hops=display_hops, **kwargs
    )[1]


def query_documents_and_subgraph(
    retriever: TracedRetriever, query: str, *, max_relations: int = 30, display_hops: int = 2, **kwargs: Any
) -> tuple[list[Document], Subgraph]:
    """The Documents ``retriever`` returns for ``query`` and the subgraph behind them, from one run.

    Same arguments as :func:`query_subgraph` (the command line's ``query --html`` uses it,
    so the retrieval runs once for the printed passages and the picture).
    """
    _check_caps(max_relations, display_hops)
    docs, trace = retriever._traced(query, kwargs)
    return docs, build_query_subgraph(retriever.store, query, docs, trace, max_relations, display_hops)


async def query_subgraph_async(
    retriever: TracedRetriever, query: str, *, max_relations: int = 30, display_hops: int = 2, **kwargs: Any
) -> Subgraph:
    """Async :func:`query_subgraph` (the retrieval runs on the retriever's async path)."""
    _check_caps(max_relations, display_hops)
    docs, trace = await retriever._atraced(query, kwargs)
    return await asyncio.to_thread(
        build_query_subgraph, retriever.store, query, docs, trace, max_relations, display_hops
    )


def _expansion(trace: dict[str, Any], display_hops: int) -> Expansion:
    """The retriever's own expansion ('similarity'), else one from the entity seeds it used."""
    if trace.get("expansion") is not None:
        return trace["expansion"]  # type: ignore[no-any-return]
    graph: GraphIndex = trace["graph"]
    p = trace["params"]
    view = trace.get("view")
    # the retriever's entity seeds and every entity hit with positive similarity (the "matched" column)
    hit_ids = [h.id for per in trace.get("entity_hits") or [] for h in per if h.score > 0]
    found_e: list[int] = graph.entities.find_ids(hit_ids).tolist()
    seeds = np.array(sorted({*(trace.get("entity_seeds") or []), *(int(i) for i in found_e if i >= 0)}), np.int32)
    rel_seeds = np.empty(0, np.int32)
    if seeds.size == 0:  # no entity found: start from the relation hits
        found = graph.relations.find_ids([h.id for h in trace["relation_hits"]])
        rel_seeds = found[found >= 0][: p.relation_top_k].astype(np.int32)
    return graph.expand(
        entity_seeds=seeds,
        relation_seeds=rel_seeds,
        hops=display_hops,
        max_neighbors=p.max_neighbors,
        max_frontier=p.max_frontier,
        max_relations=MAX_TOP_K,
        relation_mask=None if view is None else view.relations,
    )


def _select(
    required: list[str],
    scored: list[tuple[str, float]],
    hop: dict[str, int],
    ends: dict[str, tuple[str, str]],
    cap: int,
) -> list[str]:
    """Required relations, then the most similar up to ``cap``, then links back to hop 0."""
    chosen = dict.fromkeys(required)
    for rid, _ in sorted(scored, key=lambda x: (-x[1], x[0])):
        if len(chosen) >= max(cap, len(required)):
            break
        chosen.setdefault(rid)
    by_entity: dict[str, list[str]] = {}
    for rid, _ in sorted(scored, key=lambda x: (-x[1], x[0])):  # best first: parents chosen by similarity
        for ent in ends.get(rid, ()):
            by_entity.setdefault(ent, []).append(rid)
    todo = list(chosen)
    while todo:  # give each relation beyond hop 0 a parent one hop closer
        rid = todo.pop()
        h = hop.get(rid)
        if not h:
            continue
        parents = [q for e in ends.get(rid, ()) for q in by_entity.get(e, []) if hop.get(q) == h - 1]
        if parents and not any(q in chosen for q in parents):
            chosen[parents[0]] = None
            todo.append(parents[0])
    return list(chosen)


def build_query_subgraph(
    store: RetrievalStore,
    query: str,
    docs: Sequence[Document],
    trace: dict[str, Any],
    max_relations: int,
    display_hops: int,
) -> Subgraph:
    """Nodes and edges from a retrieval's trace and Documents (see :func:`query_subgraph`)."""
    graph: GraphIndex = trace["graph"]
    exp = _expansion(trace, display_hops)
    rel_ids = graph.relations.ids_at(exp.relations)
    hop = dict(zip(rel_ids, (int(h) for h in exp.hops.tolist())))
    required = list(dict.fromkeys(r for d in docs for r in d.metadata.get("_relation_ids") or []))
    wanted = list(dict.fromkeys(required + rel_ids))[:MAX_TOP_K]
    rows: dict[str, dict[str, Any]] = {}
    if wanted:
        (hits,) = store.search(
            "relations", [trace["query_vector"]], len(wanted), filter_expr=expr.in_list("pk", wanted),
            output_fields=REL_FIELDS,
        )  # fmt: skip
        rows = {h.id: {**h.fields, "_score": h.score} for h in hits}
    view = trace.get("view")
    if view is not None:  # under a filter, never name the passages of others
        for row in rows.values():
            row["passage_ids"] = [x for x in row.get("passage_ids") or [] if str(x) in view.passage_ids]
    ends = {rid: (str(r.get("subject_id")), str(r.get("object_id"))) for rid, r in rows.items()}
    scored = [(rid, float(r["_score"])) for rid, r in rows.items()]
    shown = [r for r in _select([r for r in required if r in rows], scored, hop, ends, max_relations) if r in rows]
    names = store.entity_names()
    sub = _QueryNodes(names)
    sub.query_entities(trace)
    ent_hop = dict(zip(graph.entities.ids_at(exp.entities), (int(h) for h in exp.entity_hops.tolist())))
    sub.relations(shown, rows, hop, ent_hop, trace)
    sub.passages(docs, {rid: rows[rid] for rid in shown})
    settings = trace["params"].flat()  # the flat names, the ranking's own included
    settings.update(max_relations=max_relations, display_hops=display_hops, query_entities=trace.get("entities"))
    truncated = bool(exp.truncated) or len(shown) < len(rows)
    return Subgraph(
        nodes=list(sub.nodes.values()), edges=sub.edges, query=query, settings=settings, truncated=truncated
    )


class _QueryNodes:
    """Accumulates the nodes and edges of a query subgraph."""

    def __init__(self, names: Mapping[str, str]) -> None:
        self.names = names
        self.nodes: dict[str, SubgraphNode] = {}
        self.edges: list[SubgraphEdge] = []

    def add(self, node: SubgraphNode) -> None:
        self.nodes.setdefault(node.id, node)

    def query_entities(self, trace: dict[str, Any]) -> None:
        seeds = set(trace.get("entity_seeds") or [])
        graph: GraphIndex = trace["graph"]
        for name, hits in zip(trace.get("entities") or [], trace.get("entity_hits") or []):
            qid = f"query_entity:{name}"
            self.add(SubgraphNode(qid, name, "query_entity"))
            for h in hits:
                idx = int(graph.entities.find_ids([h.id])[0])
                eid = f"entity:{h.id}"
                if eid in self.nodes:
                    old = self.nodes[eid]
                    if old.score is None or h.score > old.score:
                        self.nodes[eid] = dataclasses.replace(old, score=float(h.score))
                else:
                    data = {"entity_id": h.id, "seed": idx in seeds}
                    self.add(SubgraphNode(eid, self.names.get(h.id, h.id), "entity", 0, float(h.score), data))
                self.edges.append(SubgraphEdge(qid, eid, "match", float(h.score)))

    def relations(
        self,
        shown: list[str],
        rows: dict[str, dict[str, Any]],
        hop: dict[str, int],
        ent_hop: dict[str, int],
        trace: dict[str, Any],
    ) -> None:
        rank = {h.id: i for i, h in enumerate(trace.get("relation_hits") or [])}
        chosen = {c.id for c in trace.get("chosen") or []}
        for rid in shown:
            row = rows[rid]
            subj, obj = str(row.get("subject_id")), str(row.get("object_id"))
            data = {
                "relation_id": rid,
                "predicate": row.get("predicate", ""),
                "subject": self.names.get(subj, subj),
                "object": self.names.get(obj, obj),
                "passage_ids": [str(x) for x in row.get("passage_ids") or []],
                "similarity_rank": rank.get(rid),
                "chosen_by_reranker": rid in chosen,
            }
            self.add(
                SubgraphNode(f"relation:{rid}", str(row.get("text", "")), "relation", hop.get(rid), row["_score"], data)
            )
            for eid, kind in ((subj, "subject"), (obj, "object")):
                if f"entity:{eid}" not in self.nodes:
                    name = self.names.get(eid, eid)
                    self.add(SubgraphNode(f"entity:{eid}", name, "entity", ent_hop.get(eid), None, {"entity_id": eid}))
            self.edges.append(SubgraphEdge(f"entity:{subj}", f"relation:{rid}", "subject"))
            self.edges.append(SubgraphEdge(f"relation:{rid}", f"entity:{obj}", "object"))
        for rid in shown:  # relation at hop h → relation at hop h + 1 sharing an entity
            h = hop.get(rid)
            if h is None:
                continue
            mine = {str(rows[rid].get("subject_id")), str(rows[rid].get("object_id"))}
            for other in shown:
                if hop.get(other) == h + 1:
                    shared = mine & {str(rows[other].get("subject_id")), str(rows[other].get("object_id"))}
                    for eid in sorted(shared):
                        via = self.names.get(eid, eid)
                        self.edges.append(
                            SubgraphEdge(f"relation:{rid}", f"relation:{other}", "expands", data={"via": via})
                        )

    def passages(self, docs: Sequence[Document], rows: dict[str, dict[str, Any]]) -> None:
        for rank, doc in enumerate(docs, start=1):
            pid = str(doc.id if doc.id is not None else doc.metadata.get("_passage_id"))
            meta = doc.metadata
            text = doc.page_content
            label = text if len(text) <= _LABEL_CHARS else text[: _LABEL_CHARS - 1].rstrip() + "…"
            data = {
                "passage_id": pid,
                "rank": rank,
                "source": source_label(meta),  # file and page (from 1), else the passage id
                "ranked_by": meta.get("_ranked_by"),
                "similarity": meta.get("_similarity"),
                "raw_score": meta.get("_raw_score"),
                "text": text[:_TEXT_CHARS],
                "relations": list(meta.get("_relations") or []),
            }
            score = meta.get("_score")
            node = SubgraphNode(f"passage:{pid}", label, "passage", meta.get("_hops"), _float(score), data)
            self.add(node)
            led = set(meta.get("_relation_ids") or [])
            for rid, row in rows.items():
                if pid in {str(x) for x in row.get("passage_ids") or []}:
                    edge = SubgraphEdge(f"relation:{rid}", node.id, "supports", row["_score"], {"led_to": rid in led})
                    self.edges.append(edge)


def _float(value: Any) -> float | None:
    return None if value is None else float(value)


def store_subgraph(store: RetrievalStore, *, filter: Any = None, limit: int | None = None) -> Subgraph:
    """The stored graph as a subgraph: entities, relations, passages (hops and scores None).

    Args:
        store: The store.
        filter: Only the graph of the passages this filter allows (expression or dict, as
            for the retriever).
        limit: At most this many relations (in id order); ``truncated`` tells if more exist.

    Returns:
        The subgraph (a force-directed picture in :meth:`Subgraph.to_html`).
    """
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise ValueError(f"limit must be a positive integer or None, got {limit!r}")
    filter_expr = expr.as_filter(filter)
    allowed: frozenset[str] | None = None
    if filter_expr:
        allowed = store.graph_view(filter_expr).passage_ids
    names = store.entity_names()
    nodes: dict[str, SubgraphNode] = {}
    edges: list[SubgraphEdge] = []
    truncated = False
    count = 0
    for row in store.iterate("relations", REL_FIELDS):
        pids = [str(x) for x in row.get("passage_ids") or []]
        if allowed is not None:
            pids = [x for x in pids if x in allowed]
            if not pids:
                continue
        if limit is not None and count >= limit:
            truncated = True
            break
        count += 1
        rid, subj, obj = str(row["pk"]), str(row["subject_id"]), str(row["object_id"])
        data = {"relation_id": rid, "predicate": row.get("predicate", ""), "passage_ids": pids}
        nodes[f"relation:{rid}"] = SubgraphNode(f"relation:{rid}", str(row.get("text", "")), "relation", data=data)
        for eid in (subj, obj):
            nodes.setdefault(
                f"entity:{eid}", SubgraphNode(f"entity:{eid}", names.get(eid, eid), "entity", data={"entity_id": eid})
            )
        edges.append(SubgraphEdge(f"entity:{subj}", f"relation:{rid}", "subject"))
        edges.append(SubgraphEdge(f"relation:{rid}", f"entity:{obj}", "object"))
        edges += [SubgraphEdge(f"relation:{rid}", f"passage:{pid}", "supports") for pid in pids]
    passage_ids = list(dict.fromkeys(e.target[len("passage:") :] for e in edges if e.kind == "supports"))
    texts = store.fetch("passages", passage_ids, ("text", "source_id"), filter_expr=filter_expr)
    for pid in passage_ids:
        text = str(texts.get(pid, {}).get("text", ""))
        label = text if len(text) <= _LABEL_CHARS else text[: _LABEL_CHARS - 1].rstrip() + "…"
        data = {"passage_id": pid, "text": text[:_TEXT_CHARS], "source_id": texts.get(pid, {}).get("source_id")}
        nodes[f"passage:{pid}"] = SubgraphNode(f"passage:{pid}", label or pid, "passage", data=data)
    settings = {"filter": filter_expr, "limit": limit}
    return Subgraph(nodes=list(nodes.values()), edges=edges, query=None, settings=settings, truncated=truncated)
