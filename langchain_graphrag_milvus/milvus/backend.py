"""The backend factory: what a store is built on, as one small protocol.

A :class:`StoreBackend` opens the three seams a store composes — its state
(:class:`~.state_seam.StoreState`), its reads (:class:`~.read_seam.StoreReads`) and its writes
(:class:`~.write_seam.StoreWrites`) — from the store's settings (:class:`BackendSettings`).
:class:`~.milvus_backend.MilvusBackend` is the default; another vector database is another
``StoreBackend`` plus the compliance suites (``tests/compliance/``), passed as
``MilvusGraphStore(..., backend=...)``. This module imports only the seams.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from langchain_graphrag_milvus.milvus.read_seam import StoreReads
from langchain_graphrag_milvus.milvus.state_seam import StoreState
from langchain_graphrag_milvus.milvus.write_seam import StoreWrites

__all__ = ["BackendParts", "BackendSettings", "StoreBackend"]


@dataclass(frozen=True)
class BackendSettings:
    """The store's settings a backend opens with (those of ``MilvusGraphStore``'s constructor)."""

    uri: str
    token: str | None
    connection_args: Mapping[str, Any]
    collection_prefix: str
    index_params: Mapping[str, Any]
    search_params: Mapping[str, Any]
    #: ``"auto"``, ``"flat"`` or ``"hnsw"`` (explicit ``index_params``: ``"flat"``).
    index_mode: str
    consistency_level: str
    partition_key_field: str | None
    timeout: float | None


@dataclass(frozen=True)
class BackendParts:
    """The three seams of an opened backend."""

    state: StoreState
    #: With a ``layout`` (:class:`~.row_layout.RowLayout`) of its rows, read by the local search when it holds vectors.
    reads: StoreReads
    writes: StoreWrites
    #: True if every search scans all rows (Milvus Lite): ``local_search="auto"`` then holds vectors in the client.
    scans: bool = False


class StoreBackend(Protocol):
    """Opens a store's state, reads and writes (nothing is contacted until they are used)."""

    def open(self, settings: BackendSettings) -> BackendParts:
        """The seams of the store these settings describe."""
        ...
