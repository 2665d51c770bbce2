"""The store's graph index: built from Milvus, updated in place, persisted with a fingerprint.

A mixin of :class:`~langchain_graphrag_milvus.store.MilvusGraphStore`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from langchain_graphrag_milvus.errors import CorruptIndexError, StaleIndexError
from langchain_graphrag_milvus.graph import GraphIndex, GraphView, persist
from langchain_graphrag_milvus.milvus import expr
from langchain_graphrag_milvus.milvus.schema import Kind
from langchain_graphrag_milvus.retrieval.query_entities import EntityLinker
from langchain_graphrag_milvus.text.names import id_to_key, key_to_id

if TYPE_CHECKING:
    from pymilvus import MilvusClient

__all__ = ["GraphState"]

logger = logging.getLogger("langchain_graphrag_milvus")

_VIEW_CHUNK = 2048
_GENERATION_KEY = "graphrag.generation"


class GraphState:
    """Graph index, tenant views, entity names and linker (mixed into the store)."""

    collection_prefix: str
    timeout: float | None
    graph_path: Path | None
    on_stale: Literal["rebuild", "error"]
    refresh_interval: float | None
    _checked_at: float
    _seen_generation: int | None
    _lock: threading.RLock
    _graph: GraphIndex | None
    _entity_names: dict[str, str] | None
    _linker: tuple[dict[str, str], EntityLinker] | None
    _views: dict[str, tuple[GraphIndex, GraphView]]

    if TYPE_CHECKING:  # provided by the store and MilvusReads

        @property
        def client(self) -> MilvusClient:  # noqa: D102
            ...

        def collection_name(self, kind: Kind) -> str:  # noqa: D102
            ...

        def check_open(self) -> int:  # noqa: D102
            ...

        def counts(self) -> dict[str, int]:  # noqa: D102
            ...

        def iterate(  # noqa: D102
            self, kind: Kind, output_fields: Sequence[str], batch_size: int = 4096, *, filter_expr: str | None = None
        ) -> Iterator[dict[str, Any]]: ...

    # ------------------------------------------------------------------ graph
    @property
    def graph(self) -> GraphIndex:
        """The graph index, built from the relation collection on first use.

        With ``refresh_interval`` set, at most that often it checks whether another
        writer changed the data (see :meth:`refresh`) and reloads it if so.
        """
        graph = self._graph
        if graph is None:
            with self._lock:
                if self._graph is None:
                    self._graph = self._build_graph()
                graph = self._graph
        elif self.refresh_interval is not None and time.monotonic() - self._checked_at >= self.refresh_interval:
            self.refresh()
            graph = self._graph or self.graph
        return graph

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
                generation = self.generation()
            except Exception as exc:  # keep serving; the next check retries
                logger.warning("cannot check %r for changes (%s); keeping the current graph", self, exc)
                return False
            if self._graph is not None and generation == self._seen_generation:
                return False
            seen = self._seen_generation
            logger.info("%r: the data changed (generation %s → %s); reloading the graph", self, seen, generation)
            self._entity_names = None
            self._linker = None
            self._views.clear()
            self._graph = self._build_graph()
            return True

    def rebuild_graph(self) -> GraphIndex:
        """Rebuild the graph index from Milvus alone (ignoring a saved one) and return it."""
        with self._lock:
            self._graph = self._read_graph()
            self._views.clear()
            self._linker = None
            return self._graph

    def _build_graph(self) -> GraphIndex:
        path = self.graph_path
        if path is None or not path.exists() or (path.is_dir() and not any(path.iterdir())):
            return self._read_graph()
        try:
            saved = persist.read_manifest(path).get("fingerprint")
            current = self.fingerprint()
            if saved == current:
                graph = persist.load(path)
                self._seen_generation = int(current["generation"])
                return graph
            problem, error = f"was built from {saved} but Milvus now holds {current}", StaleIndexError
        except persist.IndexFileError as exc:
            problem, error = f"is damaged ({exc})", CorruptIndexError
        if self.on_stale == "error":
            raise error(
                f"the graph index saved in graph_path={str(path)!r} {problem}; delete it or open the store "
                "with on_stale='rebuild'"
            )
        logger.warning("the graph index saved in graph_path=%r %s; rebuilding it from Milvus", str(path), problem)
        return self._read_graph()

    def _read_graph(self) -> GraphIndex:
        # the generation is read *before* the rows: a change made meanwhile makes the result stale
        generation = self.generation()
        fingerprint = None
        if self.graph_path is not None:
            fingerprint = {"prefix": self.collection_prefix, "generation": generation, **self.counts()}
        self._seen_generation = generation
        rkeys, skeys, okeys, pids = [], [], [], []
        for row in self.iterate("relations", ("subject_id", "object_id", "passage_ids")):
            rkeys.append(id_to_key(row["pk"]))
            skeys.append(id_to_key(row["subject_id"]))
            okeys.append(id_to_key(row["object_id"]))
            pids.append(list(row["passage_ids"]))
        names: dict[str, str] = {}
        syn_a: list[int] = []
        syn_b: list[int] = []
        for row in self.iterate("entities", ("text", "synonym_ids")):
            names[str(row["pk"])] = str(row["text"])
            for other in row.get("synonym_ids") or []:
                syn_a.append(id_to_key(row["pk"]))
                syn_b.append(id_to_key(other))
        graph = GraphIndex.from_relations(
            relation_keys=np.array(rkeys, np.uint64),
            subject_keys=np.array(skeys, np.uint64),
            object_keys=np.array(okeys, np.uint64),
            passage_ids=pids,
            synonym_pairs=(np.array(syn_a, np.uint64), np.array(syn_b, np.uint64)),
        )
        self._entity_names = names  # read anyway: the offline linker needs them
        if fingerprint is not None:
            self._save(graph, fingerprint)
        return graph

    def _save(self, graph: GraphIndex, fingerprint: dict[str, Any]) -> None:
        """Save the index under ``graph_path``; a failure is a warning (the index is derived data)."""
        assert self.graph_path is not None
        try:
            persist.save(graph, self.graph_path, fingerprint=fingerprint)
        except OSError as exc:
            logger.warning("cannot save the graph index to graph_path=%r (%s)", str(self.graph_path), exc)

    def generation(self) -> int:
        """A counter of changes to the graph's data, kept in Milvus (a collection property)."""
        self.check_open()
        props = self.client.describe_collection(self.collection_name("relations")).get("properties") or {}
        return int(props.get(_GENERATION_KEY, 0))

    def bump_generation(self) -> int:
        """Mark the data as changing (before any write that alters the graph, and after it).

        Other stores on the same data notice the new value (:meth:`refresh`). This store's
        own graph stays current (its writes update it in place), so if it had seen the
        previous value it counts the new one as seen.
        """
        current = self.generation()
        value = current + 1
        self.client.alter_collection_properties(
            self.collection_name("relations"), properties={_GENERATION_KEY: str(value)}, timeout=self.timeout
        )
        if self._seen_generation == current:
            self._seen_generation = value
        return value

    def fingerprint(self) -> dict[str, Any]:
        """What a saved graph index must match: generation and row counts."""
        return {"prefix": self.collection_prefix, "generation": self.generation(), **self.counts()}

    def _set_graph(self, graph: GraphIndex, *, removed_entities: Sequence[str] = ()) -> None:
        with self._lock:
            self._graph = graph
            if self._entity_names is not None and removed_entities:
                gone = set(removed_entities)
                self._entity_names = {k: v for k, v in self._entity_names.items() if k not in gone}

    def _after_change(self) -> None:
        """End a write: bump the generation again, persist the updated index if a path is set.

        The second bump tells readers that refreshed while the write was under way (after
        the first bump) to refresh once more.
        """
        with self._lock:
            self.bump_generation()
            if self.graph_path is not None and self._graph is not None:
                self._save(self._graph, self.fingerprint())

    def entity_names(self) -> dict[str, str]:
        """Entity id → display name for every entity (cached; used by the offline linker)."""
        names = self._entity_names
        if names is None:
            with self._lock:
                if self._entity_names is None:
                    self._entity_names = {r["pk"]: r["text"] for r in self.iterate("entities", ("text",))}
                names = self._entity_names
        return names

    def graph_view(self, filter_expr: str, graph: GraphIndex | None = None) -> GraphView:
        """The part of the graph whose passages match ``filter_expr`` (cached per graph state).

        Reads the ids of all matching passages once per filter and graph state (with
        ``"Strong"`` consistency); later calls with the same filter are free until the
        next ingest changes the graph. ``graph``: the index to take the view of (default:
        the current one).
        """
        return self._graph_and_view(filter_expr, graph)[1]

    def _graph_and_view(self, filter_expr: str, graph: GraphIndex | None = None) -> tuple[GraphIndex, GraphView]:
        graph = self.graph if graph is None else graph
        cached = self._views.get(filter_expr)
        if cached is not None and cached[0] is graph:
            return cached
        # Ask Milvus which of the graph's passages pass the filter, in chunks of known ids:
        # pymilvus' query_iterator pages with an unescaped `pk > "<last id>"`, which breaks
        # on passage ids containing quotes, so it is not used for user-chosen ids.
        ids = graph.passages.ids
        matched: list[str] = []
        for i in range(0, len(ids), _VIEW_CHUNK):
            chunk = ids[i : i + _VIEW_CHUNK]
            rows = self.client.query(
                self.collection_name("passages"),
                filter=expr.and_all(expr.in_list("pk", chunk), filter_expr),
                output_fields=["pk"],
                limit=len(chunk),
                timeout=self.timeout,
                consistency_level="Strong",
            )
            matched += [str(r["pk"]) for r in rows]
        found = graph.passages.find(matched)
        view = graph.view(found[found >= 0])
        with self._lock:
            if len(self._views) >= 64:
                self._views.pop(next(iter(self._views)))
            self._views[filter_expr] = (graph, view)
        return graph, view

    def entity_linker(self, filter_expr: str | None = None) -> EntityLinker:
        """An :class:`~langchain_graphrag_milvus.retrieval.query_entities.EntityLinker` over the entity names (cached).

        With ``filter_expr``, over the names of the entities in that filter's
        :meth:`graph_view` only: a tenant's queries never link (or learn of) a name that
        exists only outside its view. Cached on the view.
        """
        names = self.entity_names()
        if filter_expr is not None:
            graph, view = self._graph_and_view(filter_expr)
            linker: EntityLinker | None = view.cache.get("linker")
            if linker is None or view.cache.get("linker_names") is not names:
                keys = graph.entities.keys[view.entities].tolist()
                inside = (names.get(key_to_id(k)) for k in keys)
                linker = EntityLinker((n for n in inside if n), require_capital=True)
                view.cache.update(linker=linker, linker_names=names)
            return linker
        cached = self._linker
        if cached is None or cached[0] is not names:
            cached = self._linker = (names, EntityLinker(names.values(), require_capital=True))
        return cached[1]

    def _after_ingest(self, graph_delta: dict[str, Any], new_entities: Mapping[str, str]) -> None:
        """Fold an ingest chunk into the in-memory graph and name cache (no rebuild)."""
        with self._lock:
            if self._graph is not None:
                self._graph = self._graph.add_relations(**graph_delta)
            if self._entity_names is not None and new_entities:
                self._entity_names = {**self._entity_names, **new_entities}
