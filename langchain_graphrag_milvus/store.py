"""MilvusGraphStore: the three Milvus collections and the graph index derived from them."""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
import weakref
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from langchain_core.embeddings import Embeddings
from pymilvus import AsyncMilvusClient, MilvusClient

from langchain_graphrag_milvus.errors import (
    CollectionNotFoundError,
    GraphRAGError,
    StoreConnectionError,
)
from langchain_graphrag_milvus.graph import GraphIndex, GraphView
from langchain_graphrag_milvus.ingest.offline import resolve_extractor
from langchain_graphrag_milvus.ingest.records import RESERVED_METADATA_KEYS
from langchain_graphrag_milvus.ingest.triplets import TripletCache
from langchain_graphrag_milvus.milvus import expr
from langchain_graphrag_milvus.milvus.graph_cache import GraphState
from langchain_graphrag_milvus.milvus.lite import check_lite_parent, lite_connection_args
from langchain_graphrag_milvus.milvus.reads import Hit, MilvusReads, acquire_lite, is_lite, lite_filter, release_lite
from langchain_graphrag_milvus.milvus.schema import (
    DEFAULT_INDEX_PARAMS,
    KINDS,
    Kind,
    check_collection,
    create_collection,
)
from langchain_graphrag_milvus.retrieval.query_entities import EntityLinker

if TYPE_CHECKING:
    from langchain_core.documents import Document
    from langchain_core.runnables import Runnable
    from langchain_milvus import Milvus

    from langchain_graphrag_milvus.existing_store import ExistingCollectionGraphStore
    from langchain_graphrag_milvus.ingest.load import IngestReport
    from langchain_graphrag_milvus.ingest.merge import MergeReport
    from langchain_graphrag_milvus.ingest.updates import DeleteReport, UpsertReport
    from langchain_graphrag_milvus.path_retriever import MilvusPathRetriever
    from langchain_graphrag_milvus.retrievers import NaivePassageRetriever
    from langchain_graphrag_milvus.subgraph import Subgraph

__all__ = ["MilvusGraphStore", "Hit"]


