"""What the store keeps in its relation collection's properties, read and written for Milvus.

:class:`StoreProperties` is a mixin of :class:`~.connection.MilvusConnection`: the generation
counter, the store id and the embedding fingerprint's properties (:mod:`.properties` names them),
each one ``describe_collection`` or ``alter_collection_properties``. Together with the rest of the
connection it implements :class:`~.state_seam.StoreState`, the store's state that the graph cache,
the local search and the embedding check use.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from langchain_graphrag_milvus.milvus.properties import (
    GENERATION_KEY,
    STORE_ID_KEY,
    assign_store_id,
    collection_properties,
)
from langchain_graphrag_milvus.milvus.schema import check_collection

if TYPE_CHECKING:
    from pymilvus import MilvusClient

    from langchain_graphrag_milvus.milvus.schema import Kind
    from langchain_graphrag_milvus.milvus.write_guard import WriteLease

__all__ = ["StoreProperties"]


class StoreProperties:
    """The generation counter, store id and other properties of the relation collection (a mixin)."""

    lock: threading.RLock
    timeout: float | None
    lease: WriteLease

    if TYPE_CHECKING:  # MilvusConnection's

        @property
        def client(self) -> MilvusClient: ...  # noqa: D102

        def collection_name(self, kind: Kind) -> str: ...  # noqa: D102

        def check_open(self) -> int: ...  # noqa: D102

    def properties(self) -> dict[str, Any]:
        """The relation collection's properties (the collections are checked and opened first)."""
        self.check_open()
        return collection_properties(self.client, self.collection_name("relations"))

    def relation_properties(self) -> tuple[dict[str, Any], int] | None:
        """The relation collection's properties and vector dimension; None if it does not exist yet.

        Raises:
            ForeignCollectionError: The collection is not this package's.
        """
        name = self.collection_name("relations")
        if not self.client.has_collection(name):
            return None
        description = self.client.describe_collection(name)
        dim = check_collection(description, "relations", None)
        return dict(description.get("properties") or {}), dim

    def record_properties(self, properties: Mapping[str, str]) -> dict[str, Any]:
        """Add ``properties`` to the relation collection; return its properties as Milvus kept them."""
        name = self.collection_name("relations")
        self.client.alter_collection_properties(name, properties=dict(properties), timeout=self.timeout)
        return collection_properties(self.client, name)

    # ------------------------------------------------------------------ generation counter
    def generation(self) -> int:
        """A counter of changes to the graph's data, kept in Milvus (a collection property)."""
        return int(self.properties().get(GENERATION_KEY, 0))

    def stamp(self) -> tuple[str | None, int]:
        """The store id (None if none was assigned yet) and the generation counter, in one read (nothing written)."""
        props = self.properties()
        store_id = props.get(STORE_ID_KEY)
        return (str(store_id) if store_id else None), int(props.get(GENERATION_KEY, 0))

    def identity(self) -> tuple[str, int]:
        """The store id and the generation counter, read together (one ``describe_collection``).

        The store id is a uuid4 hex set when the collections are created: two stores with
        the same prefix (other URIs, or collections dropped and created again) never share
        it. Collections created before store ids existed get one here, the first time it is
        asked for (when a graph index is saved or loaded); if two processes assign one at
        once, both use the one Milvus kept (an index saved meanwhile with the other is rebuilt once).
        """
        props = self.properties()
        store_id = props.get(STORE_ID_KEY)
        if not store_id:
            with self.lock:
                props = assign_store_id(self.client, self.collection_name("relations"), self.timeout)
                store_id = props[STORE_ID_KEY]
        return str(store_id), int(props.get(GENERATION_KEY, 0))

    def set_generation(self, value: int) -> None:
        """Store a new value of the generation counter."""
        self.lease.ensure()
        self.client.alter_collection_properties(
            self.collection_name("relations"), properties={GENERATION_KEY: str(value)}, timeout=self.timeout
        )
