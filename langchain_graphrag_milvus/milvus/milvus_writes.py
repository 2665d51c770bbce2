"""Writing Milvus for the store: the write seam's Milvus implementation.

:class:`MilvusWrites` implements :class:`~langchain_graphrag_milvus.milvus.write_seam.StoreWrites`
over a :class:`~langchain_graphrag_milvus.milvus.connection.MilvusConnection`: every insert,
upsert and delete of the store's rows, and the collection and lease calls the writers make,
go through it. Rules it keeps:

* new rows are inserted and existing rows replaced (upsert, or delete + insert on a
  partition-key collection: Milvus 2.3 servers misroute upserted rows there);
* after a delete, this process reads that collection with ``"Strong"`` consistency until
  its next insert or upsert (measured on Milvus 2.3: a ``"Session"`` read right after a
  delete can still return the deleted rows; :meth:`.connection.MilvusConnection.consistency`);
* rows are deleted with a ``pk in [...]`` filter built by :mod:`.expr` (every id escaped),
  never with pymilvus' ``ids=``, which pastes the raw strings into its expression (an id
  holding a quote would widen the delete);
* every row write renews the write lease (:mod:`.write_guard`), and only the collections the
  store owns are written (an existing collection's passages are never written).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from langchain_graphrag_milvus.errors import GraphRAGError
from langchain_graphrag_milvus.milvus import expr
from langchain_graphrag_milvus.milvus.indexes import fit_indexes
from langchain_graphrag_milvus.milvus.schema import Kind
from langchain_graphrag_milvus.milvus.write_guard import write_guard
from langchain_graphrag_milvus.milvus.write_seam import StoreWrites

if TYPE_CHECKING:
    from langchain_graphrag_milvus.milvus.connection import MilvusConnection
    from langchain_graphrag_milvus.milvus.read_seam import StoreReads
    from langchain_graphrag_milvus.milvus.write_guard import GuardedGraph

__all__ = ["MilvusWrites", "DELETE_CHUNK"]

#: Ids per delete request.
DELETE_CHUNK = 1024


class MilvusWrites(StoreWrites):
    """Insert, upsert and delete the store's rows; open and create its collections (the write seam on Milvus).

    Args:
        connection: The store's connection (clients, collection names, lease, consistency bookkeeping).
        reads: The store's reads (row counts for :meth:`fit_indexes`).
    """

    def __init__(self, connection: MilvusConnection, reads: StoreReads) -> None:
        self.connection = connection
        self.reads = reads

    # ------------------------------------------------------------------ rows
    def _owned(self, kind: Kind) -> str:
        if kind not in self.connection.owned_kinds:
            raise GraphRAGError(
                f"the {kind} of {self.location} are not this store's to write (collection "
                f"{self.connection.collection_name(kind)!r} was not created by it)"
            )
        return self.connection.collection_name(kind)

    def write(
        self, kind: Kind, rows: Sequence[Mapping[str, Any]], *, existing: Iterable[str] = (), batch_size: int
    ) -> None:
        """Insert new rows, replace the rows of ``existing`` ids (see :meth:`StoreWrites.write`)."""
        if not rows:
            return
        conn, size = self.connection, max(1, int(batch_size))
        name = self._owned(kind)
        conn.lease.ensure()  # this operation still holds the write lease (milvus/write_guard.py)
        existing = set(existing)
        new = [dict(r) for r in rows if r["pk"] not in existing]
        old = [dict(r) for r in rows if r["pk"] in existing]
        for i in range(0, len(new), size):
            conn.client.insert(name, new[i : i + size], timeout=conn.timeout)
        replace_by_delete = kind == "passages" and conn.partition_key_field is not None
        for i in range(0, len(old), size):
            batch = old[i : i + size]
            if replace_by_delete:
                conn.client.delete(name, filter=expr.in_list("pk", [r["pk"] for r in batch]), timeout=conn.timeout)
                conn.client.insert(name, batch, timeout=conn.timeout)
            else:
                conn.client.upsert(name, batch, timeout=conn.timeout)
        conn.written(kind)  # this write's timestamp follows any earlier delete

    def delete(self, kind: Kind, ids: Sequence[str]) -> None:
        """Delete rows by id, escaped through :mod:`.expr` (missing ids are fine); read ``kind`` strongly after."""
        if not ids:
            return
        conn = self.connection
        name = self._owned(kind)
        conn.lease.ensure()
        ids = list(ids)
        for i in range(0, len(ids), DELETE_CHUNK):
            conn.client.delete(name, filter=expr.in_list("pk", ids[i : i + DELETE_CHUNK]), timeout=conn.timeout)
        conn.deleted(kind)

    # ------------------------------------------------------------------ collections
    def exists(self) -> bool:
        """True if the store's collections exist (an existing-collection store: that one too)."""
        return self.connection.exists()

    def check_open(self) -> int:
        """Check the collections exist and are ours; return their dimension (loads them)."""
        return self.connection.check_open()

    def ensure_collections(self, dim: int) -> None:
        """Create the missing collections for ``dim``; check and load the existing ones."""
        self.connection.ensure_collections(dim)

    # ------------------------------------------------------------------ one writer at a time
    def guard(self, graph: GuardedGraph) -> AbstractContextManager[None]:
        """The write guard of this prefix (:func:`.write_guard.write_guard`: a process lock, a lease on a server)."""
        return write_guard(self.connection, graph, self.connection.lease)

    def keep_lease(self) -> bool:
        """Renew the lease, or take it if the collections were created since the operation began."""
        lease = self.connection.lease
        held = lease.held
        lease.ensure()  # renew (or raise if another writer took an expired lease over)
        return not held and lease.held

    # ------------------------------------------------------------------ facts
    @property
    def partition_key_field(self) -> str | None:
        """The passages' partition key field (None: no tenants)."""
        return self.connection.partition_key_field

    def stored_partition_key(self) -> str | None:
        """The passage collection's partition key field, as Milvus describes it (None: none, or no collections)."""
        conn = self.connection
        if not conn.exists():
            return None
        description = conn.client.describe_collection(conn.collection_name("passages"), timeout=conn.timeout)
        keys = [f.get("name") for f in description.get("fields", []) if f.get("is_partition_key")]
        return str(keys[0]) if keys else None

    @property
    def location(self) -> str:
        """``prefix '<prefix>' at '<uri>'``."""
        return f"prefix {self.connection.collection_prefix!r} at {self.connection.uri!r}"

    def tenant_rows(self) -> bool:
        """True if entity and relation rows are kept per tenant (a collection property of the relations)."""
        return self.connection.tenant_rows()

    def fit_indexes(self) -> list[Kind]:
        """With ``index="auto"`` on a server: FLAT to HNSW past the threshold (:func:`.indexes.fit_indexes`)."""
        return fit_indexes(self.connection, self.reads)
