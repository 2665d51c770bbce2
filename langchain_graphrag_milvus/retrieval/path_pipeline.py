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
from collections.abc import Sequence
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
from langchain_graphrag_milvus.retrieval.documents import rank_score, row_metadata, source_label
from langchain_graphrag_milvus.retrieval.effects import (
    Compute,
    Embed,
    EntityNames,
    Fetch,
    GetGraph,
    Notify,
    Search,
    Steps,
    ViewOf,
    ask,
    search_all,
)
from langchain_graphrag_milvus.retrieval.graph_pipeline import query_entities
from langchain_graphrag_milvus.retrieval.linearize import PathRelation, linearize_path
from langchain_graphrag_milvus.retrieval.params import PathParams
from langchain_graphrag_milvus.retrieval.stages import exact_entities, search_in_view
from langchain_graphrag_milvus.text.names import stable_id

__all__ = ["PathParams", "path_pipeline", "no_path_event", "NO_PATH_EVENT"]

_RELATION_FIELDS = ("text", "passage_ids")
_SEARCH_CHUNK = 1024  # relation ids per filtered search (keeps expressions and limits small)


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
            near = graph.entities.find_ids([h.id for h in per]).tolist() if per else []
            idx = next((i for i in near if i >= 0 and (view is None or view.entities[i])), -1)
        if idx < 0:
            missing.append(name)
        elif all(idx != i for _, i in found):
            found.append((name, idx))
    return found, missing


def _exact_indices(graph: GraphIndex, names: Sequence[str], view: GraphView | None) -> list[int]:
    """Entity index of each name (case/variant-insensitive), -1 if none or outside the view."""
    return [int(i) for i in exact_entities(graph, names, view).tolist()]


def _path_score(path: Sequence[int], edge_score: dict[tuple[int, int], float]) -> float:
    return float(np.mean([edge_score.get(_edge(a, b), -1.0) for a, b in itertools.pairwise(path)]))


def _edge(a: int, b: int) -> tuple[int, int]:
    return (a, b) if a < b else (b, a)


@dataclass
class _Endpoints:
    """The query resolved against the graph: its vector and the entities found (name, index)."""

    graph: GraphIndex
    view: GraphView | None
    qvec: tuple[float, ...]
    found: list[tuple[str, int]]


@dataclass
class _EdgeScores:
    """The relations on the paths' edges and their similarity to the query."""

    edge_rels: dict[tuple[int, int], list[int]]
    rows: dict[str, dict[str, Any]]
    similarity: dict[int, float]
    edge_score: dict[tuple[int, int], float]


Kept = list[tuple[tuple[str, str], PathResult, list[int], float]]


def path_pipeline(
    query: str, p: PathParams, *, entity_extractor: Runnable[str, list[str]] | None
) -> Steps[list[Document]]:
    """Paths between the query's entities as pseudo-documents; yields effects."""
    if not isinstance(query, str):
        raise TypeError(f"query must be a string, got {type(query).__name__}")
    ends = yield from _endpoints(query, p, entity_extractor)
    if ends is None:
        return []
    results = yield from _shortest_paths(ends, p)
    if results is None:
        return []
    scores = yield from _score_edges(ends, results)
    kept = _keep(results, scores.edge_score, p)
    return (yield from _documents(ends, kept, scores, p))


