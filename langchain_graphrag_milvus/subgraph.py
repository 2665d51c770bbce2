"""A subgraph you can look at: the part of the graph behind one answer, or the stored graph.

:class:`Subgraph` holds nodes and edges with their hop and score, the query and the
settings used. It exports to JSON (:meth:`Subgraph.to_json`), networkx
(:meth:`Subgraph.to_networkx`, GraphML via :meth:`Subgraph.write_graphml`) and a
self-contained HTML page (:meth:`Subgraph.to_html`: inline SVG, CSS and JavaScript, no
CDN, works offline from ``file://``).

Node kinds:

=================  =========================================================================
``query_entity``   a name the query mentions (LLM extractor, offline linker or ``entities=``)
``entity``         a graph entity; ``hop`` 0 for the entities the query's names matched
``relation``       a (subject, predicate, object) relation; ``hop`` is its distance from the
                   matched entities (0: touches one), ``score`` its similarity to the query
``passage``        a passage the retriever returned; ``score`` is the retriever's ``_score``,
                   ``hop`` its ``_hops``, ``data["rank"]`` its position
=================  =========================================================================

Edge kinds: ``match`` (query entity → entity, score = name similarity), ``subject``
(entity → relation), ``object`` (relation → entity), ``expands`` (relation at hop h →
relation at hop h + 1 sharing an entity; ``data["via"]`` names it) and ``supports``
(relation → passage).

Build one with :func:`~langchain_graphrag_milvus.retrieval.explain.query_subgraph` (or
``MilvusGraphRetriever.explain(query)``) and
:func:`~langchain_graphrag_milvus.retrieval.explain.store_subgraph` (or
``MilvusGraphStore.export_graph()``); both are re-exported here.

Example:
    >>> g = Subgraph(
    ...     nodes=[SubgraphNode("entity:a", "Euler", "entity", hop=0),
    ...            SubgraphNode("relation:r", "Euler was a student of Johann Bernoulli", "relation", hop=0, score=0.8)],
    ...     edges=[SubgraphEdge("entity:a", "relation:r", "subject")],
    ...     query="Who taught Euler?",
    ... )
    >>> g.to_json()["nodes"][1]["score"]
    0.8
    >>> "<svg" in g.to_html()
    True
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from langchain_graphrag_milvus.retrieval.subgraph_model import EdgeKind, NodeKind, Subgraph, SubgraphEdge, SubgraphNode

if TYPE_CHECKING:
    from langchain_graphrag_milvus.retrieval.explain import TracedRetriever
    from langchain_graphrag_milvus.retrieval.store_api import RetrievalStore

__all__ = ["Subgraph", "SubgraphNode", "SubgraphEdge", "NodeKind", "EdgeKind", "query_subgraph", "store_subgraph"]


def query_subgraph(retriever: TracedRetriever, query: str, **kwargs: Any) -> Subgraph:
    """What the retriever did for ``query``; see :func:`.retrieval.explain.query_subgraph`."""
    from langchain_graphrag_milvus.retrieval.explain import query_subgraph as build

    return build(retriever, query, **kwargs)


def store_subgraph(store: RetrievalStore, *, filter: Any = None, limit: int | None = None) -> Subgraph:
    """The stored graph, or a capped part of it; see :func:`.retrieval.explain.store_subgraph`."""
    from langchain_graphrag_milvus.retrieval.explain import store_subgraph as build

    return build(store, filter=filter, limit=limit)
