"""The path retrieval pipeline (sans-IO, like :mod:`~langchain_graphrag_milvus.retrieval.graph_pipeline`).

For a query naming two or more entities (Elastic's "Navigating graphs for RAG", the
second seed):

1. resolve the query's entities to graph entities (exact name, else the nearest entity
   vector above ``entity_min_score``);
2. per pair of them, all shortest paths by bidirectional search
   (:func:`~langchain_graphrag_milvus.graph.find_paths`);
3. the relations on the paths' edges, scored by a filtered kNN search in the relation
   collection (similarity to the query, restricted to those relations);
4. per pair, at most ``max_paths`` paths kept by diversity pruning
   (:func:`~langchain_graphrag_milvus.graph.prune_paths`; ties: the more similar path),
   ordered by similarity; pairs take turns (each pair's best path, then the second
   ones, ...) up to ``k`` paths in all;
5. each kept path as a pseudo-document (:func:`~langchain_graphrag_milvus.retrieval.linearize.linearize_path`),
   with the supporting sentences of its passages when ``sentences`` is set.
"""

from __future__ import annotations

import itertools
from collections.abc import Generator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from langchain_core.documents import Document
from langchain_core.runnables import Runnable

from langchain_graphrag_milvus.graph import (
    AggregatedIndex,
    GraphIndex,
    GraphView,
    PathResult,
    aggregated_index,
    edge_relations,
    find_paths,
    prune_paths,
)
from langchain_graphrag_milvus.milvus import expr
from langchain_graphrag_milvus.milvus.reads import Hit
from langchain_graphrag_milvus.milvus.vectors import check_query_vectors
from langchain_graphrag_milvus.retrieval.effects import (
    Compute,
    Effect,
    Embed,
    EntityNames,
    Fetch,
    Gather,
    GetGraph,
    Notify,
    Search,
    ViewOf,
)
from langchain_graphrag_milvus.retrieval.graph_pipeline import query_entities
from langchain_graphrag_milvus.retrieval.linearize import PathRelation, linearize_path
from langchain_graphrag_milvus.retrieval.stages import search_in_view
from langchain_graphrag_milvus.retrieval.timeouts import check_timeout
from langchain_graphrag_milvus.text.names import entity_id, id_to_key, key_to_id, stable_id

__all__ = ["PathParams", "path_pipeline", "no_path_event", "NO_PATH_EVENT"]

_RELATION_FIELDS = ("text", "passage_ids")
_SEARCH_CHUNK = 1024  # relation ids per filtered search (keeps expressions and limits small)


