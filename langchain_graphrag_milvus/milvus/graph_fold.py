"""Graph changes: :class:`GraphDelta` (one write), and a first load's gathered in :class:`PendingFold`.

``GraphIndex.add_relations`` copies the index's arrays: folding every chunk of a load in
turn costs O(graph) per chunk, quadratic over the load (measured in
``benchmarks/bench_bulk_load.py``). :class:`PendingFold` gathers a first load's relation
rows instead (a relation stated again gains the links it lacked, as ``add_relations`` does)
and the graph cache folds them once, at the end of the load (or at the first read of the
graph during it). Folded into the empty graph, rows in key order (the order a rebuild reads
them from Milvus) with their passage lists in the order written and synonym pairs by
entity key, give the same index, array for array, as a rebuild from Milvus.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from langchain_graphrag_milvus.graph.ids import ids_to_keys

if TYPE_CHECKING:
    from langchain_graphrag_milvus.graph import GraphIndex

__all__ = ["GraphDelta", "PendingFold"]


@dataclass(frozen=True)
class GraphDelta:
    """A change already written to Milvus, to fold into the in-memory graph.

    Applied in this order: links removed (``unlinked_*``, pairwise), then relations added
    or linked (the ``relation_keys``... sequences, aligned), then entity names forgotten
    (``removed_entities``) and learnt (``new_entities``).
    """

    relation_keys: Sequence[int] = ()
    subject_keys: Sequence[int] = ()
    object_keys: Sequence[int] = ()
    passage_ids: Sequence[Sequence[str]] = ()
    synonym_pairs: tuple[Sequence[int], Sequence[int]] | None = None
    new_entities: Mapping[str, str] = field(default_factory=dict)
    unlinked_relation_keys: Sequence[int] = ()
    unlinked_passage_ids: Sequence[str] = ()
    removed_entities: Sequence[str] = ()

    @classmethod
    def from_relation_rows(
        cls,
        rows: Sequence[Mapping[str, Any]],
        *,
        new_entities: Mapping[str, str] | None = None,
        synonyms: Mapping[str, Sequence[str]] | None = None,
        **removals: Any,
    ) -> GraphDelta:
        """The delta of relation rows just written (``pk``, ``subject_id``, ``object_id``, ``passage_ids``).

        Args:
            rows: The relation rows as written.
            new_entities: Entity id → name of the entities created.
            synonyms: Entity id → the entity ids it was linked to as synonyms.
            **removals: ``unlinked_relation_keys``, ``unlinked_passage_ids``, ``removed_entities``.
        """
        pairs = None
        if synonyms is not None:
            pairs = (
                ids_to_keys([a for a, others in synonyms.items() for _ in others]).tolist(),
                ids_to_keys([b for others in synonyms.values() for b in others]).tolist(),
            )
        return cls(
            relation_keys=ids_to_keys([r["pk"] for r in rows]).tolist(),
            subject_keys=ids_to_keys([r["subject_id"] for r in rows]).tolist(),
            object_keys=ids_to_keys([r["object_id"] for r in rows]).tolist(),
            passage_ids=[r["passage_ids"] for r in rows],
            synonym_pairs=pairs,
            new_entities=dict(new_entities or {}),
            **removals,
        )


class PendingFold:
    """Relation rows, synonym pairs and entity names not yet folded into the graph.

    Rows are kept as the deltas gave them (arrays and list references: no per-row work);
    a relation gathered more than once is merged when folded (its passage lists united, in
    order), so the fold equals folding the deltas one by one.
    """

    def __init__(self) -> None:
        self._keys: list[npt.NDArray[np.uint64]] = []
        self._subjects: list[npt.NDArray[np.uint64]] = []
        self._objects: list[npt.NDArray[np.uint64]] = []
        self._passages: list[Sequence[str]] = []
        self.synonyms: tuple[list[int], list[int]] = ([], [])
        self.names: dict[str, str] = {}
        #: Relation rows gathered (a relation gathered twice counts twice).
        self.rows = 0

    @property
    def size(self) -> int:
        """Number of gathered items (relation rows, synonym pairs, names)."""
        return self.rows + len(self.synonyms[0]) + len(self.names)

    @staticmethod
    def accepts(delta: GraphDelta) -> bool:
        """True if the delta only adds (no unlinks, no removed entities)."""
        return not len(delta.unlinked_relation_keys) and not len(delta.removed_entities)

    def add(self, delta: GraphDelta) -> None:
        """Gather an additive delta."""
        keys = np.asarray(delta.relation_keys, np.uint64).ravel()
        if not (keys.size == len(delta.subject_keys) == len(delta.object_keys) == len(delta.passage_ids)):
            raise ValueError("relation_keys, subject_keys, object_keys and passage_ids must align")
        self._keys.append(keys)
        self._subjects.append(np.asarray(delta.subject_keys, np.uint64).ravel())
        self._objects.append(np.asarray(delta.object_keys, np.uint64).ravel())
        self._passages.extend(delta.passage_ids)
        self.rows += keys.size
        if delta.synonym_pairs is not None:
            self.synonyms[0].extend(int(a) for a in delta.synonym_pairs[0])
            self.synonyms[1].extend(int(b) for b in delta.synonym_pairs[1])
        self.names.update(delta.new_entities)

    def _merged(self) -> tuple[npt.NDArray[np.intp], list[Sequence[str]]]:
        """Each relation's first row, in key order, and its passages united over all its rows (in order)."""
        keys = np.concatenate(self._keys) if self._keys else np.empty(0, np.uint64)
        _, first, inverse, counts = np.unique(keys, return_index=True, return_inverse=True, return_counts=True)
        pids = self._passages
        merged: dict[int, list[str]] = {}
        for pos in np.flatnonzero(counts[inverse] > 1).tolist():  # rows of relations gathered twice or more
            head = int(first[inverse[pos]])
            if head == pos:
                merged[head] = list(dict.fromkeys(pids[pos]))
            else:
                have = merged[head]
                known = set(have)
                have.extend(p for p in dict.fromkeys(pids[pos]) if p not in known)
        return first, [merged.get(i, pids[i]) for i in first.tolist()]  # (in key order)

    def fold_into(self, graph: GraphIndex) -> tuple[GraphIndex, Mapping[str, str]]:
        """The graph with everything gathered added, and the entity names learnt."""
        if not self.rows and not self.synonyms[0]:
            return graph, self.names
        order, passages = self._merged()
        syn_a, syn_b = np.array(self.synonyms[0], np.uint64), np.array(self.synonyms[1], np.uint64)
        by_entity = np.argsort(syn_a, kind="stable")
        folded = graph.add_relations(
            relation_keys=np.concatenate(self._keys)[order] if self._keys else [],
            subject_keys=np.concatenate(self._subjects)[order] if self._keys else [],
            object_keys=np.concatenate(self._objects)[order] if self._keys else [],
            passage_ids=passages,
            synonym_pairs=(syn_a[by_entity], syn_b[by_entity]),
        )
        return folded, self.names
