"""Searches answered from the vectors held in the client where the store holds them, else by Milvus.

:class:`LocalSearch` has the signature of :meth:`.reads.MilvusReads.search`, and the store's
``search``/``asearch`` are its methods. An unfiltered search of entities or relations whose
table the graph cache holds in step (:mod:`.graph_vectors`) is scored here, over every row,
with the index's metric, as a ``FLAT`` index would. The hits' fields come from the table too
(:mod:`.local_fields`: the relations' text, predicate and passage ids, in step with the graph
as the vectors are), so the search makes no read after its scoring.

A row another writer deleted before the graph's next refresh must still never be a hit. Every
writer bumps the store's generation counter before it changes anything, so while the counter
is the one the table's graph was read at, no row of the table was deleted. The counter is read
(one ``describe_collection``) first, *while* the table is checked and its rows scored, in the
same wave as the query's other reads (a read started after the search began: a delete before
it is seen); only if it moved are the hits read back by key (≈5–30 ms on Milvus Lite) and those
whose row is gone dropped, as a search would not return them. Everything else (passages,
filters, a store without tables, fields the table does not hold) is Milvus' search, but a passage
search restricted to a few keys (``within``), which reads those rows by key and scores them here
(:mod:`.keyed_search`).

:meth:`LocalSearch.search_held` answers a graph query's first searches, passages included
(:mod:`.local_passages`), from the tables alone with no Milvus call; the query then reads the
counter with the rows it returns (:mod:`~langchain_graphrag_milvus.retrieval.held`).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from langchain_graphrag_milvus.graph.ids import find_keys, ids_to_keys
from langchain_graphrag_milvus.milvus.keyed_search import keyed_search
from langchain_graphrag_milvus.milvus.local_fields import decode_fields, holds
from langchain_graphrag_milvus.milvus.local_passages import LocalPassages, PassageTable
from langchain_graphrag_milvus.milvus.local_vectors import LOCAL_KINDS, VectorTable
from langchain_graphrag_milvus.milvus.read_seam import MAX_TOP_K, Hit, StoreReads
from langchain_graphrag_milvus.milvus.row_layout import RowLayout
from langchain_graphrag_milvus.milvus.schema import Kind

if TYPE_CHECKING:
    from langchain_graphrag_milvus.milvus.fingerprint import EmbeddingCheck
    from langchain_graphrag_milvus.milvus.graph_cache import GraphCache

__all__ = ["LaidOutReads", "LocalSearch"]


class LaidOutReads(StoreReads, Protocol):
    """A read seam whose rows follow a :class:`~.row_layout.RowLayout` (the held fields' names)."""

    layout: RowLayout


Stamp = tuple["str | None", "int | None"]
Found = list[list[tuple[str, float]]]

_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def _pool() -> ThreadPoolExecutor:
    """The threads that read the generation counter while a search is scored (shared, created on first use)."""
    global _POOL
    if _POOL is None:
        with _POOL_LOCK:
            if _POOL is None:
                _POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="graphrag-stamp")
    return _POOL


