"""The default backend: Milvus (Lite, server or Zilliz Cloud) through one :class:`~.connection.MilvusConnection`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain_graphrag_milvus.errors import BackendFeatureError
from langchain_graphrag_milvus.milvus.backend import BackendParts, BackendSettings
from langchain_graphrag_milvus.milvus.connection import MilvusConnection
from langchain_graphrag_milvus.milvus.lite import is_lite
from langchain_graphrag_milvus.milvus.milvus_writes import MilvusWrites
from langchain_graphrag_milvus.milvus.reads import MilvusReads, RowLayout

__all__ = ["MilvusBackend", "milvus_only"]


class MilvusBackend:
    """A :class:`~.backend.StoreBackend` on Milvus: the connection is the state, reads and writes go through it.

    Args:
        connect: Makes the connection from keyword settings (default :class:`~.connection.MilvusConnection`;
            the existing-collection store passes its own kind).
        layout: How the rows are stored (None: this package's schema).
    """

    def __init__(
        self, connect: Callable[..., MilvusConnection] = MilvusConnection, layout: RowLayout | None = None
    ) -> None:
        self.connect = connect
        self.layout = layout

    def open(self, settings: BackendSettings) -> BackendParts:
        """The connection, its :class:`~.reads.MilvusReads` and :class:`~.milvus_writes.MilvusWrites` (no call made)."""
        connection = self.connect(
            uri=settings.uri,
            token=settings.token,
            connection_args=dict(settings.connection_args),
            collection_prefix=settings.collection_prefix,
            index_params=settings.index_params,
            consistency_level=settings.consistency_level,
            partition_key_field=settings.partition_key_field,
            timeout=settings.timeout,
        )
        connection.index_mode = settings.index_mode
        search_params: dict[str, Any] = dict(settings.search_params)
        reads = MilvusReads(connection, search_params, self.layout)
        return BackendParts(connection, reads, MilvusWrites(connection, reads), scans=is_lite(settings.uri))


def milvus_only(state: object, label: str) -> MilvusConnection:
    """The Milvus connection that is this state; on another backend a ``BackendFeatureError`` naming ``label``."""
    if isinstance(state, MilvusConnection):
        return state
    raise BackendFeatureError(
        f"{label} runs on {type(state).__name__}, not Milvus: this feature (the Milvus client, the langchain_milvus "
        "views, index_recall, drop, aclient) needs the default MilvusBackend"
    )
