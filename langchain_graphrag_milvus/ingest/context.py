"""What ingestion needs of a store: its parts and its write settings, in one value.

The store builds an :class:`IngestContext` for each call; ingestion never sees the store
itself (so it cannot reach into its private state), only the parts it writes through
(:class:`~langchain_graphrag_milvus.milvus.writes.StoreParts`) and these settings.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from langchain_core.embeddings import Embeddings
from langchain_core.runnables import Runnable

from langchain_graphrag_milvus.ingest.triplets import TripletCache
from langchain_graphrag_milvus.milvus.writes import StoreParts

__all__ = ["IngestContext", "check_write_settings"]


def check_write_settings(
    batch_size: int, extraction_concurrency: int, synonym_threshold: float | None, source_field: str | None
) -> None:
    """Check a store's write settings (see :class:`~langchain_graphrag_milvus.store.MilvusGraphStore`).

    Raises:
        TypeError: ``source_field`` is not a non-empty string or None.
        ValueError: A count is not positive, or the threshold is not a cosine.
    """
    if source_field is not None and (not isinstance(source_field, str) or not source_field):
        raise TypeError("source_field must be a metadata key (a non-empty string) or None")
    if batch_size < 1:
        raise ValueError("batch_size must be positive")
    if extraction_concurrency < 1:
        raise ValueError("extraction_concurrency must be positive")
    if synonym_threshold is not None and not -1.0 <= synonym_threshold <= 1.0:
        raise ValueError("synonym_threshold is a cosine similarity in [-1, 1]")


@dataclass(frozen=True)
class IngestContext:
    """A store's parts and write settings (see :class:`~langchain_graphrag_milvus.store.MilvusGraphStore`).

    Attributes:
        parts: Connection, reads, graph cache and batch size.
        embedding: Embeds every new text once.
        cosine: The vector index's metric is cosine (vectors are checked for it).
        extractor: The store's default triplet extractor.
        supplement: A second extractor whose triplets are added to every written passage's own
            (:mod:`~langchain_graphrag_milvus.ingest.supplement`); None: none.
        extraction_cache: Extractions cached by passage text.
        extraction_concurrency: Extraction calls in flight at once.
        synonym_threshold: Link new entities to entities embedding at least this close (None: no).
        synonym_top_k: At most this many synonym links per entity.
        source_field: The metadata key naming a document's source.
        bulk_load: A load that starts on empty (or missing) collections skips the per-batch
            "does this exist" reads and keeps the graph it builds in memory
            (:mod:`~langchain_graphrag_milvus.ingest.bulk`); False: always read.
        known_vectors: Text → vector read from rows an upsert is about to delete
            (:func:`~langchain_graphrag_milvus.ingest.reuse.stale_vectors`): not embedded again.
    """

    parts: StoreParts
    embedding: Embeddings
    cosine: bool
    extractor: Runnable[Any, Any] | None
    extraction_cache: TripletCache
    extraction_concurrency: int
    synonym_threshold: float | None
    synonym_top_k: int
    source_field: str | None
    bulk_load: bool = True
    supplement: Runnable[Any, Any] | None = None
    known_vectors: Mapping[str, list[float]] = field(default_factory=dict)

    @property
    def partition_key_field(self) -> str | None:
        """The passages' partition key field (None: no tenants)."""
        return self.parts.writes.partition_key_field

    def row_tenants(self, records: Iterable[Any]) -> dict[str, str] | None:
        """Passage id → tenant of ``records`` (``PassageRecord``) if rows are kept per tenant, else None.

        Only a partitioned store created with per-tenant rows keeps them so
        (:meth:`~langchain_graphrag_milvus.milvus.write_seam.StoreWrites.tenant_rows`).
        """
        key = self.partition_key_field
        if key is None or not self.parts.writes.tenant_rows():
            return None
        return {r.id: str(r.metadata[key]) for r in records if isinstance(r.metadata.get(key), str)}

    @property
    def batch_size(self) -> int:
        """Texts per embedding call and rows per insert."""
        return self.parts.batch_size
