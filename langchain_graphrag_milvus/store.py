"""MilvusGraphStore: the three Milvus collections and the graph index derived from them."""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

from langchain_core.embeddings import Embeddings
from pymilvus import MilvusClient

from langchain_graphrag_milvus.existing_parts import ExistingCollectionParts
from langchain_graphrag_milvus.forwarding import forward
from langchain_graphrag_milvus.graph import GraphIndex, GraphView
from langchain_graphrag_milvus.ingest.context import IngestContext, check_write_settings
from langchain_graphrag_milvus.ingest.offline import resolve_extractor
from langchain_graphrag_milvus.ingest.records import RESERVED_METADATA_KEYS
from langchain_graphrag_milvus.ingest.store_writes import WriteOperations
from langchain_graphrag_milvus.ingest.supplement import Supplement, resolve_supplement
from langchain_graphrag_milvus.ingest.triplets import TripletCache
from langchain_graphrag_milvus.milvus.backend import BackendSettings, StoreBackend
from langchain_graphrag_milvus.milvus.connection import MilvusConnection, index_and_search_params
from langchain_graphrag_milvus.milvus.fingerprint import EmbeddingCheck
from langchain_graphrag_milvus.milvus.graph_cache import GraphCache
from langchain_graphrag_milvus.milvus.local_search import LaidOutReads, LocalSearch
from langchain_graphrag_milvus.milvus.local_vectors import LocalMode, local_vectors_for
from langchain_graphrag_milvus.milvus.milvus_backend import MilvusBackend, milvus_only
from langchain_graphrag_milvus.milvus.read_seam import StoreReads, passage_texts
from langchain_graphrag_milvus.milvus.reads import Hit, MilvusReads, RowLayout
from langchain_graphrag_milvus.milvus.saved_graph import drop_saved_graph, resolve_graph_path
from langchain_graphrag_milvus.milvus.state_seam import StoreState
from langchain_graphrag_milvus.milvus.store_views import VectorStoreViews
from langchain_graphrag_milvus.milvus.write_seam import StoreWrites
from langchain_graphrag_milvus.milvus.writes import StoreParts
from langchain_graphrag_milvus.retrieval.graph_linker import EntityLinker, graph_linker
from langchain_graphrag_milvus.store_outputs import StoreOutputs

if TYPE_CHECKING:
    from langchain_core.runnables import Runnable


__all__ = ["MilvusGraphStore", "ExistingCollectionGraphStore", "Hit"]


