"""Reading Milvus for the store: batched searches, fetches by id, iteration, counts.

A mixin of :class:`~langchain_graphrag_milvus.store.MilvusGraphStore`; the sync and async
variants share the request building and the result parsing.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from langchain_graphrag_milvus.errors import EmbeddingDimensionError
from langchain_graphrag_milvus.milvus import expr
from langchain_graphrag_milvus.milvus.filters import filter_errors
from langchain_graphrag_milvus.milvus.schema import KINDS, Kind

if TYPE_CHECKING:
    from pymilvus import AsyncMilvusClient, MilvusClient

__all__ = ["Hit", "MilvusReads", "MAX_TOP_K", "is_lite", "acquire_lite", "release_lite", "lite_filter"]

_FETCH_CHUNK = 512
_VIEW_CHUNK = 2048
_GENERATION_KEY = "graphrag.generation"
#: Milvus' largest top-k (and query window).
MAX_TOP_K = 16_384
#: What ``fetch(kind, ids, None)`` returns: every stored field but the vector.
_ALL_FIELDS: dict[str, tuple[str, ...]] = {
    "entities": ("text", "synonym_ids"),
    "relations": ("text", "subject_id", "object_id", "predicate", "passage_ids"),
    "passages": ("text", "source_id", "$meta"),
}
_LITE_NOISE = ("failed to get mvccTs from milvus server", "Exception calling application: Method not implemented")


class _LiteNoiseFilter(logging.Filter):
    """Drops two harmless messages Milvus Lite 3.x triggers on every ``query_iterator``."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        return not any(message.startswith(noise) for noise in _LITE_NOISE)


lite_filter = _LiteNoiseFilter()


def is_lite(uri: str) -> bool:
    """True for a Milvus Lite URI (a local path ending in ``.db``)."""
    return str(uri).endswith(".db")


# Milvus Lite runs one embedded server per data directory and process; stores share it.
_lite_users: dict[str, int] = {}
_lite_lock = threading.Lock()


def acquire_lite(path: str) -> None:
    """Count one more store using Milvus Lite's embedded server for ``path``."""
    with _lite_lock:
        _lite_users[path] = _lite_users.get(path, 0) + 1


def release_lite(path: str) -> None:
    """Count one store fewer; stop the embedded server when none is left."""
    with _lite_lock:
        users = _lite_users.get(path, 0) - 1
        if users > 0:
            _lite_users[path] = users
            return
        _lite_users.pop(path, None)
    try:
        from milvus_lite.server_manager import server_manager_instance
    except ImportError:  # pragma: no cover - milvus-lite is a dependency
        return
    server_manager_instance.release_server(path)


@dataclass(frozen=True)
class Hit:
    """One search hit: primary key, similarity (higher is closer) and requested fields."""

    id: str
    score: float
    fields: Mapping[str, Any]


def _hit_pk(hit: Mapping[str, Any]) -> str:
    pk = hit.get("pk")
    return str(pk if pk is not None else hit.get("id"))


def _parse_hits(result: Any) -> list[list[Hit]]:
    return [
        [Hit(_hit_pk(h), float(h["distance"]), dict(h.get("entity") or {})) for h in per_query] for per_query in result
    ]


