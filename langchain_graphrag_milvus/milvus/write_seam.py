"""The write seam: every change the writers make to the store's rows and collections, as one protocol.

:class:`StoreWrites` is the contract between the store's collections and everything that
writes them: ingestion, upserts, deletes and merges of :mod:`~langchain_graphrag_milvus.ingest`
(through :class:`~langchain_graphrag_milvus.milvus.writes.StoreParts`, beside the read seam
:class:`~langchain_graphrag_milvus.milvus.read_seam.StoreReads`), and so the CLI's file sync,
which writes through the store's ``upsert_documents`` / ``delete_documents``.
:class:`~langchain_graphrag_milvus.milvus.milvus_writes.MilvusWrites` implements it for Milvus;
``tests/compliance/write_seam.py`` is the suite any implementation runs, reading what it wrote
back through the same backend's read seam.

A new backend implements, beside its reads:

* **rows**: :meth:`~StoreWrites.write` (new rows inserted, the rows of ``existing`` ids
  replaced, never duplicated; in requests of at most ``batch_size`` rows) and
  :meth:`~StoreWrites.delete` (by id; missing ids are fine). Rows are the dicts the read seam
  returns (``"pk"`` a string id, ``"vector"``, the kind's fields); an id is data, whatever it
  holds (quotes, backslashes, any Unicode): on Milvus it enters an expression only through
  :mod:`.expr`. A delete is visible to the next read of this process;
* **collections**: :meth:`~StoreWrites.exists`, :meth:`~StoreWrites.check_open` (the stored
  vector dimension) and :meth:`~StoreWrites.ensure_collections` (create what is missing for a
  dimension, refuse a collection the package did not create);
* **one writer at a time**: :meth:`~StoreWrites.guard` around each write operation, and
  :meth:`~StoreWrites.keep_lease` at its writes (a backend with a single process may hold
  nothing and answer False);
* **facts the writers plan with**: :attr:`~StoreWrites.partition_key_field`,
  :meth:`~StoreWrites.tenant_rows`, :attr:`~StoreWrites.location` (for messages), and
  :meth:`~StoreWrites.fit_indexes` after a load (a backend without index maintenance: ``[]``).

Rules the writers keep on top of it (:mod:`.writes`): every change that alters the graph
first bumps the store's generation (the graph cache's
:meth:`~langchain_graphrag_milvus.milvus.graph_cache.GraphCache.bump_generation`), and
writes go in an order a re-run can finish (the rows that say what is left to do go last).

A new write is one method here, one in each implementation, and one case in the compliance suite.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol

from langchain_graphrag_milvus.milvus.schema import Kind

if TYPE_CHECKING:
    from langchain_graphrag_milvus.milvus.write_guard import GuardedGraph

__all__ = ["StoreWrites"]


class StoreWrites(Protocol):
    """The writes of the store's three collections (``kind``: entities, relations or passages).

    A structural type: any object with these members is a ``StoreWrites``; an implementation
    may also subclass it (mypy then checks that none is left out).
    """

    # ------------------------------------------------------------------ rows
    def write(
        self, kind: Kind, rows: Sequence[Mapping[str, Any]], *, existing: Iterable[str] = (), batch_size: int
    ) -> None:
        """Insert the rows whose ``"pk"`` is not in ``existing``; replace those whose id is (never a second row).

        ``existing`` holds the ids the caller knows to be stored (ids in it that are not
        stored are fine); a row whose id is stored but not named in ``existing`` is a caller
        error (an implementation may insert it without looking). Rows go in requests of at
        most ``batch_size``. A replaced row is the new row as given (no field kept from the old).
        """
        ...

    def delete(self, kind: Kind, ids: Sequence[str]) -> None:
        """Delete the rows of these ids (missing ids are fine); the next read of this process no longer sees them."""
        ...

    # ------------------------------------------------------------------ collections
    def exists(self) -> bool:
        """True if the store's collections all exist."""
        ...

    def check_open(self) -> int:
        """Check the collections exist and are the package's; return their vector dimension.

        Raises:
            CollectionNotFoundError: A collection is missing.
            ForeignCollectionError: A collection under the store's names was not created by the package.
        """
        ...

    def ensure_collections(self, dim: int) -> None:
        """Create the missing collections for ``dim``-dimensional vectors; check the existing ones.

        Raises:
            EmbeddingDimensionError: An existing collection stores another dimension.
            ForeignCollectionError: An existing collection was not created by the package.
        """
        ...

    # ------------------------------------------------------------------ one writer at a time
    def guard(self, graph: GuardedGraph) -> AbstractContextManager[None]:
        """Run one write operation alone (threads, processes); re-entrant; a failure after a change forgets ``graph``.

        Raises:
            ConcurrentWriteError: Another writer did not finish in time.
        """
        ...

    def keep_lease(self) -> bool:
        """Renew this operation's hold on the store, taking it if the collections appeared since it began.

        Returns:
            True if this call took it (another writer may have written first: re-read before planning).

        Raises:
            ConcurrentWriteError: Another writer took the store over.
        """
        ...

    # ------------------------------------------------------------------ facts
    @property
    def partition_key_field(self) -> str | None:
        """The passages' partition key field (None: no tenants)."""
        ...

    def stored_partition_key(self) -> str | None:
        """The partition key field the stored passages were created with (None: none, or no collections yet).

        What a store opened without ``partition_key_field`` finds (the CLI's tenancy detection).
        """
        ...

    @property
    def location(self) -> str:
        """Where the collections are, for messages (e.g. ``prefix 'kb' at './kb.db'``)."""
        ...

    def tenant_rows(self) -> bool:
        """True if entity and relation rows are kept per tenant (a partitioned store of this version)."""
        ...

    def fit_indexes(self) -> list[Kind]:
        """Index maintenance after a load (Milvus: ``index="auto"`` switches FLAT to HNSW); the kinds changed."""
        ...
