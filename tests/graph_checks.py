"""Comparing two graph indexes by content (unit tests of the graph core and integration tests of ingest)."""

from __future__ import annotations

from langchain_graphrag_milvus.graph import GraphIndex


def graph_signature(graph: GraphIndex) -> set[tuple[int, int, int, tuple[str, ...]]]:
    """Each relation as (its key, its subject's key, its object's key, its sorted passage ids).

    Two graphs with equal signatures hold the same relations between the same entities, backed by
    the same passages, whatever the order of their rows.
    """
    ents, rels = graph.entities.keys, graph.relations.keys
    return {
        (
            int(rels[r]),
            int(ents[graph.rel_subject[r]]),
            int(ents[graph.rel_object[r]]),
            tuple(sorted(graph.passages.ids[p] for p in graph.rel_pas.row(r))),
        )
        for r in range(graph.n_relations)
    }
