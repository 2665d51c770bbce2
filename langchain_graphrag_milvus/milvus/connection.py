"""The store's link to Milvus: clients, collection names, opening and creating collections.

:class:`MilvusConnection` knows where the collections are and whether they are usable; it
reads and writes nothing but schema, collection properties (the generation counter) and
the bookkeeping of which collections must be read with ``"Strong"`` consistency after a
delete. Reads (:mod:`.reads`), writes (:mod:`.writes`) and the graph cache
(:mod:`.graph_cache`) all go through one connection. Its clients are :mod:`.clients`, the
collection properties it keeps (store id, generation counter) :mod:`.properties`.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pymilvus import MilvusClient

from langchain_graphrag_milvus.errors import CollectionNotFoundError, ForeignCollectionError, GraphRAGError
from langchain_graphrag_milvus.milvus import expr
from langchain_graphrag_milvus.milvus.clients import MilvusClients
from langchain_graphrag_milvus.milvus.index_params import index_and_search_params
from langchain_graphrag_milvus.milvus.lite import check_lite_parent, is_lite
from langchain_graphrag_milvus.milvus.properties import (
    GENERATION_KEY,
    STORE_ID_KEY,
    TENANT_ROWS_KEY,
    collection_properties,
    creation_properties,
    warn_shared_rows,
)
from langchain_graphrag_milvus.milvus.schema import (
    KINDS,
    Kind,
    check_collection,
    create_collection,
    ensure_vector_index,
)
from langchain_graphrag_milvus.milvus.store_properties import StoreProperties
from langchain_graphrag_milvus.milvus.write_guard import WriteLease

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings
    from langchain_milvus import Milvus

__all__ = ["MilvusConnection", "GENERATION_KEY", "STORE_ID_KEY", "TENANT_ROWS_KEY", "index_and_search_params"]

#: Seconds a write waits for another writer of the same prefix before ``ConcurrentWriteError``.
DEFAULT_WRITE_WAIT = 90.0


class MilvusConnection(StoreProperties):
    """Clients and collections of one store (nothing is contacted before first use).

    Args:
        uri: Milvus Lite path (its parent directory must exist), server URI or Zilliz
            Cloud endpoint.
        token: ``"user:password"`` or an API key.
        connection_args: Other arguments of ``MilvusClient``.
        collection_prefix: Collections are ``{prefix}_{kind}`` (a valid field name).
        index_params: Vector index of new collections.
        consistency_level: Of reads (and of new collections).
        partition_key_field: The passages' partition key field, if any (a valid field name).
        timeout: Seconds allowed for each Milvus call (and for connecting).
        owned_kinds: The collections :meth:`drop` removes.
    """

    def __init__(
        self,
        *,
        uri: str,
        token: str | None = None,
        connection_args: Mapping[str, Any],
        collection_prefix: str,
        index_params: Mapping[str, Any],
        consistency_level: str,
        partition_key_field: str | None,
        timeout: float | None,
        owned_kinds: Sequence[Kind] = KINDS,
    ) -> None:
        expr.field_name(collection_prefix)
        if is_lite(uri):
            check_lite_parent(uri)  # a typo'd path fails here, not later as an empty store
        if partition_key_field is not None:
            expr.field_name(partition_key_field)
        self.uri = uri
        self.connection_args = {**dict(connection_args), "uri": uri}
        if token:
            self.connection_args["token"] = token
        self.collection_prefix = collection_prefix
        self.index_params = dict(index_params)
        self.consistency_level = consistency_level
        self.partition_key_field = partition_key_field
        self.timeout = timeout
        self.owned_kinds = tuple(owned_kinds)
        #: One lock for the connection and the graph cache built on it.
        self.lock = threading.RLock()
        self.dim: int | None = None
        self.clients = MilvusClients(uri, self.connection_args, timeout, self.lock)
        self._strong_reads: set[Kind] = set()
        self._vector_stores: dict[Kind, Milvus] = {}
        #: ``"auto"``, ``"flat"`` or ``"hnsw"`` (:mod:`.indexes`); explicit index parameters: ``"flat"``.
        self.index_mode = "flat"
        self._index_types: dict[Kind, tuple[str, str]] = {}
        #: The cross-process write lease (:mod:`.write_guard`); ``lease.wait``: seconds to wait for another writer.
        self.lease = WriteLease(self, wait=DEFAULT_WRITE_WAIT)
        self._tenant_rows: bool | None = None
        #: More properties of a new relation collection: the model's fingerprint (:mod:`.fingerprint`).
        self.fingerprint: dict[str, str] = {}

    def collection_name(self, kind: Kind) -> str:
        """Name of the collection holding ``kind``."""
        return f"{self.collection_prefix}_{kind}"

    # ------------------------------------------------------------------ clients
    def resolved_args(self) -> dict[str, Any]:
        """The ``MilvusClient`` arguments (Milvus Lite's with its gRPC options)."""
        return self.clients.resolved_args()

    @property
    def client(self) -> MilvusClient:
        """The synchronous ``MilvusClient`` (connects on first use)."""
        return self.clients.client

    def close(self) -> None:
        """Close the clients; stop Milvus Lite's server only if this package started it and nothing else uses it.

        Milvus Lite's server is stopped when the last store of this process on that path
        closes, if a store of this package started it and no other pymilvus client of the
        process is connected to it (:func:`.lite.release_lite`): a ``langchain_milvus.Milvus``
        store on the same ``.db`` keeps working.
        """
        with self.lock:
            others: list[object] = []
            for vs in self._vector_stores.values():  # their clients are ours too
                others.append(getattr(vs, "_async_milvus_client", None))
                client = getattr(vs, "_milvus_client", None)
                if client is not None:
                    client.close()
            self._vector_stores.clear()
            self.dim = None
            self.clients.close(others)

    # ------------------------------------------------------------------ collections
    def exists(self) -> bool:
        """True if all three collections exist."""
        return all(self.client.has_collection(self.collection_name(k)) for k in KINDS)

    def ensure_collections(self, dim: int) -> None:
        """Create missing collections for ``dim``-dimensional vectors; check existing ones."""
        with self.lock:
            self._create_missing(KINDS, dim, self.partition_key_field)
            # wait for each load (they run in parallel on the server); a collection that existed
            # is loaded too: a creation cut short (created, never loaded) is then usable again
            for kind in KINDS:
                self.client.load_collection(self.collection_name(kind), timeout=self.timeout)
            self.dim = dim
            self._index_types.clear()

    def _create_missing(self, kinds: Sequence[Kind], dim: int, partition_key: str | None) -> list[str]:
        """Check the collections of ``kinds`` that exist, then create the others; return the created names."""
        missing = []
        for kind in kinds:  # every existing one is checked before any is created
            name = self.collection_name(kind)
            if self.client.has_collection(name):
                check_collection(self.client.describe_collection(name), kind, dim, partition_key)
            else:
                missing.append(kind)
        for kind in kinds:
            if kind not in missing:
                self._ensure_index(self.collection_name(kind))
        created = []
        for kind in missing:
            name = self.collection_name(kind)
            try:
                create_collection(
                    self.client,
                    name,
                    kind,
                    dim,
                    index_params=self.index_params,
                    consistency_level=self.consistency_level,
                    timeout=self.timeout,
                    partition_key=partition_key,
                    properties=creation_properties(kind, partition_key, self.fingerprint),
                )
            except Exception:
                if not self.client.has_collection(name):
                    raise
                # another writer created it at the same moment: check it like any existing one
                check_collection(self.client.describe_collection(name), kind, dim, partition_key)
                self._ensure_index(name)
                continue
            created.append(name)
        return created

    def _ensure_index(self, name: str) -> None:
        """A collection of ours left without a vector index (a creation or re-index cut short) gets it back."""
        if ensure_vector_index(self.client, name, self.index_params):
            self._index_types.clear()

    def tenant_rows(self) -> bool:
        """True if entity and relation rows are kept per tenant (their ids hash the tenant).

        Only a store with a partition key keeps them so, and only if it was created with
        the :data:`TENANT_ROWS_KEY` property (this version creates it so); a partitioned
        store created by an earlier version shares its rows between tenants and keeps
        working that way, with a warning. Without collections yet: True (they will be
        created with the property).
        """
        if self.partition_key_field is None:
            return False
        known = self._tenant_rows
        if known is not None:
            return known
        name = self.collection_name("relations")
        if not self.client.has_collection(name):
            return True
        known = self._tenant_rows = collection_properties(self.client, name).get(TENANT_ROWS_KEY) == "1"
        if not known:
            warn_shared_rows(self.collection_prefix)
        return known

    def check_open(self) -> int:
        """Check the collections exist and are ours; return their dimension (loads them)."""
        if self.dim is not None:
            return self.dim
        with self.lock:
            if self.dim is not None:
                return self.dim
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
                self._ensure_index(self.collection_name(kind))
                self.client.load_collection(self.collection_name(kind), timeout=self.timeout)
            self.dim = dims.pop()
            return self.dim

    def drop(self) -> None:
        """Drop the collections this store owns (irreversible).

        Every existing collection is checked as the writes check it (:func:`.schema.check_collection`)
        before any is dropped: one that this package did not create (a team's own
        ``langchain_milvus.Milvus`` collection named ``{prefix}_passages``) refuses the drop.

        Raises:
            ForeignCollectionError: A collection under the store's names is not ours; nothing is dropped.
        """
        with self.lock:
            present = [k for k in self.owned_kinds if self.client.has_collection(self.collection_name(k))]
            for kind in present:  # all checked before any is dropped
                try:
                    check_collection(self.client.describe_collection(self.collection_name(kind)), kind, None)
                except ForeignCollectionError:
                    raise
                except GraphRAGError:  # an older version's (its description says so): ours to drop
                    pass
            for kind in present:
                self.client.drop_collection(self.collection_name(kind))
            self._vector_stores.clear()
            self.dim = None
            self._index_types.clear()
            self._tenant_rows = None

    def vector_store(self, kind: Kind, embedding: Embeddings, search_params: Mapping[str, Any]) -> Milvus:
        """The collection of ``kind`` as a ``langchain_milvus.Milvus`` vector store (cached until close)."""
        from langchain_milvus import Milvus

        self.check_open()
        with self.lock:
            if kind not in self._vector_stores:
                self._vector_stores[kind] = Milvus(**self._vector_store_args(kind, embedding, search_params))
            return self._vector_stores[kind]

    def _vector_store_args(self, kind: Kind, embedding: Embeddings, search_params: Mapping[str, Any]) -> dict[str, Any]:
        return {
            "embedding_function": embedding,
            "collection_name": self.collection_name(kind),
            "connection_args": self.resolved_args(),
            "consistency_level": self.consistency_level,
            "search_params": dict(search_params),
            "auto_id": False,
            "enable_dynamic_field": kind == "passages",
            "primary_field": "pk",
            "text_field": "text",
            "vector_field": "vector",
            "timeout": self.timeout,
        }

    # ------------------------------------------------------------------ vector indexes
    @property
    def metric(self) -> str:
        """The metric of the vector indexes (``COSINE`` or ``IP``)."""
        return str(self.index_params.get("metric_type", "COSINE")).upper()

    def index_type(self, kind: Kind) -> str:
        """The vector index type of a collection (``FLAT``, ``HNSW``...; ``""`` if unknown), cached."""
        return self._index(kind)[0]

    def index_metric(self, kind: Kind) -> str:
        """The metric of a collection's vector index as Milvus holds it (``""`` if unknown), cached."""
        return self._index(kind)[1]

    def _index(self, kind: Kind) -> tuple[str, str]:
        known = self._index_types.get(kind)
        if known is None:
            name = self.collection_name(kind)
            try:
                found = [self.client.describe_index(name, i) for i in self.client.list_indexes(name)]
            except Exception:  # a collection without index, or a backend without describe_index
                found = []
            types = [str(f.get("index_type", "")).upper() for f in found]
            metrics = {str(f.get("metric_type") or "").upper() for f in found} - {""}
            index_type = "HNSW" if "HNSW" in types else types[0] if types else ""
            known = (index_type, metrics.pop() if len(metrics) == 1 else "")
            self._index_types[kind] = known
        return known

    def forget_index_types(self) -> None:
        """Forget the cached index types (an index was replaced)."""
        self._index_types.clear()

    # ------------------------------------------------------------------ read consistency
    def consistency(self, kind: Kind) -> str:
        """The consistency level of a read of ``kind``.

        After a delete, that collection is read strongly until this process writes to it
        again (measured on Milvus 2.3: a ``"Session"`` read right after a delete can still
        return the deleted rows).
        """
        return "Strong" if kind in self._strong_reads else self.consistency_level

    def deleted(self, kind: Kind) -> None:
        """Record a delete in ``kind``: read it strongly from now on."""
        self._strong_reads.add(kind)

    def written(self, kind: Kind) -> None:
        """Record an insert or upsert in ``kind``: its timestamp follows any earlier delete."""
        self._strong_reads.discard(kind)
