"""Milvus write primitives shared by ingestion and updates.

Rules every write follows:

* rows are written in batches of ``store.batch_size``;
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

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from langchain_graphrag_milvus.graph import GraphIndex, RemovedItems
from langchain_graphrag_milvus.milvus import expr
from langchain_graphrag_milvus.milvus.schema import Kind
from langchain_graphrag_milvus.text.names import key_to_id

if TYPE_CHECKING:
    from langchain_graphrag_milvus.store import MilvusGraphStore

__all__ = ["write_rows", "delete_rows", "apply_graph_change", "RELATION_ROW_FIELDS"]

RELATION_ROW_FIELDS = ("text", "vector", "subject_id", "object_id", "predicate", "passage_ids")
_DELETE_CHUNK = 1024


def write_rows(store: MilvusGraphStore, kind: Kind, rows: list[dict[str, Any]], existing: Iterable[str]) -> None:
    """Insert the rows whose ``pk`` is not in ``existing``; replace the others."""
    if not rows:
        return
    existing = set(existing)
    name = store.collection_name(kind)
    new = [r for r in rows if r["pk"] not in existing]
    old = [r for r in rows if r["pk"] in existing]
    for i in range(0, len(new), store.batch_size):
        store.client.insert(name, new[i : i + store.batch_size], timeout=store.timeout)
    replace_by_delete = kind == "passages" and store.partition_key_field is not None
    for i in range(0, len(old), store.batch_size):
        batch = old[i : i + store.batch_size]
        if replace_by_delete:
            store.client.delete(name, filter=expr.in_list("pk", [r["pk"] for r in batch]), timeout=store.timeout)
            store.client.insert(name, batch, timeout=store.timeout)
        else:
            store.client.upsert(name, batch, timeout=store.timeout)
    store._strong_reads.discard(kind)  # this write's timestamp follows any earlier delete


def delete_rows(store: MilvusGraphStore, kind: Kind, ids: Sequence[str]) -> None:
    """Delete rows by primary key (missing ids are fine)."""
    if not ids:
        return
    for i in range(0, len(ids), _DELETE_CHUNK):
        store.client.delete(
            store.collection_name(kind), filter=expr.in_list("pk", ids[i : i + _DELETE_CHUNK]), timeout=store.timeout
        )
    store._strong_reads.add(kind)


def apply_graph_change(
    store: MilvusGraphStore, after: GraphIndex, removed: RemovedItems, touched: Sequence[int]
) -> None:
    """Make Milvus match ``after`` for a removal computed by ``GraphIndex.remove_*``.

    Args:
        store: The store.
        after: The graph after the removal.
        removed: What disappeared (relations, entities, passages left empty).
        touched: Keys of relations that lost some passage links (survivors are rewritten
            with their new passage list, the others deleted).
    """
    gone = {int(k) for k in removed.relation_keys.tolist()}
    survivors = [int(k) for k in dict.fromkeys(touched) if int(k) not in gone]
    if survivors:
        idx = after.relations.lookup(np.asarray(survivors, dtype=np.uint64))
        ids = [key_to_id(k) for k in survivors]
        rows = store.fetch("relations", ids, RELATION_ROW_FIELDS)
        updated = []
        for rid, r in zip(ids, idx.tolist()):
            row = rows.get(rid)
            if row is None:  # already gone in Milvus (a crashed run got this far)
                continue
            row = {k: row[k] for k in ("pk", *RELATION_ROW_FIELDS)}
            row["passage_ids"] = [after.passages.ids[p] for p in after.rel_pas.row(r).tolist()]
            updated.append(row)
        write_rows(store, "relations", updated, [r["pk"] for r in updated])
    delete_rows(store, "relations", [key_to_id(k) for k in removed.relation_keys.tolist()])
    delete_rows(store, "entities", [key_to_id(k) for k in removed.entity_keys.tolist()])
    store._set_graph(after, removed_entities=[key_to_id(k) for k in removed.entity_keys.tolist()])
