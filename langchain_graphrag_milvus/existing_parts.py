"""What an existing-collection store adds to :class:`~langchain_graphrag_milvus.store.MilvusGraphStore`.

:class:`~langchain_graphrag_milvus.existing_store.ExistingCollectionGraphStore` is
``ExistingCollectionParts`` on top of ``MilvusGraphStore``. Its class statement stands beside
``MilvusGraphStore`` in ``store.py``, so the deprecated ``MilvusGraphStore.from_existing_collection``
names it without importing a module above the store; what it does lives here, below the store,
and it is documented (and imported from) :mod:`langchain_graphrag_milvus.existing_store`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from langchain_graphrag_milvus.errors import GraphRAGError
from langchain_graphrag_milvus.milvus import expr
from langchain_graphrag_milvus.milvus.connection import MilvusConnection
from langchain_graphrag_milvus.milvus.existing import ExistingCollectionConnection, ExistingPassageLayout

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings
    from langchain_core.runnables import Runnable

    from langchain_graphrag_milvus.ingest.context import IngestContext
    from langchain_graphrag_milvus.ingest.existing_index import IndexReport
    from langchain_graphrag_milvus.milvus.fingerprint import EmbeddingCheck

__all__ = ["ExistingCollectionParts"]


class ExistingCollectionParts:
    """The existing collection's field mapping, its connection, read-only passages and ``index_passages``.

    A mixin placed before ``MilvusGraphStore`` (whose ``uri``, ``collection_prefix``, connection
    and ingest context it uses); see :mod:`langchain_graphrag_milvus.existing_store`.
    """

    uri: str
    collection_prefix: str
    if TYPE_CHECKING:

        @property
        def _connection(self) -> MilvusConnection: ...  # the store's: BackendFeatureError off Milvus

    _ingest_context: Callable[[], IngestContext]
    _embedding_check: EmbeddingCheck

    def __init__(
        self,
        embedding: Embeddings,
        *,
        collection_name: str,
        text_field: str = "text",
        primary_field: str | None = None,
        vector_field: str | None = None,
        metadata_fields: Sequence[str] | None = None,
        collection_prefix: str | None = None,
        **kwargs: Any,
    ) -> None:
        """A graph store over the existing collection ``collection_name``.

        Args:
            embedding: The embedding model the collection was made with.
            collection_name: The existing collection.
            text_field: Its text field (langchain-milvus' default ``"text"``).
            primary_field: Its primary key (default: read from the schema).
            vector_field: Its vector field (default: the only float vector field).
            metadata_fields: Fields returned as Document metadata (default: every scalar field
                but the key and text, plus dynamic fields).
            collection_prefix: Prefix of the entity and relation collections (default
                ``"{collection_name}_graph"``).
            **kwargs: Other :class:`~langchain_graphrag_milvus.store.MilvusGraphStore` arguments
                (``uri``, ``token``, ``extractor``, ``extraction_cache``, ``graph_path``...).
        """
        if kwargs.get("partition_key_field"):
            raise ValueError("partition_key_field does not apply to an existing collection (its schema is fixed)")
        self.passage_collection = expr.field_name(collection_name)
        self._layout = ExistingPassageLayout(
            expr.field_name(text_field),
            expr.field_name(primary_field) if primary_field else None,
            expr.field_name(vector_field) if vector_field else None,
            [expr.field_name(f) for f in metadata_fields] if metadata_fields is not None else None,
        )
        prefix = collection_prefix or f"{collection_name}_graph"
        kwargs.setdefault("graph_path", None)  # not saved unless asked: the passages are the collection owner's
        super().__init__(embedding, collection_prefix=prefix, **kwargs)  # type: ignore[call-arg]

    def _open_connection(self, **settings: Any) -> ExistingCollectionConnection:
        return ExistingCollectionConnection(passage_collection=self.passage_collection, layout=self._layout, **settings)

    def _row_layout(self) -> ExistingPassageLayout:
        return self._layout

    def __repr__(self) -> str:
        return (
            f"ExistingCollectionGraphStore(uri={self.uri!r}, collection_name={self.passage_collection!r}, "
            f"collection_prefix={self.collection_prefix!r})"
        )

    # ------------------------------------------------------------------ the collection's fields
    @property
    def text_field(self) -> str:
        """The existing collection's text field."""
        return self._layout.text_field

    @property
    def primary_field(self) -> str | None:
        """Its primary key (known once the collection was opened, unless given)."""
        return self._layout.primary_field

    @property
    def vector_field(self) -> str | None:
        """Its vector field (known once the collection was opened, unless given)."""
        return self._layout.vector_field

    @property
    def metadata_fields(self) -> list[str] | None:
        """The fields returned as metadata (known once the collection was opened, unless given)."""
        return self._layout.metadata_fields

    def pk_filter(self, ids: Sequence[str]) -> str:
        """``<primary key> in [...]`` for passage ids (escaped strings, or integers)."""
        self._connection.check_open()
        return self._layout.pk_filter("passages", ids)

    # ------------------------------------------------------------------ writes
    def index_passages(
        self,
        *,
        triplets: Mapping[str, Sequence[Sequence[str]]] | None = None,
        extractor: Runnable[str, Any] | None = None,
        strict: bool = False,
        show_progress: bool | None = None,
    ) -> IndexReport:
        """Build or update the graph over the existing collection's passages.

        See :func:`~langchain_graphrag_milvus.ingest.existing_index.index_passages`. The entity and
        relation collections record the embedding model's fingerprint
        (:mod:`~langchain_graphrag_milvus.milvus.fingerprint`) and refuse another model; the existing
        collection carries none and is never written to (not even its properties).

        Raises:
            EmbeddingMismatchError: ``embedding`` is not the model the graph's collections were built with.
        """
        from langchain_graphrag_milvus.ingest.existing_index import index_passages

        self._embedding_check.before_write()  # the graph's collections record the model; the team's: never written
        return index_passages(
            self._ingest_context(),
            triplets=triplets,
            extractor=extractor,
            strict=strict,
            show_progress=show_progress,
        )

    def _read_only(self, *args: Any, **kwargs: Any) -> Any:
        raise GraphRAGError(
            f"the passages live in the existing collection {self.passage_collection!r}: add, change or delete them "
            "with your langchain_milvus.Milvus store (or store.passage_store), then call store.index_passages()"
        )

    add_records = add_documents = add_jsonl = upsert_documents = _read_only
    delete_documents = delete_passages = _read_only
