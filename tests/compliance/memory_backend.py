"""The in-memory backend as a store backend: ``MilvusGraphStore(..., backend=MemoryStoreBackend())``.

The whole adapter a second backend needs besides its three seams (:mod:`.memory`): a
:class:`~langchain_graphrag_milvus.milvus.backend.StoreBackend` whose ``open`` returns them. It lives
outside the package; the package's files are not touched to plug it in.
"""

from __future__ import annotations

from langchain_graphrag_milvus.milvus.backend import BackendParts, BackendSettings
from langchain_graphrag_milvus.milvus.row_layout import RowLayout

from .memory import MemoryBackend, MemoryReads, MemoryState, MemoryWrites

__all__ = ["MemoryStoreBackend"]


class MemoryStoreBackend:
    """Opens :class:`MemoryState`, :class:`MemoryReads` and :class:`MemoryWrites` over one :class:`MemoryBackend`.

    Args:
        rows: The rows to open (default: a new, empty backend with the store's partition key field).
    """

    def __init__(self, rows: MemoryBackend | None = None) -> None:
        self.rows = rows

    def open(self, settings: BackendSettings) -> BackendParts:
        """The three seams over the rows (held: a second ``open`` sees the same rows)."""
        if self.rows is None:
            self.rows = MemoryBackend(settings.partition_key_field)
        reads = MemoryReads(self.rows)
        reads.layout = RowLayout(settings.partition_key_field)  # type: ignore[attr-defined]  # local search's
        return BackendParts(MemoryState(self.rows, settings.collection_prefix), reads, MemoryWrites(self.rows))
