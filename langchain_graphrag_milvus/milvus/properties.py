"""What a store keeps in the properties of its relation collection.

Its id (a uuid4 hex set when the collections are created), the generation counter (changes to
the graph's data, :meth:`.connection.MilvusConnection.generation`) and, on a partitioned store, the
flag saying its entity and relation rows are kept per tenant; the embedding model's fingerprint
(:mod:`.fingerprint`) lives there too.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping
from typing import Any

from pymilvus import MilvusClient

from langchain_graphrag_milvus.milvus.schema import Kind

__all__ = [
    "GENERATION_KEY",
    "STORE_ID_KEY",
    "TENANT_ROWS_KEY",
    "assign_store_id",
    "collection_properties",
    "creation_properties",
    "warn_shared_rows",
]

logger = logging.getLogger("langchain_graphrag_milvus")

#: The collection property (on the relation collection) that counts changes to the graph's data.
GENERATION_KEY = "graphrag.generation"
#: The collection property (on the relation collection) naming the store: a uuid4 hex set when the
#: collections are created (collections of older versions get one on first use, :meth:`MilvusConnection.identity`).
STORE_ID_KEY = "graphrag.store_id"
#: The collection property (on the relation collection, set at creation) of a partitioned store whose
#: entity and relation rows are kept per tenant (their ids hash the tenant); absent: rows shared.
TENANT_ROWS_KEY = "graphrag.tenant_rows"


def creation_properties(
    kind: Kind, partition_key: str | None, extra: Mapping[str, str] | None = None
) -> dict[str, str] | None:
    """Properties a new collection is created with: the relation collection carries the store's identity.

    ``extra``: more properties of the relation collection (the embedding fingerprint, :mod:`.fingerprint`).
    """
    if kind != "relations":
        return None
    return {STORE_ID_KEY: uuid.uuid4().hex, **({TENANT_ROWS_KEY: "1"} if partition_key else {}), **(extra or {})}


def collection_properties(client: MilvusClient, name: str) -> dict[str, Any]:
    """The properties of collection ``name`` (one ``describe_collection``)."""
    return dict(client.describe_collection(name).get("properties") or {})


def assign_store_id(client: MilvusClient, name: str, timeout: float | None) -> dict[str, Any]:
    """Give collection ``name`` a new store id; return its properties as Milvus kept them."""
    client.alter_collection_properties(name, properties={STORE_ID_KEY: uuid.uuid4().hex}, timeout=timeout)
    return collection_properties(client, name)


def warn_shared_rows(prefix: str) -> None:
    """Log that the partitioned store under ``prefix`` shares its entity and relation rows between tenants."""
    logger.warning(
        "collections under prefix %r were created by an earlier version: their entity and relation rows "
        "are shared between tenants (one tenant's spelling, merges and deletes of a shared name show in "
        "the others' views). Re-ingest into a new collection_prefix to keep them per tenant",
        prefix,
    )
