"""The graph cache's entity and relation vectors held in the client (a part of :class:`.graph_cache.GraphCache`).

:class:`GraphVectors` keeps the store's :class:`~.local_vectors.LocalVectors` in step with
the graph and the entity names the cache holds: the writes offer the rows they wrote
(:meth:`~GraphVectors.offer_vectors`, called by :func:`.writes.write_rows`), a search asks
for a kind's table (:meth:`~GraphVectors.vector_table`), and the tables are saved with the
index under ``graph_path`` and loaded with it.

Rows a table lacks are read by key (up to :data:`~.local_vectors.FETCH_MAX`), or all at
once when there are more (a store saved before vectors were, or written by another
process): only with a ``graph_path``, where the result is saved, so a store pays that
read once, not once per process.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from langchain_graphrag_milvus.graph import GraphIndex
from langchain_graphrag_milvus.graph.ids import ids_to_keys, keys_to_ids
from langchain_graphrag_milvus.milvus.local_fields import HELD_FIELDS, encode_fields, graph_links
from langchain_graphrag_milvus.milvus.local_vectors import (
    FETCH_MAX,
    LOCAL_KINDS,
    IncompleteRead,
    LocalVectors,
    NowhereToKeep,
    Target,
    VectorTable,
)
from langchain_graphrag_milvus.milvus.read_seam import StoreReads
from langchain_graphrag_milvus.milvus.schema import Kind
from langchain_graphrag_milvus.milvus.state_seam import StoreState

__all__ = ["GraphVectors"]


class GraphVectors:
    """The local vectors of :class:`~langchain_graphrag_milvus.milvus.graph_cache.GraphCache` (a mixin)."""

    reads: StoreReads
    connection: StoreState
    graph_path: Path | None
    _lock: threading.RLock
    _graph: GraphIndex | None
    _entity_names: Any
    _seen_store: str | None
    _seen_generation: int | None
    #: The store's vectors held here (None: every search goes to Milvus).
    local: LocalVectors | None
    #: The graph and fingerprint of the index last saved or loaded (a vector read re-saves it).
    _saved_state: tuple[GraphIndex, dict[str, Any]] | None

    if TYPE_CHECKING:  # GraphCache's

        def unchecked(self) -> GraphIndex: ...  # noqa: D102

        def entity_names(self) -> Mapping[str, str]: ...  # noqa: D102

        def _save(self, graph: GraphIndex, fingerprint: dict[str, Any], *, vectors: bool = True) -> None: ...

    def offer_vectors(self, kind: Kind, rows: Iterable[Mapping[str, Any]]) -> None:
        """Rows just written to Milvus (``pk`` and ``vector``): the tables take them without a read."""
        if self.local is not None:
            self.local.offer(kind, rows)

    def vector_table(self, kind: Kind, *, scan: bool = True) -> VectorTable | None:
        """The table of ``kind`` in step with the graph (None: search Milvus).

        ``scan=False``: never read a whole collection (when saving after a write). None as well
        when the collection's index has another metric than the store was opened with (its rows
        would be kept, scored and saved for the wrong one).
        """
        local = self.local
        if local is None or kind not in LOCAL_KINDS:
            return None
        metric = self.connection.index_metric(kind)
        if metric and metric != ("COSINE" if local.cosine else "IP"):  # Milvus searches with the index's metric
            return None
        source: object
        target: Target
        if kind == "relations":
            graph = self.unchecked()
            source, target = graph, (lambda: (graph.relations.keys, graph_links(graph)))
        else:
            names = self.entity_names()
            source, target = names, (lambda: (_name_keys(names), None))
        scanned: list[Kind] = []
        table = local.table(kind, source, target, lambda k, missing, _: self._read_vectors(k, missing, scan, scanned))
        if scanned and table is not None:
            self._resave()
        return table

    def saved_vectors(self) -> dict[Kind, VectorTable]:
        """The tables to save with the index: those in step with it (read by key if they lack a few rows)."""
        if self.local is None:
            return {}
        tables = {kind: self.vector_table(kind, scan=False) for kind in LOCAL_KINDS}
        return {kind: t for kind, t in tables.items() if t is not None}

    def _read_vectors(self, kind: Kind, missing: np.ndarray, scan: bool, scanned: list[Kind]) -> VectorTable:
        assert self.local is not None
        rows: Iterable[Mapping[str, Any]]
        fields = ("vector", *HELD_FIELDS[kind])
        if len(missing) <= FETCH_MAX:
            rows = self.reads.fetch(kind, keys_to_ids(missing), fields).values()
        elif self.graph_path is None:  # lasts as long as this graph: remembered by the tables
            raise NowhereToKeep(f"{len(missing)} rows to read, and no saved index to keep them in")
        elif not scan:  # a save's check: the next search scans
            raise IncompleteRead(f"{len(missing)} rows to read, and no scan while saving")
        else:
            scanned.append(kind)
            rows = self.reads.iterate(kind, fields)
        rows = list(rows)
        keys = ids_to_keys([r["pk"] for r in rows])
        vectors = np.asarray([r["vector"] for r in rows], np.float32).reshape(len(rows), -1)
        held = encode_fields(kind, rows)
        return VectorTable.build(keys, vectors, self.local.cosine, *(held or (None, None)))

    def stamped_table(self, kind: Kind) -> tuple[VectorTable, tuple[str | None, int | None] | None] | None:
        """The table of ``kind`` (as :meth:`vector_table`) and the Milvus stamp its graph was read at.

        The stamp (store id, generation) is None when it cannot be told (the graph changed
        meanwhile): a search then reads its hits back from Milvus.
        """
        table = self.vector_table(kind)
        if table is None or self.local is None:
            return None
        with self._lock:
            source = self._graph if kind == "relations" else self._entity_names
            stamp = (self._seen_store, self._seen_generation)
        if source is None or self.local.current(kind, source) is not table:
            return table, None
        return table, stamp

    def _resave(self) -> None:
        """Save the index again with the vectors just read, if the graph is still the one last saved."""
        with self._lock:
            state = self._saved_state
            if self.graph_path is not None and state is not None and state[0] is self._graph:
                self._save(*state)


def _name_keys(names: Mapping[str, str]) -> np.ndarray:
    """The entities' keys: the name map holds them already (no id is formatted and parsed back)."""
    keys = getattr(names, "key_array", None)
    if keys is not None:
        return np.asarray(keys)
    return ids_to_keys(names)
