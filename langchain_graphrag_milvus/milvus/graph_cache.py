"""The store's graph index: built from Milvus, updated in place, persisted with a fingerprint.

:class:`GraphCache` holds the in-memory :class:`~langchain_graphrag_milvus.graph.GraphIndex`
of one store, with what derives from it: entity names, tenant views and a cached entity
linker. Writers change it only through its API: :meth:`GraphCache.apply` folds a typed
:class:`GraphDelta` in, :meth:`GraphCache.replace` swaps in a graph computed by a removal
(both in :mod:`.graph_changes`), :meth:`GraphCache.persist` ends a write (generation bump,
save under ``graph_path``).
The linker's type is not known here: the store passes a factory (names → linker). The rows of a
rebuild are read by :mod:`.graph_read`, the index saved under ``graph_path`` is :mod:`.graph_saved`.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterable
from typing import Any, Generic, Literal, TypeVar

from langchain_graphrag_milvus.graph import GraphIndex, GraphView
from langchain_graphrag_milvus.graph.owned_dir import check_graph_path
from langchain_graphrag_milvus.milvus.graph_changes import GraphChanges
from langchain_graphrag_milvus.milvus.graph_fold import GraphDelta, PendingFold
from langchain_graphrag_milvus.milvus.graph_memory import MemoryReport, memory_report, release_free_memory
from langchain_graphrag_milvus.milvus.graph_read import read_graph, read_view
from langchain_graphrag_milvus.milvus.graph_saved import load_saved, save_index
from langchain_graphrag_milvus.milvus.graph_vectors import GraphVectors
from langchain_graphrag_milvus.milvus.lite import check_lite_parent, is_lite
from langchain_graphrag_milvus.milvus.local_vectors import LocalVectors
from langchain_graphrag_milvus.milvus.read_seam import StoreReads
from langchain_graphrag_milvus.milvus.state_seam import StoreState
from langchain_graphrag_milvus.text.name_map import NameMap
from langchain_graphrag_milvus.text.name_table import NameTable

__all__ = ["GraphCache", "GraphDelta"]

logger = logging.getLogger("langchain_graphrag_milvus")

LinkerT = TypeVar("LinkerT")
_MAX_VIEWS = 64
#: Key ranges a rebuild reads at once from a Milvus server (measured: ``benchmarks/bench_bulk_load.py``).
REBUILD_PARALLEL = 4


class GraphCache(GraphChanges, GraphVectors, Generic[LinkerT]):
    """Graph index, entity names, tenant views and entity linker of one store.

    Args:
        connection: The store's connection (generation counter, lock).
        reads: The store's reads (relation and entity scans, counts, passage matching).
        linker_factory: Makes an entity linker from entity names; the cache keeps what it
            returns (one for all names, one per tenant view).
        graph_path: Where the index is saved after every change and loaded from on open:
            missing, empty or an index saved by this package, and apart from the Milvus Lite
            database (:func:`~langchain_graphrag_milvus.graph.owned_dir.check_graph_path`).
        on_stale: ``"rebuild"`` or ``"error"`` when the saved index does not match Milvus.
        refresh_interval: Seconds between checks for other writers' changes (``None``: never).
        local: Entity and relation vectors held in the client (:mod:`.graph_vectors`; None: none).

    Raises:
        ValueError: ``on_stale`` or ``refresh_interval`` is invalid.
        GraphPathError: ``graph_path`` is a file, holds files this package did not write,
            or is, contains or lies inside the Milvus Lite database.
    """

    def __init__(
        self,
        connection: StoreState,
        reads: StoreReads,
        linker_factory: Callable[[Iterable[str]], LinkerT],
        *,
        graph_path: str | os.PathLike[str] | None = None,
        on_stale: Literal["rebuild", "error"] = "rebuild",
        refresh_interval: float | None = 1.0,
        local: LocalVectors | None = None,
    ) -> None:
        if on_stale not in ("rebuild", "error"):
            raise ValueError("on_stale must be 'rebuild' or 'error'")
        if refresh_interval is not None and (
            isinstance(refresh_interval, bool) or not isinstance(refresh_interval, (int, float)) or refresh_interval < 0
        ):
            raise ValueError(f"refresh_interval must be a number of seconds >= 0 or None, got {refresh_interval!r}")
        self.connection = connection
        self.reads = reads
        self.linker_factory = linker_factory
        # a path that is not ours, or that holds or sits in the Lite database, is refused before anything is written
        lite = [check_lite_parent(connection.uri)] if is_lite(connection.uri) else []
        self.graph_path = check_graph_path(graph_path, forbidden=lite) if graph_path is not None else None
        self.on_stale = on_stale
        self.refresh_interval = None if refresh_interval is None else float(refresh_interval)
        #: How log messages name the store.
        self.label = "graph cache"
        self._lock = connection.lock
        self._checked_at = time.monotonic()
        self._seen_generation: int | None = None
        #: The store id the graph was read under (collections dropped and created again get another).
        self._seen_store: str | None = None
        self._graph: GraphIndex | None = None
        self._entity_names: NameMap | None = None
        self._linker: tuple[NameMap, LinkerT] | None = None
        self._names_table: tuple[NameMap, NameTable] | None = None
        self._views: dict[str, tuple[GraphIndex, GraphView]] = {}
        self._pending: PendingFold | None = None
        self.local = local
        #: What the store's held passage table holds (set by its local search), for :meth:`memory_report`.
        self.held_passages: Callable[[], tuple[Any, ...]] | None = None
        self._saved_state = None
        #: How many times this cache bumped the generation (a write changed Milvus).
        self.bumps = 0
        #: Key ranges read at once by a rebuild (:mod:`.graph_read`); 1 on Milvus Lite.
        self.rebuild_parallel = 1 if is_lite(connection.uri) else REBUILD_PARALLEL

    # ------------------------------------------------------------------ the graph
    @property
    def loaded(self) -> GraphIndex | None:
        """The graph in memory, or None if it was not built yet (nothing is read)."""
        return self._graph

    def current(self, check: bool = True) -> GraphIndex:
        """The graph, built on first use; reloaded first if a refresh check is due and finds changes.

        ``check=False`` (:meth:`unchecked`) skips the refresh check: a query then runs it with
        its searches (:meth:`moved_on`).
        """
        if self._pending is not None and self._pending.size:
            with self._lock:
                self._fold()
        graph = self._graph
        if graph is None:
            with self._lock:
                if self._graph is None:
                    self._graph = self._build_graph()
                graph = self._graph
        elif check and self._check_due():
            self.refresh()
            graph = self._graph or self.current()
        return graph

    def unchecked(self) -> GraphIndex:
        """The graph in memory (built on first use), without the refresh check even if it is due."""
        return self.current(check=False)

    def moved_on(self, graph: GraphIndex) -> bool:
        """Run the refresh check if it is due; True if the current graph is no longer ``graph``.

        A query that took its graph with :meth:`unchecked` sends this with its searches (one
        concurrent read, no round trip of its own) and searches again if the answer is True.
        """
        if self._check_due():
            self.refresh()
        return self.current(check=False) is not graph

    def check_soon(self) -> None:
        """Make the refresh check due now (a held answer found the counter moved: see :mod:`.local_search`)."""
        self._checked_at = float("-inf")

    def _check_due(self) -> bool:
        interval = self.refresh_interval
        return interval is not None and time.monotonic() - self._checked_at >= interval

    def refresh(self) -> bool:
        """Reload the graph now if another writer changed the data since it was built.

        One cheap check: the generation counter every writer bumps before and after a
        change (a collection property, read with ``describe_collection``). If it moved,
        the graph, entity names, linker and tenant views are reloaded (from a saved index
        whose fingerprint matches, else from Milvus). A failing check keeps the current
        graph with a logged warning and is retried after ``refresh_interval``.

        Returns:
            True if the graph was reloaded.
        """
        with self._lock:
            self._checked_at = time.monotonic()
            try:
                store, generation = self.connection.stamp()
            except Exception as exc:  # keep serving; the next check retries
                logger.warning("cannot check %s for changes (%s); keeping the current graph", self.label, exc)
                return False
            recreated = None not in (store, self._seen_store) and store != self._seen_store
            if self._graph is not None and generation == self._seen_generation and not recreated:
                return False
            seen = self._seen_generation
            logger.info("%s: the data changed (generation %s → %s); reloading the graph", self.label, seen, generation)
            self._entity_names = None
            self._linker = None
            self._views.clear()
            self._pending = None  # (what it held is in Milvus already)
            if recreated:  # other collections: another dimension, index, or model (the same keys, other vectors)
                self.connection.dim = None
                self.connection.forget_index_types()
                if self.local is not None:
                    self.local.forget()
            self._graph = self._build_graph()
            self._seen_store = store
            return True

    def rebuild(self) -> GraphIndex:
        """Rebuild the graph from Milvus alone (ignoring a saved one) and return it."""
        with self._lock:
            self._pending = None
            self._graph = self._read_graph()
            self._views.clear()
            self._linker = None
            return self._graph

    def forget(self) -> None:
        """Forget the graph and everything derived from it (the collections were dropped)."""
        with self._lock:
            self._graph = None
            self._entity_names = None
            self._names_table = None
            self._linker = None
            self._views.clear()
            self._pending = None
            if self.local is not None:
                self.local.forget()

    def _build_graph(self) -> GraphIndex:
        path = self.graph_path
        if path is None or not path.exists() or (path.is_dir() and not any(path.iterdir())):
            return self._read_graph()
        self.connection.check_open()  # connects under the lock we hold, so the fingerprint's thread never waits for it
        saved = load_saved(path, self.fingerprint, self.on_stale)
        if saved is None:
            return self._read_graph()
        if saved.table is not None and saved.names is not None:
            self._entity_names, self._names_table = saved.names, (saved.names, saved.table)
        self._seen_generation = int(saved.fingerprint["generation"])
        self._seen_store = saved.fingerprint.get("store_id")
        if self.local is not None:
            for kind, table in saved.vectors.items():
                self.local.seed(kind, table)  # memory-mapped; checked against the graph at first use
        self._saved_state = (saved.graph, saved.fingerprint)
        return saved.graph

    def _read_graph(self) -> GraphIndex:
        # the generation is read *before* the rows: a change made meanwhile makes the result stale
        fingerprint = None
        if self.graph_path is not None:
            fingerprint = self.fingerprint()
            store, generation = fingerprint["store_id"], int(fingerprint["generation"])
        else:
            store, generation = self.connection.stamp()
        self._seen_generation, self._seen_store = generation, store
        graph, self._entity_names = read_graph(self.reads, self.rebuild_parallel)  # names: the offline linker's
        if fingerprint is not None:
            self._save(graph, fingerprint, vectors=False)  # (not in memory yet: read at the first search)
        return graph

    def _save(self, graph: GraphIndex, fingerprint: dict[str, Any], *, vectors: bool = True) -> None:
        """Save the index, names and vectors under ``graph_path`` (:func:`.graph_saved.save_index`: failures warn)."""
        assert self.graph_path is not None
        names = self._entity_names
        table = self._name_table(names) if names is not None else None
        save_index(graph, self.graph_path, fingerprint, table, self.saved_vectors() if vectors else None)
        self._saved_state = (graph, fingerprint)

    def _name_table(self, names: NameMap) -> NameTable:
        """The name table of ``names`` (kept; rows of the previous table are reused for unchanged names)."""
        cached = self._names_table
        if cached is not None and cached[0] is names:
            return cached[1]
        table = NameTable.for_names(names, cached[1] if cached is not None else None)
        self._names_table = (names, table)
        return table

    # ------------------------------------------------------------------ generations
    def bump_generation(self) -> int:
        """Mark the data as changing (before any write that alters the graph, and after it).

        Other stores on the same data notice the new value (:meth:`refresh`). This cache
        stays current (writes update it in place), so if it had seen the previous value it
        counts the new one as seen. A graph saved under ``graph_path`` is loaded first (memory-mapped),
        while it still matches: the write then keeps it current and saves it, where it would
        otherwise be stale and rebuilt from Milvus by the next read.
        """
        path = self.graph_path
        if self._graph is None and path is not None and path.is_dir() and any(path.iterdir()):
            with self._lock:
                self.current(check=False)
        store, current = self.connection.stamp()
        value = current + 1
        self.bumps += 1
        self.connection.set_generation(value)
        if self._seen_generation == current:
            self._seen_generation, self._seen_store = value, store
        return value

    def fingerprint(self) -> dict[str, Any]:
        """What a saved graph index must match: store id, generation and row counts.

        The store id (:meth:`~.state_seam.StoreState.identity`) tells an index saved by another store
        with the same prefix (or copied from one, checksums and all) from this store's own.
        """
        store_id, generation = self.connection.identity()
        prefix = self.connection.collection_prefix
        return {"prefix": prefix, "store_id": store_id, "generation": generation, **self.reads.counts()}

    def persist(self) -> None:
        """End a write: bump the generation again, save the updated index if a path is set.

        The second bump tells readers that refreshed while the write was under way (after
        the first bump) to refresh once more.
        """
        with self._lock:
            first_load = self._pending is not None
            self._fold()
            self._pending = None
            self.bump_generation()
            if self.graph_path is not None and self._graph is not None:
                self._save(self._graph, self.fingerprint())
            if first_load:
                try:
                    self.warm_linker()
                except Exception as exc:  # the load is written: the first query builds the linker instead
                    logger.warning("%s: cannot build the entity linker after the load (%s)", self.label, exc)

    def warm_linker(self) -> None:
        """Build the linker over all names, with their keys and fuzzy index, now rather than on a query.

        Called at the end of a first load (200k passages: 2.6–4.2 s the first query no
        longer spends); a saved index holds the keys and the fuzzy index already.
        """
        with self._lock:
            self._name_table(self.entity_names()).linker_names().index()
            self.linker()
        release_free_memory()

    def memory_report(self) -> MemoryReport:
        """Bytes held in memory by the graph, names, name table, linker, views (:mod:`.graph_memory`)."""
        with self._lock:
            return memory_report(self)

    # ------------------------------------------------------------------ derived
    def entity_names(self) -> NameMap:
        """Entity id → display name for every entity (cached; a compact ``Mapping[str, str]``)."""
        if self._pending is not None and self._pending.size:
            with self._lock:
                self._fold()
        names = self._entity_names
        if names is None:
            if self._graph is None and self.graph_path is not None:
                self.current()  # an index saved under graph_path holds the names: no Milvus read
            with self._lock:
                if self._entity_names is None:
                    rows = self.reads.iterate("entities", ("text",))
                    self._entity_names = NameMap.from_items((r["pk"], r["text"]) for r in rows)
                names = self._entity_names
        return names

    def view(self, filter_expr: str, graph: GraphIndex | None = None) -> tuple[GraphIndex, GraphView]:
        """The graph and its part whose passages match ``filter_expr`` (cached per filter and graph state).

        Reads the ids of all matching passages once per filter and graph state (with
        ``"Strong"`` consistency); later calls with the same filter are free until the
        next ingest changes the graph. On a store with per-tenant rows the view's
        ``cache["tenants"]`` holds the tenants of its passages (sorted), under whose ids
        a name is looked up exactly. ``graph``: the index to take the view of (default:
        the current one).
        """
        graph = self.current() if graph is None else graph
        cached = self._views.get(filter_expr)
        if cached is not None and cached[0] is graph:
            return cached
        field = self.connection.partition_key_field if self.connection.tenant_rows() else None
        view = read_view(self.reads, graph, filter_expr, field)
        with self._lock:
            if len(self._views) >= _MAX_VIEWS:
                self._views.pop(next(iter(self._views)))
            self._views[filter_expr] = (graph, view)
        return graph, view

    def linker(self, filter_expr: str | None = None) -> LinkerT:
        """The linker over all entity names, or over those inside a filter's :meth:`view` (cached).

        With ``filter_expr``, a tenant's queries never link (or learn of) a name that exists
        only outside its view; that linker is cached on the view.
        """
        names = self.entity_names()
        if filter_expr is not None:
            graph, view = self.view(filter_expr, self.current(check=False))  # a query checks with its searches
            linker: LinkerT | None = view.cache.get("linker")
            if linker is None or view.cache.get("linker_names") is not names:
                inside = names.names_of_keys(graph.entities.keys_at(view.entities))
                # a factory may make a view's linker its own way (the store's: counts inside the view only)
                for_view = getattr(self.linker_factory, "for_view", None)
                named = (n for n in inside if n)
                linker = for_view(named, graph, view) if for_view else self.linker_factory(named)
                view.cache.update(linker=linker, linker_names=names)
            return linker
        cached = self._linker
        if cached is None or cached[0] is not names:
            cached = self._linker = (names, self.linker_factory(self._name_table(names).linker_names()))
        return cached[1]
