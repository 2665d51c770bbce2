"""The state seam: what the store keeps besides its rows, as one protocol.

:class:`StoreState` is what the graph cache (:mod:`.graph_cache`, its changes and local
vectors), the local search (:mod:`.local_search`) and the embedding check (:mod:`.fingerprint`)
use of a backend besides the rows the read and write seams carry: where the store is, one lock,
whether its collections are open (and their dimension), the generation counter and store id that
date the graph (:mod:`.graph_saved`), the per-tenant row flag, the index metric and type a search
would use, and the relation collection's properties that record the embedding model.
:class:`~.connection.MilvusConnection` implements it for Milvus (:mod:`.store_properties`: the
properties it keeps). With :class:`~.read_seam.StoreReads` and :class:`~.write_seam.StoreWrites`
this is a backend: those modules type their backend on the three protocols only
(``tests/unit/test_state_seam.py``).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any, Protocol

from langchain_graphrag_milvus.milvus.schema import Kind

__all__ = ["StoreState"]


class StoreState(Protocol):
    """The store's state besides its rows: location, lock, generation, store id, recorded properties.

    A new backend implements these members (see :class:`~.connection.MilvusConnection`).
    """

    #: Where the store is (a Milvus Lite path or a server URI for Milvus).
    uri: str
    #: The store's collections are ``{prefix}_{kind}``.
    collection_prefix: str
    #: The passages' partition key field, if any.
    partition_key_field: str | None
    #: One lock for the state and the graph cache built on it.
    lock: threading.RLock
    #: The collections' vector dimension once opened (None: not opened yet, or forgotten).
    dim: int | None
    #: Properties a new relation collection is created with (the embedding fingerprint).
    fingerprint: dict[str, str]

    def check_open(self) -> int:
        """Check the collections exist and are the store's own; return their dimension."""
        ...

    def stamp(self) -> tuple[str | None, int]:
        """The store id (None if none yet) and the generation counter, in one read (nothing written)."""
        ...

    def identity(self) -> tuple[str, int]:
        """The store id (assigned on first use if missing) and the generation counter."""
        ...

    def set_generation(self, value: int) -> None:
        """Store a new value of the generation counter (under the write lease)."""
        ...

    def tenant_rows(self) -> bool:
        """True if entity and relation rows are kept per tenant (a partitioned store)."""
        ...

    def index_metric(self, kind: Kind) -> str:
        """The metric a search of ``kind`` uses ("" if unknown)."""
        ...

    def index_type(self, kind: Kind) -> str:
        """The type of the index a search of ``kind`` uses (``FLAT``, ``HNSW``...; "" if unknown)."""
        ...

    def forget_index_types(self) -> None:
        """Read the index types again at their next use (the collections were dropped)."""
        ...

    def properties(self) -> dict[str, Any]:
        """The relation collection's properties (the collections are opened first)."""
        ...

    def relation_properties(self) -> tuple[dict[str, Any], int] | None:
        """The relation collection's properties and dimension; None if it does not exist yet."""
        ...

    def record_properties(self, properties: Mapping[str, str]) -> dict[str, Any]:
        """Add ``properties`` to the relation collection; return them as the backend kept them."""
        ...
