"""The output fields of the entity and relation rows held in the client, beside their vectors.

A local search (:mod:`.local_search`) answers from :class:`~.local_vectors.VectorTable` rows;
with the fields its callers ask for held beside the vectors, it needs no read of the hits
from Milvus afterwards (a second round trip per query). The relations' ``text`` and
``predicate`` never change while their key lives (the key is a hash of the text); their
``passage_ids`` do (a passage added or deleted elsewhere), so each row also keeps a
checksum of its passage ids (:func:`links_checksum`), and a table checked against a graph
re-reads the rows whose checksum differs from the graph's (:func:`graph_links`).

Fields are kept as one JSON array per row (the values of :data:`HELD_FIELDS`, in order) in a
:class:`~langchain_graphrag_milvus.text.strings.StringArray` (one UTF-8 blob and offsets, saved
with the vectors), decoded only for the hits.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from langchain_graphrag_milvus.graph import GraphIndex
from langchain_graphrag_milvus.milvus.schema import Kind
from langchain_graphrag_milvus.text.strings import StringArray

__all__ = ["HELD_FIELDS", "encode_fields", "decode_fields", "links_checksum", "graph_links", "holds"]

#: The fields held per kind (entities: none; their searches ask for the key only).
HELD_FIELDS: dict[Kind, tuple[str, ...]] = {"relations": ("text", "predicate", "passage_ids"), "entities": ()}

_COUNT_SHIFT = np.uint64(48)  # the checksum: sum of the ids' CRC-32 (< 2**44 for 4,096 ids) + count << 48


def holds(kind: Kind, fields: Sequence[str]) -> bool:
    """Whether the rows of ``kind`` hold every field of ``fields`` (the key is always held)."""
    held = HELD_FIELDS.get(kind, ())
    return all(f == "pk" or f in held for f in fields)


def _crc(pid: Any) -> int:
    return zlib.crc32(str(pid).encode("utf-8", "surrogatepass"))


def links_checksum(passage_ids: Iterable[Any]) -> int:
    """An order-free checksum of a relation's passage ids (their CRC-32 summed, and their count)."""
    ids = list(dict.fromkeys(str(p) for p in passage_ids))
    return (sum(_crc(p) for p in ids) + (len(ids) << 48)) & 0xFFFFFFFFFFFFFFFF


def encode_fields(kind: Kind, rows: Sequence[Mapping[str, Any]]) -> tuple[StringArray, np.ndarray | None] | None:
    """The held fields of ``rows`` (a JSON array each) and, for relations, their links checksums.

    None when a row lacks a held field (the table then reads hits from Milvus).
    """
    held = HELD_FIELDS.get(kind, ())
    if not held:
        return None
    if any(f not in r for r in rows for f in held):
        return None
    values = [[(list(r[f]) if f == "passage_ids" else r[f]) for f in held] for r in rows]
    strings = StringArray.from_strings(json.dumps(v, ensure_ascii=False, separators=(",", ":")) for v in values)
    links = np.fromiter((links_checksum(r["passage_ids"]) for r in rows), np.uint64, len(rows))
    return strings, links


def decode_fields(kind: Kind, strings: StringArray, row: int) -> dict[str, Any]:
    """The held fields of one row."""
    return dict(zip(HELD_FIELDS[kind], json.loads(strings[row])))


def graph_links(graph: GraphIndex) -> np.ndarray:
    """Per relation of ``graph`` (in its index order), the checksum of its passage ids as :func:`links_checksum`."""
    crc = np.fromiter((_crc(p) for p in graph.passages.ids), np.uint64, len(graph.passages.ids))
    rel_pas = graph.rel_pas
    indptr = np.asarray(rel_pas.indptr, np.int64)
    counts = np.diff(indptr)[: graph.n_relations]
    per_link = crc[np.asarray(rel_pas.indices, np.int64)] if len(rel_pas.indices) else np.zeros(0, np.uint64)
    sums = np.zeros(graph.n_relations, np.uint64)
    nonempty = counts > 0
    if nonempty.any():
        sums[nonempty] = np.add.reduceat(per_link, indptr[:-1][: graph.n_relations][nonempty])
    return sums + (counts.astype(np.uint64) << _COUNT_SHIFT)
