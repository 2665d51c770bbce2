"""Searches answered from the vectors held in the client where the store holds them, else by Milvus.

:class:`LocalSearch` has the signature of :meth:`.reads.MilvusReads.search`, and the store's
``search``/``asearch`` are its methods. An unfiltered search of entities or relations whose
table the graph cache holds in step (:mod:`.graph_vectors`) is scored here, over every row,
with the index's metric, as a ``FLAT`` index would; the fields asked for besides the key are
then read by key (one query, ≈5 ms on Milvus Lite against ≈150 ms for its brute-force search
of 29k relations), and so are the keys alone when no other field is asked for: a hit whose row
is gone meanwhile (another writer's delete, before the next refresh) is dropped, as a search
would not return it. Everything else (passages, filters, a store without tables) is Milvus' search.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from langchain_graphrag_milvus.milvus.reads import MAX_TOP_K, Hit, MilvusReads
from langchain_graphrag_milvus.milvus.schema import Kind

if TYPE_CHECKING:
    from langchain_graphrag_milvus.milvus.graph_cache import GraphCache

__all__ = ["LocalSearch"]


class LocalSearch:
    """The store's searches: from the client's vector tables where it holds them, else Milvus'.

    Args:
        reads: The store's Milvus reads (searches it does not answer, fetches of hit fields).
        graph: The store's graph cache, which keeps the tables (``vector_table``).
    """

    def __init__(self, reads: MilvusReads, graph: GraphCache[Any]) -> None:
        self.reads = reads
        self.graph = graph

    def _local(
        self,
        kind: Kind,
        vectors: Sequence[Sequence[float]],
        limit: int,
        filter_expr: str | None,
        within: Sequence[str] | None,
    ) -> list[list[tuple[str, float]]] | None:
        """Per vector, ``(id, score)`` of its best rows, or None when Milvus must answer."""
        local = self.graph.local
        if (filter_expr and within is None) or not vectors or limit < 1 or local is None:
            return None
        table = self.graph.vector_table(kind)
        if table is None or table.dim != len(vectors[0]):  # (a wrong dimension gets Milvus' typed error)
            return None
        rows = None
        if filter_expr and within is not None:
            rows = table.positions(within)
            if rows is None:  # a key the table does not hold: Milvus answers
                return None
        return local.hits(kind, table, vectors, min(int(limit), MAX_TOP_K), rows)

    def _fields(self, kind: Kind, output_fields: Sequence[str]) -> list[str]:
        return [f for f in self.reads.layout.search_fields(kind, output_fields) if f != "pk"]

    def _hits(
        self, kind: Kind, found: list[list[tuple[str, float]]], fields: list[str], rows: Mapping[str, Mapping[str, Any]]
    ) -> list[list[Hit]]:
        # a row gone meanwhile (another writer's delete, before this graph's refresh) is no hit
        hits = [
            [
                Hit(i, s, {f: rows[i][f] for f in fields if f in rows[i]} if fields else {"pk": i})
                for i, s in per_query
                if i in rows
            ]
            for per_query in found
        ]
        return self.reads.layout.hits(kind, hits)

    def search(
        self,
        kind: Kind,
        vectors: Sequence[Sequence[float]],
        limit: int,
        *,
        filter_expr: str | None = None,
        output_fields: Sequence[str] = ("pk",),
        within: Sequence[str] | None = None,
    ) -> list[list[Hit]]:
        """Top-``limit`` hits for each vector (see :meth:`.reads.MilvusReads.search`).

        Answered from the client's vector table of ``kind`` when the store holds one in step
        and the search has no filter, or a filter that selects exactly the keys ``within``
        (which the caller vouches for); then only the hits' fields are read from Milvus.
        """
        found = self._local(kind, vectors, limit, filter_expr, within)
        if found is None:
            return self.reads.search(kind, vectors, limit, filter_expr=filter_expr, output_fields=output_fields)
        fields = self._fields(kind, output_fields)
        ids = list(dict.fromkeys(i for per_query in found for i, _ in per_query))
        rows = self.reads.fetch(kind, ids, fields or ("pk",)) if ids else {}
        return self._hits(kind, found, fields, rows)

    async def asearch(
        self,
        kind: Kind,
        vectors: Sequence[Sequence[float]],
        limit: int,
        *,
        filter_expr: str | None = None,
        output_fields: Sequence[str] = ("pk",),
        within: Sequence[str] | None = None,
    ) -> list[list[Hit]]:
        """Async :meth:`search` (the table is checked and scored on a worker thread)."""
        found = await asyncio.to_thread(self._local, kind, vectors, limit, filter_expr, within)
        if found is None:
            return await self.reads.asearch(kind, vectors, limit, filter_expr=filter_expr, output_fields=output_fields)
        fields = self._fields(kind, output_fields)
        ids = list(dict.fromkeys(i for per_query in found for i, _ in per_query))
        rows = await self.reads.afetch(kind, ids, fields or ("pk",)) if ids else {}
        return self._hits(kind, found, fields, rows)
