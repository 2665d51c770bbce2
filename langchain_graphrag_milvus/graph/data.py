"""GraphData: the arrays of a sparse entity–relation–passage graph, and reading them (numpy only).

Layout (E entities, R relations, P passages; int32 indices, int64 row pointers):

* ``entities`` / ``relations`` — uint64 keys ↔ array indices (:class:`~.ids.KeyMap`);
  ``passages`` — passage ids ↔ array indices (:class:`~.ids.StringIdMap`);
* ``rel_subject`` / ``rel_object`` — the two entities of each relation;
* ``ent_rel`` — CSR entity → incident relations (the seed's entity×relation matrix);
* ``rel_pas`` / ``pas_rel`` — CSR relation ↔ supporting passages;
* ``synonyms`` — CSR entity → entities naming the same thing.

This module is the bottom of ``graph/``: the operations (``expand``, ``update``, ``persist``,
``paths``, ``ppr``) take a :class:`GraphData` and never import :mod:`.index`;
:class:`~.index.GraphIndex` adds them as methods on top.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from langchain_graphrag_milvus.graph.csr import CSR, gather_rows
from langchain_graphrag_milvus.graph.ids import KeyMap, StringIdMap

__all__ = ["GraphData", "GraphView"]

I32 = npt.NDArray[np.int32]


@dataclass(frozen=True)
class GraphView:
    """The part of a graph that a passage filter allows (e.g. one tenant's passages).

    A relation counts only if at least one allowed passage supports it, an entity only if
    one of its relations counts. Expansion and PageRank given ``relations`` as their
    ``relation_mask`` neither return nor traverse anything else.
    """

    passages: npt.NDArray[np.bool_]
    relations: npt.NDArray[np.bool_]
    entities: npt.NDArray[np.bool_]
    passage_ids: frozenset[str]
    cache: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    """Derived data of this view (e.g. its aggregated relation index), built on first use."""


@dataclass(frozen=True, eq=False)
class GraphData:
    """The immutable arrays of a graph (see the module docstring) and read-only navigation.

    Use :class:`~langchain_graphrag_milvus.graph.GraphIndex` (this plus building, updating,
    expansion and persistence) rather than this class directly.
    """

    entities: KeyMap
    relations: KeyMap
    passages: StringIdMap
    rel_subject: I32
    rel_object: I32
    ent_rel: CSR
    rel_pas: CSR
    pas_rel: CSR
    synonyms: CSR
    _cache: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    # ------------------------------------------------------------------ sizes
    @property
    def n_entities(self) -> int:
        """Number of entities."""
        return len(self.entities)

    @property
    def n_relations(self) -> int:
        """Number of relations."""
        return len(self.relations)

    @property
    def n_passages(self) -> int:
        """Number of passages linked to at least one relation."""
        return len(self.passages)

    @property
    def nbytes(self) -> int:
        """Bytes of the index's arrays, plus an estimate for passage id strings.

        Not all a store holds for its graph: ``store.memory_report()`` (``stats``) counts every
        part, Python objects included (:mod:`.sizes`).
        """
        arrays = (
            self.entities.nbytes
            + self.relations.nbytes
            + self.rel_subject.nbytes
            + self.rel_object.nbytes
            + self.synonyms.nbytes
            + self.ent_rel.nbytes
            + self.rel_pas.nbytes
            + self.pas_rel.nbytes
        )
        return int(arrays + self.passages.nbytes)

    def entity_degree(self) -> npt.NDArray[np.int64]:
        """Number of relations incident to each entity."""
        cached = self._cache.get("entity_degree")
        if cached is None:
            cached = self._cache["entity_degree"] = self.ent_rel.degrees()
        return cached

    # ------------------------------------------------------------------ navigation
    def relation_passages(self, relations: npt.ArrayLike) -> list[I32]:
        """Passage indices supporting each relation."""
        return [self.rel_pas.row(int(r)) for r in np.asarray(relations).ravel()]

    def passage_relations(self, passages: npt.ArrayLike) -> list[I32]:
        """Relation indices supported by each passage."""
        return [self.pas_rel.row(int(p)) for p in np.asarray(passages).ravel()]

    def passage_entities(self, passage: int) -> tuple[I32, I32]:
        """Entities mentioned in a passage's relations and how many of its relations each is in."""
        rels = self.pas_rel.row(int(passage))
        ents, counts = np.unique(np.concatenate([self.rel_subject[rels], self.rel_object[rels]]), return_counts=True)
        return ents.astype(np.int32), counts.astype(np.int32)

    def entity_passage_counts(
        self,
        entities: npt.ArrayLike,
        relation_mask: npt.NDArray[np.bool_] | None = None,
        passage_mask: npt.NDArray[np.bool_] | None = None,
    ) -> npt.NDArray[np.int64]:
        """For each entity, the number of distinct passages its relations come from (inside the masks, if given).

        One pass over all the entities' relations and their passages (no loop per entity).
        """
        ents = np.asarray(entities, dtype=np.int64).ravel()
        owner, rels = gather_rows(self.ent_rel, ents.astype(np.int32))  # owner: position in ``ents``
        if relation_mask is not None:
            allowed = np.asarray(relation_mask, dtype=bool)[rels]
            owner, rels = owner[allowed], rels[allowed]
        at, passages = gather_rows(self.rel_pas, rels)
        owner = owner[at]
        if passage_mask is not None:
            allowed = np.asarray(passage_mask, dtype=bool)[passages]
            owner, passages = owner[allowed], passages[allowed]
        width = max(self.n_passages, 1)
        pairs = np.unique(owner.astype(np.int64) * width + passages)  # each (entity, passage) once
        return np.bincount(pairs // width, minlength=ents.size).astype(np.int64)

    def relation_mask_for_passages(self, allowed_passages: npt.ArrayLike) -> npt.NDArray[np.bool_]:
        """Relations supported by at least one of ``allowed_passages`` (indices)."""
        mask = np.zeros(self.n_relations, bool)
        allowed = np.asarray(allowed_passages, dtype=np.int32).ravel()
        if allowed.size:
            _, rels = gather_rows(self.pas_rel, allowed)
            mask[rels] = True
        return mask

    def view(self, allowed_passages: npt.ArrayLike) -> GraphView:
        """The :class:`GraphView` of the passages with these indices."""
        passages = np.zeros(self.n_passages, bool)
        allowed = np.asarray(allowed_passages, dtype=np.int64).ravel()
        passages[allowed] = True
        relations = self.relation_mask_for_passages(allowed)
        entities = np.zeros(self.n_entities, bool)
        entities[self.rel_subject[relations]] = True
        entities[self.rel_object[relations]] = True
        ids = frozenset(self.passages.ids[i] for i in np.flatnonzero(passages).tolist())
        return GraphView(passages, relations, entities, ids)
