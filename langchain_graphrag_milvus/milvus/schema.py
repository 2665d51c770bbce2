"""Schemas of the three collections and helpers to create or check them.

Collections, under a configurable prefix (``{prefix}_entities`` ...):

=============  ==========================================================================
entities       ``pk`` (16-hex id of the normalised name), ``text`` (display name), ``vector``,
               ``synonym_ids`` (entities whose names embed within the synonym threshold)
relations      ``pk``, ``text`` ("subject predicate object"), ``vector``, ``subject_id``,
               ``object_id``, ``predicate``, ``passage_ids`` (ARRAY of passage ids)
passages       ``pk`` (the passage id), ``text``, ``vector``, ``doc_hash``, ``source_id`` (the
               document it comes from); the user's metadata lives in dynamic fields, so it
               can be filtered (``tenant == "a"``)
=============  ==========================================================================

Relation rows carry everything the graph needs, so :class:`~langchain_graphrag_milvus.graph.GraphIndex`
can be rebuilt from Milvus alone. Field names match langchain-milvus' defaults
(``pk``/``text``/``vector``), so each collection also works as a ``langchain_milvus.Milvus``
vector store.
"""

from __future__ import annotations

from typing import Any, Literal

from pymilvus import DataType, MilvusClient

from langchain_graphrag_milvus.errors import EmbeddingDimensionError, ForeignCollectionError, GraphRAGError

__all__ = [
    "Kind",
    "KINDS",
    "MAX_PASSAGES_PER_RELATION",
    "MAX_ID_BYTES",
    "SCHEMA_TAG",
    "DEFAULT_INDEX_PARAMS",
    "PARTITION_KEY_BYTES",
    "create_collection",
    "collection_dim",
    "check_collection",
    "ensure_vector_index",
]

Kind = Literal["entities", "relations", "passages"]
KINDS: tuple[Kind, ...] = ("entities", "relations", "passages")
#: Longest primary key (passage or source id) the collections accept, in bytes of UTF-8.
MAX_ID_BYTES = 512
#: Milvus' largest ARRAY capacity; links beyond it are dropped and counted in the report.
MAX_PASSAGES_PER_RELATION = 4096
#: Synonym links kept per entity.
MAX_SYNONYMS = 16
SCHEMA_VERSION = 2
_TAG_PREFIX = "langchain-graphrag-milvus/"
SCHEMA_TAG = f"{_TAG_PREFIX}v{SCHEMA_VERSION}"
#: Exact search by default: quality numbers are only meaningful with exact (or measured) recall.
DEFAULT_INDEX_PARAMS: dict[str, Any] = {"index_type": "FLAT", "metric_type": "COSINE", "params": {}}
_ID_LEN = max(MAX_ID_BYTES, 64)
#: Longest partition key value (bytes of UTF-8).
PARTITION_KEY_BYTES = 512
_FIELDS: dict[str, set[str]] = {
    "entities": {"pk", "text", "vector", "synonym_ids"},
    "relations": {"pk", "text", "vector", "subject_id", "object_id", "predicate", "passage_ids"},
    "passages": {"pk", "text", "vector", "doc_hash", "source_id"},
}


def _schema(client: MilvusClient, kind: Kind, dim: int, partition_key: str | None) -> Any:
    schema = client.create_schema(
        auto_id=False,
        enable_dynamic_field=(kind == "passages"),
        description=f"{SCHEMA_TAG}:{kind}",
    )
    schema.add_field("pk", DataType.VARCHAR, is_primary=True, max_length=_ID_LEN)
    schema.add_field("text", DataType.VARCHAR, max_length=65_535)
    schema.add_field("vector", DataType.FLOAT_VECTOR, dim=dim)
    if kind == "entities":
        schema.add_field(
            "synonym_ids", DataType.ARRAY, element_type=DataType.VARCHAR, max_capacity=MAX_SYNONYMS, max_length=64
        )
    if kind == "relations":
        schema.add_field("subject_id", DataType.VARCHAR, max_length=64)
        schema.add_field("object_id", DataType.VARCHAR, max_length=64)
        schema.add_field("predicate", DataType.VARCHAR, max_length=65_535)
        schema.add_field(
            "passage_ids",
            DataType.ARRAY,
            element_type=DataType.VARCHAR,
            max_capacity=MAX_PASSAGES_PER_RELATION,
            max_length=_ID_LEN,
        )
    elif kind == "passages":
        schema.add_field("doc_hash", DataType.VARCHAR, max_length=64)
        schema.add_field("source_id", DataType.VARCHAR, max_length=_ID_LEN)
        if partition_key:
            schema.add_field(partition_key, DataType.VARCHAR, max_length=PARTITION_KEY_BYTES, is_partition_key=True)
    return schema


