"""What the server keeps warm and how it bounds work: the store, the limits, the ingest gate.

One :class:`ServerState` per process: the store (its embedding model, Milvus clients and
graph index stay loaded between requests), the optional chat model of ``/ask``, the
limits (:class:`ServerLimits`) and the :class:`IngestGate` that lets one ingest run at a
time with a bounded queue behind it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from langchain_graphrag_milvus.errors import GraphRAGError, InvalidFilterError
from langchain_graphrag_milvus.milvus import expr
from langchain_graphrag_milvus.retrieval.defaults import K_BY_MODE

if TYPE_CHECKING:
    from langchain_core.documents import Document
    from langchain_core.language_models import BaseChatModel
    from langchain_core.retrievers import BaseRetriever

    from langchain_graphrag_milvus.store import MilvusGraphStore

__all__ = [
    "ServerLimits",
    "ServerState",
    "IngestGate",
    "IngestBusyError",
    "ChatModelNotConfiguredError",
    "document_json",
]


class IngestBusyError(GraphRAGError, RuntimeError):
    """An ingest is running and the queue behind it is full (HTTP 429; retry later)."""

    http_status = 429


class ChatModelNotConfiguredError(GraphRAGError, RuntimeError):
    """``/ask`` needs a chat model: start the server with ``OPENAI_API_KEY`` set (HTTP 503)."""

    http_status = 503


@dataclass(frozen=True)
class ServerLimits:
    """Bounds of one request.

    Attributes:
        max_body_bytes: Largest request body (JSON or upload); larger ones get HTTP 413.
        max_k: Largest ``k`` of a query.
        max_query_chars: Longest query text.
        max_documents: Documents of one ``POST /documents``.
        ingest_queue: Ingest requests that may wait while one runs; more get HTTP 429.
    """

    max_body_bytes: int = 16 * 2**20
    max_k: int = 50
    max_query_chars: int = 2000
    max_documents: int = 1000
    ingest_queue: int = 2


class IngestGate:
    """One ingest at a time; up to ``queue`` more wait; beyond that :class:`IngestBusyError`.

    The writes themselves run in a worker thread (the store's async write methods), so the
    event loop keeps answering queries while an ingest runs.
    """

    def __init__(self, queue: int) -> None:
        if queue < 0:
            raise ValueError("the ingest queue must be 0 or more")
        self.queue = queue
        self.waiting = 0
        self.running = False
        self._lock = asyncio.Lock()

    @contextlib.asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold the ingest slot for the body of the ``async with``.

        Raises:
            IngestBusyError: An ingest runs and ``queue`` requests already wait.
        """
        if self._lock.locked() and self.waiting >= self.queue:
            raise IngestBusyError(
                f"an ingest is running and {self.waiting} more are waiting (the limit); retry when it is done"
            )
        self.waiting += 1
        try:
            await self._lock.acquire()
        finally:
            self.waiting -= 1
        self.running = True
        try:
            yield
        finally:
            self.running = False
            self._lock.release()


@dataclass
class ServerState:
    """The warm parts of a server process.

    Attributes:
        store: The store (opened once; closed when the server stops).
        partition_key: The store's partition key field (tenants), or None.
        limits: Request bounds.
        llm: The chat model of ``/ask`` (None: ``/ask`` answers 503).
        gate: The ingest gate.
    """

    store: MilvusGraphStore
    partition_key: str | None = None
    limits: ServerLimits = field(default_factory=ServerLimits)
    llm: BaseChatModel | None = None
    gate: IngestGate = field(init=False)

    def __post_init__(self) -> None:
        self.gate = IngestGate(self.limits.ingest_queue)

    def check_k(self, k: int | None, mode: str = "graph") -> int:
        """``k`` within 1..``max_k``, else ``ValueError``; None: the ``mode``'s default (``K_BY_MODE``)."""
        if k is None:
            k = K_BY_MODE[mode]
        if not 1 <= k <= self.limits.max_k:
            raise ValueError(f"k must be between 1 and {self.limits.max_k}, got {k}")
        return k

    def check_query(self, query: str) -> str:
        """A non-empty query of at most ``max_query_chars`` characters."""
        if not query.strip():
            raise ValueError("the query is empty")
        if len(query) > self.limits.max_query_chars:
            raise ValueError(f"the query is longer than {self.limits.max_query_chars} characters")
        return query

    def scoped_filter(
        self, user_filter: Mapping[str, Any] | None, tenant: str | None, all_tenants: bool = False
    ) -> dict[str, Any] | None:
        """The request's ``{field: value}`` filter restricted to ``tenant`` on a partitioned store.

        Only dict filters are accepted over the network (their values are escaped by
        :mod:`~langchain_graphrag_milvus.milvus.expr`); raw expressions are not.

        Raises:
            InvalidFilterError: The filter names another tenant.
            ValueError: A partitioned store without ``tenant`` (or ``all_tenants``), or a
                tenant on a store without tenants.
        """
        result = dict(user_filter) if user_filter else {}
        expr.as_filter(result or None)  # validates field names and values now (typed error)
        key = self.partition_key
        if key is None:
            if tenant is not None:
                raise ValueError("this store has no tenants (no partition key): leave tenant out")
            return result or None
        if tenant is None:
            if not all_tenants:
                raise ValueError(f"this store is partitioned by {key!r}: pass tenant (or all_tenants=true)")
            return result or None
        if key in result and result[key] != tenant:
            raise InvalidFilterError(f"the filter names {key}={result[key]!r} but tenant is {tenant!r}")
        result[key] = tenant
        return result

    def retriever(self, mode: str, k: int, filter_value: dict[str, Any] | None) -> BaseRetriever:
        """The retriever of ``mode`` (graph, naive, paths) over the warm store."""
        store = self.store
        if mode == "naive":
            return store.as_naive_retriever(k=k, filter=filter_value)
        if mode == "paths":
            return store.as_path_retriever(k=k, filter=filter_value, sentences=True)
        from langchain_graphrag_milvus.retrievers import MilvusGraphRetriever

        return MilvusGraphRetriever(store=store, k=k, filter=filter_value)


def document_json(doc: Document, rank: int) -> dict[str, Any]:
    """One retrieved Document as JSON: rank, id, source, page, score, text and the provenance metadata."""
    meta = dict(doc.metadata or {})
    row: dict[str, Any] = {
        "rank": rank,
        "id": meta.pop("_passage_id", doc.id),
        "source": meta.get("source", meta.get("source_id")),
        "page": meta.get("page"),
        "score": meta.pop("_score", None),
        "text": doc.page_content,
    }
    provenance = ("_relations", "_relation_ids", "_hops", "_ranked_by", "_path", "_passage_ids", "_path_found")
    for key in (*provenance, "_similarity", "_raw_score", "_sources"):
        if key in meta:
            row[key.lstrip("_")] = meta.pop(key)
    row["metadata"] = {k: v for k, v in meta.items() if not k.startswith("_") and k != "triplets"}
    return row
