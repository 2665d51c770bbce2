"""Reading Milvus for the store: batched searches, fetches by id, iteration, counts.

:class:`MilvusReads` reads through a :class:`~langchain_graphrag_milvus.milvus.connection.MilvusConnection`;
the sync and async variants share the request building and the result parsing. A
:class:`RowLayout` says how rows are stored (field names, key type): this package's
schema by default; an existing collection's passages have their own
(:mod:`langchain_graphrag_milvus.milvus.existing`), and every read of them (searches,
fetches, the tenant view's passage matching) goes through it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from langchain_graphrag_milvus.errors import EmbeddingDimensionError
from langchain_graphrag_milvus.milvus import exact, expr
from langchain_graphrag_milvus.milvus.filters import filter_errors
from langchain_graphrag_milvus.milvus.index_params import search_params_for
from langchain_graphrag_milvus.milvus.schema import KINDS, Kind

if TYPE_CHECKING:
    from langchain_graphrag_milvus.milvus.connection import MilvusConnection

__all__ = ["Hit", "MilvusReads", "RowLayout", "MAX_TOP_K"]

_FETCH_CHUNK = 512
_VIEW_CHUNK = 2048
#: Milvus' largest top-k (and query window).
MAX_TOP_K = 16_384
#: What ``fetch(kind, ids, None)`` returns: every stored field but the vector.
_ALL_FIELDS: dict[str, tuple[str, ...]] = {
    "entities": ("text", "synonym_ids"),
    "relations": ("text", "subject_id", "object_id", "predicate", "passage_ids"),
    "passages": ("text", "source_id", "$meta"),
}


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


class RowLayout:
    """How rows are stored: this package's schema (``pk``, ``text``, ``vector``; passage metadata dynamic).

    The key codec of the reads: which field is the key, how a list of ids becomes a
    filter, which fields a request names and how a returned row looks. A subclass maps
    another schema (see :class:`~langchain_graphrag_milvus.milvus.existing.ExistingPassageLayout`).

    Args:
        partition_key_field: The passages' partition key field (user metadata held in a
            real field, returned with ``"$meta"``).
    """

    #: Ids per query of a fetch.
    fetch_chunk = _FETCH_CHUNK
    #: Ids per query when matching the graph's passages against a filter.
    view_chunk = _VIEW_CHUNK

    def __init__(self, partition_key_field: str | None = None) -> None:
        self.partition_key_field = partition_key_field

    def key_field(self, kind: Kind) -> str:
        """The primary key field of ``kind``."""
        return "pk"

    def unique_ids(self, kind: Kind, ids: Iterable[str]) -> list[str]:
        """The ids once each, in order."""
        return list(dict.fromkeys(ids))

    def pk_filter(self, kind: Kind, ids: Sequence[str]) -> str:
        """``<key> in [...]`` for these ids (escaped by :mod:`.expr`)."""
        return expr.in_list(self.key_field(kind), ids)

    def fields(self, kind: Kind, fields: Sequence[str] | None) -> list[str]:
        """The stored fields to request for ``fields`` (``None``: all but the vector; a string: that one)."""
        out = list(_ALL_FIELDS[kind]) if fields is None else [fields] if isinstance(fields, str) else list(fields)
        if kind == "passages" and self.partition_key_field and "$meta" in out:
            out.append(self.partition_key_field)  # user metadata held in a real field
        return out

    def search_fields(self, kind: Kind, fields: Sequence[str]) -> list[str]:
        """The ``output_fields`` of a search."""
        return self.fields(kind, fields) or ["pk"]

    def fetch_fields(self, kind: Kind, fields: Sequence[str] | None) -> list[str]:
        """The ``output_fields`` of a fetch (the key first)."""
        return list(dict.fromkeys(["pk", *self.fields(kind, fields)]))

    def adapt_search(self, kind: Kind, request: dict[str, Any]) -> dict[str, Any]:
        """Adjust a search request to the schema (vector field, metric)."""
        return request

    def hits(self, kind: Kind, hits: list[list[Hit]]) -> list[list[Hit]]:
        """Search hits as this package's rows (``pk``, ``text``, similarity scores)."""
        return hits

    def row(self, kind: Kind, raw: Mapping[str, Any]) -> dict[str, Any]:
        """A fetched row as this package's row (with ``pk`` as a string)."""
        return dict(raw)

    def key(self, kind: Kind, raw: Mapping[str, Any]) -> str:
        """The id of a fetched row."""
        return str(raw[self.key_field(kind)])


