"""What a store makes of itself: its naive and path retrievers, its index recall, its graph as a Subgraph.

Also the deprecated ``aclient()`` (an ``AsyncMilvusClient`` on the store's Milvus).

:class:`StoreOutputs` is a mixin of :class:`~langchain_graphrag_milvus.store.MilvusGraphStore`
(one concern: what callers build from a store, apart from owning its parts). It sits below the
store and above the retrievers it builds, which it imports when a method runs.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from langchain_graphrag_milvus.errors import BackendFeatureError
from langchain_graphrag_milvus.milvus.indexes import index_recall
from langchain_graphrag_milvus.milvus.reads import MilvusReads

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings
    from pymilvus import AsyncMilvusClient

    from langchain_graphrag_milvus.milvus.connection import MilvusConnection
    from langchain_graphrag_milvus.milvus.read_seam import StoreReads
    from langchain_graphrag_milvus.milvus.schema import Kind
    from langchain_graphrag_milvus.path_retriever import MilvusPathRetriever
    from langchain_graphrag_milvus.retrieval.store_api import RetrievalStore
    from langchain_graphrag_milvus.retrievers import NaivePassageRetriever
    from langchain_graphrag_milvus.subgraph import Subgraph

__all__ = ["StoreOutputs"]


class StoreOutputs:
    """``as_naive_retriever``, ``as_path_retriever``, ``index_recall`` and ``export_graph`` (a mixin)."""

    embedding: Embeddings
    _reads: StoreReads
    if TYPE_CHECKING:

        @property
        def _connection(self) -> MilvusConnection: ...  # the store's: BackendFeatureError off Milvus

    async def aclient(self) -> AsyncMilvusClient:
        """Deprecated: a new ``AsyncMilvusClient`` on this store's Milvus; the caller closes it.

        The store's own async reads run its blocking reads in a worker thread (pymilvus' async
        client measured no faster: ``benchmarks/bench_async_reads.py``), so it keeps no async
        client. On Milvus Lite the client connects to the server this store runs.

            client = await store.aclient()  # DeprecationWarning
            try:
                names = await client.list_collections()
            finally:
                await client.close()
        """
        from pymilvus import AsyncMilvusClient

        warnings.warn(
            "MilvusGraphStore.aclient() is deprecated: the store keeps no async client; it returns a new "
            "AsyncMilvusClient that the caller closes",
            DeprecationWarning,
            stacklevel=2,
        )
        self._connection.client  # noqa: B018 - connects (and starts Milvus Lite's server) first
        return AsyncMilvusClient(**self._connection.resolved_args())

    def _as_store(self) -> RetrievalStore:
        """This store, as the retrievers take it (the mixin is only ever part of a ``MilvusGraphStore``)."""
        return cast("RetrievalStore", self)

    def index_recall(
        self, queries: Sequence[str], *, k: int = 10, kinds: Sequence[Kind] = ("relations", "passages")
    ) -> dict[str, dict[str, Any]]:
        """Recall@k of the vector indexes against exact search for these queries (``{kind: {index, recall...}}``).

        See :func:`~langchain_graphrag_milvus.milvus.indexes.index_recall` (a scan of every stored vector).
        """
        reads = self._reads
        if not isinstance(reads, MilvusReads):  # a Milvus-only feature: BackendFeatureError on another backend
            raise BackendFeatureError(f"index_recall needs the Milvus backend, not {type(reads).__name__}")
        return index_recall(reads, [self.embedding.embed_query(q) for q in queries], k, kinds)

    def as_naive_retriever(self, **kwargs: Any) -> NaivePassageRetriever:
        """A plain vector retriever over the same passages (same Document format)."""
        from langchain_graphrag_milvus.retrievers import NaivePassageRetriever

        return NaivePassageRetriever(store=self._as_store(), **kwargs)

    def as_path_retriever(self, **kwargs: Any) -> MilvusPathRetriever:
        """A :class:`~langchain_graphrag_milvus.path_retriever.MilvusPathRetriever` over this store."""
        from langchain_graphrag_milvus.path_retriever import MilvusPathRetriever

        return MilvusPathRetriever(store=self._as_store(), **kwargs)

    def export_graph(self, *, filter: str | Mapping[str, Any] | None = None, limit: int | None = None) -> Subgraph:
        """The stored graph (or the part a passage filter allows, or ``limit`` relations) as a Subgraph.

        Export it with ``.to_networkx()``, ``.write_graphml(path)``, ``.to_json()`` or
        ``.to_html()``; see :func:`~langchain_graphrag_milvus.retrieval.explain.store_subgraph`.
        """
        from langchain_graphrag_milvus.retrieval.explain import store_subgraph

        return store_subgraph(self._as_store(), filter=filter, limit=limit)