class MilvusGraphStore(VectorStoreViews, StoreOutputs):
    """Entities, relations and passages in Milvus, plus the sparse graph over them.

    Nothing is contacted at construction; the first call that needs Milvus connects.
    The graph index is built from the relation collection on first use (or loaded from
    ``graph_path``): a new process on the same URI and prefix needs no re-ingest.

    Setup:
        .. code-block:: bash

            pip install langchain-graphrag-milvus

    Instantiate:
        .. code-block:: python

            from langchain_core.embeddings import DeterministicFakeEmbedding
            from langchain_graphrag_milvus import MilvusGraphStore

            store = MilvusGraphStore(
                DeterministicFakeEmbedding(size=64),
                uri="./graph_demo.db",            # Milvus Lite; or http://host:19530
                collection_prefix="demo",
            )

    Ingest:
        .. code-block:: python

            report = store.add_records([
                {"passage": "Euler was a student of Johann Bernoulli.",
                 "triplets": [["Euler", "was a student of", "Johann Bernoulli"]]},
            ])
            print(report)          # passages, entities, relations added; triplets skipped

    Naive retrieval over the same passages:
        .. code-block:: python

            store.as_naive_retriever(k=2).invoke("Who taught Euler?")

    Args:
        embedding: Any LangChain ``Embeddings``; every unique text is embedded once. The collections
            record the model's fingerprint (:mod:`~.milvus.fingerprint`; one extra embedding call
            per store object): another model is refused at the first write and the first search
            (:class:`~langchain_graphrag_milvus.errors.EmbeddingMismatchError`).
        uri: A Milvus Lite path ending in ``.db`` (a directory is created there), a
            server URI such as ``http://localhost:19530``, or a Zilliz Cloud endpoint.
        token: ``"user:password"`` or a Zilliz Cloud API key.
        collection_prefix: Collections are ``{prefix}_entities``, ``_relations``, ``_passages``.
        connection_args: Extra ``MilvusClient`` arguments (``db_name``, ``secure``...).
        index_params: Vector index of new collections; default exact ``FLAT``/``COSINE``.
            The metric must be ``COSINE`` or ``IP`` (scores are similarities).
        search_params: Search parameters (e.g. ``{"params": {"ef": 128}}`` for HNSW).
        index: ``"flat"`` (default): always exact; ``"auto"``: exact FLAT, switched to HNSW on a
            Milvus server once an ingest leaves a collection with 100,000 rows or more (the
            collection cannot be searched while the index builds); ``"hnsw"``: HNSW from
            creation. Explicit ``index_params`` win. HNSW answers are approximate: measure with
            :meth:`index_recall`; see :mod:`~langchain_graphrag_milvus.milvus.indexes`.
        consistency_level: Of searches and reads (and of new collections). ``"Session"``
            (default): this process sees its own writes at once and searches stay fast
            (~1 ms on a server instead of ~200 ms for ``"Strong"``); data written by other
            processes shows up within the server's bounded staleness (seconds). Use
            ``"Strong"`` when readers must see other writers' data immediately. Building
            the graph and counting rows always read with ``"Strong"``.
        partition_key_field: A passage metadata field to use as Milvus partition key
            (e.g. ``"tenant"``): every passage must carry it (a string), and filters on it
            (``tenant == "a"``) only touch that tenant's partitions.
        batch_size: Texts per embedding call and rows per insert.
        timeout: Seconds allowed for each Milvus call (and for connecting).
        graph_path: A folder where the graph index is saved after every change and loaded on
            open (a stale or foreign one is rebuilt); missing, empty or an index saved here (else
            ``GraphPathError``). ``"auto"``: beside a Lite ``x.db`` in ``x.db.graphs/``, not on a
            server (:mod:`~.milvus.saved_graph`); ``None``: never saved.
        on_stale: ``"rebuild"`` (default) or ``"error"``: raise
            :class:`~langchain_graphrag_milvus.errors.StaleIndexError` when the saved index
            does not match Milvus (:class:`~langchain_graphrag_milvus.errors.CorruptIndexError`
            when it is damaged). With ``"rebuild"`` both are rebuilt from Milvus with a
            logged warning.
        refresh_interval: Seconds between checks for changes made by *other* writers
            (another process or store instance on the same URI and prefix): at most this
            often, a retrieval reads the generation counter (one ``describe_collection``, sent
            with its searches) and reloads the graph if it moved. ``0``: check on every retrieval; ``None``:
            never (call :meth:`refresh` yourself). Default 1 s; see README "Guarantees".
        local_search: Entity, relation and passage vectors held in the client (no Milvus search
            round trip, :mod:`~.milvus.local_search`). ``"auto"``: on Milvus Lite (scans every row),
            up to 300k rows per kind (≈1.5 KiB each at 384 dim); ``"on"``: any Milvus; ``"off"``: never.
        extractor: Triplet extractor for passages ingested without triplets (e.g.
            :func:`~langchain_graphrag_milvus.ingest.triplets.create_llm_triplet_extractor`), or
            ``"offline"`` for the spaCy extractor of
            :mod:`~langchain_graphrag_milvus.ingest.offline` (no LLM; the ``offline``
            extra and an English spaCy pipeline must be installed; loads on first use).
        supplement: Triplets added to every passage's own: ``"auto"`` (spaCy's title ↔ mention links for an
            LLM extractor), ``"offline_links"``, ``"offline"``, a runnable or None (``ingest/supplement.py``).
        extraction_cache: A sqlite file caching extractions by passage text (default: in memory).
        extraction_concurrency: Extraction calls in flight at once.
        synonym_threshold: Link each new entity to up to ``synonym_top_k`` entities whose
            name embeddings are at least this similar (HippoRAG's synonym edges; found with
            Milvus searches, not all pairs). Expansion then treats them as one node.
            ``None`` (default): no synonym links.
        synonym_top_k: See ``synonym_threshold``.
        source_field: The metadata key naming the source of a document ingested without
            an id (``"source"``, as LangChain loaders set it): ``upsert_documents``
            replaces, and ``delete_documents([source])`` removes, all its passages.
            ``None``: such documents are their own source. Rules in
            :mod:`langchain_graphrag_milvus.ingest.identity`.
        backend: A :class:`~.milvus.backend.StoreBackend` (default: Milvus on ``uri``), opened with the
            settings above; on another one the Milvus-only features (``client``, the ``langchain_milvus``
            views, ``index_recall``, ``drop``, ``aclient``) raise :class:`~.errors.BackendFeatureError`.

    Raises:
        TypeError: ``embedding`` is not a LangChain ``Embeddings``.
        GraphPathError: See ``graph_path``.
    """

    def __init__(
        self,
        embedding: Embeddings,
        *,
        uri: str = "./graphrag_milvus.db",
        token: str | None = None,
        collection_prefix: str = "graphrag",
        connection_args: Mapping[str, Any] | None = None,
        index_params: Mapping[str, Any] | None = None,
        search_params: Mapping[str, Any] | None = None,
        index: Literal["auto", "flat", "hnsw"] = "flat",
        consistency_level: str = "Session",
        partition_key_field: str | None = None,
        batch_size: int = 256,
        timeout: float | None = 60.0,
        graph_path: str | os.PathLike[str] | None = "auto",
        on_stale: Literal["rebuild", "error"] = "rebuild",
        refresh_interval: float | None = 1.0,
        local_search: LocalMode = "auto",
        extractor: Runnable[str, Any] | Literal["offline"] | None = None,
        supplement: Runnable[Any, Any] | Supplement | None = "auto",
        extraction_cache: str | os.PathLike[str] | None = None,
        extraction_concurrency: int = 4,
        synonym_threshold: float | None = None,
        synonym_top_k: int = 5,
        source_field: str | None = "source",
        backend: StoreBackend | None = None,
    ) -> None:
        if not isinstance(embedding, Embeddings):
            raise TypeError(
                f"embedding must be a LangChain Embeddings (e.g. OpenAIEmbeddings()), not {type(embedding).__name__}"
            )
        check_write_settings(batch_size, extraction_concurrency, synonym_threshold, source_field)
        if partition_key_field is not None and partition_key_field in RESERVED_METADATA_KEYS:
            raise ValueError(f"partition_key_field {partition_key_field!r} is a reserved field name")
        self.embedding = embedding
        self.index_params, self.search_params = index_and_search_params(index_params, search_params, index)
        parts = (backend or MilvusBackend(self._open_connection, self._row_layout())).open(
            BackendSettings(
                uri=uri,
                token=token,
                connection_args=connection_args or {},
                collection_prefix=collection_prefix,
                index_params=self.index_params,
                search_params=self.search_params,
                index_mode="flat" if index_params is not None else index,
                consistency_level=consistency_level,
                partition_key_field=partition_key_field,
                timeout=timeout,
            )
        )
        self._state: StoreState = parts.state
        self._reads: StoreReads = parts.reads
        self._row_writes: StoreWrites = parts.writes
        self.uri = uri
        self.collection_prefix = collection_prefix
        self.consistency_level = consistency_level
        self.partition_key_field = partition_key_field
        self.batch_size = batch_size
        self.timeout = timeout
        self.extractor = resolve_extractor(extractor)
        self.supplement = resolve_supplement(supplement, self.extractor)
        self.extraction_cache = TripletCache(extraction_cache)
        self.extraction_concurrency = extraction_concurrency
        self.synonym_threshold = synonym_threshold
        self.synonym_top_k = max(1, min(int(synonym_top_k), 16))
        self.source_field = source_field
        cosine = str(self.index_params.get("metric_type", "COSINE")).upper() == "COSINE"
        self._graph_cache: GraphCache[EntityLinker] = GraphCache(
            self._state,
            self._reads,
            graph_linker(lambda: self._graph_cache.current(), passage_texts(self._reads)),
            graph_path=resolve_graph_path(graph_path, uri, collection_prefix),
            on_stale=on_stale,
            refresh_interval=refresh_interval,
            local=local_vectors_for(local_search, lite=parts.scans, cosine=cosine),
        )
        self._graph_cache.label = repr(self)
        self._embedding_check = EmbeddingCheck(self._state, lambda: self.embedding, repr(self))
        self._search = LocalSearch(cast("LaidOutReads", self._reads), self._graph_cache, self._embedding_check)
        self._writes = WriteOperations(self._ingest_context, self._embedding_check.before_write)

    def _open_connection(self, **settings: Any) -> MilvusConnection:
        """The connection of this store (the existing-collection store opens its own kind)."""
        return MilvusConnection(**settings)

    @property
    def _connection(self) -> MilvusConnection:
        """The Milvus connection (the default backend's state); on another backend a ``BackendFeatureError``."""
        return milvus_only(self._state, repr(self))

    def _row_layout(self) -> RowLayout | None:
        """How rows are stored (None: this package's schema)."""
        return None

    def __repr__(self) -> str:
        return f"MilvusGraphStore(uri={self.uri!r}, collection_prefix={self.collection_prefix!r})"

    def _ingest_context(self) -> IngestContext:
        """The parts and settings ingestion writes with (read anew: settings may have been changed)."""
        return IngestContext(
            parts=StoreParts(self._reads, self._row_writes, self._graph_cache, self.batch_size),
            embedding=self.embedding,
            cosine=str(self.index_params.get("metric_type", "COSINE")).upper() == "COSINE",
            extractor=self.extractor,
            supplement=self.supplement,
            extraction_cache=self.extraction_cache,
            extraction_concurrency=self.extraction_concurrency,
            synonym_threshold=self.synonym_threshold,
            synonym_top_k=self.synonym_top_k,
            source_field=self.source_field,
        )

    # ------------------------------------------------------------------ graph settings (kept by the graph cache)
    @property
    def refresh_interval(self) -> float | None:
        """Seconds between checks for other writers' changes (``None``: never); settable."""
        return self._graph_cache.refresh_interval

    @refresh_interval.setter
    def refresh_interval(self, value: float | None) -> None:
        self._graph_cache.refresh_interval = value

    @property
    def graph_path(self) -> Path | None:
        """Where the graph index is saved (``None``: not saved)."""
        return self._graph_cache.graph_path

    @property
    def on_stale(self) -> Literal["rebuild", "error"]:
        """What a stale or damaged saved index does: ``"rebuild"`` or ``"error"``."""
        return self._graph_cache.on_stale

    # ------------------------------------------------------------------ connection
    collection_name = forward("_connection", MilvusConnection.collection_name)
    exists = forward("_row_writes", StoreWrites.exists)
    ensure_collections = forward("_row_writes", StoreWrites.ensure_collections)
    check_open = forward("_state", StoreState.check_open)
    generation = forward("_connection", MilvusConnection.generation)
    _resolved_args = forward("_connection", MilvusConnection.resolved_args)

    @property
    def client(self) -> MilvusClient:
        """The synchronous ``MilvusClient`` (connects on first use)."""
        return self._connection.client

    @property
    def reads(self) -> StoreReads:
        """The read seam (:class:`~.milvus.read_seam.StoreReads`): the reads of the rows, for code beside the facade."""
        return self._reads

    @property
    def writes(self) -> StoreWrites:
        """The write seam (:class:`~.milvus.write_seam.StoreWrites`): the row writes the write operations make."""
        return self._row_writes

    def close(self) -> None:
        """Close the clients; with Milvus Lite, stop its embedded server if nothing else uses it.

        It reconnects if used again. The server stops when the last store on that path closes,
        if a store started it and no other client (e.g. ``langchain_milvus.Milvus``) uses it.
        """
        if isinstance(self._state, MilvusConnection):  # another backend: nothing to close
            self._state.close()

    def drop(self) -> None:
        """Drop the collections and the saved graph index (irreversible; foreign: ``ForeignCollectionError``)."""
        with self._connection.lock:
            self._connection.drop()
            self._graph_cache.forget()
            self._embedding_check.forget()
            drop_saved_graph(self.graph_path)

    # ------------------------------------------------------------------ reads (any backend's; the docs: Milvus')
    search = forward("_search", LocalSearch.search)
    asearch = forward("_search", LocalSearch.asearch)
    search_held = forward("_search", LocalSearch.search_held)
    unchanged = forward("_search", LocalSearch.unchanged)
    fetch = forward("_reads", MilvusReads.fetch)
    afetch = forward("_reads", MilvusReads.afetch)
    iterate = forward("_reads", MilvusReads.iterate)
    counts = forward("_reads", MilvusReads.counts)

    # ------------------------------------------------------------------ graph
    refresh = forward("_graph_cache", GraphCache.refresh)
    rebuild_graph = forward("_graph_cache", GraphCache.rebuild)
    bump_generation = forward("_graph_cache", GraphCache.bump_generation)
    fingerprint = forward("_graph_cache", GraphCache.fingerprint)
    entity_names = forward("_graph_cache", GraphCache.entity_names)
    graph_unchecked = forward("_graph_cache", GraphCache.unchecked)
    graph_moved_on = forward("_graph_cache", GraphCache.moved_on)
    memory_report = forward("_graph_cache", GraphCache.memory_report)

    @property
    def graph(self) -> GraphIndex:
        """The graph index, built from the relation collection on first use.

        With ``refresh_interval`` set, at most that often it checks whether another
        writer changed the data (see :meth:`refresh`) and reloads it if so.
        """
        return self._graph_cache.current()

    def graph_view(self, filter_expr: str, graph: GraphIndex | None = None) -> GraphView:
        """The part of the graph (default: the current one) whose passages match ``filter_expr``.

        Cached per filter and graph state; see :meth:`~langchain_graphrag_milvus.milvus.graph_cache.GraphCache.view`.
        """
        return self._graph_cache.view(filter_expr, graph)[1]

    def entity_linker(self, filter_expr: str | None = None) -> EntityLinker:
        """An :class:`~langchain_graphrag_milvus.retrieval.query_entities.EntityLinker` over the entity names.

        With ``filter_expr``, over the names inside that filter's :meth:`graph_view` only;
        see :meth:`~langchain_graphrag_milvus.milvus.graph_cache.GraphCache.linker`.
        """
        return self._graph_cache.linker(filter_expr)

    # ------------------------------------------------------------------ ingestion and updates (a...: async)
    add_records = forward("_writes", WriteOperations.add_records)
    add_documents = forward("_writes", WriteOperations.add_documents)
    add_jsonl = forward("_writes", WriteOperations.add_jsonl)
    upsert_documents = forward("_writes", WriteOperations.upsert_documents)
    delete_documents = forward("_writes", WriteOperations.delete_documents)
    delete_passages = forward("_writes", WriteOperations.delete_passages)
    merge_entities = forward("_writes", WriteOperations.merge_entities)
    aadd_documents = forward("_writes", WriteOperations.aadd_documents)
    aupsert_documents = forward("_writes", WriteOperations.aupsert_documents)
    adelete_documents = forward("_writes", WriteOperations.adelete_documents)
    amerge_entities = forward("_writes", WriteOperations.amerge_entities)

    @classmethod
    def from_existing_collection(
        cls, embedding: Embeddings, *, collection_name: str, text_field: str = "text", **kwargs: Any
    ) -> MilvusGraphStore:
        """Deprecated: ``ExistingCollectionGraphStore(embedding, collection_name=..., ...)``, same arguments."""
        msg = "MilvusGraphStore.from_existing_collection() is deprecated: call ExistingCollectionGraphStore(...)"
        warnings.warn(msg + " with the same arguments", DeprecationWarning, stacklevel=2)
        return ExistingCollectionGraphStore(embedding, collection_name=collection_name, text_field=text_field, **kwargs)


class ExistingCollectionGraphStore(ExistingCollectionParts, MilvusGraphStore):
    """A :class:`MilvusGraphStore` over an existing langchain-milvus collection: see :mod:`.existing_store`."""
