"""Passages in an existing langchain-milvus collection: its schema, read through a key codec.

:class:`ExistingPassageLayout` maps the existing collection's fields (primary key, possibly
an integer; text; vector; metadata) onto this package's rows, so the shared reads of
:mod:`.reads` (searches, fetches, tenant views) work on it unchanged.
:class:`ExistingCollectionConnection` opens that collection (never writing to it) and the
entity and relation collections beside it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from langchain_graphrag_milvus.errors import CollectionNotFoundError, EmbeddingDimensionError, GraphRAGError
from langchain_graphrag_milvus.milvus import expr
from langchain_graphrag_milvus.milvus.connection import MilvusConnection
from langchain_graphrag_milvus.milvus.reads import Hit, RowLayout
from langchain_graphrag_milvus.milvus.schema import Kind, check_collection

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings

__all__ = ["ExistingPassageLayout", "ExistingCollectionConnection", "GRAPH_KINDS"]

#: The collections an existing-collection store creates and owns.
GRAPH_KINDS: tuple[Kind, ...] = ("entities", "relations")
_SCALARS = {"VARCHAR", "INT8", "INT16", "INT32", "INT64", "FLOAT", "DOUBLE", "BOOL", "JSON", "ARRAY"}
_PAGE = 512


class ExistingPassageLayout(RowLayout):
    """The existing collection's passage fields (filled in by :meth:`ExistingCollectionConnection.describe`).

    Args:
        text_field: The text field.
        primary_field: The primary key (``None``: read from the schema).
        vector_field: The vector field (``None``: the only float vector field).
        metadata_fields: Fields returned as metadata (``None``: every scalar field but the
            key and text, plus dynamic fields).
    """

    fetch_page = _PAGE
    view_page = _PAGE

    def __init__(
        self,
        text_field: str,
        primary_field: str | None,
        vector_field: str | None,
        metadata_fields: Sequence[str] | None,
    ) -> None:
        super().__init__(None)
        self.text_field = text_field
        self.primary_field = primary_field
        self.vector_field = vector_field
        self.metadata_fields = list(metadata_fields) if metadata_fields is not None else None
        self.int_pk = False
        self.dynamic = False
        self.metric = "L2"

    def key_field(self, kind: Kind) -> str:
        """The existing collection's primary key for passages; ``pk`` for the rest."""
        return (self.primary_field or "pk") if kind == "passages" else "pk"

    def unique_ids(self, kind: Kind, ids: Iterable[str]) -> list[str]:
        """The ids once each, as strings."""
        return list(dict.fromkeys(map(str, ids))) if kind == "passages" else super().unique_ids(kind, ids)

    def pk_filter(self, kind: Kind, ids: Sequence[str]) -> str:
        """``<primary key> in [...]``: escaped strings, or integers for an integer key."""
        if kind != "passages" or not self.int_pk:
            return expr.in_list(self.key_field(kind), ids)
        values = [int(i) for i in ids if str(i).lstrip("-").isdigit()]
        return expr.in_list(self.key_field(kind), values) if values else f"{self.key_field(kind)} in []"

    def passage_fields(self, fields: Sequence[str] | None) -> list[str]:
        """The existing collection's fields for this package's field names."""
        wanted = ["text", "$meta"] if fields is None else [fields] if isinstance(fields, str) else list(fields)
        out = [self.text_field if f == "text" else f for f in wanted if f not in ("pk", "$meta", "doc_hash")]
        if "$meta" in wanted:
            out += list(self.metadata_fields or []) + (["$meta"] if self.dynamic else [])
        return list(dict.fromkeys(out))

    def search_fields(self, kind: Kind, fields: Sequence[str]) -> list[str]:
        """Passages: the mapped fields (at least the key)."""
        if kind != "passages":
            return super().search_fields(kind, fields)
        return self.passage_fields(fields) or [self.key_field(kind)]

    def fetch_fields(self, kind: Kind, fields: Sequence[str] | None) -> list[str]:
        """Passages: the key, then the mapped fields."""
        if kind != "passages":
            return super().fetch_fields(kind, fields)
        return [self.key_field(kind), *self.passage_fields(fields)]

    def adapt_search(self, kind: Kind, request: dict[str, Any]) -> dict[str, Any]:
        """Passages: the collection's vector field and its index's metric."""
        if kind == "passages":
            request["anns_field"] = self.vector_field
            request["search_params"] = {**request["search_params"], "metric_type": self.metric}
        return request

    def hits(self, kind: Kind, hits: list[list[Hit]]) -> list[list[Hit]]:
        """Passages: mapped rows, and similarities as scores.

        An L2 index returns squared distances, and for unit vectors ``1 - d²/2`` is exactly
        their cosine (for others it keeps the order).
        """
        if kind != "passages":
            return hits
        l2 = self.metric == "L2"
        return [
            [Hit(h.id, 1.0 - h.score / 2.0 if l2 else h.score, self._mapped(h.fields, h.id)) for h in per]
            for per in hits
        ]

    def row(self, kind: Kind, raw: Mapping[str, Any]) -> dict[str, Any]:
        """Passages: a mapped row (``pk``, ``text``, metadata)."""
        return self._mapped(raw) if kind == "passages" else super().row(kind, raw)

    def _mapped(self, row: Mapping[str, Any], pk: str | None = None) -> dict[str, Any]:
        out = {k: v for k, v in row.items() if k not in (self.primary_field, self.text_field, self.vector_field)}
        out["pk"] = pk if pk is not None else str(row[self.primary_field or "pk"])
        if self.text_field in row:
            out["text"] = row[self.text_field]
        return out


