"""The read seam: every read of the store's rows that the pipelines and writers make, as one protocol.

:class:`StoreReads` is the contract between the store's collections and everything that
reads them: the writers of :mod:`~langchain_graphrag_milvus.ingest` (through
:class:`~langchain_graphrag_milvus.milvus.writes.StoreParts`), the graph cache's rebuilds and
views, the CLI's file sync (through ``store.reads``) and, through the store's ``search`` and
``fetch``, retrieval.
:class:`~langchain_graphrag_milvus.milvus.reads.MilvusReads` implements it for Milvus (this
package's schema, or an existing collection's through a
:class:`~langchain_graphrag_milvus.milvus.reads.RowLayout`); ``tests/compliance/read_seam.py``
is the suite any implementation runs.

Rows are plain dicts keyed by field name; every row carries its id as ``"pk"`` (a string,
whatever the backend's key type), passages their text as ``"text"``. Filters are Milvus
boolean expressions, and text enters them only through :mod:`.expr`. A read is written once,
blocking; the async forms that retrieval awaits (:meth:`~StoreReads.asearch`,
:meth:`~StoreReads.afetch`) are that blocking read in a worker thread. Milvus' own
implementation once overrode them with pymilvus' ``AsyncMilvusClient``; measured
(``benchmarks/bench_async_reads.py``), the native twin bought nothing over the thread, so it
was removed, and ``tests/unit/test_async_twins.py`` fails on a new hand-written twin. The
other reads are made by writers, which run in a thread anyway.

A new read is one method here (its blocking form), one in each implementation, and one
case in the compliance suite.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from langchain_graphrag_milvus.milvus.schema import Kind

__all__ = ["Hit", "MAX_TOP_K", "StoreReads", "passage_texts"]

#: Milvus' largest top-k (and query window): the most rows one search or query returns.
MAX_TOP_K = 16_384


@dataclass(frozen=True)
class Hit:
    """One search hit: primary key, similarity (higher is closer) and requested fields."""

    id: str
    score: float
    fields: Mapping[str, Any]


class StoreReads(Protocol):
    """The reads of the store's three collections (``kind``: entities, relations or passages).

    A structural type: any object with these members is a ``StoreReads``. An implementation
    may also subclass it to inherit the derived async forms; a method left out then makes
    the class abstract for mypy.
    """

    def search(
        self,
        kind: Kind,
        vectors: Sequence[Sequence[float]],
        limit: int,
        *,
        filter_expr: str | None = None,
        output_fields: Sequence[str] = ("pk",),
    ) -> list[list[Hit]]:
        """Per vector, the ``limit`` rows most similar to it (inside the filter), most similar first.

        No vectors or ``limit < 1``: one empty list per vector. ``limit`` is capped at :data:`MAX_TOP_K`.

        Raises:
            EmbeddingDimensionError: The vectors' dimension is not the stored one.
            InvalidFilterError: ``filter_expr`` cannot be parsed.
        """
        ...

    async def asearch(
        self,
        kind: Kind,
        vectors: Sequence[Sequence[float]],
        limit: int,
        *,
        filter_expr: str | None = None,
        output_fields: Sequence[str] = ("pk",),
    ) -> list[list[Hit]]:
        """Async :meth:`search` (default: :meth:`search` in a worker thread)."""
        return await asyncio.to_thread(
            self.search, kind, vectors, limit, filter_expr=filter_expr, output_fields=output_fields
        )

    def fetch(
        self,
        kind: Kind,
        ids: Iterable[str],
        output_fields: Sequence[str] | None = ("pk",),
        *,
        filter_expr: str | None = None,
    ) -> dict[str, dict[str, Any]]:
        """Rows by id: missing ids, and ids whose row is outside ``filter_expr``, are absent from the answer.

        Each id is read once however often it is given; ``output_fields=None``: every stored
        field but the vector.

        Raises:
            TypeError: ``ids`` is a single string.
            InvalidFilterError: ``filter_expr`` cannot be parsed.
        """
        ...

    async def afetch(
        self,
        kind: Kind,
        ids: Iterable[str],
        output_fields: Sequence[str] | None = ("pk",),
        *,
        filter_expr: str | None = None,
    ) -> dict[str, dict[str, Any]]:
        """Async :meth:`fetch` (default: :meth:`fetch` in a worker thread)."""
        ids = list(ids) if not isinstance(ids, str) else ids  # an iterator is consumed here, not in the thread
        return await asyncio.to_thread(self.fetch, kind, ids, output_fields, filter_expr=filter_expr)

    def query(
        self, kind: Kind, filter_expr: str, output_fields: Sequence[str], *, limit: int = MAX_TOP_K
    ) -> list[dict[str, Any]]:
        """At most ``limit`` rows matching ``filter_expr`` (any order), each with ``"pk"`` and the fields asked.

        Read with strong consistency: every write acknowledged before the call is seen. A
        caller that needs every match asks again when the answer fills ``limit`` (capped at
        :data:`MAX_TOP_K`; ``limit < 1``: no rows).

        Raises:
            InvalidFilterError: ``filter_expr`` cannot be parsed.
        """
        ...

    def iterate(
        self, kind: Kind, output_fields: Sequence[str], batch_size: int = 4096, *, filter_expr: str | None = None
    ) -> Iterator[dict[str, Any]]:
        """Every row of ``kind`` (inside the filter), each with ``"pk"`` and the fields asked; strongly consistent.

        Raises:
            UnpageableKeysError: The rows' keys cannot be paged (see the implementation).
        """
        ...

    def counts(self) -> dict[str, int]:
        """The number of rows of each kind (exact, strongly consistent)."""
        ...

    def matching_passage_values(
        self, ids: Sequence[str], filter_expr: str, field: str | None = None
    ) -> list[tuple[str, Any]]:
        """(id, value of ``field``) of those of the passage ``ids`` whose rows match ``filter_expr``.

        Strongly consistent; ``field=None``: the values are None. The graph's filtered views are read so.
        """
        ...


def passage_texts(reads: StoreReads) -> Callable[[], Iterator[str]]:
    """Reads every passage's text (one strongly consistent scan) when called."""
    return lambda: (str(row.get("text") or "") for row in reads.iterate("passages", ("text",)))
