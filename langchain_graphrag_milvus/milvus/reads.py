"""Reading Milvus for the store: batched searches, fetches by id, queries, iteration, counts.

:class:`MilvusReads` is the Milvus implementation of the read seam
(:class:`~langchain_graphrag_milvus.milvus.read_seam.StoreReads`): every read of the store's
rows outside this module goes through it. It reads through a
:class:`~langchain_graphrag_milvus.milvus.connection.MilvusConnection`'s ``MilvusClient``.
Each read is written once, blocking; its async forms are the read seam's (the blocking read
in a worker thread): measured against ``AsyncMilvusClient`` (``benchmarks/bench_async_reads.py``),
a native twin bought nothing. A
:class:`~langchain_graphrag_milvus.milvus.row_layout.RowLayout` says how rows are stored
(field names, key type): this package's schema by default; an existing collection's
passages have their own (:mod:`langchain_graphrag_milvus.milvus.existing`), and every read
of them (searches, fetches, queries, scans, the tenant view's passage matching) goes through it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from langchain_graphrag_milvus.errors import EmbeddingDimensionError
from langchain_graphrag_milvus.milvus import exact, expr
from langchain_graphrag_milvus.milvus.filters import filter_errors
from langchain_graphrag_milvus.milvus.index_params import search_params_for
from langchain_graphrag_milvus.milvus.read_seam import MAX_TOP_K, Hit, StoreReads
from langchain_graphrag_milvus.milvus.row_layout import RowLayout
from langchain_graphrag_milvus.milvus.schema import KINDS, Kind

if TYPE_CHECKING:
    from langchain_graphrag_milvus.milvus.connection import MilvusConnection

__all__ = ["Hit", "MilvusReads", "RowLayout", "MAX_TOP_K", "StoreReads"]


def _hit_pk(hit: Mapping[str, Any]) -> str:
    pk = hit.get("pk")
    return str(pk if pk is not None else hit.get("id"))


def _parse_hits(result: Any) -> list[list[Hit]]:
    return [
        [Hit(_hit_pk(h), float(h["distance"]), dict(h.get("entity") or {})) for h in per_query] for per_query in result
    ]


class MilvusReads(StoreReads):
    """Search, fetch, query, iterate and count the store's collections (the read seam on Milvus).

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
        step = self.layout.fetch_page
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

    def matching_passages(self, ids: Sequence[str], filter_expr: str) -> list[str]:
        """Those of ``ids`` whose passages match ``filter_expr`` (read with ``"Strong"`` consistency).

        Asked in pages of known ids: pymilvus' ``query_iterator`` pages with an unescaped
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
        layout, step = self.layout, self.layout.view_page
        key = layout.key_field("passages")
        fields = [key] if field is None else list(dict.fromkeys([key, field]))
        matched: list[tuple[str, Any]] = []
        for i in range(0, len(ids), step):
            page = [str(x) for x in ids[i : i + step]]
            rows = self.connection.client.query(
                self.connection.collection_name("passages"),
                filter=expr.and_all(layout.pk_filter("passages", page), filter_expr),
                output_fields=fields,
                limit=len(page),
                timeout=self.connection.timeout,
                consistency_level="Strong",
            )
            matched += [(str(r[key]), None if field is None else r.get(field)) for r in rows]
        return matched

    # ------------------------------------------------------------------ queries and scans
    def query(
        self, kind: Kind, filter_expr: str, output_fields: Sequence[str], *, limit: int = MAX_TOP_K
    ) -> list[dict[str, Any]]:
        """At most ``limit`` rows matching ``filter_expr`` (one ``"Strong"`` query; see :meth:`StoreReads.query`)."""
        if limit < 1:
            return []
        self.connection.check_open()
        with filter_errors(filter_expr):
            rows = self.connection.client.query(
                self.connection.collection_name(kind),
                filter=filter_expr,
                output_fields=self.layout.fetch_fields(kind, output_fields),
                limit=min(int(limit), MAX_TOP_K),
                timeout=self.connection.timeout,
                consistency_level="Strong",
            )
        return [self.layout.row(kind, r) for r in rows]

    def iterate(
        self, kind: Kind, output_fields: Sequence[str], batch_size: int = 4096, *, filter_expr: str | None = None
    ) -> Iterator[dict[str, Any]]:
        """Every row of a collection (``query_iterator``, ``"Strong"``), with the given fields.

        Passages come as this package's rows (``pk``, ``text``); a page that ends on a passage
        key pymilvus cannot page past raises (:meth:`RowLayout.page`).
        """
        self.connection.check_open()
        name = self.connection.collection_name(kind)
        iterator = self.connection.client.query_iterator(
            collection_name=name,
            batch_size=batch_size,
            filter=filter_expr or "",
            output_fields=self.layout.fetch_fields(kind, output_fields),
            timeout=self.connection.timeout,
            consistency_level="Strong",
        )
        try:
            while True:
                batch = iterator.next()
                if not batch:
                    return
                yield from self.layout.page(kind, name, batch)
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