def _endpoints(
    query: str, p: PathParams, entity_extractor: Runnable[str, list[str]] | None
) -> Steps[_Endpoints | None]:
    """1. The query's entities resolved to graph entities (None, after a no-path event, if fewer than two)."""
    names = yield from query_entities(
        query, p.entities, entity_extractor, timeout=p.extractor_timeout, filter_expr=p.filter
    )
    graph = yield from ask(GetGraph())
    view = (yield from ask(ViewOf(p.filter, graph))) if p.filter else None

    unresolved = tuple(n for n, i in zip(names, _exact_indices(graph, names, view)) if i < 0)
    vectors = check_query_vectors((query, *unresolved), (yield from ask(Embed((query, *unresolved)))))
    qvec = tuple(map(float, vectors[0]))
    hits: list[list[Hit]] = []
    if unresolved:
        evecs = tuple(tuple(map(float, v)) for v in vectors[1:])
        if view is None:
            hits = yield from ask(Search("entities", evecs, 3))
        else:  # the nearest entity inside the view, whatever lies outside it
            hits = yield from search_in_view(
                "entities", evecs, 1, graph.entities, view.entities, min_score=p.entity_min_score
            )
    found, missing = _entity_indices(graph, names, hits, p.entity_min_score, view)
    found = found[: p.max_entities]
    if len(found) < 2:
        known = [n for n, _ in found]
        where = " in the filtered part of the graph" if view is not None else " in the graph"
        reason = (
            f"need two entities{where}; found {len(found)}"
            + (f" ({', '.join(known)})" if known else "")
            + (f"; not found: {', '.join(missing)}" if missing else "")
        )
        yield from ask(no_path_event(reason, known))
        return None
    return _Endpoints(graph, view, qvec, found)


def _shortest_paths(ends: _Endpoints, p: PathParams) -> Steps[list[tuple[tuple[str, str], PathResult]] | None]:
    """2. All shortest paths per pair (None, after a no-path event, if no pair is connected)."""
    graph, found = ends.graph, ends.found
    agg = yield from ask(Compute(_aggregated, (graph, ends.view)))  # built once per graph / view
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
    if any(r.paths for _, r in results):
        return results
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
    reasons = "; ".join(f"{na} – {nb}: {r.reason}" for (na, nb), r in results)
    yield from ask(no_path_event(f"no path found ({reasons})", [n for n, _ in found], pair_info))
    return None


def _score_edges(ends: _Endpoints, results: list[tuple[tuple[str, str], PathResult]]) -> Steps[_EdgeScores]:
    """3. The relations on the edges, scored by a kNN search restricted to them."""
    graph = ends.graph
    mask = None if ends.view is None else ends.view.relations
    edges = {_edge(a, b) for _, r in results for path in r.paths for a, b in itertools.pairwise(path)}
    edge_rels = {e: edge_relations(graph, *e, mask) for e in edges}
    rel_idx = sorted({r for rels in edge_rels.values() for r in rels})
    rel_ids = graph.relations.ids_at(rel_idx)
    chunks = [rel_ids[i : i + _SEARCH_CHUNK] for i in range(0, len(rel_ids), _SEARCH_CHUNK)]
    answers = yield from search_all(
        [Search("relations", (ends.qvec,), len(c), expr.in_list("pk", c), _RELATION_FIELDS, tuple(c)) for c in chunks]
    )
    rows: dict[str, dict[str, Any]] = {
        h.id: {**h.fields, "_similarity": h.score} for (hits_,) in answers for h in hits_
    }
    absent = [i for i in rel_ids if i not in rows]
    if absent:  # not returned by the search (should not happen): still shown, unscored
        fetched = yield from ask(Fetch("relations", tuple(absent), _RELATION_FIELDS))
        rows.update({i: {**row, "_similarity": -1.0} for i, row in fetched.items()})
    similarity = {ri: float(rows.get(rid, {}).get("_similarity", -1.0)) for ri, rid in zip(rel_idx, rel_ids)}
    edge_score = {e: max((similarity[r] for r in rels), default=-1.0) for e, rels in edge_rels.items()}
    return _EdgeScores(edge_rels, rows, similarity, edge_score)


