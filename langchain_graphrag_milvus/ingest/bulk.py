"""A first load into empty collections: what it wrote, known in memory instead of asked of Milvus.

An ingest that starts on collections that do not exist or hold no row (checked once, with
``count(*)``, before the first batch) cannot meet a row it did not write itself. So each
batch's "does this exist" reads are answered from memory:

* passages: never asked (the load's passage ids are unique: a repeated id is skipped
  before it reaches a batch, as on every ingest);
* entities: the ids this load wrote (a set);
* relations: the ids this load wrote; only the rows of those a later batch states again
  are fetched (their stored passage lists and vectors are needed to add links).

Other writers: the "empty" decision is taken under the write lease
(:mod:`~langchain_graphrag_milvus.milvus.write_guard`) or checked again once it is held. A
load that found no collections takes the lease when it creates them and counts again: if
another writer filled them meanwhile it raises :class:`~langchain_graphrag_milvus.errors.ConcurrentWriteError`
before writing anything. A load whose collections were created by another writer after
it decided takes the lease before its first batch reads anything and, if rows exist by
then, turns the bulk load off (:attr:`BulkLoad.active`): it plans from reads like any
other ingest. A crash mid-load leaves non-empty collections; the re-run sees them and
takes the checked path, which completes what is missing row by row.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from langchain_graphrag_milvus.graph import GraphIndex
from langchain_graphrag_milvus.milvus.read_seam import StoreReads
from langchain_graphrag_milvus.milvus.write_seam import StoreWrites

__all__ = ["BulkLoad", "starts_empty"]


def starts_empty(writes: StoreWrites, reads: StoreReads, graph: GraphIndex | None = None) -> bool:
    """True if the collections do not exist yet or all three hold no row.

    ``graph``: the store's graph if loaded; one with passages means rows exist (or existed:
    the checked path is always safe), so nothing is counted.
    """
    if graph is not None and graph.n_passages:
        return False
    if not writes.exists():  # (rows are only written once all three exist)
        return True
    return not any(reads.counts().values())


@dataclass
class BulkLoad:
    """What a first load wrote so far (entity and relation ids)."""

    entity_ids: set[str] = field(default_factory=set)
    relation_ids: set[str] = field(default_factory=set)
    #: False once another writer was found to have written first: the load reads like any other.
    active: bool = True

    def stored_entities(self, ids: Iterable[str]) -> dict[str, Any]:
        """Those of ``ids`` this load wrote (the shape of a fetch: id → row)."""
        written = self.entity_ids
        return {i: {"pk": i} for i in ids if i in written}

    def written_relations(self, ids: Iterable[str]) -> list[str]:
        """Those of ``ids`` this load wrote (their rows must be fetched to add links)."""
        written = self.relation_ids
        return [i for i in ids if i in written]

    def record(self, entities: Iterable[str], relations: Iterable[str]) -> None:
        """Record the ids of a batch's rows once they are written."""
        self.entity_ids.update(entities)
        self.relation_ids.update(relations)
