"""Typed errors raised by langchain-graphrag-milvus.

Every error the package raises on purpose derives from :class:`GraphRAGError`, so
``except GraphRAGError`` catches all of them. Each message says what to fix.
"""

from __future__ import annotations

__all__ = [
    "GraphRAGError",
    "MalformedRecordError",
    "MalformedTripletError",
    "CollectionNotFoundError",
    "EmbeddingMismatchError",
    "EmbeddingDimensionError",
    "UnknownIdError",
    "InvalidFilterError",
    "StoreConnectionError",
    "LitePathError",
    "StaleIndexError",
    "CorruptIndexError",
    "InvalidIdError",
    "InvalidEmbeddingError",
    "GraphPathError",
    "ForeignCollectionError",
    "ConcurrentWriteError",
    "BackendFeatureError",
    "ExtractionCacheError",
    "OnnxCacheError",
    "UnpageableKeysError",
    "NoRelationsWarning",
]


class GraphRAGError(Exception):
    """Base class of every error raised on purpose by this package."""


class MalformedRecordError(GraphRAGError, ValueError):
    """An ingested record (passage) cannot be used: missing text, bad id, bad metadata."""


class InvalidIdError(MalformedRecordError):
    """A passage or source id Milvus cannot store or that is reserved.

    Raised before anything is written: ids that are not strings (or integers), empty,
    longer than 512 bytes of UTF-8, not encodable as UTF-8 (lone surrogates), or of the
    form ``"{source}#0000"`` that chunk ids of another source use.
    """


class MalformedTripletError(MalformedRecordError):
    """A triplet is not three non-empty strings (raised only with ``strict=True``).

    Without ``strict``, such triplets are skipped and counted in the
    :class:`~langchain_graphrag_milvus.IngestReport`.
    """


class CollectionNotFoundError(GraphRAGError, LookupError):
    """The collections for a prefix do not exist at the given URI (nothing ingested yet)."""


class EmbeddingMismatchError(GraphRAGError, ValueError):
    """The ``embedding`` model is not the one the store's collections were built with.

    Two models of the same dimension are told apart by the fingerprint recorded in the
    collections (:mod:`~langchain_graphrag_milvus.milvus.fingerprint`): a store refuses to write
    with another model (before anything is written) and to search with one (its scores would
    be meaningless). The message names the ``embedding`` setting and both models.
    """


class EmbeddingDimensionError(EmbeddingMismatchError):
    """The embedding model's dimension differs from the existing collections'."""


class UnknownIdError(GraphRAGError, KeyError):
    """An entity, relation or passage id is not in the graph index."""

    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0]) if self.args else ""


class InvalidEmbeddingError(GraphRAGError, ValueError):
    """The embedding model returned unusable vectors (NaN, infinite, zero, not numbers).

    Raised before anything is created or written; the message names the offending text.
    """


class InvalidFilterError(GraphRAGError, ValueError):
    """A metadata filter or a value meant for a Milvus expression is not acceptable."""


class ForeignCollectionError(GraphRAGError):
    """A collection under the store's names exists but was not created by this package.

    E.g. a team's own ``langchain_milvus.Milvus`` collection named ``{prefix}_passages``.
    Writes refuse it, and :meth:`~langchain_graphrag_milvus.MilvusGraphStore.drop` drops
    nothing when any of its collections is one.
    """


class GraphPathError(GraphRAGError, ValueError):
    """A ``graph_path`` the package may not write to, rename or delete.

    A file, a symbolic link, a folder holding anything but this package's saved index, or
    a path that is, contains or lies inside the Milvus Lite database (or a folder being
    ingested). Raised before anything is written; the message names the path and what it
    holds.
    """


class StoreConnectionError(GraphRAGError, ConnectionError):
    """Milvus cannot be reached at the given URI within the timeout."""


class LitePathError(StoreConnectionError, FileNotFoundError):
    """A Milvus Lite path whose parent directory does not exist (a typo, most likely)."""


class StaleIndexError(GraphRAGError, RuntimeError):
    """A persisted graph index does not match the Milvus data it claims to describe."""


class CorruptIndexError(StaleIndexError):
    """A persisted graph index is damaged or incomplete.

    A truncated or altered file, a missing file, an invalid ``manifest.json``. Raised only
    with ``on_stale="error"``; otherwise the index is rebuilt from Milvus with a logged
    warning. The message names ``graph_path``.
    """


class ConcurrentWriteError(GraphRAGError, RuntimeError):
    """Another writer holds (or took over) this store's write lease.

    Writes into one collection prefix are serialized: threads of one process wait for each
    other; a process waits for another process's write to end (its lease in Milvus) for up
    ``store._connection.lease.wait`` seconds (90) and then raises this, naming the other writer.
    Raised in the middle of an operation only when a lease expired and another writer took
    it over: every write can be re-run, so re-run it when the other writer is done.
    """


class BackendFeatureError(GraphRAGError, NotImplementedError):
    """A Milvus-only feature was asked of a store on another backend.

    The ``langchain_milvus`` views (``vector_store``, ``passage_store``...), ``client``,
    ``index_recall``, ``drop`` and ``aclient`` speak to Milvus itself; a store opened with
    ``backend=`` another :class:`~langchain_graphrag_milvus.milvus.backend.StoreBackend` has none.
    The message names the feature and the backend.
    """


class UnpageableKeysError(GraphRAGError):
    """A scan of every row cannot page past a primary key with a quote or a backslash.

    pymilvus' ``query_iterator`` asks for the next page with the last key unescaped, so the
    scan stops with this error rather than read a broken or different expression. The message
    names the collection; reading the rows by id (a fetch) works.
    """


class ExtractionCacheError(GraphRAGError, ValueError):
    """An ``extraction_cache`` file is not a triplet cache of this package, or was altered.

    Another program's sqlite database, a file that is not sqlite at all, a truncated file
    or an entry that is not a JSON list. The message names the file; nothing is written
    into it.
    """


class NoRelationsWarning(UserWarning):
    """A store holds passages but no relations: the graph retriever can only rank by similarity.

    Warned when an ingest leaves the store without a single relation (no extractor and no
    triplets) and, once per store, when a graph retrieval falls back to similarity for that
    reason. Fix: ingest with an extractor (``extractor="offline"`` or an LLM extractor;
    ``ingest --extractor offline`` on the command line) or give triplets.
    """


class OnnxCacheError(GraphRAGError, RuntimeError):
    """The place of the package's ONNX export of the local model holds something it did not create.

    A file, a folder without the package's manifest, or a model file changed since the export.
    Nothing there is overwritten or deleted; the message names the path. With
    ``LocalMiniLMEmbeddings(runtime="auto")`` the torch runtime is used instead (logged).
    """
