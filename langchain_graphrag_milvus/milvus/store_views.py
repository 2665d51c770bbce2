"""The store's collections as ``langchain_milvus.Milvus`` vector stores (a part of the store facade).

:class:`VectorStoreViews` gives :class:`~langchain_graphrag_milvus.store.MilvusGraphStore` its
LangChain views: ``store.passage_store.similarity_search("...")`` searches the passages with
``langchain_milvus`` directly, on the same connection and embedding.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from langchain_core.embeddings import Embeddings

from langchain_graphrag_milvus.milvus.schema import Kind

if TYPE_CHECKING:
    from langchain_milvus import Milvus

    from langchain_graphrag_milvus.milvus.connection import MilvusConnection
    from langchain_graphrag_milvus.milvus.fingerprint import EmbeddingCheck

__all__ = ["VectorStoreViews"]


class VectorStoreViews:
    """``vector_store(kind)`` and the ``entity_store`` / ``relation_store`` / ``passage_store`` views (a mixin)."""

    embedding: Embeddings
    search_params: dict[str, Any]
    if TYPE_CHECKING:

        @property
        def _connection(self) -> MilvusConnection: ...  # the store's: BackendFeatureError off Milvus

    _embedding_check: EmbeddingCheck

    def vector_store(self, kind: Kind) -> Milvus:
        """The collection as a ``langchain_milvus.Milvus`` vector store.

        Raises:
            EmbeddingMismatchError: The store's ``embedding`` is not the model its collections were built with.
        """
        self._embedding_check.before_search()
        return self._connection.vector_store(kind, self.embedding, self.search_params)

    @property
    def entity_store(self) -> Milvus:
        """Entities as a ``langchain_milvus.Milvus`` vector store."""
        return self.vector_store("entities")

    @property
    def relation_store(self) -> Milvus:
        """Relations as a ``langchain_milvus.Milvus`` vector store."""
        return self.vector_store("relations")

    @property
    def passage_store(self) -> Milvus:
        """Passages as a ``langchain_milvus.Milvus`` vector store."""
        return self.vector_store("passages")