class MilvusReads:
    """Search, fetch, iterate and count (mixed into the store)."""

    collection_prefix: str
    uri: str
    timeout: float | None
    consistency_level: str
    partition_key_field: str | None
    search_params: dict[str, Any]
    _strong_reads: set[Kind]
    _dim: int | None

    if TYPE_CHECKING:  # provided by the store

        @property
        def client(self) -> MilvusClient:  # noqa: D102
            ...

        async def aclient(self) -> AsyncMilvusClient:  # noqa: D102
            ...

        def collection_name(self, kind: Kind) -> str:  # noqa: D102
            ...

        def check_open(self) -> int:  # noqa: D102
            ...

    # ------------------------------------------------------------------ reads
    def _search_request(
        self,
        kind: Kind,
        vectors: Sequence[Sequence[float]],
        limit: int,
        filter_expr: str | None,
        output_fields: Sequence[str],
    ) -> dict[str, Any]:
        return {
            "collection_name": self.collection_name(kind),
            "data": [list(map(float, v)) for v in vectors],
            "anns_field": "vector",
            "limit": min(int(limit), MAX_TOP_K),
            "filter": filter_expr or "",
            "output_fields": self._output_fields(kind, output_fields) or ["pk"],
            "search_params": self.search_params,
            "timeout": self.timeout,
            "consistency_level": self._consistency(kind),
        }

    def search(
        self,
        kind: Kind,
        vectors: Sequence[Sequence[float]],
        limit: int,
        *,
        filter_expr: str | None = None,
        output_fields: Sequence[str] = ("pk",),
    ) -> list[list[Hit]]:
        """Top-``limit`` hits for each vector (one batched Milvus search)."""
        if not vectors or limit < 1:
            return [[] for _ in vectors]
        self._check_dim(self.check_open(), vectors)
        request = self._search_request(kind, vectors, limit, filter_expr, output_fields)
        with filter_errors(filter_expr):
            return _parse_hits(self.client.search(**request))

    async def asearch(
        self,
        kind: Kind,
        vectors: Sequence[Sequence[float]],
        limit: int,
        *,
        filter_expr: str | None = None,
        output_fields: Sequence[str] = ("pk",),
    ) -> list[list[Hit]]:
        """Async :meth:`search`."""
        if not vectors or limit < 1:
            return [[] for _ in vectors]
        await self._acheck_open()
        self._check_dim(self.check_open(), vectors)
        client = await self.aclient()
        with filter_errors(filter_expr):
            return _parse_hits(
                await client.search(**self._search_request(kind, vectors, limit, filter_expr, output_fields))
            )

    def _consistency(self, kind: Kind) -> str:
        # after a delete, read that collection strongly until this process writes to it again
        return "Strong" if kind in self._strong_reads else self.consistency_level

    def _output_fields(self, kind: Kind, fields: Sequence[str] | None) -> list[str]:
        # None: every stored field but the vector; a lone string: that one field
        out = list(_ALL_FIELDS[kind]) if fields is None else [fields] if isinstance(fields, str) else list(fields)
        if kind == "passages" and self.partition_key_field and "$meta" in out:
            out.append(self.partition_key_field)  # user metadata held in a real field
        return out

    def _check_dim(self, dim: int, vectors: Sequence[Sequence[float]]) -> None:
        if len(vectors[0]) != dim:
            raise EmbeddingDimensionError(
                f"the embedding model gives {len(vectors[0])}-dimensional vectors but the collections under "
                f"{self.collection_prefix!r} at {self.uri!r} store {dim}; use the model the data was ingested with"
            )

    def _fetch_requests(
        self, kind: Kind, ids: Iterable[str], output_fields: Sequence[str] | None, filter_expr: str | None
    ) -> list[dict[str, Any]]:
        if isinstance(ids, str):
            raise TypeError(f"ids must be a list of ids, not the string {ids!r}")
        unique = list(dict.fromkeys(ids))
        return [
            {
                "collection_name": self.collection_name(kind),
                "filter": expr.and_all(expr.in_list("pk", unique[i : i + _FETCH_CHUNK]), filter_expr),
                "output_fields": list(dict.fromkeys(["pk", *self._output_fields(kind, output_fields)])),
                "limit": len(unique[i : i + _FETCH_CHUNK]),
                "timeout": self.timeout,
                "consistency_level": self._consistency(kind),
            }
            for i in range(0, len(unique), _FETCH_CHUNK)
        ]

    def fetch(
        self,
        kind: Kind,
        ids: Iterable[str],
        output_fields: Sequence[str] | None = ("pk",),
        *,
        filter_expr: str | None = None,
    ) -> dict[str, dict[str, Any]]:
        """Rows by primary key (missing ids are absent from the answer).

        ``output_fields=None`` returns every stored field except the vector.
        """
        requests = self._fetch_requests(kind, ids, output_fields, filter_expr)
        if not requests:
            return {}
        self.check_open()
        with filter_errors(filter_expr):
            return {str(r["pk"]): dict(r) for req in requests for r in self.client.query(**req)}

    async def afetch(
        self,
        kind: Kind,
        ids: Iterable[str],
        output_fields: Sequence[str] | None = ("pk",),
        *,
        filter_expr: str | None = None,
    ) -> dict[str, dict[str, Any]]:
        """Async :meth:`fetch`."""
        requests = self._fetch_requests(kind, ids, output_fields, filter_expr)
        if not requests:
            return {}
        await self._acheck_open()
        client = await self.aclient()
        with filter_errors(filter_expr):
            results = await asyncio.gather(*(client.query(**req) for req in requests))
        return {str(r["pk"]): dict(r) for rows in results for r in rows}

    async def _acheck_open(self) -> None:
        if self._dim is None:
            await asyncio.to_thread(self.check_open)

    def iterate(
        self, kind: Kind, output_fields: Sequence[str], batch_size: int = 4096, *, filter_expr: str | None = None
    ) -> Iterator[dict[str, Any]]:
        """Every row of a collection (``query_iterator``), with the given fields.

        Only for collections with our hex ids (entities, relations): pymilvus' iterator
        pages with an unescaped ``pk > "<last id>"``, which breaks on ids with quotes.
        """
        self.check_open()
        iterator = self.client.query_iterator(
            collection_name=self.collection_name(kind),
            batch_size=batch_size,
            filter=filter_expr or "",
            output_fields=list(dict.fromkeys(["pk", *output_fields])),
            timeout=self.timeout,
            consistency_level="Strong",
        )
        try:
            while True:
                batch = iterator.next()
                if not batch:
                    return
                yield from batch
        finally:
            iterator.close()

    def counts(self) -> dict[str, int]:
        """Number of rows in each collection (exact, via ``count(*)``)."""
        self.check_open()
        return {
            kind: int(
                self.client.query(
                    self.collection_name(kind),
                    filter="",
                    output_fields=["count(*)"],
                    timeout=self.timeout,
                    consistency_level="Strong",
                )[0]["count(*)"]
            )
            for kind in KINDS
        }