class MilvusGraphStore(MilvusReads, GraphState):
    """Entities, relations and passages in Milvus, plus the sparse graph over them.

    Nothing is contacted at construction; the first call that needs Milvus connects.
    The graph index is built from the relation collection on first use (or updated in
    place by ingestion), so a new process that opens the same URI and prefix retrieves
    the same results without re-ingesting.

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
        embedding: Any LangChain ``Embeddings``; every unique text is embedded once.
        uri: A Milvus Lite path ending in ``.db`` (a directory is created there), a
            server URI such as ``http://localhost:19530``, or a Zilliz Cloud endpoint.
        token: ``"user:password"`` or a Zilliz Cloud API key.
        collection_prefix: Collections are ``{prefix}_entities``, ``_relations``,
            ``_passages``.
        connection_args: Extra ``MilvusClient`` arguments (``db_name``, ``secure``...).
        index_params: Vector index of new collections; default exact ``FLAT``/``COSINE``.
            The metric must be ``COSINE`` or ``IP`` (scores are similarities).
        search_params: Search parameters (e.g. ``{"params": {"ef": 128}}`` for HNSW).
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
        graph_path: A directory where the graph index is saved after every change and
            loaded from on open (instead of reading all relations from Milvus). It records
            a fingerprint of the Milvus data it was built from; a stale one is rebuilt.
        on_stale: ``"rebuild"`` (default) or ``"error"``: raise
            :class:`~langchain_graphrag_milvus.errors.StaleIndexError` when the saved index
            does not match Milvus (:class:`~langchain_graphrag_milvus.errors.CorruptIndexError`
            when it is damaged). With ``"rebuild"`` both are rebuilt from Milvus with a
            logged warning.
        refresh_interval: Seconds between checks for changes made by *other* writers
            (another process or store instance on the same URI and prefix): at most this
            often, a retrieval reads the generation counter (one ``describe_collection``)
            and reloads the graph if it moved. ``0``: check on every retrieval; ``None``:
            never (call :meth:`refresh` yourself). Default 1 s; see README "Guarantees".
        extractor: Triplet extractor for passages ingested without triplets (e.g.
            :func:`~langchain_graphrag_milvus.ingest.triplets.create_llm_triplet_extractor`), or
            ``"offline"`` for the spaCy extractor of
            :mod:`~langchain_graphrag_milvus.ingest.offline` (no LLM; the ``offline``
            extra and an English spaCy pipeline must be installed; loads on first use).
        extraction_cache: A sqlite file caching extractions by passage text (default: in
            memory), so re-ingesting never pays twice.
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

    Raises:
        TypeError: ``embedding`` is not a LangChain ``Embeddings``.
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
        consistency_level: str = "Session",
        partition_key_field: str | None = None,
        batch_size: int = 256,
        timeout: float | None = 60.0,
        graph_path: str | os.PathLike[str] | None = None,
        on_stale: Literal["rebuild", "error"] = "rebuild",
        refresh_interval: float | None = 1.0,
        extractor: Runnable[str, Any] | Literal["offline"] | None = None,
        extraction_cache: str | os.PathLike[str] | None = None,
        extraction_concurrency: int = 4,
        synonym_threshold: float | None = None,
        synonym_top_k: int = 5,
        source_field: str | None = "source",
    ) -> None:
        if not isinstance(embedding, Embeddings):
            raise TypeError(
                f"embedding must be a LangChain Embeddings (e.g. OpenAIEmbeddings()), not {type(embedding).__name__}"
            )
        if source_field is not None and (not isinstance(source_field, str) or not source_field):
            raise TypeError("source_field must be a metadata key (a non-empty string) or None")
        self.source_field = source_field
        expr.field_name(collection_prefix)
        if batch_size < 1:
            raise ValueError("batch_size must be positive")
        self.embedding = embedding
        if is_lite(uri):
            check_lite_parent(uri)  # a typo'd path fails here, not later as an empty store
        self.uri = uri
        self.collection_prefix = collection_prefix
        self.index_params = dict(index_params or DEFAULT_INDEX_PARAMS)
        metric = str(self.index_params.get("metric_type", "COSINE")).upper()
        if metric not in ("COSINE", "IP"):
            raise ValueError(f"metric_type must be COSINE or IP (similarities), not {metric!r}")
        self.index_params["metric_type"] = metric
        self.search_params = {"metric_type": metric, "params": {}, **dict(search_params or {})}
        self.consistency_level = consistency_level
        if partition_key_field is not None:
            expr.field_name(partition_key_field)
            if partition_key_field in RESERVED_METADATA_KEYS:
                raise ValueError(f"partition_key_field {partition_key_field!r} is a reserved field name")
        self.partition_key_field = partition_key_field
        if on_stale not in ("rebuild", "error"):
            raise ValueError("on_stale must be 'rebuild' or 'error'")
        self.graph_path = Path(graph_path) if graph_path is not None else None
        self.on_stale = on_stale
        if refresh_interval is not None and (
            isinstance(refresh_interval, bool) or not isinstance(refresh_interval, (int, float)) or refresh_interval < 0
        ):
            raise ValueError(f"refresh_interval must be a number of seconds >= 0 or None, got {refresh_interval!r}")
        self.refresh_interval = None if refresh_interval is None else float(refresh_interval)
        self._checked_at = time.monotonic()
        self._seen_generation: int | None = None
        self._strong_reads: set[Kind] = set()
        self.extractor: Runnable[Any, Any] | None = resolve_extractor(extractor)
        self.extraction_cache = TripletCache(extraction_cache)
        if extraction_concurrency < 1:
            raise ValueError("extraction_concurrency must be positive")
        self.extraction_concurrency = extraction_concurrency
        if synonym_threshold is not None and not -1.0 <= synonym_threshold <= 1.0:
            raise ValueError("synonym_threshold is a cosine similarity in [-1, 1]")
        self.synonym_threshold = synonym_threshold
        self.synonym_top_k = max(1, min(int(synonym_top_k), 16))
        self.batch_size = batch_size
        self.timeout = timeout
        self._connection_args: dict[str, Any] = {**dict(connection_args or {}), "uri": uri}
        if token:
            self._connection_args["token"] = token
        self._client: MilvusClient | None = None
        self._aclients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, AsyncMilvusClient] = (
            weakref.WeakKeyDictionary()
        )
        self._vector_stores: dict[Kind, Milvus] = {}
        self._dim: int | None = None
        self._lock = threading.RLock()
        self._graph: GraphIndex | None = None
        self._entity_names: dict[str, str] | None = None
        self._linker: tuple[dict[str, str], EntityLinker] | None = None
        self._views: dict[str, tuple[GraphIndex, GraphView]] = {}

    def __repr__(self) -> str:
        return f"MilvusGraphStore(uri={self.uri!r}, collection_prefix={self.collection_prefix!r})"

    # ------------------------------------------------------------------ connections
    def collection_name(self, kind: Kind) -> str:
        """Name of the collection holding ``kind``."""
        return f"{self.collection_prefix}_{kind}"

    def _resolved_args(self) -> dict[str, Any]:
        args = dict(self._connection_args)
        return lite_connection_args(args) if is_lite(str(args["uri"])) else args

    @property
    def client(self) -> MilvusClient:
        """The synchronous ``MilvusClient`` (connects on first use)."""
        if self._client is None:
            with self._lock:
                if self._client is None:
                    for name in ("pymilvus.client.iterator.query_iterator", "grpc._server"):
                        logging.getLogger(name).addFilter(lite_filter)
                    self._client = self._connect(MilvusClient)
                    if is_lite(self.uri):
                        acquire_lite(self._resolved_args()["uri"])
        return self._client

    def _connect(self, client_class: Any) -> Any:
        args = self._resolved_args()
        try:
            return client_class(**args, timeout=self.timeout)
        except Exception as exc:  # pymilvus raises several types here; all mean the same
            raise StoreConnectionError(
                f"cannot connect to Milvus at {self.uri!r}: {exc}. Check that the URI is a server "
                "(http://host:19530), a Zilliz Cloud endpoint (https://..., with token=API key) or a "
                "local Milvus Lite path ending in .db, and that the server is running"
            ) from exc

    def close(self) -> None:
        """Close the clients; with Milvus Lite, stop its embedded server when no store uses it.

        The store can be used again afterwards (it reconnects). Stopping Milvus Lite's
        server releases its lock on the data directory, so another process may open it;
        it happens when the last open store of this process on that path closes.
        """
        with self._lock:
            had_client = self._client is not None
            if self._client is not None:
                self._client.close()
                self._client = None
            self._aclients.clear()
            self._vector_stores.clear()
            self._dim = None
            if had_client and is_lite(self.uri):
                release_lite(self._resolved_args()["uri"])

    async def aclient(self) -> AsyncMilvusClient:
        """The ``AsyncMilvusClient`` of the running event loop (one per loop)."""
        loop = asyncio.get_running_loop()
        client = self._aclients.get(loop)
        if client is None:
            client = self._connect(AsyncMilvusClient)
            self._aclients[loop] = client
        return client

    def exists(self) -> bool:
        """True if all three collections exist."""
        return all(self.client.has_collection(self.collection_name(k)) for k in KINDS)

    def ensure_collections(self, dim: int) -> None:
        """Create missing collections for ``dim``-dimensional vectors; check existing ones."""
        with self._lock:
            created = []
            for kind in KINDS:
                name = self.collection_name(kind)
                if self.client.has_collection(name):
                    check_collection(self.client.describe_collection(name), kind, dim, self.partition_key_field)
                else:
                    created.append(name)
                    create_collection(
                        self.client,
                        name,
                        kind,
                        dim,
                        index_params=self.index_params,
                        consistency_level=self.consistency_level,
                        timeout=self.timeout,
                        partition_key=self.partition_key_field,
                    )
            for name in created:  # the loads run in parallel on the server; wait for each
                self.client.load_collection(name, timeout=self.timeout)
            self._dim = dim

    def check_open(self) -> int:
        """Check the collections exist and are ours; return their dimension (loads them)."""
        if self._dim is not None:
            return self._dim
        with self._lock:
            if self._dim is not None:
                return self._dim
            missing = [k for k in KINDS if not self.client.has_collection(self.collection_name(k))]
            if missing:
                raise CollectionNotFoundError(
                    f"no {', '.join(missing)} collection under prefix {self.collection_prefix!r} at "
                    f"{self.uri!r}; ingest data first (store.add_records / add_documents / add_jsonl)"
                )
            key = self.partition_key_field
            dims = {
                check_collection(self.client.describe_collection(self.collection_name(k)), k, None, key) for k in KINDS
            }
            if len(dims) != 1:
                raise GraphRAGError(f"collections under {self.collection_prefix!r} disagree on dimension")
            for kind in KINDS:
                self.client.load_collection(self.collection_name(kind), timeout=self.timeout)
            self._dim = dims.pop()
            return self._dim

    def vector_store(self, kind: Kind) -> Milvus:
        """The collection as a ``langchain_milvus.Milvus`` vector store."""
        from langchain_milvus import Milvus

        self.check_open()
        with self._lock:
            if kind not in self._vector_stores:
                self._vector_stores[kind] = Milvus(
                    embedding_function=self.embedding,
                    collection_name=self.collection_name(kind),
                    connection_args=self._resolved_args(),
                    consistency_level=self.consistency_level,
                    search_params=self.search_params,
                    auto_id=False,
                    enable_dynamic_field=(kind == "passages"),
                    primary_field="pk",
                    text_field="text",
                    vector_field="vector",
                    timeout=self.timeout,
                )
            return self._vector_stores[kind]

    @property
    def entity_store(self) -> Milvus:
        """Entities as a ``langchain_milvus.Milvus`` vector store."""
        return self.vector_store("entities")

    @property
    def relation_store(self) -> Milvus:
        """Relations as a ``langchain_milvus.Milvus`` vector store."""
        return self.vector_store("relations")

    @property
    def passage_store(self) -> Milvus:
        """Passages as a ``langchain_milvus.Milvus`` vector store."""
        return self.vector_store("passages")

    # ------------------------------------------------------------------ ingestion and updates
    def add_records(
        self,
        records: Iterable[Mapping[str, Any]],
        *,
        strict: bool = False,
        show_progress: bool | None = None,
        extractor: Runnable[str, Any] | None = None,
    ) -> IngestReport:
        """Ingest seed-style ``{"passage", "triplets"}`` or ``{"id", "title", "text", "triplets"}`` records.

        Malformed triplets are skipped and counted in the report (``strict=True`` raises
        :class:`~langchain_graphrag_milvus.errors.MalformedTripletError` instead). Records
        without a ``"triplets"`` key get theirs from the extractor, if one is set.
        Re-ingesting the same records adds nothing.
        """
        from langchain_graphrag_milvus.ingest.load import ingest_mappings

        return ingest_mappings(self, records, strict=strict, show_progress=show_progress, extractor=extractor)

    def add_documents(
        self,
        documents: Iterable[Document],
        *,
        strict: bool = False,
        show_progress: bool | None = None,
        extractor: Runnable[str, Any] | None = None,
        splitter: Any = None,
    ) -> IngestReport:
        """Ingest ``Document``s; ``metadata["triplets"]`` holds their triplets (absent: extracted).

        The passage id is ``Document.id`` (or, when it is ``None``, a hash of the text and
        metadata); the rest of the metadata is stored with the passage and returned on
        retrieval. With a LangChain text ``splitter``, documents are chunked first (chunk
        ids ``"{source}#0000"``...; ``metadata["source_id"]`` keeps the source: the
        document id, else ``metadata[source_field]``).
        """
        from langchain_graphrag_milvus.ingest.load import ingest_documents
        from langchain_graphrag_milvus.ingest.updates import split

        if isinstance(documents, (str, bytes)) or hasattr(documents, "page_content"):
            raise TypeError(f"documents must be a list of Documents, not {type(documents).__name__}")
        docs = (
            split(list(documents), splitter, self.source_field, self.partition_key_field)
            if splitter is not None
            else documents
        )
        return ingest_documents(self, docs, strict=strict, show_progress=show_progress, extractor=extractor)

    def add_jsonl(
        self,
        path: str | os.PathLike[str],
        *,
        strict: bool = False,
        show_progress: bool | None = None,
        extractor: Runnable[str, Any] | None = None,
    ) -> IngestReport:
        """Ingest a JSONL file of records (the format of ``musique100/passages.jsonl``)."""
        from langchain_graphrag_milvus.ingest.load import ingest_jsonl

        return ingest_jsonl(self, path, strict=strict, show_progress=show_progress, extractor=extractor)

    def upsert_documents(
        self,
        documents: Iterable[Document],
        *,
        splitter: Any = None,
        strict: bool = False,
        show_progress: bool | None = None,
        extractor: Runnable[str, Any] | None = None,
    ) -> UpsertReport:
        """Make the store hold exactly these versions of these source documents.

        Passages of a source that are not in the new version are deleted (with the
        relations and entities only they supported), changed ones replaced, new ones added,
        unchanged ones left alone. The source id is ``metadata["source_id"]``, else
        ``Document.id``, else ``metadata[source_field]`` (``"source"``: a loader's file);
        with ``partition_key_field`` a source is (tenant, source id). Everything is
        validated before the first delete: a source with an invalid new document is kept
        as it was and listed in ``report.sources_skipped`` (``strict``: raises).
        """
        from langchain_graphrag_milvus.ingest.updates import upsert_documents

        return upsert_documents(
            self, documents, splitter=splitter, strict=strict, show_progress=show_progress, extractor=extractor
        )

    def delete_documents(
        self, source_ids: Iterable[str], *, tenant: str | None = None, all_tenants: bool = False
    ) -> DeleteReport:
        """Delete all passages of these source documents, and what only they supported.

        With ``partition_key_field`` pass ``tenant="..."`` (that tenant's passages of these
        sources) or ``all_tenants=True`` (every tenant's); otherwise ``ValueError``.
        """
        from langchain_graphrag_milvus.ingest.updates import delete_documents

        return delete_documents(self, source_ids, tenant=tenant, all_tenants=all_tenants)

    def delete_passages(self, passage_ids: Iterable[str], *, tenant: str | None = None) -> DeleteReport:
        """Delete passages by id (only ``tenant``'s when given), and what only they supported."""
        from langchain_graphrag_milvus.ingest.updates import delete_passages

        return delete_passages(self, passage_ids, tenant=tenant)

    # ------------------------------------------------------------------ misc
    def as_naive_retriever(self, **kwargs: Any) -> NaivePassageRetriever:
        """A plain vector retriever over the same passages (same Document format)."""
        from langchain_graphrag_milvus.retrievers import NaivePassageRetriever

        return NaivePassageRetriever(store=self, **kwargs)

    def merge_entities(self, names: Iterable[str], *, into: str) -> MergeReport:
        """Merge duplicate entities into one: ``store.merge_entities(["Euler"], into="Leonhard Euler")``.

        Relations naming a merged entity are rewritten to name ``into`` (joining an equal
        relation if there is one), the merged entity rows are deleted, and the graph index
        is updated in place. Crash-safe and re-runnable; see
        :mod:`~langchain_graphrag_milvus.ingest.merge`.
        """
        from langchain_graphrag_milvus.ingest.merge import merge_entities

        return merge_entities(self, names, into)

    @classmethod
    def from_existing_collection(
        cls, embedding: Embeddings, *, collection_name: str, text_field: str = "text", **kwargs: Any
    ) -> ExistingCollectionGraphStore:
        """A graph store over a collection made with ``langchain_milvus.Milvus`` (passages stay there).

        Only the entity and relation collections are created (beside it, prefix
        ``"{collection_name}_graph"``); build them with ``store.index_passages(...)``. See
        :class:`~langchain_graphrag_milvus.existing_store.ExistingCollectionGraphStore` for the
        arguments (``primary_field``, ``vector_field``, ``metadata_fields``, ``uri``...).
        """
        from langchain_graphrag_milvus.existing_store import ExistingCollectionGraphStore

        return ExistingCollectionGraphStore(embedding, collection_name=collection_name, text_field=text_field, **kwargs)

    def as_path_retriever(self, **kwargs: Any) -> MilvusPathRetriever:
        """A :class:`~langchain_graphrag_milvus.path_retriever.MilvusPathRetriever` over this store."""
        from langchain_graphrag_milvus.path_retriever import MilvusPathRetriever

        return MilvusPathRetriever(store=self, **kwargs)

    def export_graph(self, *, filter: str | Mapping[str, Any] | None = None, limit: int | None = None) -> Subgraph:
        """The stored graph (or the part a passage filter allows, or ``limit`` relations) as a Subgraph.

        Export it with ``.to_networkx()``, ``.write_graphml(path)``, ``.to_json()`` or
        ``.to_html()``; see :func:`~langchain_graphrag_milvus.retrieval.explain.store_subgraph`.
        """
        from langchain_graphrag_milvus.retrieval.explain import store_subgraph

        return store_subgraph(self, filter=filter, limit=limit)

    #: The collections this store owns, and ``drop`` removes.
    _owned_kinds: tuple[Kind, ...] = tuple(KINDS)

    def drop(self) -> None:
        """Drop the collections this store owns and forget the graph (irreversible)."""
        with self._lock:
            for kind in self._owned_kinds:
                name = self.collection_name(kind)
                if self.client.has_collection(name):
                    self.client.drop_collection(name)
            self._vector_stores.clear()
            self._dim = None
            self._graph = None
            self._entity_names = None
