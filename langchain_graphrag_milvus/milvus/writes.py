"""The writers' shared steps, over the two seams: rows written and deleted, graph changes applied.

Backend-independent: every step reads through :attr:`StoreParts.reads`
(:class:`~langchain_graphrag_milvus.milvus.read_seam.StoreReads`) and writes through
:attr:`StoreParts.writes` (:class:`~langchain_graphrag_milvus.milvus.write_seam.StoreWrites`;
on Milvus :class:`~langchain_graphrag_milvus.milvus.milvus_writes.MilvusWrites`, which keeps
the Milvus rules: upsert or delete + insert on a partition-key collection, ``"Strong"`` reads
after a delete, ids escaped through :mod:`.expr`). Rules every writer follows:

* rows are written in batches of ``parts.batch_size``;
* every change that alters the graph first bumps the store's generation
  (``parts.graph.bump_generation()``), so a persisted graph index built before the change
  (or during a change that crashed) is stale;
* writes go in an order a re-run can finish (:func:`apply_graph_change`: survivors rewritten,
  then entities, then relations; the writers' passage rows last);
* the vectors of written rows are offered to the graph cache (held in the client for local search).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from langchain_graphrag_milvus.graph import GraphIndex, RemovedItems
from langchain_graphrag_milvus.graph.ids import keys_to_ids
from langchain_graphrag_milvus.milvus.graph_cache import GraphCache
from langchain_graphrag_milvus.milvus.read_seam import StoreReads
from langchain_graphrag_milvus.milvus.schema import Kind
from langchain_graphrag_milvus.milvus.write_seam import StoreWrites

__all__ = ["StoreParts", "write_rows", "delete_rows", "apply_graph_change", "relation_row", "RELATION_ROW_FIELDS"]

RELATION_ROW_FIELDS = ("text", "vector", "subject_id", "object_id", "predicate", "passage_ids")


@dataclass(frozen=True)
class StoreParts:
    """What a writer needs of a store: its two seams, its graph cache, and rows per write.

    A writer reaches the backend only through ``reads`` and ``writes``
    (``tests/unit/test_write_seam.py`` checks that no code of ``ingest/`` or ``cli/`` calls
    a Milvus client or connection).

    Attributes:
        reads: The read seam (a writer reads what it is about to change only through it).
        writes: The write seam (rows, collections, the write lease).
        graph: The in-memory graph that every write keeps in step.
        batch_size: Rows per insert, upsert (and texts per embedding call).
    """

    reads: StoreReads
    writes: StoreWrites
    graph: GraphCache[Any]
    batch_size: int


def relation_row(stored: Mapping[str, Any], passage_ids: list[str]) -> dict[str, Any]:
    """A stored relation row (fetched with :data:`RELATION_ROW_FIELDS`) with new passage links."""
    return {**{k: stored[k] for k in ("pk", *RELATION_ROW_FIELDS)}, "passage_ids": passage_ids}


def write_rows(parts: StoreParts, kind: Kind, rows: list[dict[str, Any]], existing: Iterable[str]) -> None:
    """Insert the rows whose ``pk`` is not in ``existing``, replace the others; offer their vectors to the graph."""
    if not rows:
        return
    parts.writes.write(kind, rows, existing=existing, batch_size=parts.batch_size)
    parts.graph.offer_vectors(kind, rows)  # the vectors held in the client take them without a read


def delete_rows(parts: StoreParts, kind: Kind, ids: Sequence[str]) -> None:
    """Delete rows by primary key (missing ids are fine)."""
    if ids:
        parts.writes.delete(kind, ids)


def apply_graph_change(parts: StoreParts, after: GraphIndex, removed: RemovedItems, touched: Sequence[int]) -> None:
    """Make the store match ``after`` for a removal computed by ``GraphIndex.remove_*``, then the graph cache.

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
