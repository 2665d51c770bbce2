"""How writes change a store's graph in memory: folded in, never rebuilt (a part of :class:`.graph_cache.GraphCache`).

:class:`GraphChanges` holds the write side of the cache: :meth:`~GraphChanges.apply` folds a
:class:`~.graph_fold.GraphDelta` already written to Milvus into the graph and the name cache,
:meth:`~GraphChanges.start_empty` starts a first load's gathering (:class:`~.graph_fold.PendingFold`),
:meth:`~GraphChanges.replace` swaps in a graph computed by a removal. The cache's state it
changes is declared here and set by ``GraphCache.__init__``.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from langchain_graphrag_milvus.graph import GraphIndex, GraphView
from langchain_graphrag_milvus.milvus.graph_fold import GraphDelta, PendingFold
from langchain_graphrag_milvus.milvus.state_seam import StoreState
from langchain_graphrag_milvus.text.name_map import NameMap

__all__ = ["GraphChanges"]


class GraphChanges:
    """The write side of :class:`~langchain_graphrag_milvus.milvus.graph_cache.GraphCache` (a mixin)."""

    connection: StoreState
    _lock: threading.RLock
    _graph: GraphIndex | None
    _entity_names: NameMap | None
    _linker: Any
    _views: dict[str, tuple[GraphIndex, GraphView]]
    _pending: PendingFold | None
    _seen_generation: int | None
    _seen_store: str | None

    def apply(self, delta: GraphDelta) -> None:
        """Fold a change already written to Milvus into the graph and the name cache (no rebuild).

        During a first load (:meth:`start_empty`) additive changes are gathered and folded
        once, at its end (:mod:`.graph_fold`); a read of the graph during it folds them first.
        """
        with self._lock:
            pending = self._pending
            if pending is not None and self._graph is not None and pending.accepts(delta):
                pending.add(delta)  # folded at the end of the load, or by the first read
                return
            self._fold()
            graph = self._graph
            if graph is not None:
                if len(delta.unlinked_relation_keys):
                    keys, pids = delta.unlinked_relation_keys, delta.unlinked_passage_ids
                    graph, _ = graph.remove_links(relation_keys=keys, passage_ids=pids)
                self._graph = graph.add_relations(
                    relation_keys=delta.relation_keys,
                    subject_keys=delta.subject_keys,
                    object_keys=delta.object_keys,
                    passage_ids=delta.passage_ids,
                    synonym_pairs=delta.synonym_pairs,
                )
            self._forget_entities(delta.removed_entities)
            if self._entity_names is not None and delta.new_entities:
                self._entity_names = self._entity_names.merged(delta.new_entities)

    def start_empty(self) -> None:
        """The collections exist and hold no row: start from the empty graph, gather a first load's changes.

        Called by a first load before its first write (and its first generation bump): the
        graph in memory then stays equal to what Milvus holds, with no rebuild on the first
        query; :meth:`persist` folds what is gathered and ends the gathering.
        """
        with self._lock:
            store, generation = self.connection.stamp()
            self._graph = GraphIndex.empty()
            self._entity_names = NameMap.empty()
            self._linker = None
            self._views.clear()
            self._pending = PendingFold()
            self._seen_generation, self._seen_store = generation, store

    def _fold(self) -> None:
        """Fold the gathered changes of a first load into the graph and the names (under the lock)."""
        pending = self._pending
        if pending is None or not pending.size or self._graph is None:
            return
        self._graph, names = pending.fold_into(self._graph)
        if self._entity_names is not None and names:  # in id order, as a rebuild reads them
            self._entity_names = self._entity_names.merged(names).sorted_by_id()
        self._pending = PendingFold()

    def replace(self, graph: GraphIndex, *, removed_entities: Sequence[str] = ()) -> None:
        """Swap in a graph computed by a removal (``GraphIndex.remove_*``); forget removed entities' names."""
        with self._lock:
            self._graph = graph
            self._forget_entities(removed_entities)

    def _forget_entities(self, removed: Sequence[str]) -> None:
        if self._entity_names is not None and removed:
            self._entity_names = self._entity_names.without(removed)
