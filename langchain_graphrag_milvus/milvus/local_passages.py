"""The passage vectors held in the client beside the entity and relation vectors (``local_search``).

With the passages' vectors here too, every search of a default graph query (entities,
relations, the dense passage search) is scored in the client, the walk ranks its passages
before any Milvus call, and the query's one Milvus wave is the read of the rows it returns
(:func:`~langchain_graphrag_milvus.retrieval.held.held_documents`).

Passages are not all in the graph (a passage without a relation is searched but never
walked), so the table is not kept in step with the graph's rows but with the store's
**generation counter**, which every writer bumps before it changes anything: the table is
every passage row read at one counter value (read before and after the scan; a scan during a
write is not kept), and it answers only for a query whose graph was read at that same value.
A query whose counter moved since is answered by Milvus, as before, and the next query that
finds the counter settled reads the passages again.

Memory: the vector (4 bytes a dimension: 1,536 bytes at 384) and the id (a Python string in a
list and a dict: ≈ 150 bytes for a 16-digit id) per passage; held only when the store holds the
entity and relation vectors, and under ``local_search="auto"`` only up to
:data:`AUTO_MAX_PASSAGES` passages.

Cost: the table is read again by the first query after any write (≈ 0.1 ms a passage on Lite:
musique100's 1,890 passages in 200–265 ms), on that query's path. :data:`AUTO_MAX_PASSAGES`
bounds that pause under ``"auto"``; handing written rows to the table, as the entity and
relation tables are, would remove it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from langchain_graphrag_milvus.milvus.local_vectors import VectorTable

if TYPE_CHECKING:
    from langchain_graphrag_milvus.milvus.local_vectors import LocalVectors
    from langchain_graphrag_milvus.milvus.read_seam import StoreReads
    from langchain_graphrag_milvus.milvus.state_seam import StoreState

__all__ = ["AUTO_MAX_PASSAGES", "PassageTable", "LocalPassages", "Stamp"]

#: Under ``local_search="auto"``, the most passages held (above it, Milvus answers the passage search):
#: the table's re-read after a write pauses one query for ≈ 0.1 ms a passage (≈ 2 s at this size).
AUTO_MAX_PASSAGES = 20_000

logger = logging.getLogger("langchain_graphrag_milvus")

Stamp = tuple["str | None", "int | None"]


@dataclass(frozen=True)
class PassageTable:
    """Every passage row at one ``stamp``: ids in table order, and their vectors (keys: positions)."""

    stamp: Stamp
    ids: list[str]
    index: dict[str, int]
    table: VectorTable

    @classmethod
    def of(cls, ids: list[str], vectors: Sequence[Any], cosine: bool, stamp: Stamp = (None, None)) -> PassageTable:
        """A table of these rows (ids once each, in this order) and their vectors, scored with the metric's rule."""
        matrix = np.asarray(vectors, np.float32).reshape(len(ids), -1)
        table = VectorTable.build(np.arange(len(ids), dtype=np.uint64), matrix, cosine)
        return cls(stamp, ids, {i: n for n, i in enumerate(ids)}, table)

    def positions(self, ids: Sequence[str]) -> np.ndarray | None:
        """Row positions of these ids (once each), or None if one is not held."""
        at = [self.index.get(i) for i in dict.fromkeys(ids)]
        if any(a is None for a in at):
            return None
        return np.asarray(at, np.int64)

    def hits(
        self, queries: Sequence[Sequence[float]], limit: int, cosine: bool, rows: np.ndarray | None = None
    ) -> list[list[tuple[str, float]]]:
        """Per query vector, ``(id, score)`` of its ``limit`` best passages (of ``rows``), best first."""
        top = self.table.top(np.asarray(queries, np.float32), limit, cosine, rows)
        return [[(self.ids[int(p)], float(s)) for p, s in zip(positions, scores)] for positions, scores in top]


class LocalPassages:
    """The store's passage vectors, read once per generation of the store (owned by the local search).

    Args:
        reads: The store's reads (the scan of the passages).
        connection: The store's state (the generation counter, the index metric).
        local: The entity and relation vectors (their metric and row limit apply here too).
    """

    def __init__(self, reads: StoreReads, connection: StoreState, local: LocalVectors) -> None:
        self.reads = reads
        self.connection = connection
        self.local = local
        self._table: PassageTable | None = None
        self._refused: Stamp | None = None  # a stamp already found not to hold (too many rows, a failed read)
        self._build = threading.Lock()

    def table(self, stamp: Stamp | None) -> PassageTable | None:
        """The passages at ``stamp`` (the stamp the graph was read at); None: Milvus answers.

        Read from Milvus (one scan) when the held table is of another stamp and the counter
        is at ``stamp`` now, before and after the scan.
        """
        current = self._table
        if current is not None and current.stamp == stamp:
            return current
        if stamp is None or stamp[1] is None or stamp == self._refused:
            return None
        with self._build:
            current = self._table
            if current is not None and current.stamp == stamp:
                return current
            try:
                built = self._read(stamp)
            except Exception as exc:  # noqa: BLE001  (Milvus answers this search; its error is Milvus' own)
                logger.debug("local passage vectors not read (%s); searching Milvus", exc)
                built = None
            if built is None:
                self._refused = stamp
                return None
            self._table = built
            return built

    def _read(self, stamp: Stamp) -> PassageTable | None:
        metric = self.connection.index_metric("passages")
        if metric and metric != ("COSINE" if self.local.cosine else "IP"):
            return None
        if tuple(self.connection.stamp()) != tuple(stamp):  # the graph is behind: its next refresh reads them
            return None
        ids: list[str] = []
        vectors: list[Any] = []
        limit = None if self.local.max_rows is None else min(self.local.max_rows, AUTO_MAX_PASSAGES)
        for row in self.reads.iterate("passages", ("vector",)):
            if limit is not None and len(ids) >= limit:
                return None
            if row.get("vector") is None or "pk" not in row:
                return None
            ids.append(str(row["pk"]))
            vectors.append(row["vector"])
        if tuple(self.connection.stamp()) != tuple(stamp):  # a writer began meanwhile: not one generation's rows
            return None
        if len(set(ids)) != len(ids):
            return None
        return PassageTable.of(ids, vectors, self.local.cosine, stamp)

    def forget(self) -> None:
        """Drop the table (the collections were dropped)."""
        self._table = None
        self._refused = None

    def held(self) -> tuple[Any, ...]:
        """What the table holds (for the memory report)."""
        return (self._table,)
