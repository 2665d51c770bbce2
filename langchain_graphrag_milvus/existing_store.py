"""A graph store over a collection made with ``langchain_milvus.Milvus`` (passages stay where they are).

A team that already has its passages in Milvus (``Milvus.from_documents(...)``) keeps that
collection: the store reads its primary key, text and metadata fields, and creates only
the entity and relation collections beside it (``{collection}_graph_entities`` and
``_relations`` by default). Retrieval (graph, paths, naive) then reads passages from the
existing collection; relation rows point at its primary keys.

Example:
    .. code-block:: python

        from langchain_milvus import Milvus
        from langchain_graphrag_milvus import MilvusGraphRetriever, MilvusGraphStore

        Milvus.from_documents(docs, embeddings, collection_name="docs",
                              connection_args={"uri": "./team.db"})        # what the team has
        store = MilvusGraphStore.from_existing_collection(
            embeddings, collection_name="docs", uri="./team.db", extractor=extractor)
        store.index_passages()              # triplets for every passage: extracted, cached
        MilvusGraphRetriever(store=store, k=4).invoke("...")

Passages are added or removed with the team's own ``langchain_milvus.Milvus`` store
(also ``store.passage_store``); :meth:`ExistingCollectionGraphStore.index_passages` then
brings the graph up to date (new passages indexed, changed ones re-linked, vanished ones
unlinked). The user's collection is never written to, and :meth:`drop` leaves it alone.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from langchain_graphrag_milvus.errors import CollectionNotFoundError, EmbeddingDimensionError, GraphRAGError
from langchain_graphrag_milvus.milvus import expr
from langchain_graphrag_milvus.milvus.reads import Hit
from langchain_graphrag_milvus.milvus.schema import Kind, check_collection, create_collection
from langchain_graphrag_milvus.store import MilvusGraphStore

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings
    from langchain_core.runnables import Runnable
    from langchain_milvus import Milvus

    from langchain_graphrag_milvus.graph import GraphIndex, GraphView
    from langchain_graphrag_milvus.ingest.existing_index import IndexReport

__all__ = ["ExistingCollectionGraphStore"]

_GRAPH_KINDS: tuple[Kind, ...] = ("entities", "relations")
_SCALARS = {"VARCHAR", "INT8", "INT16", "INT32", "INT64", "FLOAT", "DOUBLE", "BOOL", "JSON", "ARRAY"}
_CHUNK = 512


class ExistingCollectionGraphStore(MilvusGraphStore):
    """A :class:`MilvusGraphStore` whose passages live in an existing langchain-milvus collection.

    Made by :meth:`MilvusGraphStore.from_existing_collection`; see this module's docs.

    Args:
        embedding: The embedding model the collection was made with.
        collection_name: The existing collection.
        text_field: Its text field (langchain-milvus' default ``"text"``).
        primary_field: Its primary key (default: read from the schema).
        vector_field: Its vector field (default: the only float vector field).
        metadata_fields: Fields returned as Document metadata (default: every scalar field
            but the key and text, plus dynamic fields).
        collection_prefix: Prefix of the entity and relation collections (default
            ``"{collection_name}_graph"``).
        **kwargs: Other :class:`MilvusGraphStore` arguments (``uri``, ``token``,
            ``extractor``, ``extraction_cache``, ``graph_path``...).
    """

    def __init__(
        self,
        embedding: Embeddings,
        *,
        collection_name: str,
        text_field: str = "text",
        primary_field: str | None = None,
        vector_field: str | None = None,
        metadata_fields: Sequence[str] | None = None,
        collection_prefix: str | None = None,
        **kwargs: Any,
    ) -> None:
        if kwargs.get("partition_key_field"):
            raise ValueError("partition_key_field does not apply to an existing collection (its schema is fixed)")
        super().__init__(embedding, collection_prefix=collection_prefix or f"{collection_name}_graph", **kwargs)
        self.passage_collection = expr.field_name(collection_name)
        self.text_field = expr.field_name(text_field)
        self.primary_field = expr.field_name(primary_field) if primary_field else None
        self.vector_field = expr.field_name(vector_field) if vector_field else None
        self.metadata_fields = [expr.field_name(f) for f in metadata_fields] if metadata_fields is not None else None
        self._int_pk = False
        self._dynamic = False
        self._metric = "L2"

    def __repr__(self) -> str:
        return (
            f"ExistingCollectionGraphStore(uri={self.uri!r}, collection_name={self.passage_collection!r}, "
            f"collection_prefix={self.collection_prefix!r})"
        )

    def collection_name(self, kind: Kind) -> str:
        """The existing collection for passages; ``{prefix}_entities`` / ``_relations`` for the graph."""
        return self.passage_collection if kind == "passages" else f"{self.collection_prefix}_{kind}"

    # ------------------------------------------------------------------ schema
    def _describe_passages(self) -> int:
        """Read the existing collection's schema: key, vector, metadata fields; return its dimension."""
        if not self.client.has_collection(self.passage_collection):
            raise CollectionNotFoundError(f"no collection {self.passage_collection!r} at {self.uri!r}")
        desc = self.client.describe_collection(self.passage_collection)
        fields = {f["name"]: f for f in desc.get("fields", [])}
        types = {name: getattr(f.get("type"), "name", str(f.get("type"))) for name, f in fields.items()}
        primary = self.primary_field or next((n for n, f in fields.items() if f.get("is_primary")), None)
        vectors = [n for n, t in types.items() if t.endswith("FLOAT_VECTOR") and t != "SPARSE_FLOAT_VECTOR"]
        vector = self.vector_field or (vectors[0] if len(vectors) == 1 else None)
        problems = [
            f"no field {name!r}" for name in (primary, vector, self.text_field) if name is None or name not in fields
        ]
        if problems:
            raise GraphRAGError(
                f"collection {self.passage_collection!r}: {', '.join(problems)} (fields: {sorted(fields)}); pass "
                "text_field=, primary_field= or vector_field= to name them"
            )
        assert primary is not None and vector is not None  # checked above
        self.primary_field, self.vector_field = primary, vector
        self._int_pk = types[primary].startswith("INT")
        self._dynamic = bool(desc.get("enable_dynamic_field"))
        self._metric = self._index_metric(vector)
        if self.metadata_fields is None:
            skip = {primary, vector, self.text_field}
            self.metadata_fields = [n for n, t in types.items() if n not in skip and t in _SCALARS]
        return int(fields[vector].get("params", {}).get("dim"))

    def _index_metric(self, vector: str) -> str:
        """The metric of the collection's vector index (langchain-milvus' default: ``L2``)."""
        names = self.client.list_indexes(self.passage_collection, field_name=vector)
        if not names:
            return "L2"
        return str(self.client.describe_index(self.passage_collection, names[0]).get("metric_type") or "L2").upper()

    def exists(self) -> bool:
        """True if the existing collection and the entity and relation collections exist."""
        return all(self.client.has_collection(self.collection_name(k)) for k in ("passages", *_GRAPH_KINDS))

    def ensure_collections(self, dim: int) -> None:
        """Create the entity and relation collections for ``dim``; never touch the passages'."""
        with self._lock:
            existing = self._describe_passages()
            if existing != dim:
                raise EmbeddingDimensionError(
                    f"collection {self.passage_collection!r} stores {existing}-dimensional vectors but the embedding "
                    f"model gives {dim}; use the model the collection was made with"
                )
            created = []
            for kind in _GRAPH_KINDS:
                name = self.collection_name(kind)
                if self.client.has_collection(name):
                    check_collection(self.client.describe_collection(name), kind, dim)
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
                    )
            for name in (*created, self.passage_collection):
                self.client.load_collection(name, timeout=self.timeout)
            self._dim = dim

    def check_open(self) -> int:
        """Check the three collections (the graph's must be ours); return the dimension."""
        if self._dim is not None:
            return self._dim
        with self._lock:
            if self._dim is not None:
                return self._dim
            dim = self._describe_passages()
            missing = [k for k in _GRAPH_KINDS if not self.client.has_collection(self.collection_name(k))]
            if missing:
                raise CollectionNotFoundError(
                    f"no {', '.join(missing)} collection under prefix {self.collection_prefix!r} beside "
                    f"{self.passage_collection!r}; build them with store.index_passages()"
                )
            for kind in _GRAPH_KINDS:
                check_collection(self.client.describe_collection(self.collection_name(kind)), kind, dim)
            for kind in ("passages", *_GRAPH_KINDS):
                self.client.load_collection(self.collection_name(kind), timeout=self.timeout)
            self._dim = dim
            return dim

    # ------------------------------------------------------------------ reads with field mapping
    def pk_filter(self, ids: Sequence[str]) -> str:
        """``<primary key> in [...]`` for passage ids (escaped strings, or integers)."""
        self.check_open()
        assert self.primary_field is not None
        if not self._int_pk:
            return expr.in_list(self.primary_field, ids)
        values = [int(i) for i in ids if str(i).lstrip("-").isdigit()]
        return expr.in_list(self.primary_field, values) if values else f"{self.primary_field} in []"

    def _passage_fields(self, fields: Sequence[str] | None) -> list[str]:
        wanted = ["text", "$meta"] if fields is None else [fields] if isinstance(fields, str) else list(fields)
        out = [self.text_field if f == "text" else f for f in wanted if f not in ("pk", "$meta", "doc_hash")]
        if "$meta" in wanted:
            out += list(self.metadata_fields or []) + (["$meta"] if self._dynamic else [])
        return list(dict.fromkeys(out))

    def _row(self, row: Mapping[str, Any], pk: str | None = None) -> dict[str, Any]:
        out = {k: v for k, v in row.items() if k not in (self.primary_field, self.text_field, self.vector_field)}
        out["pk"] = pk if pk is not None else str(row[self.primary_field or "pk"])
        if self.text_field in row:
            out["text"] = row[self.text_field]
        return out

    def _search_request(
        self,
        kind: Kind,
        vectors: Sequence[Sequence[float]],
        limit: int,
        filter_expr: str | None,
        output_fields: Sequence[str],
    ) -> dict[str, Any]:
        request = super()._search_request(kind, vectors, limit, filter_expr, output_fields)
        if kind == "passages":
            request["anns_field"] = self.vector_field
            request["search_params"] = {**self.search_params, "metric_type": self._metric}
            request["output_fields"] = self._passage_fields(output_fields) or [self.primary_field]
        return request

    def _passage_hits(self, hits: list[list[Hit]]) -> list[list[Hit]]:
        # scores are similarities here: an L2 index returns squared distances, and for unit
        # vectors 1 - d²/2 is exactly their cosine (for others it keeps the order)
        l2 = self._metric == "L2"
        return [
            [Hit(h.id, 1.0 - h.score / 2.0 if l2 else h.score, self._row(h.fields, h.id)) for h in per] for per in hits
        ]

    def search(self, kind: Kind, vectors: Sequence[Sequence[float]], limit: int, **kwargs: Any) -> list[list[Hit]]:
        """:meth:`MilvusGraphStore.search`, reading passages through the field mapping."""
        hits = super().search(kind, vectors, limit, **kwargs)
        return self._passage_hits(hits) if kind == "passages" else hits

    async def asearch(
        self, kind: Kind, vectors: Sequence[Sequence[float]], limit: int, **kwargs: Any
    ) -> list[list[Hit]]:
        """Async :meth:`search`."""
        hits = await super().asearch(kind, vectors, limit, **kwargs)
        return self._passage_hits(hits) if kind == "passages" else hits

    def _passage_queries(
        self, ids: Iterable[str], output_fields: Sequence[str] | None, filter_expr: str | None
    ) -> list[dict[str, Any]]:
        if isinstance(ids, str):
            raise TypeError(f"ids must be a list of ids, not the string {ids!r}")
        unique = list(dict.fromkeys(map(str, ids)))
        return [
            {
                "collection_name": self.passage_collection,
                "filter": expr.and_all(self.pk_filter(unique[i : i + _CHUNK]), filter_expr),
                "output_fields": [self.primary_field, *self._passage_fields(output_fields)],
                "limit": len(unique[i : i + _CHUNK]),
                "timeout": self.timeout,
                "consistency_level": self._consistency("passages"),
            }
            for i in range(0, len(unique), _CHUNK)
        ]

    def fetch(
        self, kind: Kind, ids: Iterable[str], output_fields: Sequence[str] | None = ("pk",), **kwargs: Any
    ) -> dict[str, dict[str, Any]]:
        """:meth:`MilvusGraphStore.fetch`, reading passages through the field mapping."""
        if kind != "passages":
            return super().fetch(kind, ids, output_fields, **kwargs)
        self.check_open()
        queries = self._passage_queries(ids, output_fields, kwargs.get("filter_expr"))
        rows = [self._row(r) for q in queries for r in self.client.query(**q)]
        return {r["pk"]: r for r in rows}

    async def afetch(
        self, kind: Kind, ids: Iterable[str], output_fields: Sequence[str] | None = ("pk",), **kwargs: Any
    ) -> dict[str, dict[str, Any]]:
        """Async :meth:`fetch`."""
        if kind != "passages":
            return await super().afetch(kind, ids, output_fields, **kwargs)
        await asyncio.to_thread(self.check_open)
        client = await self.aclient()
        queries = self._passage_queries(ids, output_fields, kwargs.get("filter_expr"))
        results = await asyncio.gather(*(client.query(**q) for q in queries))
        return {row["pk"]: row for rows in results for row in map(self._row, rows)}

    def _graph_and_view(self, filter_expr: str, graph: GraphIndex | None = None) -> tuple[GraphIndex, GraphView]:
        graph = self.graph if graph is None else graph
        cached = self._views.get(filter_expr)
        if cached is not None and cached[0] is graph:
            return cached
        ids = graph.passages.ids
        matched: list[str] = []
        for i in range(0, len(ids), _CHUNK):
            chunk = [str(x) for x in ids[i : i + _CHUNK]]
            rows = self.client.query(
                self.passage_collection,
                filter=expr.and_all(self.pk_filter(chunk), filter_expr),
                output_fields=[self.primary_field],
                limit=len(chunk),
                timeout=self.timeout,
                consistency_level="Strong",
            )
            matched += [str(r[self.primary_field]) for r in rows]
        found = graph.passages.find(matched)
        view = graph.view(found[found >= 0])
        with self._lock:
            if len(self._views) >= 64:
                self._views.pop(next(iter(self._views)))
            self._views[filter_expr] = (graph, view)
        return graph, view

    def counts(self) -> dict[str, int]:
        """Rows in each collection (the passages are the existing collection's)."""
        self.check_open()
        out = {}
        for kind in ("entities", "relations", "passages"):
            rows = self.client.query(
                self.collection_name(kind), filter="", output_fields=["count(*)"], consistency_level="Strong"
            )
            out[kind] = int(rows[0]["count(*)"])
        return out

    def vector_store(self, kind: Kind) -> Milvus:
        """The collection as a ``langchain_milvus.Milvus`` store (passages: the team's own)."""
        if kind != "passages":
            return super().vector_store(kind)
        from langchain_milvus import Milvus

        self.check_open()
        with self._lock:
            if kind not in self._vector_stores:
                self._vector_stores[kind] = Milvus(
                    embedding_function=self.embedding,
                    collection_name=self.passage_collection,
                    connection_args=self._resolved_args(),
                    primary_field=self.primary_field or "pk",
                    text_field=self.text_field,
                    vector_field=self.vector_field or "vector",
                    timeout=self.timeout,
                )
            return self._vector_stores[kind]

    # ------------------------------------------------------------------ writes
    def index_passages(
        self,
        *,
        triplets: Mapping[str, Sequence[Sequence[str]]] | None = None,
        extractor: Runnable[str, Any] | None = None,
        strict: bool = False,
        show_progress: bool | None = None,
    ) -> IndexReport:
        """Build or update the graph over the existing collection's passages.

        See :func:`~langchain_graphrag_milvus.ingest.existing_index.index_passages`.
        """
        from langchain_graphrag_milvus.ingest.existing_index import index_passages

        return index_passages(self, triplets=triplets, extractor=extractor, strict=strict, show_progress=show_progress)

    def _read_only(self, *args: Any, **kwargs: Any) -> Any:
        raise GraphRAGError(
            f"the passages live in the existing collection {self.passage_collection!r}: add, change or delete them "
            "with your langchain_milvus.Milvus store (or store.passage_store), then call store.index_passages()"
        )

    add_records = add_documents = add_jsonl = upsert_documents = _read_only
    delete_documents = delete_passages = _read_only
    _owned_kinds = _GRAPH_KINDS  # ``drop`` keeps the team's passage collection

