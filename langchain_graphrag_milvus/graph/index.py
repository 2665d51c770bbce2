"""GraphIndex: the sparse entity–relation–passage graph (numpy and scipy only).

The graph is derived data: Milvus holds the truth (relation rows carry their subject and
object entity ids and their passage ids) and :meth:`GraphIndex.from_relations` rebuilds
the index from those rows alone.

The arrays (layout in :mod:`.data`) and their read-only navigation live in
:class:`~.data.GraphData`; the operations are plain functions of :mod:`.expand`,
:mod:`.update` and :mod:`.persist`, which take a ``GraphData`` and never import this module
(the modules of ``graph/`` form a DAG). :class:`GraphIndex` is ``GraphData`` plus those
operations as methods.

Expansion (:meth:`GraphIndex.expand`) walks frontiers from the hit rows only: it never
forms the seed's ``A·Aᵀ`` / ``Aᵀ·A`` products, whose size explodes past ~100k relations.
With the caps off its answer equals the seed's matrix-product answer exactly (tested).

Instances are immutable: :meth:`GraphIndex.add_relations` returns a new index that
shares nothing mutable with the old one, so readers never see a half-updated graph.

Example:
    >>> import numpy as np
    >>> g = GraphIndex.from_relations(
    ...     relation_keys=[1, 2], subject_keys=[10, 20], object_keys=[20, 30],
    ...     passage_ids=[["p1"], ["p2"]])
    >>> g.n_entities, g.n_relations, g.n_passages
    (3, 2, 2)
    >>> e = g.expand(entity_seeds=g.entities.lookup([10]), hops=1)
    >>> g.relations.keys[e.relations].tolist(), e.hops.tolist()
    ([1, 2], [0, 1])
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from langchain_graphrag_milvus.graph import expand, persist, update
from langchain_graphrag_milvus.graph.csr import CSR
from langchain_graphrag_milvus.graph.data import GraphData, GraphView
from langchain_graphrag_milvus.graph.expand import Expansion
from langchain_graphrag_milvus.graph.ids import KeyMap, StringIdMap
from langchain_graphrag_milvus.graph.update import RemovedItems

__all__ = ["GraphIndex", "Expansion", "GraphView", "RemovedItems"]


class GraphIndex(GraphData):
    """Sparse entity–relation–passage graph with capped frontier expansion.

    Build it with :meth:`from_relations` (from relation rows) or :meth:`load`; grow it
    with :meth:`add_relations`. The arrays and the navigation methods come from
    :class:`~langchain_graphrag_milvus.graph.data.GraphData` (see its module for the layout);
    the operations are functions of :mod:`.expand`, :mod:`.update` and :mod:`.persist`.
    """

    # ------------------------------------------------------------------ build
    @classmethod
    def empty(cls) -> GraphIndex:
        """An index with no nodes."""
        return cls.from_relations(relation_keys=[], subject_keys=[], object_keys=[], passage_ids=[])

    @classmethod
    def from_relations(
        cls,
        *,
        relation_keys: npt.ArrayLike,
        subject_keys: npt.ArrayLike,
        object_keys: npt.ArrayLike,
        passage_ids: Sequence[Sequence[str]],
        entity_keys: npt.ArrayLike | None = None,
        synonym_pairs: tuple[npt.ArrayLike, npt.ArrayLike] | None = None,
    ) -> GraphIndex:
        """Build an index from relation rows.

        Args:
            relation_keys: uint64 key of each relation (unique).
            subject_keys: uint64 key of each relation's subject entity.
            object_keys: uint64 key of each relation's object entity.
            passage_ids: For each relation, the ids of the passages supporting it.
            entity_keys: Optional extra entity keys (isolated entities are kept too).
            synonym_pairs: Optional aligned arrays of entity keys naming the same thing.

        Returns:
            The index; entity, relation and passage indices follow first appearance.
        """
        return cls.empty_like().add_relations(
            relation_keys=relation_keys,
            subject_keys=subject_keys,
            object_keys=object_keys,
            passage_ids=passage_ids,
            entity_keys=entity_keys,
            synonym_pairs=synonym_pairs,
        )

    @classmethod
    def empty_like(cls) -> GraphIndex:
        """The empty index (no nodes); the starting point of :meth:`from_relations`."""
        zero = CSR(np.zeros(1, np.int64), np.empty(0, np.int32))
        return cls(
            entities=KeyMap.empty(),
            relations=KeyMap.empty(),
            passages=StringIdMap(),
            rel_subject=np.empty(0, np.int32),
            rel_object=np.empty(0, np.int32),
            ent_rel=zero,
            rel_pas=zero,
            pas_rel=zero,
            synonyms=zero,
        )

    def add_relations(
        self,
        *,
        relation_keys: npt.ArrayLike,
        subject_keys: npt.ArrayLike,
        object_keys: npt.ArrayLike,
        passage_ids: Sequence[Sequence[str]],
        entity_keys: npt.ArrayLike | None = None,
        synonym_pairs: tuple[npt.ArrayLike, npt.ArrayLike] | None = None,
    ) -> GraphIndex:
        """A new index with these relations added (``self`` is unchanged).

        Relations already present only gain the passage links they lacked; new entities,
        relations and passages are appended (existing indices never move). The cost is
        one pass of memory copies over the existing arrays, with no rebuild from Milvus.
        ``synonym_pairs`` (two aligned arrays of entity keys) link entities that name the
        same thing; pairs naming an unknown entity are ignored.
        """
        return update.add_relations(
            self,
            relation_keys=relation_keys,
            subject_keys=subject_keys,
            object_keys=object_keys,
            passage_ids=passage_ids,
            entity_keys=entity_keys,
            synonym_pairs=synonym_pairs,
        )

    def remove_links(
        self, *, relation_keys: npt.ArrayLike, passage_ids: Sequence[str]
    ) -> tuple[GraphIndex, RemovedItems]:
        """A new index without the given (relation, passage) links, and what disappeared.

        A relation left without passages is removed, then an entity left without relations
        and a passage left without relations. Unknown pairs are ignored. Indices are
        renumbered (the survivors keep their order); the cost is one pass over the arrays.
        """
        return update.remove_links(self, relation_keys=relation_keys, passage_ids=passage_ids)

    def remove_passages(self, passage_ids: Sequence[str]) -> tuple[GraphIndex, RemovedItems]:
        """A new index without these passages (and what only they supported)."""
        return update.remove_passages(self, passage_ids)

    def expand(
        self,
        *,
        entity_seeds: npt.ArrayLike | None = None,
        entity_scores: npt.ArrayLike | None = None,
        relation_seeds: npt.ArrayLike | None = None,
        relation_scores: npt.ArrayLike | None = None,
        hops: int = 1,
        max_neighbors: int | None = 100,
        max_frontier: int | None = 1000,
        max_relations: int | None = None,
        decay: float = 0.8,
        relation_mask: npt.NDArray[np.bool_] | None = None,
    ) -> Expansion:
        """Relations within ``hops`` of the seed entities and relations.

        Semantics of the seed notebook (``target_degree`` = ``hops``): the relations
        touching a seed entity and the seed relations themselves are hop 0; each hop then
        adds the relations that share an entity with a relation already reached. With
        the caps off (``None``) the result equals the union of the seed's
        ``(A·Aᵀ)^h·A`` rows for entity seeds and ``(Aᵀ·A)^h`` rows for relation seeds.
        Only frontier rows are read; no product matrix is formed.

        Args:
            entity_seeds: Entity indices (e.g. Milvus entity hits).
            entity_scores: Their similarities (default 1.0).
            relation_seeds: Relation indices (e.g. Milvus relation hits).
            relation_scores: Their similarities (default 1.0).
            hops: Expansion depth 0 to 3 (0: only the hits and the hit entities' relations).
            max_neighbors: At most this many relations taken per entity per hop
                (``None``: no cap). See :meth:`_capped_neighbors` for the rule.
            max_frontier: At most this many entities (best scores) expanded per hop.
            max_relations: Keep only the best this many relations (the candidate pool).
            decay: Score factor per hop.
            relation_mask: Optional boolean mask over relations; masked-out relations are
                neither returned nor traversed (used for tenant filters).

        Returns:
            The reached relations and entities, best first. No seeds → empty result.
        """
        return expand.expand(
            self,
            entity_seeds=entity_seeds,
            entity_scores=entity_scores,
            relation_seeds=relation_seeds,
            relation_scores=relation_scores,
            hops=hops,
            max_neighbors=max_neighbors,
            max_frontier=max_frontier,
            max_relations=max_relations,
            decay=decay,
            relation_mask=relation_mask,
        )

    # ------------------------------------------------------------------ persistence
    def save(self, directory: str | os.PathLike[str], *, fingerprint: dict[str, Any] | None = None) -> Path:
        """Write the index as ``.npy`` files plus ``manifest.json`` into ``directory``.

        The files are written to a temporary directory first and renamed into place, so
        a crash never leaves a half-written index behind. ``directory`` must be missing,
        empty or an index saved here: else ``GraphPathError`` and nothing is written.
        """
        return persist.save(self, directory, fingerprint=fingerprint)

    @staticmethod
    def read_manifest(directory: str | os.PathLike[str]) -> dict[str, Any]:
        """The manifest of a saved index (counts, format, fingerprint)."""
        return persist.read_manifest(directory)

    @classmethod
    def load(cls, directory: str | os.PathLike[str], *, mmap: bool = True, check: bool = True) -> GraphIndex:
        """Load an index written by :meth:`save` (memory-mapped by default).

        Args:
            directory: Where :meth:`save` wrote it.
            mmap: Memory-map the arrays instead of reading them.
            check: Verify every file's length and checksum first (:func:`.persist.verify`).

        Raises:
            IndexFileError: The index is damaged, incomplete or inconsistent (see :mod:`.persist`).
        """
        return persist.load(directory, mmap=mmap, check=check, cls=cls)
