"""A graph store over a collection made with ``langchain_milvus.Milvus`` (passages stay where they are).

A team that already has its passages in Milvus (``Milvus.from_documents(...)``) keeps that
collection: the store reads its primary key, text and metadata fields, and creates only
the entity and relation collections beside it (``{collection}_graph_entities`` and
``_relations`` by default). Retrieval (graph, paths, naive) then reads passages from the
existing collection; relation rows point at its primary keys.

Example:
    .. code-block:: python

        from langchain_milvus import Milvus
        from langchain_graphrag_milvus import ExistingCollectionGraphStore, MilvusGraphRetriever

        Milvus.from_documents(docs, embeddings, collection_name="docs",
                              connection_args={"uri": "./team.db"})        # what the team has
        store = ExistingCollectionGraphStore(
            embeddings, collection_name="docs", uri="./team.db", extractor=extractor)
        store.index_passages()              # triplets for every passage: extracted, cached
        MilvusGraphRetriever(store=store, k=4).invoke("...")

Passages are added or removed with the team's own ``langchain_milvus.Milvus`` store
(also ``store.passage_store``); :meth:`ExistingCollectionGraphStore.index_passages` then
brings the graph up to date (new passages indexed, changed ones re-linked, vanished ones
unlinked). The user's collection is never written to, and :meth:`drop` leaves it alone.

The embedding model is checked as on any store (:mod:`~langchain_graphrag_milvus.milvus.fingerprint`):
the entity and relation collections, which the store creates, record its fingerprint, and another model
is refused (:class:`~langchain_graphrag_milvus.errors.EmbeddingMismatchError`). The user's collection has
no fingerprint and gets none (not even a property is written to it): that its vectors come from the
same model as ``embedding`` is the caller's word.

The arguments and methods are documented on
:class:`~langchain_graphrag_milvus.existing_parts.ExistingCollectionParts` (what this store adds);
the class statement stands beside ``MilvusGraphStore`` in ``store.py`` so that the deprecated
``MilvusGraphStore.from_existing_collection`` needs no import of this module.
"""

from __future__ import annotations

from langchain_graphrag_milvus.store import ExistingCollectionGraphStore

__all__ = ["ExistingCollectionGraphStore"]
