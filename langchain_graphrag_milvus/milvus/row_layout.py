"""How rows are stored: field names, key type and the key codec of the reads (:class:`RowLayout`).

This package's schema by default; an existing collection's passages have their own
(:class:`~langchain_graphrag_milvus.milvus.existing.ExistingPassageLayout`). Every read of
:class:`~langchain_graphrag_milvus.milvus.reads.MilvusReads` asks its layout which fields to
request and how a returned row looks, so the read seam answers in this package's rows
(``pk``, ``text``) whatever the schema.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from langchain_graphrag_milvus.errors import UnpageableKeysError
from langchain_graphrag_milvus.milvus import expr
from langchain_graphrag_milvus.milvus.read_seam import Hit
from langchain_graphrag_milvus.milvus.schema import Kind

__all__ = ["RowLayout"]

_FETCH_PAGE = 512
_VIEW_PAGE = 2048
#: What ``fetch(kind, ids, None)`` returns: every stored field but the vector.
_ALL_FIELDS: dict[str, tuple[str, ...]] = {
    "entities": ("text", "synonym_ids"),
    "relations": ("text", "subject_id", "object_id", "predicate", "passage_ids"),
    "passages": ("text", "source_id", "$meta"),
}


class RowLayout:
    """How rows are stored: this package's schema (``pk``, ``text``, ``vector``; passage metadata dynamic).

    The key codec of the reads: which field is the key, how a list of ids becomes a
    filter, which fields a request names and how a returned row looks. A subclass maps
    another schema (see :class:`~langchain_graphrag_milvus.milvus.existing.ExistingPassageLayout`).

    Args:
        partition_key_field: The passages' partition key field (user metadata held in a
            real field, returned with ``"$meta"``).
    """

    #: Ids per query of a fetch.
    fetch_page = _FETCH_PAGE
    #: Ids per query when matching the graph's passages against a filter.
    view_page = _VIEW_PAGE

    def __init__(self, partition_key_field: str | None = None) -> None:
        self.partition_key_field = partition_key_field

    def key_field(self, kind: Kind) -> str:
        """The primary key field of ``kind``."""
        return "pk"

    def unique_ids(self, kind: Kind, ids: Iterable[str]) -> list[str]:
        """The ids once each, in order."""
        return list(dict.fromkeys(ids))

    def pk_filter(self, kind: Kind, ids: Sequence[str]) -> str:
        """``<key> in [...]`` for these ids (escaped by :mod:`.expr`)."""
        return expr.in_list(self.key_field(kind), ids)

    def fields(self, kind: Kind, fields: Sequence[str] | None) -> list[str]:
        """The stored fields to request for ``fields`` (``None``: all but the vector; a string: that one)."""
        out = list(_ALL_FIELDS[kind]) if fields is None else [fields] if isinstance(fields, str) else list(fields)
        if kind == "passages" and self.partition_key_field and "$meta" in out:
            out.append(self.partition_key_field)  # user metadata held in a real field
        return out

    def search_fields(self, kind: Kind, fields: Sequence[str]) -> list[str]:
        """The ``output_fields`` of a search."""
        return self.fields(kind, fields) or ["pk"]

    def fetch_fields(self, kind: Kind, fields: Sequence[str] | None) -> list[str]:
        """The ``output_fields`` of a fetch (the key first)."""
        return list(dict.fromkeys(["pk", *self.fields(kind, fields)]))

    def adapt_search(self, kind: Kind, request: dict[str, Any]) -> dict[str, Any]:
        """Adjust a search request to the schema (vector field, metric)."""
        return request

    def hits(self, kind: Kind, hits: list[list[Hit]]) -> list[list[Hit]]:
        """Search hits as this package's rows (``pk``, ``text``, similarity scores)."""
        return hits

    def row(self, kind: Kind, raw: Mapping[str, Any]) -> dict[str, Any]:
        """A fetched row as this package's row (with ``pk`` as a string)."""
        return dict(raw)

    def key(self, kind: Kind, raw: Mapping[str, Any]) -> str:
        """The id of a fetched row."""
        return str(raw[self.key_field(kind)])

    def page(self, kind: Kind, collection: str, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """A page of a scan as this package's rows (entities and relations: as they are).

        pymilvus' ``query_iterator`` asks for the next page with an unescaped
        ``<key> > "<last key>"``; a page ending on a passage key with a quote or backslash
        would turn that into a broken or different expression, so it raises instead.

        Raises:
            UnpageableKeysError: The page ends on such a key.
        """
        if kind != "passages":
            return rows  # hex keys
        last = str(rows[-1][self.key_field(kind)]) if rows else ""
        if '"' in last or "\\" in last:
            raise UnpageableKeysError(
                f"collection {collection!r} has primary keys with quotes or backslashes, which cannot be paged "
                "safely (pymilvus' query_iterator does not escape them); re-key the collection or read its rows "
                "by id (fetch)"
            )
        return [self.row(kind, r) for r in rows]