class ExistingCollectionConnection(MilvusConnection):
    """A connection whose passages are an existing collection (read, never written or dropped).

    Args:
        passage_collection: The existing collection.
        layout: Its fields (completed from its schema on first open).
        **kwargs: :class:`~langchain_graphrag_milvus.milvus.connection.MilvusConnection` arguments.
    """

    def __init__(self, *, passage_collection: str, layout: ExistingPassageLayout, **kwargs: Any) -> None:
        super().__init__(owned_kinds=GRAPH_KINDS, **kwargs)
        self.passage_collection = passage_collection
        self.layout = layout

    def collection_name(self, kind: Kind) -> str:
        """The existing collection for passages; ``{prefix}_entities`` / ``_relations`` for the graph."""
        return self.passage_collection if kind == "passages" else f"{self.collection_prefix}_{kind}"

    def describe(self) -> int:
        """Read the existing collection's schema: key, vector, metadata fields; return its dimension."""
        layout = self.layout
        if not self.client.has_collection(self.passage_collection):
            raise CollectionNotFoundError(f"no collection {self.passage_collection!r} at {self.uri!r}")
        desc = self.client.describe_collection(self.passage_collection)
        fields = {f["name"]: f for f in desc.get("fields", [])}
        types = {name: getattr(f.get("type"), "name", str(f.get("type"))) for name, f in fields.items()}
        primary = layout.primary_field or next((n for n, f in fields.items() if f.get("is_primary")), None)
        vectors = [n for n, t in types.items() if t.endswith("FLOAT_VECTOR") and t != "SPARSE_FLOAT_VECTOR"]
        vector = layout.vector_field or (vectors[0] if len(vectors) == 1 else None)
        problems = [
            f"no field {name!r}" for name in (primary, vector, layout.text_field) if name is None or name not in fields
        ]
        if problems:
            raise GraphRAGError(
                f"collection {self.passage_collection!r}: {', '.join(problems)} (fields: {sorted(fields)}); pass "
                "text_field=, primary_field= or vector_field= to name them"
            )
        assert primary is not None and vector is not None  # checked above
        layout.primary_field, layout.vector_field = primary, vector
        layout.int_pk = types[primary].startswith("INT")
        layout.dynamic = bool(desc.get("enable_dynamic_field"))
        layout.metric = self._index_metric(vector)
        if layout.metadata_fields is None:
            skip = {primary, vector, layout.text_field}
            layout.metadata_fields = [n for n, t in types.items() if n not in skip and t in _SCALARS]
        return int(fields[vector].get("params", {}).get("dim"))

    def _index_metric(self, vector: str) -> str:
        """The metric of the collection's vector index (langchain-milvus' default: ``L2``)."""
        names = self.client.list_indexes(self.passage_collection, field_name=vector)
        if not names:
            return "L2"
        return str(self.client.describe_index(self.passage_collection, names[0]).get("metric_type") or "L2").upper()

    def _vector_store_args(self, kind: Kind, embedding: Embeddings, search_params: Mapping[str, Any]) -> dict[str, Any]:
        if kind != "passages":  # passages: the team's own collection, with its fields
            return super()._vector_store_args(kind, embedding, search_params)
        return {
            "embedding_function": embedding,
            "collection_name": self.passage_collection,
            "connection_args": self.resolved_args(),
            "primary_field": self.layout.primary_field or "pk",
            "text_field": self.layout.text_field,
            "vector_field": self.layout.vector_field or "vector",
            "timeout": self.timeout,
        }

    def exists(self) -> bool:
        """True if the existing collection and the entity and relation collections exist."""
        return all(self.client.has_collection(self.collection_name(k)) for k in ("passages", *GRAPH_KINDS))

    def ensure_collections(self, dim: int) -> None:
        """Create the entity and relation collections for ``dim``; never touch the passages'."""
        with self.lock:
            existing = self.describe()
            if existing != dim:
                raise EmbeddingDimensionError(
                    f"collection {self.passage_collection!r} stores {existing}-dimensional vectors but the embedding "
                    f"model gives {dim}; use the model the collection was made with"
                )
            self._create_missing(GRAPH_KINDS, dim, None)
            for kind in ("passages", *GRAPH_KINDS):  # also a graph collection whose creation was cut short
                self.client.load_collection(self.collection_name(kind), timeout=self.timeout)
            self.dim = dim

    def check_open(self) -> int:
        """Check the three collections (the graph's must be ours); return the dimension."""
        if self.dim is not None:
            return self.dim
        with self.lock:
            if self.dim is not None:
                return self.dim
            dim = self.describe()
            missing = [k for k in GRAPH_KINDS if not self.client.has_collection(self.collection_name(k))]
            if missing:
                raise CollectionNotFoundError(
                    f"no {', '.join(missing)} collection under prefix {self.collection_prefix!r} beside "
                    f"{self.passage_collection!r}; build them with store.index_passages()"
                )
            for kind in GRAPH_KINDS:
                check_collection(self.client.describe_collection(self.collection_name(kind)), kind, dim)
            for kind in ("passages", *GRAPH_KINDS):
                self.client.load_collection(self.collection_name(kind), timeout=self.timeout)
            self.dim = dim
            return dim