@dataclass(frozen=True, kw_only=True)
class PathParams:
    """Per-call settings of :class:`~langchain_graphrag_milvus.path_retriever.MilvusPathRetriever`."""

    k: int = 10
    max_paths: int = 5
    max_hops: int = 3
    max_neighbors: int | None = 100
    max_frontier: int | None = 10_000
    max_entities: int = 4
    relations_per_edge: int = 2
    sentences: bool = False
    sentences_per_relation: int = 1
    entity_min_score: float = 0.8
    filter: str | None = None
    entities: tuple[str, ...] | None = None
    extractor_timeout: float | None = None

    def __post_init__(self) -> None:
        check_timeout("extractor_timeout", self.extractor_timeout)
        for name in ("k", "max_paths", "max_hops", "max_entities", "relations_per_edge", "sentences_per_relation"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        for name in ("max_neighbors", "max_frontier"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise ValueError(f"{name} must be a positive integer or None, got {value!r}")
        if self.max_hops > 6:
            raise ValueError(f"max_hops must be at most 6, got {self.max_hops}")
        if self.max_entities > 8:
            raise ValueError(f"max_entities must be at most 8 (28 pairs), got {self.max_entities}")
        if not -1.0 <= self.entity_min_score <= 1.0:
            raise ValueError(f"entity_min_score must be in [-1, 1], got {self.entity_min_score!r}")
        if not isinstance(self.sentences, bool):
            raise ValueError(f"sentences must be True or False, got {self.sentences!r}")
        if self.filter is not None and not isinstance(self.filter, str):
            raise ValueError("filter must be a Milvus expression string")


#: Name of the custom callback event sent when no path is found (data: :func:`no_path_event`).
NO_PATH_EVENT = "graphrag_no_path"


def no_path_event(reason: str, entities: Sequence[str], pairs: Sequence[dict[str, Any]] = ()) -> Notify:
    """Why no path was found, as the event the retriever logs and dispatches to its callbacks.

    The retriever then returns no Document at all (an empty context is not a context):
    the reason goes to the logger ``langchain_graphrag_milvus`` (INFO) and to callback
    handlers as the custom event :data:`NO_PATH_EVENT` with ``{"reason", "entities",
    "pairs"}`` (see :class:`~langchain_graphrag_milvus.path_retriever.NoPathEvents`).
    """
    return Notify(NO_PATH_EVENT, {"reason": reason, "entities": list(entities), "pairs": list(pairs)})


def _aggregated(graph: GraphIndex, view: GraphView | None) -> AggregatedIndex:
    """The aggregated relation index of the graph or of the view (cached on either)."""
    if view is None:
        return aggregated_index(graph)
    cached: AggregatedIndex | None = view.cache.get("aggregated")
    if cached is None:
        cached = view.cache["aggregated"] = aggregated_index(graph, view.relations)
    return cached


def _entity_indices(
    graph: GraphIndex,
    names: list[str],
    hits: Sequence[Sequence[Hit]],
    min_score: float,
    view: GraphView | None,
) -> tuple[list[tuple[str, int]], list[str]]:
    """(name, entity index) for each name found; and the names not found.

    Under a view, an entity outside it is treated exactly like a name no entity has (it
    is resolved by vector among the view's entities, or not at all): what lies outside
    the view changes nothing.
    """
    exact = _exact_indices(graph, names, view)
    found: list[tuple[str, int]] = []
    missing: list[str] = []
    unresolved = [n for n, i in zip(names, exact) if i < 0]
    hits_of = dict(zip(unresolved, hits))
    for name, idx in zip(names, exact):
        if idx < 0:  # no such entity: the nearest entity vector above the bar, inside the view
            per = [h for h in hits_of.get(name, []) if h.score >= min_score]
            near = graph.entities.find(np.array([id_to_key(h.id) for h in per], np.uint64)).tolist() if per else []
            idx = next((i for i in near if i >= 0 and (view is None or view.entities[i])), -1)
        if idx < 0:
            missing.append(name)
        elif all(idx != i for _, i in found):
            found.append((name, idx))
    return found, missing


def _exact_indices(graph: GraphIndex, names: Sequence[str], view: GraphView | None) -> list[int]:
    """Entity index of each name (case/variant-insensitive), -1 if none or outside the view."""
    found = graph.entities.find(np.array([id_to_key(entity_id(n)) for n in names], np.uint64)).tolist()
    return [i if i >= 0 and (view is None or view.entities[i]) else -1 for i in found]


def _path_score(path: Sequence[int], edge_score: dict[tuple[int, int], float]) -> float:
    return float(np.mean([edge_score.get(_edge(a, b), -1.0) for a, b in itertools.pairwise(path)]))


def _edge(a: int, b: int) -> tuple[int, int]:
    return (a, b) if a < b else (b, a)


def path_pipeline(
    query: str, p: PathParams, *, entity_extractor: Runnable[str, list[str]] | None
) -> Generator[Effect, Any, list[Document]]:
    """Paths between the query's entities as pseudo-documents; yields effects."""
    if not isinstance(query, str):
        raise TypeError(f"query must be a string, got {type(query).__name__}")
    names = yield from query_entities(
        query, p.entities, entity_extractor, timeout=p.extractor_timeout, filter_expr=p.filter
    )
    graph: GraphIndex = yield GetGraph()
    view: GraphView | None = (yield ViewOf(p.filter, graph)) if p.filter else None

    unresolved = tuple(n for n, i in zip(names, _exact_indices(graph, names, view)) if i < 0)
    vectors = check_query_vectors((query, *unresolved), (yield Embed((query, *unresolved))))
    qvec = tuple(map(float, vectors[0]))
    hits: list[list[Hit]] = []
    if unresolved:
        evecs = tuple(tuple(map(float, v)) for v in vectors[1:])
        if view is None:
            hits = yield Search("entities", evecs, 3)
        else:  # the nearest entity inside the view, whatever lies outside it
            hits = yield from search_in_view(
                "entities", evecs, 1, graph.entities, view.entities, min_score=p.entity_min_score
            )
    found, missing = _entity_indices(graph, names, hits, p.entity_min_score, view)
    found = found[: p.max_entities]
    if len(found) < 2:
        known = [n for n, _ in found]
        where = " in the filtered part of the graph" if view is not None else " in the graph"
        yield no_path_event(
            f"need two entities{where}; found {len(found)}"
            + (f" ({', '.join(known)})" if known else "")
            + (f"; not found: {', '.join(missing)}" if missing else ""),
            known,
        )
        return []

    # 2. shortest paths per pair
    agg: AggregatedIndex = yield Compute(_aggregated, (graph, view))  # built once per graph / view
    results: list[tuple[tuple[str, str], PathResult]] = []
    for (na, a), (nb, b) in itertools.combinations(found, 2):
        res = find_paths(
            graph,
            a,
            b,
            max_hops=p.max_hops,
            max_neighbors=p.max_neighbors,
            max_frontier=p.max_frontier,
            aggregated=agg,
        )
        results.append(((na, nb), res))
    pair_info = [
        {
            "pair": [na, nb],
            "hops": r.length,
            "paths": len(r.paths),
            "visited": r.visited,
            "truncated": r.truncated,
            "reason": r.reason,
        }
        for (na, nb), r in results
    ]
    if not any(r.paths for _, r in results):
        reasons = "; ".join(f"{na} – {nb}: {r.reason}" for (na, nb), r in results)
        yield no_path_event(f"no path found ({reasons})", [n for n, _ in found], pair_info)
        return []

    # 3. relations on the edges, scored by a kNN search restricted to them
    mask = None if view is None else view.relations
    edges = {_edge(a, b) for _, r in results for path in r.paths for a, b in itertools.pairwise(path)}
    edge_rels = {e: edge_relations(graph, *e, mask) for e in edges}
    rel_idx = sorted({r for rels in edge_rels.values() for r in rels})
    rel_ids = [key_to_id(k) for k in graph.relations.keys[rel_idx].tolist()]
    chunks = [rel_ids[i : i + _SEARCH_CHUNK] for i in range(0, len(rel_ids), _SEARCH_CHUNK)]
    answers = yield Gather(
        tuple(Search("relations", (qvec,), len(c), expr.in_list("pk", c), _RELATION_FIELDS) for c in chunks)
    )
    rows: dict[str, dict[str, Any]] = {
        h.id: {**h.fields, "_similarity": h.score} for (hits_,) in answers for h in hits_
    }
    absent = [i for i in rel_ids if i not in rows]
    if absent:  # not returned by the search (should not happen): still shown, unscored
        fetched = yield Fetch("relations", tuple(absent), _RELATION_FIELDS)
        rows.update({i: {**row, "_similarity": -1.0} for i, row in fetched.items()})
    similarity = {ri: float(rows.get(rid, {}).get("_similarity", -1.0)) for ri, rid in zip(rel_idx, rel_ids)}
    edge_score = {e: max((similarity[r] for r in rels), default=-1.0) for e, rels in edge_rels.items()}

    # 4. diversity pruning per pair, most similar path first; pairs take turns up to k
    per_pair = []
    for pair, r in results:
        chosen = prune_paths(r.paths, p.max_paths, lambda path: _path_score(path, edge_score))
        ranked = sorted(((path, _path_score(path, edge_score)) for path in chosen), key=lambda t: -t[1])
        per_pair.append([(pair, r, path, s) for path, s in ranked])
    kept = [item for turn in itertools.zip_longest(*per_pair) for item in turn if item is not None][: p.k]

    # 5. pseudo-documents
    ent_on_paths = sorted({e for _, _, path, _ in kept for e in path})
    rel_on_paths = sorted(
        {r for _, _, path, _ in kept for a, b in itertools.pairwise(path) for r in edge_rels[_edge(a, b)]}
    )
    endpoint_idx = sorted(
        set(ent_on_paths) | {int(x) for r in rel_on_paths for x in (graph.rel_subject[r], graph.rel_object[r])}
    )
    ent_ids = {i: key_to_id(k) for i, k in zip(endpoint_idx, graph.entities.keys[endpoint_idx].tolist())}
    names_by_id: dict[str, str] = yield EntityNames(tuple(ent_ids.values()))
    display = {i: names_by_id.get(eid) or eid for i, eid in ent_ids.items()}
    allowed = None if view is None else view.passage_ids

    def relation(ri: int) -> PathRelation:
        rid = key_to_id(int(graph.relations.keys[ri]))
        row = rows.get(rid, {})
        pids = [str(x) for x in row.get("passage_ids") or []]
        if allowed is not None:
            pids = [x for x in pids if x in allowed]
        return PathRelation(
            rid,
            str(row.get("text", "")),
            similarity[ri],
            pids,
            display[int(graph.rel_subject[ri])],
            display[int(graph.rel_object[ri])],
        )

    shown: list[list[list[PathRelation]]] = []
    for _, _, path, _ in kept:
        per_edge = []
        for a, b in itertools.pairwise(path):
            rels = sorted((relation(ri) for ri in edge_rels[_edge(a, b)]), key=lambda x: (-x.similarity, x.id))
            per_edge.append(rels[: p.relations_per_edge])
        shown.append(per_edge)
    passages: dict[str, str] | None = None
    if p.sentences:
        pids = sorted({pid for per_edge in shown for rels in per_edge for rel in rels for pid in rel.passage_ids})
        fetched = yield Fetch("passages", tuple(pids), ("text",), p.filter)
        passages = {pid: str(row.get("text", "")) for pid, row in fetched.items()}

    docs = []
    for (pair, r, path, score), per_edge in zip(kept, shown):
        flat = [rel for rels in per_edge for rel in rels]
        entity_names = [display[e] for e in path]
        docs.append(
            Document(
                id="path:" + stable_id("path", *(rel.id for rel in flat)),
                page_content=linearize_path(
                    entity_names, per_edge, passages, sentences_per_relation=p.sentences_per_relation
                ),
                metadata={
                    "_path_found": True,
                    "_ranked_by": "path",
                    "_pair": list(pair),
                    "_path": entity_names,
                    "_path_entity_ids": [ent_ids[e] for e in path],
                    "_hops": len(path) - 1,
                    "_score": score,
                    "_relations": [rel.text for rel in flat],
                    "_relation_ids": [rel.id for rel in flat],
                    "_passage_ids": list(dict.fromkeys(pid for rel in flat for pid in rel.passage_ids)),
                    "_paths_between_pair": len(r.paths),
                    "_truncated": r.truncated,
                },
            )
        )
    return docs