def _keep(
    results: list[tuple[tuple[str, str], PathResult]], edge_score: dict[tuple[int, int], float], p: PathParams
) -> Kept:
    """4. Diversity pruning per pair, most similar path first; pairs take turns up to ``k``."""
    per_pair = []
    for pair, r in results:
        chosen = prune_paths(r.paths, p.max_paths, lambda path: _path_score(path, edge_score))
        ranked = sorted(((path, _path_score(path, edge_score)) for path in chosen), key=lambda t: -t[1])
        per_pair.append([(pair, r, path, s) for path, s in ranked])
    return [item for turn in itertools.zip_longest(*per_pair) for item in turn if item is not None][: p.k]


def _documents(ends: _Endpoints, kept: Kept, scores: _EdgeScores, p: PathParams) -> Steps[list[Document]]:
    """5. Each kept path as a pseudo-document, with its passages' sentences if ``sentences``."""
    graph, view, edge_rels, rows, similarity = ends.graph, ends.view, scores.edge_rels, scores.rows, scores.similarity
    ent_on_paths = sorted({e for _, _, path, _ in kept for e in path})
    rel_on_paths = sorted(
        {r for _, _, path, _ in kept for a, b in itertools.pairwise(path) for r in edge_rels[_edge(a, b)]}
    )
    endpoint_idx = sorted(
        set(ent_on_paths) | {int(x) for r in rel_on_paths for x in (graph.rel_subject[r], graph.rel_object[r])}
    )
    ent_ids = dict(zip(endpoint_idx, graph.entities.ids_at(endpoint_idx)))
    names_by_id = yield from ask(EntityNames(tuple(ent_ids.values())))
    display = {i: names_by_id.get(eid) or eid for i, eid in ent_ids.items()}
    allowed = None if view is None else view.passage_ids

    def relation(ri: int) -> PathRelation:
        rid = graph.relations.id_at(ri)
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
    sources: dict[str, str] = {}
    if p.sentences:
        pids = sorted({pid for per_edge in shown for rels in per_edge for rel in rels for pid in rel.passage_ids})
        fetched = yield from ask(Fetch("passages", tuple(pids), ("text", "$meta"), p.filter))
        passages = {pid: str(row.get("text", "")) for pid, row in fetched.items()}
        sources = {pid: source_label({**row_metadata(row), "_passage_id": pid}) for pid, row in fetched.items()}

    docs = [
        _path_document(pair, r, path, s, per_edge, [display[e] for e in path], [ent_ids[e] for e in path], passages, p)
        for (pair, r, path, s), per_edge in zip(kept, shown)
    ]
    for rank, doc in enumerate(docs, start=1):  # pairs take turns: the raw scores are not in this order
        doc.metadata["_score"] = rank_score(rank)
        if sources:  # where the quoted passages come from, in the order of _passage_ids
            doc.metadata["_sources"] = [sources[x] for x in doc.metadata["_passage_ids"] if x in sources]
    return docs


def _path_document(
    pair: tuple[str, str],
    r: PathResult,
    path: list[int],
    score: float,
    per_edge: list[list[PathRelation]],
    entity_names: list[str],
    entity_ids: list[str],
    passages: dict[str, str] | None,
    p: PathParams,
) -> Document:
    """One kept path as a pseudo-document (text: :func:`~.linearize.linearize_path`)."""
    flat = [rel for rels in per_edge for rel in rels]
    return Document(
        id="path:" + stable_id("path", *(rel.id for rel in flat)),
        page_content=linearize_path(entity_names, per_edge, passages, sentences_per_relation=p.sentences_per_relation),
        metadata={
            "_path_found": True,
            "_ranked_by": "path",
            "_pair": list(pair),
            "_path": entity_names,
            "_path_entity_ids": entity_ids,
            "_hops": len(path) - 1,
            "_score": score,
            "_raw_score": score,
            "_relations": [rel.text for rel in flat],
            "_relation_ids": [rel.id for rel in flat],
            "_passage_ids": list(dict.fromkeys(pid for rel in flat for pid in rel.passage_ids)),
            "_paths_between_pair": len(r.paths),
            "_truncated": r.truncated,
        },
    )