class LocalSearch:
    """The store's searches: from the client's vector tables where it holds them, else Milvus'.

    Args:
        reads: The store's reads (searches it does not answer, hits read back) and their row layout.
        graph: The store's graph cache, which keeps the tables (``stamped_table``).
        check: The store's embedding check (:mod:`.fingerprint`), run before its first search; None: none.
    """

    def __init__(self, reads: LaidOutReads, graph: GraphCache[Any], check: EmbeddingCheck | None = None) -> None:
        self.reads = reads
        self.graph = graph
        self.check = check
        #: The passage vectors (held with the entity and relation vectors, :mod:`.local_passages`).
        self.passages = LocalPassages(reads, graph.connection, graph.local) if graph.local is not None else None
        if self.passages is not None:  # counted in the store's memory report
            graph.held_passages = self.passages.held

    def _plan(
        self,
        kind: Kind,
        vectors: Sequence[Sequence[float]],
        filter_expr: str | None,
        within: Sequence[str] | None,
    ) -> tuple[VectorTable, Stamp | None, np.ndarray | None] | None:
        """The table to score, the stamp its graph was read at, the rows to score; None when Milvus must answer."""
        if (filter_expr and within is None) or not vectors or self.graph.local is None:
            return None
        stamped = self.graph.stamped_table(kind)
        if stamped is None:
            return None
        table, stamp = stamped
        if table.dim != len(vectors[0]):  # (a wrong dimension gets Milvus' typed error)
            return None
        rows = None
        if filter_expr and within is not None:
            rows = table.positions(within)
            if rows is None:  # a key the table does not hold: Milvus answers
                return None
        return table, stamp, rows

    def _score(
        self, kind: Kind, table: VectorTable, vectors: Sequence[Sequence[float]], limit: int, rows: Any
    ) -> Found:
        local = self.graph.local
        assert local is not None
        return local.hits(kind, table, vectors, min(int(limit), MAX_TOP_K), rows)

    def _fields(self, kind: Kind, output_fields: Sequence[str]) -> list[str]:
        return [f for f in self.reads.layout.search_fields(kind, output_fields) if f != "pk"]

    def _may_hold(
        self, kind: Kind, limit: int, filter_expr: str | None, within: Sequence[str] | None, fields: list[str]
    ) -> bool:
        """Whether the table may answer with its own fields (checked before the table is: the counter is read first)."""
        return (
            limit >= 1
            and self.graph.local is not None
            and kind in LOCAL_KINDS
            and not (filter_expr and within is None)
            and holds(kind, fields)
        )

    def _direct(self, kind: Kind, table: VectorTable, stamp: Stamp | None, fields: list[str]) -> bool:
        """Whether the hits can come from the table alone (if the counter has not moved)."""
        return stamp is not None and holds(kind, fields) and (not fields or table.fields is not None)

    def _held(self, kind: Kind, table: VectorTable, found: Found, fields: list[str]) -> list[list[Hit]]:
        """The hits with the fields the table holds."""
        out = []
        for per_query in found:
            if not fields:
                out.append([Hit(i, s, {"pk": i}) for i, s in per_query])
                continue
            assert table.fields is not None
            positions = find_keys(table.keys, ids_to_keys([i for i, _ in per_query])).tolist()  # the table's keys
            hits = []
            for (i, s), at in zip(per_query, positions):
                row = decode_fields(kind, table.fields, at)
                hits.append(Hit(i, s, {f: row[f] for f in fields if f in row}))
            out.append(hits)
        return self.reads.layout.hits(kind, out)

    def _hits(
        self, kind: Kind, found: Found, fields: list[str], rows: Mapping[str, Mapping[str, Any]]
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

    def _stamp(self) -> Stamp | None:
        """The store id and generation counter now (None if the read fails: the hits are read back)."""
        try:
            return self.graph.connection.stamp()
        except Exception:  # noqa: BLE001  (the read back below raises what a failing Milvus raises)
            return None

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
        (which the caller vouches for); Milvus is read only for the generation counter, at
        the same time (and for the hits, if the counter moved or a field is not held here).
        """
        if self.check is not None:
            self.check.before_search()
        fields = self._fields(kind, output_fields)
        now: Future[Stamp | None] | None = None
        if self._may_hold(kind, limit, filter_expr, within, fields):
            now = _pool().submit(self._stamp)  # read first, while the table is checked and scored: no wave of its own
        plan = self._plan(kind, vectors, filter_expr, within) if limit >= 1 else None
        if plan is None:
            keyed = keyed_search(self.reads, self.graph.connection, kind, vectors, limit, within, output_fields)
            if keyed is not None:  # a few passages by key, scored here (a graph query's second wave)
                return keyed
            return self.reads.search(kind, vectors, limit, filter_expr=filter_expr, output_fields=output_fields)
        table, stamp, rows = plan
        found = self._score(kind, table, vectors, limit, rows)
        if now is not None and self._direct(kind, table, stamp, fields) and now.result() == stamp:
            return self._held(kind, table, found, fields)
        ids = list(dict.fromkeys(i for per_query in found for i, _ in per_query))
        read = self.reads.fetch(kind, ids, fields or ("pk",)) if ids else {}
        return self._hits(kind, found, fields, read)

    def search_held(self, searches: Sequence[Any]) -> tuple[list[list[list[Hit]]], Stamp] | None:
        """The answers of these searches from the client's tables alone, and the stamp they hold at; else None.

        Nothing is read from Milvus (but a passage table of the graph's stamp, read once per
        generation): the caller checks the stamp (:meth:`unchanged`) with the one read of the rows
        it returns, and searches again the usual way if it moved. Passage hits carry no fields
        (``{"pk": id}``). None when a search is one the tables cannot answer (a filter other than
        ``within``, a field not held, no table of the graph's stamp).
        """
        if self.passages is None or not searches:
            return None
        if self.check is not None:
            self.check.before_search()
        stamped = self.graph.stamped_table("relations")
        stamp = stamped[1] if stamped is not None else None
        passages = self.passages.table(stamp) if stamp is not None else None
        if stamp is None or passages is None:
            return None
        answers: list[list[list[Hit]]] = []
        for s in searches:
            if s.limit < 1 or not s.vectors or (s.filter_expr and s.within is None):
                return None
            if s.kind == "passages":
                answer = self._held_passages(passages, s)
            else:
                answer = self._held_rows(s, stamp)
            if answer is None:
                return None
            answers.append(answer)
        return answers, stamp

    def _held_rows(self, s: Any, stamp: Stamp) -> list[list[Hit]] | None:
        fields = self._fields(s.kind, s.output_fields)
        if not self._may_hold(s.kind, s.limit, s.filter_expr, s.within, fields):
            return None
        plan = self._plan(s.kind, s.vectors, s.filter_expr, s.within)
        if plan is None:
            return None
        table, table_stamp, rows = plan
        if table_stamp != stamp or not self._direct(s.kind, table, table_stamp, fields):
            return None
        return self._held(s.kind, table, self._score(s.kind, table, s.vectors, s.limit, rows), fields)

    def _held_passages(self, passages: PassageTable, s: Any) -> list[list[Hit]] | None:
        if passages.table.dim != len(s.vectors[0]):
            return None
        rows = passages.positions(s.within) if s.within is not None else None
        if s.within is not None and rows is None:
            return None
        local = self.graph.local
        assert local is not None
        limit = min(int(s.limit), MAX_TOP_K)
        found = passages.hits(s.vectors, limit + (rows is None), local.cosine, rows)
        if rows is None and any(a[1] == b[1] for per_query in found for a, b in zip(per_query, per_query[1:])):
            return None  # passages of equal score: Milvus orders them its own way (and picks those at the cut)
        return [[Hit(i, score, {"pk": i}) for i, score in per_query[:limit]] for per_query in found]

    def unchanged(self, stamp: Stamp) -> bool:
        """Whether the store's id and generation counter are still ``stamp`` (one read).

        If not, the graph's refresh check is made due, so the query's search the usual way reloads it.
        """
        same = tuple(self.graph.connection.stamp()) == tuple(stamp)
        if not same:
            self.graph.check_soon()
        return same

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
        """Async :meth:`search`: that search, in a worker thread (one implementation, see :mod:`.read_seam`)."""
        return await asyncio.to_thread(
            self.search, kind, vectors, limit, filter_expr=filter_expr, output_fields=output_fields, within=within
        )