class MilvusReads:
    """Search, fetch, iterate and count the store's collections.

    Args:
        connection: The store's connection (clients, collection names, consistency).
        search_params: Search parameters (metric and index parameters).
        layout: How rows are stored (default: this package's schema).
    """

    def __init__(
        self, connection: MilvusConnection, search_params: Mapping[str, Any], layout: RowLayout | None = None
    ) -> None:
        self.connection = connection
        self.search_params = dict(search_params)
        self.layout = layout if layout is not None else RowLayout(connection.partition_key_field)

    # ------------------------------------------------------------------ searches
    def _search_request(
        self,
        kind: Kind,
        vectors: Sequence[Sequence[float]],
        limit: int,
        filter_expr: str | None,
        output_fields: Sequence[str],
    ) -> dict[str, Any]:
        request = {
            "collection_name": self.connection.collection_name(kind),
            "data": [list(map(float, v)) for v in vectors],
            "anns_field": "vector",
            "limit": min(int(limit), MAX_TOP_K),
            "filter": filter_expr or "",
            "output_fields": self.layout.search_fields(kind, output_fields),
            "search_params": search_params_for(self.search_params, self.connection.index_type(kind), limit),
            "timeout": self.connection.timeout,
            "consistency_level": self.connection.consistency(kind),
        }
        return self.layout.adapt_search(kind, request)

    def search(
        self,
        kind: Kind,
        vectors: Sequence[Sequence[float]],
        limit: int,
        *,
        filter_expr: str | None = None,
        output_fields: Sequence[str] = ("pk",),
    ) -> list[list[Hit]]:
        """Top-``limit`` hits for each vector (one batched Milvus search).

        With a filter on an approximate index, a search that comes back short is answered
        exactly from the rows the filter matches (:mod:`.exact`).
        """
        if not vectors or limit < 1:
            return [[] for _ in vectors]
        self._check_dim(self.connection.check_open(), vectors)
        request = self._search_request(kind, vectors, limit, filter_expr, output_fields)
        with filter_errors(filter_expr):
            hits = _parse_hits(self.connection.client.search(**request))
            if self._short(kind, request, hits):
                rows = self.connection.client.query(**exact.exact_query(request, self.layout.key_field(kind)))
                hits = self._exact(kind, request, hits, rows)
        return self.layout.hits(kind, hits)

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
        await self.connection.acheck_open()
        self._check_dim(self.connection.check_open(), vectors)
        client = await self.connection.aclient()
        request = self._search_request(kind, vectors, limit, filter_expr, output_fields)
        with filter_errors(filter_expr):
            hits = _parse_hits(await client.search(**request))
            if self._short(kind, request, hits):
                rows = await client.query(**exact.exact_query(request, self.layout.key_field(kind)))
                hits = self._exact(kind, request, hits, rows)
        return self.layout.hits(kind, hits)

    def _short(self, kind: Kind, request: Mapping[str, Any], hits: list[list[Hit]]) -> bool:
        """A filtered search on an approximate index that returned fewer hits than its limit (see :mod:`.exact`)."""
        if not request.get("filter") or not exact.approximate(self.connection.index_type(kind)):
            return False
        return bool(exact.short_queries(request, [len(h) for h in hits]))

    def _exact(
        self, kind: Kind, request: Mapping[str, Any], hits: list[list[Hit]], rows: Sequence[Mapping[str, Any]]
    ) -> list[list[Hit]]:
        """The search answered exactly from the rows its filter matches (past :data:`.exact.EXACT_ROWS`: as is)."""
        found = exact.exact_hits(request, rows, self.layout.key_field(kind))
        return hits if found is None else _parse_hits(found)

    def _check_dim(self, dim: int, vectors: Sequence[Sequence[float]]) -> None:
        if len(vectors[0]) != dim:
            raise EmbeddingDimensionError(
                f"the embedding model gives {len(vectors[0])}-dimensional vectors but the collections under "
                f"{self.connection.collection_prefix!r} at {self.connection.uri!r} store {dim}; use the model the "
                "data was ingested with"
            )

    # ------------------------------------------------------------------ fetches
    def _fetch_requests(
        self, kind: Kind, unique: Sequence[str], output_fields: Sequence[str] | None, filter_expr: str | None
    ) -> list[dict[str, Any]]:
        step = self.layout.fetch_chunk
        return [
            {
                "collection_name": self.connection.collection_name(kind),
                "filter": expr.and_all(self.layout.pk_filter(kind, unique[i : i + step]), filter_expr),
                "output_fields": self.layout.fetch_fields(kind, output_fields),
                "limit": len(unique[i : i + step]),
                "timeout": self.connection.timeout,
                "consistency_level": self.connection.consistency(kind),
            }
            for i in range(0, len(unique), step)
        ]

    def _unique(self, kind: Kind, ids: Iterable[str]) -> list[str]:
        if isinstance(ids, str):
            raise TypeError(f"ids must be a list of ids, not the string {ids!r}")
        return self.layout.unique_ids(kind, ids)

    def _rows(self, kind: Kind, results: Iterable[Iterable[Mapping[str, Any]]]) -> dict[str, dict[str, Any]]:
        layout = self.layout
        return {layout.key(kind, r): layout.row(kind, r) for rows in results for r in rows}

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
        unique = self._unique(kind, ids)
        if not unique:
            return {}
        self.connection.check_open()
        requests = self._fetch_requests(kind, unique, output_fields, filter_expr)
        with filter_errors(filter_expr):
            return self._rows(kind, [self.connection.client.query(**req) for req in requests])

    async def afetch(
        self,
        kind: Kind,
        ids: Iterable[str],
        output_fields: Sequence[str] | None = ("pk",),
        *,
        filter_expr: str | None = None,
    ) -> dict[str, dict[str, Any]]:
        """Async :meth:`fetch`."""
        unique = self._unique(kind, ids)
        if not unique:
            return {}
        await self.connection.acheck_open()
        client = await self.connection.aclient()
        requests = self._fetch_requests(kind, unique, output_fields, filter_expr)
        with filter_errors(filter_expr):
            results = await asyncio.gather(*(client.query(**req) for req in requests))
        return self._rows(kind, results)

    def matching_passages(self, ids: Sequence[str], filter_expr: str) -> list[str]:
        """Those of ``ids`` whose passages match ``filter_expr`` (read with ``"Strong"`` consistency).

        Asked in chunks of known ids: pymilvus' ``query_iterator`` pages with an unescaped
        ``pk > "<last id>"``, which breaks on passage ids containing quotes, so it is not
        used for user-chosen ids.
        """
        return [pid for pid, _ in self.matching_passage_values(ids, filter_expr)]

    def matching_passage_values(
        self, ids: Sequence[str], filter_expr: str, field: str | None = None
    ) -> list[tuple[str, Any]]:
        """(id, value of ``field``) of those of ``ids`` whose passages match ``filter_expr``.

        Read as :meth:`matching_passages` reads; ``field=None``: the values are None.
        """
        self.connection.check_open()
        layout, step = self.layout, self.layout.view_chunk
        key = layout.key_field("passages")
        fields = [key] if field is None else list(dict.fromkeys([key, field]))
        matched: list[tuple[str, Any]] = []
        for i in range(0, len(ids), step):
            chunk = [str(x) for x in ids[i : i + step]]
            rows = self.connection.client.query(
                self.connection.collection_name("passages"),
                filter=expr.and_all(layout.pk_filter("passages", chunk), filter_expr),
                output_fields=fields,
                limit=len(chunk),
                timeout=self.connection.timeout,
                consistency_level="Strong",
            )
            matched += [(str(r[key]), None if field is None else r.get(field)) for r in rows]
        return matched

    # ------------------------------------------------------------------ scans
    def iterate(
        self, kind: Kind, output_fields: Sequence[str], batch_size: int = 4096, *, filter_expr: str | None = None
    ) -> Iterator[dict[str, Any]]:
        """Every row of a collection (``query_iterator``), with the given fields.

        Only for collections with our hex ids (entities, relations): pymilvus' iterator
        pages with an unescaped ``pk > "<last id>"``, which breaks on ids with quotes.
        """
        self.connection.check_open()
        iterator = self.connection.client.query_iterator(
            collection_name=self.connection.collection_name(kind),
            batch_size=batch_size,
            filter=filter_expr or "",
            output_fields=list(dict.fromkeys(["pk", *output_fields])),
            timeout=self.connection.timeout,
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
        """Number of rows in each collection (exact, via ``count(*)``).

        The three ``"Strong"`` queries each wait for the server's consistency point (≈0.25 s on
        a busy server), so they are issued together, one thread each.
        """
        self.connection.check_open()

        def count(kind: Kind) -> int:
            rows = self.connection.client.query(
                self.connection.collection_name(kind),
                filter="",
                output_fields=["count(*)"],
                timeout=self.connection.timeout,
                consistency_level="Strong",
            )
            return int(rows[0]["count(*)"])

        with ThreadPoolExecutor(max_workers=len(KINDS), thread_name_prefix="graphrag-count") as pool:
            return dict(zip(KINDS, pool.map(count, KINDS)))