def create_collection(
    client: MilvusClient,
    name: str,
    kind: Kind,
    dim: int,
    *,
    index_params: dict[str, Any],
    consistency_level: str,
    timeout: float | None,
    partition_key: str | None = None,
    properties: dict[str, str] | None = None,
) -> None:
    """Create, index and load one collection (with these collection ``properties``, if given)."""
    client.create_collection(
        collection_name=name,
        schema=_schema(client, kind, dim, partition_key),
        consistency_level=consistency_level,
        timeout=timeout,
        **({"properties": dict(properties)} if properties else {}),
    )
    params = client.prepare_index_params()
    params.add_index(field_name="vector", **index_params)
    # the collection is empty, so the index is ready at once: do not poll for it; start
    # loading without waiting (the caller waits for all collections together)
    client.create_index(collection_name=name, index_params=params, timeout=timeout, sync=False)
    client.load_collection(collection_name=name, timeout=timeout, _async=True)


def collection_dim(description: dict[str, Any]) -> int:
    """The vector dimension recorded in a ``describe_collection`` answer."""
    for f in description.get("fields", []):
        if f.get("name") == "vector":
            return int(f.get("params", {}).get("dim"))
    raise GraphRAGError(f"collection {description.get('collection_name')!r} has no 'vector' field")


def check_collection(description: dict[str, Any], kind: Kind, dim: int | None, partition_key: str | None = None) -> int:
    """Check that an existing collection is ours and has the expected dimension.

    Returns:
        The collection's vector dimension.

    Raises:
        ForeignCollectionError: The collection was not created by this package (same name,
            other use), or, on Milvus Lite, it cannot be told from one of an older version.
        GraphRAGError: The collection was created by an older version of this package (its
            description says so: Milvus servers keep it, Milvus Lite does not).
        EmbeddingDimensionError: ``dim`` differs from the collection's.
    """
    name = description.get("collection_name", "?")
    fields = {f.get("name") for f in description.get("fields", [])}
    primary = [f.get("name") for f in description.get("fields", []) if f.get("is_primary")]
    # Milvus Lite does not keep collection descriptions, so check the structure
    missing = _FIELDS[kind] - fields
    if missing or primary != ["pk"]:
        listed = sorted(f for f in fields if f)
        if str(description.get("description") or "").startswith(_TAG_PREFIX):
            raise GraphRAGError(
                f"collection {name!r} was created by an older version of langchain-graphrag-milvus (it lacks "
                f"{', '.join(sorted(missing))}); ingest again under another collection_prefix"
            )
        lacks = f", lacking {', '.join(sorted(missing))}" if missing else ""
        raise ForeignCollectionError(
            f"collection {name!r} exists but was not created by langchain-graphrag-milvus (this version's schema): "
            f"its fields are {listed}{lacks}, e.g. another program's collection such as a langchain_milvus.Milvus "
            "store's; it is left untouched. Choose another collection_prefix"
        )
    if kind == "passages" and partition_key:
        keys = [f.get("name") for f in description.get("fields", []) if f.get("is_partition_key")]
        if keys != [partition_key]:
            raise GraphRAGError(
                f"collection {name!r} has partition key {keys[0] if keys else None!r}, not {partition_key!r}; "
                "the partition key is fixed when the collections are created"
            )
    existing = collection_dim(description)
    if dim is not None and dim != existing:
        raise EmbeddingDimensionError(
            f"collection {name!r} stores {existing}-dimensional vectors but the embedding model "
            f"gives {dim}; use the model the data was ingested with, or another collection_prefix"
        )
    return existing


def ensure_vector_index(client: MilvusClient, name: str, index_params: dict[str, Any]) -> bool:
    """Give a collection without a vector index (a creation or re-index cut short) ``index_params``.

    A collection cannot be loaded without one. ``index="auto"`` switches it again at the
    next ingest if it is large enough. Returns True if an index was created.
    """
    try:
        if client.list_indexes(name):
            return False
    except Exception:  # a backend without list_indexes: nothing to repair here
        return False
    params = client.prepare_index_params()
    params.add_index(field_name="vector", **index_params)
    client.create_index(collection_name=name, index_params=params, timeout=None, sync=True)
    return True
