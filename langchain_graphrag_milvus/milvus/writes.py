"""Milvus write primitives shared by ingestion and updates.

Rules every write follows:

* rows are written in batches of ``parts.batch_size``;
* new rows are inserted and existing rows replaced (upsert, or delete + insert on a
  partition-key collection: Milvus 2.3 servers misroute upserted rows there);
* after a delete, this process reads that collection with ``"Strong"`` consistency until
  its next insert or upsert (measured on Milvus 2.3: a ``"Session"`` read right after a
  delete can still return the deleted rows);
* every change that alters the graph first bumps the store's generation, so a persisted
  graph index built before the change (or during a change that crashed) is stale;
* rows are deleted with a ``pk in [...]`` filter built by :mod:`.expr` (every id escaped),
  never with pymilvus' ``ids=``, which pastes the raw strings into its expression (an id
  holding a quote would widen the delete).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from langchain_graphrag_milvus.graph import GraphIndex, RemovedItems
from langchain_graphrag_milvus.graph.ids import keys_to_ids
from langchain_graphrag_milvus.milvus import expr
from langchain_graphrag_milvus.milvus.connection import MilvusConnection
from langchain_graphrag_milvus.milvus.graph_cache import GraphCache
from langchain_graphrag_milvus.milvus.read_seam import StoreReads
from langchain_graphrag_milvus.milvus.schema import Kind

__all__ = ["StoreParts", "write_rows", "delete_rows", "apply_graph_change", "relation_row", "RELATION_ROW_FIELDS"]

RELATION_ROW_FIELDS = ("text", "vector", "subject_id", "object_id", "predicate", "passage_ids")
_DELETE_CHUNK = 1024


@dataclass(frozen=True)
class StoreParts:
    """What a writer needs of a store: its connection, reads, graph cache, and rows per write.

    Attributes:
        connection: Clients, collection names, read consistency bookkeeping.
        reads: The read seam (a writer reads what it is about to change only through it).
        graph: The in-memory graph that every write keeps in step.
        batch_size: Rows per insert, upsert (and texts per embedding call).
    """

    connection: MilvusConnection
    reads: StoreReads
    graph: GraphCache[Any]
    batch_size: int


def relation_row(stored: Mapping[str, Any], passage_ids: list[str]) -> dict[str, Any]:
    """A stored relation row (fetched with :data:`RELATION_ROW_FIELDS`) with new passage links."""
    return {**{k: stored[k] for k in ("pk", *RELATION_ROW_FIELDS)}, "passage_ids": passage_ids}


def write_rows(parts: StoreParts, kind: Kind, rows: list[dict[str, Any]], existing: Iterable[str]) -> None:
    """Insert the rows whose ``pk`` is not in ``existing``; replace the others."""
    if not rows:
        return
    conn, size = parts.connection, parts.batch_size
    conn.lease.ensure()  # this operation still holds the write lease (milvus/write_guard.py)
    existing = set(existing)
    name = conn.collection_name(kind)
    new = [r for r in rows if r["pk"] not in existing]
    old = [r for r in rows if r["pk"] in existing]
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
    parts.graph.offer_vectors(kind, rows)  # the vectors held in the client take them without a read


def delete_rows(parts: StoreParts, kind: Kind, ids: Sequence[str]) -> None:
    """Delete rows by primary key (missing ids are fine)."""
    if not ids:
        return
    conn = parts.connection
    conn.lease.ensure()
    for i in range(0, len(ids), _DELETE_CHUNK):
        conn.client.delete(
            conn.collection_name(kind), filter=expr.in_list("pk", ids[i : i + _DELETE_CHUNK]), timeout=conn.timeout
        )
    conn.deleted(kind)


def apply_graph_change(parts: StoreParts, after: GraphIndex, removed: RemovedItems, touched: Sequence[int]) -> None:
    """Make Milvus match ``after`` for a removal computed by ``GraphIndex.remove_*``, then the graph cache.

    Args:
        parts: The store's parts.
        after: The graph after the removal.
        removed: What disappeared (relations, entities, passages left empty).
        touched: Keys of relations that lost some passage links (survivors are rewritten
            with their new passage list, the others deleted).

    Write order, so that a re-run after a failure at any write completes the change: survivors
    rewritten, then the entities left without relations deleted, then the relations.
    """
    gone = {int(k) for k in removed.relation_keys.tolist()}
    survivors = [int(k) for k in dict.fromkeys(touched) if int(k) not in gone]
    if survivors:
        idx = after.relations.lookup(np.asarray(survivors, dtype=np.uint64))
        ids = keys_to_ids(survivors)
        rows = parts.reads.fetch("relations", ids, RELATION_ROW_FIELDS)
        updated = [
            relation_row(rows[rid], [after.passages.ids[p] for p in after.rel_pas.row(r).tolist()])
            for rid, r in zip(ids, idx.tolist())
            if rid in rows  # else already gone in Milvus (a crashed run got this far)
        ]
        write_rows(parts, "relations", updated, [r["pk"] for r in updated])
    # entities before relations: a relation row left by a crash still names its entities, so the
    # graph rebuilt from the relations finds them and a re-run deletes both (the reverse order
    # would leave entity rows that no relation names, which no re-run could find)
    removed_entities = keys_to_ids(removed.entity_keys)
    delete_rows(parts, "entities", removed_entities)
    delete_rows(parts, "relations", keys_to_ids(removed.relation_keys))
    parts.graph.replace(after, removed_entities=removed_entities)
