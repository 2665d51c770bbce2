"""The client of one connection: a ``MilvusClient`` made on first use (the async reads run it in a worker thread).

On Milvus Lite the stores of a process share the embedded server of a path (:mod:`.lite`): the
first client of a store acquires it and :meth:`MilvusClients.close` releases it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from pymilvus import MilvusClient

from langchain_graphrag_milvus.errors import StoreConnectionError
from langchain_graphrag_milvus.milvus.lite import (
    acquire_lite,
    is_lite,
    lite_connection_args,
    lite_filter,
    lite_server_running,
    release_lite,
)

__all__ = ["MilvusClients"]


class MilvusClients:
    """The client of one connection (nothing connects before first use).

    Args:
        uri: Milvus Lite path, server URI or Zilliz Cloud endpoint.
        connection_args: The ``MilvusClient`` arguments (``uri`` and ``token`` included).
        timeout: Seconds allowed for connecting.
        lock: The connection's lock (the sync client is made once under it).
    """

    def __init__(
        self, uri: str, connection_args: Mapping[str, Any], timeout: float | None, lock: threading.RLock
    ) -> None:
        self.uri = uri
        self.connection_args = dict(connection_args)
        self.timeout = timeout
        self.lock = lock
        self._client: MilvusClient | None = None

    def resolved_args(self) -> dict[str, Any]:
        """The ``MilvusClient`` arguments (Milvus Lite's with its gRPC options)."""
        args = dict(self.connection_args)
        return lite_connection_args(args) if is_lite(str(args["uri"])) else args

    @property
    def client(self) -> MilvusClient:
        """The synchronous ``MilvusClient`` (connects on first use)."""
        if self._client is None:
            with self.lock:
                if self._client is None:
                    for name in ("pymilvus.client.iterator.query_iterator", "grpc._server"):
                        logging.getLogger(name).addFilter(lite_filter)
                    lite_path = self.resolved_args()["uri"] if is_lite(self.uri) else None
                    running = lite_path is not None and lite_server_running(lite_path)
                    self._client = self._connect()
                    if lite_path is not None:
                        acquire_lite(lite_path, started=not running)
        return self._client

    def _connect(self) -> MilvusClient:
        try:
            return MilvusClient(**self.resolved_args(), timeout=self.timeout)
        except Exception as exc:  # pymilvus raises several types here; all mean the same
            raise StoreConnectionError(
                f"cannot connect to Milvus at {self.uri!r}: {exc}. Check that the URI is a server "
                "(http://host:19530), a Zilliz Cloud endpoint (https://..., with token=API key) or a "
                "local Milvus Lite path ending in .db, and that the server is running"
            ) from exc

    def close(self, others: Sequence[object] = ()) -> None:
        """Close the client; on Milvus Lite, release the server (:func:`.lite.release_lite`).

        Args:
            others: Other clients of the store (its vector stores'), not counted as other users
                of the Lite server.
        """
        with self.lock:
            had_client = self._client is not None
            own: list[object] = list(others)
            if self._client is not None:
                self._client.close()
                self._client = None
            if had_client and is_lite(self.uri):
                release_lite(self.resolved_args()["uri"], own)
