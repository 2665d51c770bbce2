"""GraphIndex: the sparse entity–relation–passage graph (numpy and scipy only).

The graph is derived data: Milvus holds the truth (relation rows carry their subject and
object entity ids and their passage ids) and :meth:`GraphIndex.from_relations` rebuilds
the index from those rows alone.

Layout (E entities, R relations, P passages; int32 indices, int64 row pointers):

* ``rel_subject`` / ``rel_object`` — the two entities of each relation;
* ``ent_rel`` — CSR entity → incident relations (the seed's entity×relation matrix);
* ``rel_pas`` / ``pas_rel`` — CSR relation ↔ supporting passages.

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

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from langchain_graphrag_milvus.graph.csr import CSR, csr_extend, csr_from_pairs, gather_rows, reduce_max_min
from langchain_graphrag_milvus.graph.ids import KeyMap, StringIdMap

__all__ = ["GraphIndex", "Expansion", "GraphView", "RemovedItems"]

I32 = npt.NDArray[np.int32]
F32 = npt.NDArray[np.float32]
H16 = npt.NDArray[np.int16]
FORMAT_VERSION = 1


@dataclass(frozen=True)
class Expansion:
    """Relations (and entities) reached by :meth:`GraphIndex.expand`, best first.

    Attributes:
        relations: Relation indices, ordered by score (desc), then hop, then index.
        scores: Score of each relation: its seed's similarity, times ``decay`` per hop.
        hops: 0 for a relation seed or a relation touching a seed entity, 1 for a relation
            sharing an entity with a hop-0 relation, and so on.
        entities: Entity indices reached (seeds included), best first.
        entity_scores: Score of each reached entity.
        entity_hops: 0 for seeds, h + 1 for entities of hop-h relations.
        truncated: True if a cap (neighbours, frontier or pool size) dropped anything.
    """

    relations: I32
    scores: F32
    hops: H16
    entities: I32
    entity_scores: F32
    entity_hops: H16
    truncated: bool = False


def _empty_expansion() -> Expansion:
    return Expansion(
        np.empty(0, np.int32),
        np.empty(0, np.float32),
        np.empty(0, np.int16),
        np.empty(0, np.int32),
        np.empty(0, np.float32),
        np.empty(0, np.int16),
    )


_UNSEEN = np.int16(np.iinfo(np.int16).max)


def _top(idx: I32, scores: F32, hops: H16, limit: int | None) -> npt.NDArray[np.intp]:
    """Positions of the best ``limit`` items: score desc, then hop, then index (deterministic)."""
    if limit is not None and idx.size > limit:
        kth = np.partition(scores, idx.size - limit)[idx.size - limit]
        candidates = np.flatnonzero(scores >= kth)  # ties at the cut stay in, then the sort decides
        order = np.lexsort((idx[candidates], hops[candidates], -scores[candidates]))[:limit]
        return candidates[order]
    return np.lexsort((idx, hops, -scores))


def _reduce(chunks: list[tuple[I32, F32, int]], n: int) -> tuple[I32, F32, H16]:
    """Unique indices with their max score and min hop, from (indices, scores, hop) chunks.

    Small inputs are sorted; big ones are scattered into dense per-call arrays (no
    state is shared between calls, so concurrent readers are safe).
    """
    idx = np.concatenate([c[0] for c in chunks]).astype(np.int32, copy=False)
    scores = np.concatenate([c[1] for c in chunks]).astype(np.float32, copy=False)
    hops = np.concatenate([np.full(c[0].size, c[2], np.int16) for c in chunks])
    if idx.size * 8 < n:
        return reduce_max_min(idx, scores, hops)
    best = np.full(n, -np.inf, np.float32)
    first = np.full(n, _UNSEEN, np.int16)
    np.maximum.at(best, idx, scores)
    np.minimum.at(first, idx, hops)
    keys = np.flatnonzero(first != _UNSEEN).astype(np.int32)
    return keys, best[keys], first[keys]


def _first_occurrences(keys: npt.NDArray[np.uint64]) -> npt.NDArray[np.intp]:
    """Positions of the first occurrence of each distinct key, in input order."""
    if keys.size < 2:
        return np.arange(keys.size)
    order = np.argsort(keys, kind="stable")
    ordered = keys[order]
    first = np.concatenate([[True], ordered[1:] != ordered[:-1]])
    return np.sort(order[first])


def _seed_arrays(seeds: npt.ArrayLike | None, scores: npt.ArrayLike | None, n: int, what: str) -> tuple[I32, F32]:
    idx = np.asarray([] if seeds is None else seeds, dtype=np.int64).ravel()
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        raise IndexError(f"{what} seed index out of range 0..{n - 1}")
    if scores is None:
        sc = np.ones(idx.size, np.float32)
    else:
        sc = np.asarray(scores, dtype=np.float32).ravel()
        if sc.size != idx.size:
            raise ValueError(f"{what}_scores must align with {what}_seeds")
    return idx.astype(np.int32), sc


@dataclass(frozen=True)
class RemovedItems:
    """What an update removed from the graph (relations, entities and passages left empty)."""

    relation_keys: npt.NDArray[np.uint64]
    entity_keys: npt.NDArray[np.uint64]
    passage_ids: list[str]


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


@dataclass(frozen=True, eq=False)
class GraphIndex:
    """Sparse entity–relation–passage graph with capped frontier expansion.

    Build it with :meth:`from_relations` (from relation rows) or :meth:`load`; grow it
    with :meth:`add_relations`. See the module docstring for the layout.
    """

    entities: KeyMap
    relations: KeyMap
    passages: StringIdMap
    rel_subject: I32
    rel_object: I32
    ent_rel: CSR
    rel_pas: CSR
    pas_rel: CSR
    _cache: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

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
    ) -> GraphIndex:
        """Build an index from relation rows.

        Args:
            relation_keys: uint64 key of each relation (unique).
            subject_keys: uint64 key of each relation's subject entity.
            object_keys: uint64 key of each relation's object entity.
            passage_ids: For each relation, the ids of the passages supporting it.
            entity_keys: Optional extra entity keys (isolated entities are kept too).

        Returns:
            The index; entity, relation and passage indices follow first appearance.
        """
        return cls.empty_like().add_relations(
            relation_keys=relation_keys,
            subject_keys=subject_keys,
            object_keys=object_keys,
            passage_ids=passage_ids,
            entity_keys=entity_keys,
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
        )

    def add_relations(
        self,
        *,
        relation_keys: npt.ArrayLike,
        subject_keys: npt.ArrayLike,
        object_keys: npt.ArrayLike,
        passage_ids: Sequence[Sequence[str]],
        entity_keys: npt.ArrayLike | None = None,
    ) -> GraphIndex:
        """A new index with these relations added (``self`` is unchanged).

        Relations already present only gain the passage links they lacked; new entities,
        relations and passages are appended (existing indices never move). The cost is
        one pass of memory copies over the existing arrays, with no rebuild from Milvus.
        """
        rkeys = np.asarray(relation_keys, dtype=np.uint64).ravel()
        skeys = np.asarray(subject_keys, dtype=np.uint64).ravel()
        okeys = np.asarray(object_keys, dtype=np.uint64).ravel()
        if not (rkeys.size == skeys.size == okeys.size == len(passage_ids)):
            raise ValueError("relation_keys, subject_keys, object_keys and passage_ids must align")
        # relations: dedupe the batch (keep first), split new / existing
        first = _first_occurrences(rkeys)
        rkeys, skeys, okeys = rkeys[first], skeys[first], okeys[first]
        pids = [passage_ids[i] for i in first.tolist()]
        existing = self.relations.find(rkeys)
        is_new = existing < 0

        # entities
        ent_candidates = np.concatenate([skeys[is_new], okeys[is_new]])
        if entity_keys is not None:
            ent_candidates = np.concatenate([ent_candidates, np.asarray(entity_keys, np.uint64).ravel()])
        ent_candidates = ent_candidates[_first_occurrences(ent_candidates)]
        new_ent = ent_candidates[self.entities.find(ent_candidates) < 0]
        entities = self.entities.extended(new_ent)

        # new relations
        new_rkeys = rkeys[is_new]
        relations = self.relations.extended(new_rkeys)
        r0 = self.n_relations
        new_ridx = np.arange(r0, r0 + new_rkeys.size, dtype=np.int32)
        subj = entities.lookup(skeys[is_new], "entity")
        obj = entities.lookup(okeys[is_new], "entity")
        rel_subject = np.concatenate([self.rel_subject, subj])
        rel_object = np.concatenate([self.rel_object, obj])
        loop = subj == obj
        ent_rel = csr_extend(
            self.ent_rel,
            np.concatenate([subj, obj[~loop]]),
            np.concatenate([new_ridx, new_ridx[~loop]]),
            len(entities),
        )
        touched = np.flatnonzero(np.bincount(np.concatenate([subj, obj]), minlength=len(entities))).astype(np.int32)
        ent_rel = _order_rows(ent_rel, touched, rel_subject, rel_object)

        # passage links (new relations and new links of existing ones)
        ridx_all = np.where(is_new, 0, existing)
        ridx_all[is_new] = new_ridx
        flat_pids: list[str] = []
        flat_rel: list[int] = []
        for r, plist in zip(ridx_all.tolist(), pids):
            for pid in dict.fromkeys(plist):
                flat_pids.append(pid)
                flat_rel.append(r)
        passages = self.passages.extended(flat_pids)
        link_r = np.asarray(flat_rel, dtype=np.int32)
        link_p = passages.find(flat_pids)
        if link_r.size:
            # drop links that already exist (re-ingest of the same data adds nothing)
            old = link_r < r0
            if old.any():
                known = self._has_links(link_r[old], link_p[old])
                keep = np.ones(link_r.size, bool)
                keep[np.flatnonzero(old)[known]] = False
                link_r, link_p = link_r[keep], link_p[keep]
            if link_r.size:
                pair = np.unique(link_r.astype(np.int64) * (len(passages) + 1) + link_p)
                link_r = (pair // (len(passages) + 1)).astype(np.int32)
                link_p = (pair % (len(passages) + 1)).astype(np.int32)
        n_rel = len(relations)
        rel_pas = csr_extend(self.rel_pas, link_r, link_p, n_rel)
        pas_rel = csr_extend(self.pas_rel, link_p, link_r, len(passages))
        return GraphIndex(
            entities=entities,
            relations=relations,
            passages=passages,
            rel_subject=rel_subject,
            rel_object=rel_object,
            ent_rel=ent_rel,
            rel_pas=rel_pas,
            pas_rel=pas_rel,
        )

    def remove_links(
        self, *, relation_keys: npt.ArrayLike, passage_ids: Sequence[str]
    ) -> tuple[GraphIndex, RemovedItems]:
        """A new index without the given (relation, passage) links, and what disappeared.

        A relation left without passages is removed, then an entity left without relations
        and a passage left without relations. Unknown pairs are ignored. Indices are
        renumbered (the survivors keep their order); the cost is one pass over the arrays.
        """
        rkeys = np.asarray(relation_keys, dtype=np.uint64).ravel()
        if rkeys.size != len(passage_ids):
            raise ValueError("relation_keys and passage_ids must align")
        r = self.relations.find(rkeys).astype(np.int64)
        p = self.passages.find(list(passage_ids)).astype(np.int64)
        ok = (r >= 0) & (p >= 0)
        width = np.int64(self.n_passages + 1)
        drop = np.unique(r[ok] * width + p[ok])
        rows = np.repeat(np.arange(self.n_relations, dtype=np.int64), np.diff(self.rel_pas.indptr))
        pair = rows * width + self.rel_pas.indices
        keep = ~np.isin(pair, drop)
        return self._compacted(rows[keep], self.rel_pas.indices[keep].astype(np.int64))

    def remove_passages(self, passage_ids: Sequence[str]) -> tuple[GraphIndex, RemovedItems]:
        """A new index without these passages (and what only they supported)."""
        p = self.passages.find(list(passage_ids))
        gone = np.zeros(self.n_passages, bool)
        gone[p[p >= 0]] = True
        rows = np.repeat(np.arange(self.n_relations, dtype=np.int64), np.diff(self.rel_pas.indptr))
        cols = self.rel_pas.indices.astype(np.int64)
        keep = ~gone[cols]
        return self._compacted(rows[keep], cols[keep])

    def _compacted(
        self, link_rel: npt.NDArray[np.int64], link_pas: npt.NDArray[np.int64]
    ) -> tuple[GraphIndex, RemovedItems]:
        """Rebuild from the surviving relation→passage links, dropping what became empty."""
        rel_alive = np.bincount(link_rel, minlength=self.n_relations) > 0
        ent_alive = np.zeros(self.n_entities, bool)
        ent_alive[self.rel_subject[rel_alive]] = True
        ent_alive[self.rel_object[rel_alive]] = True
        pas_alive = np.bincount(link_pas, minlength=self.n_passages) > 0
        removed = RemovedItems(
            relation_keys=self.relations.keys[~rel_alive].copy(),
            entity_keys=self.entities.keys[~ent_alive].copy(),
            passage_ids=[self.passages.ids[i] for i in np.flatnonzero(~pas_alive).tolist()],
        )
        new_rel = np.cumsum(rel_alive) - 1
        new_ent = np.cumsum(ent_alive) - 1
        new_pas = np.cumsum(pas_alive) - 1
        n_r, n_e, n_p = int(rel_alive.sum()), int(ent_alive.sum()), int(pas_alive.sum())
        # entity rows keep their (specificity) order: filter and renumber, no re-sort
        er_rows = np.repeat(np.arange(self.n_entities, dtype=np.int64), np.diff(self.ent_rel.indptr))
        er_keep = rel_alive[self.ent_rel.indices]
        ent_rel = csr_from_pairs(new_ent[er_rows[er_keep]], new_rel[self.ent_rel.indices[er_keep]], n_e)
        rel_pas = csr_from_pairs(new_rel[link_rel], new_pas[link_pas], n_r)
        pas_rel = csr_from_pairs(new_pas[link_pas], new_rel[link_rel], n_p)
        graph = GraphIndex(
            entities=KeyMap.from_keys(self.entities.keys[ent_alive]),
            relations=KeyMap.from_keys(self.relations.keys[rel_alive]),
            passages=StringIdMap(self.passages.ids[i] for i in np.flatnonzero(pas_alive).tolist()),
            rel_subject=new_ent[self.rel_subject[rel_alive]].astype(np.int32),
            rel_object=new_ent[self.rel_object[rel_alive]].astype(np.int32),
            ent_rel=ent_rel,
            rel_pas=rel_pas,
            pas_rel=pas_rel,
        )
        return graph, removed

    def _has_links(self, rels: I32, pas: I32) -> npt.NDArray[np.bool_]:
        owner, cols = gather_rows(self.rel_pas, rels)
        if cols.size == 0:
            return np.zeros(rels.size, bool)
        hit = cols == pas[owner]
        out = np.zeros(rels.size, bool)
        out[owner[hit]] = True
        return out

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
        """Memory held by the index (arrays, plus an estimate for passage id strings)."""
        arrays = (
            self.entities.nbytes
            + self.relations.nbytes
            + self.rel_subject.nbytes
            + self.rel_object.nbytes
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

    def entity_passage_counts(self, entities: npt.ArrayLike) -> npt.NDArray[np.int64]:
        """For each entity, the number of distinct passages its relations come from."""
        out = []
        for ent in np.asarray(entities, dtype=np.int64).ravel().tolist():
            _, passages = gather_rows(self.rel_pas, self.ent_rel.row(ent))
            out.append(np.unique(passages).size)
        return np.asarray(out, dtype=np.int64)

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

    def _capped_neighbors(
        self, frontier: I32, limit: int | None, mask: npt.NDArray[np.bool_] | None
    ) -> tuple[I32, I32, bool]:
        """(owner position, relation) pairs of frontier entities, ≤ ``limit`` per entity.

        Rule when an entity has more than ``limit`` (allowed) relations: keep those whose
        other entity has the fewest relations (specific facts before hub-to-hub ones),
        ties broken by relation index. Rows are stored in that order (re-sorted for the
        rows an ingest touches), so the cap is a slice, not a sort per query. The rule
        is deterministic and independent of the query.
        """
        degree = self.entity_degree()
        truncated = bool(limit is not None and np.any(degree[frontier] > limit))
        if mask is None or limit is None:
            owner, rels = gather_rows(self.ent_rel, frontier, limit)
            if mask is not None and rels.size:
                keep = mask[rels]
                owner, rels = owner[keep], rels[keep]
            return owner, rels, truncated
        # with a mask, a hub's first `limit` *allowed* relations are wanted
        small = degree[frontier] <= limit
        owner_s, rels_s = gather_rows(self.ent_rel, frontier[small])
        owner_parts = [np.flatnonzero(small).astype(np.int32)[owner_s]]
        rel_parts = [rels_s]
        truncated = False
        for pos in np.flatnonzero(~small).tolist():
            row = self.ent_rel.row(int(frontier[pos]))
            row = row[mask[row]]
            if row.size > limit:
                row, truncated = row[:limit], True
            owner_parts.append(np.full(row.size, pos, np.int32))
            rel_parts.append(row)
        owner = np.concatenate(owner_parts)
        rels = np.concatenate(rel_parts)
        keep = mask[rels]
        return owner[keep].astype(np.int32), rels[keep].astype(np.int32), truncated

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
        if not 0 <= hops <= 3:
            raise ValueError("hops must be 0, 1, 2 or 3")
        for name, cap in (
            ("max_neighbors", max_neighbors),
            ("max_frontier", max_frontier),
            ("max_relations", max_relations),
        ):
            if cap is not None and cap < 1:
                raise ValueError(f"{name} must be positive or None")
        e_idx, e_sc = _seed_arrays(entity_seeds, entity_scores, self.n_entities, "entity")
        r_idx, r_sc = _seed_arrays(relation_seeds, relation_scores, self.n_relations, "relation")
        if relation_mask is not None and r_idx.size:
            keep = relation_mask[r_idx]
            r_idx, r_sc = r_idx[keep], r_sc[keep]
        if e_idx.size == 0 and r_idx.size == 0:
            return _empty_expansion()

        if max_frontier is None and max_relations is not None:
            # a relation's score is its best frontier entity's score, so the best
            # `max_relations` relations of a hop come from its best entities
            max_frontier = max_relations
        elif max_frontier is not None and max_relations is not None:
            max_frontier = min(max_frontier, max_relations)
        expanded = np.full(self.n_entities, -np.inf, np.float32)
        rel_chunks: list[tuple[I32, F32, int]] = []
        ent_chunks: list[tuple[I32, F32, int]] = [(e_idx, e_sc, 0)]
        truncated = False
        f_ent, f_sc = e_idx, e_sc  # entities whose relations are taken at this hop
        rels, scores = r_idx, r_sc  # relations reached at this hop besides the frontier's
        for hop in range(hops + 1):
            f_ent, f_sc, _ = _reduce([(f_ent, f_sc, 0)], self.n_entities)
            better = f_sc > expanded[f_ent]  # skip entities already expanded as well or better
            f_ent, f_sc = f_ent[better], f_sc[better]
            if max_frontier is not None and f_ent.size > max_frontier:
                top = _top(f_ent, f_sc, np.zeros(f_ent.size, np.int16), max_frontier)
                f_ent, f_sc = f_ent[top], f_sc[top]
                truncated = True
            expanded[f_ent] = f_sc
            owner, new_rels, cut = self._capped_neighbors(f_ent, max_neighbors, relation_mask)
            truncated |= cut
            rels = np.concatenate([rels, new_rels])
            scores = np.concatenate([scores, f_sc[owner]])
            if rels.size == 0:
                break
            rel_chunks.append((rels, scores, hop))  # duplicates are reduced once, at the end
            # the entities of this hop's relations are the next frontier
            f_ent = np.concatenate([self.rel_subject[rels], self.rel_object[rels]])
            f_sc = (np.concatenate([scores, scores]) * np.float32(decay)).astype(np.float32)
            ent_chunks.append((f_ent, f_sc, hop + 1))
            rels, scores = np.empty(0, np.int32), np.empty(0, np.float32)

        if not rel_chunks:
            return _empty_expansion()
        reached, rscores, rhops = _reduce(rel_chunks, self.n_relations)
        order = _top(reached, rscores, rhops, max_relations)
        truncated |= max_relations is not None and reached.size > max_relations
        ents, escores, ehops = _reduce(ent_chunks, self.n_entities)
        eorder = _top(ents, escores, ehops, None)
        return Expansion(
            relations=reached[order],
            scores=rscores[order],
            hops=rhops[order],
            entities=ents[eorder],
            entity_scores=escores[eorder],
            entity_hops=ehops[eorder],
            truncated=truncated,
        )

    # ------------------------------------------------------------------ persistence
    def save(self, directory: str | os.PathLike[str], *, fingerprint: dict[str, Any] | None = None) -> Path:
        """Write the index as ``.npy`` files plus ``manifest.json`` into ``directory``.

        The files are written to a temporary directory first and renamed into place, so
        a crash never leaves a half-written index behind.
        """
        target = Path(directory)
        tmp = target.with_name(target.name + ".tmp")
        if tmp.exists():
            _rmtree(tmp)
        tmp.mkdir(parents=True)
        encoded = [pid.encode("utf-8") for pid in self.passages.ids]
        offsets = np.zeros(len(encoded) + 1, np.int64)
        np.cumsum([len(b) for b in encoded], out=offsets[1:])
        arrays = {
            **{f"entity_{k}": v for k, v in self.entities.arrays().items()},
            **{f"relation_{k}": v for k, v in self.relations.arrays().items()},
            "rel_subject": self.rel_subject,
            "rel_object": self.rel_object,
            "ent_rel_indptr": self.ent_rel.indptr,
            "ent_rel_indices": self.ent_rel.indices,
            "rel_pas_indptr": self.rel_pas.indptr,
            "rel_pas_indices": self.rel_pas.indices,
            "pas_rel_indptr": self.pas_rel.indptr,
            "pas_rel_indices": self.pas_rel.indices,
            "passage_blob": np.frombuffer(b"".join(encoded), dtype=np.uint8),
            "passage_offsets": offsets,
        }
        for name, arr in arrays.items():
            np.save(tmp / f"{name}.npy", np.ascontiguousarray(arr), allow_pickle=False)
        manifest = {
            "format": FORMAT_VERSION,
            "entities": self.n_entities,
            "relations": self.n_relations,
            "passages": self.n_passages,
            "fingerprint": fingerprint or {},
        }
        (tmp / "manifest.json").write_text(json.dumps(manifest, indent=1), encoding="utf-8")
        if target.exists():
            old = target.with_name(target.name + ".old")
            if old.exists():
                _rmtree(old)
            target.rename(old)
            tmp.rename(target)
            _rmtree(old)
        else:
            tmp.rename(target)
        return target

    @staticmethod
    def read_manifest(directory: str | os.PathLike[str]) -> dict[str, Any]:
        """The manifest of a saved index (counts, format, fingerprint)."""
        return json.loads((Path(directory) / "manifest.json").read_text(encoding="utf-8"))  # type: ignore[no-any-return]

    @classmethod
    def load(cls, directory: str | os.PathLike[str], *, mmap: bool = True) -> GraphIndex:
        """Load an index written by :meth:`save` (memory-mapped by default)."""
        path = Path(directory)
        manifest = cls.read_manifest(path)
        if manifest.get("format") != FORMAT_VERSION:
            raise ValueError(f"unsupported graph index format {manifest.get('format')!r} in {path}")
        mode: Literal["r"] | None = "r" if mmap else None

        def arr(name: str) -> Any:
            return np.load(path / f"{name}.npy", mmap_mode=mode, allow_pickle=False)

        blob = bytes(np.load(path / "passage_blob.npy"))
        offsets = np.load(path / "passage_offsets.npy").tolist()
        pids = [blob[a:b].decode("utf-8") for a, b in zip(offsets[:-1], offsets[1:])]
        index = cls(
            entities=KeyMap(arr("entity_keys"), arr("entity_sorted_keys"), arr("entity_sorted_index")),
            relations=KeyMap(arr("relation_keys"), arr("relation_sorted_keys"), arr("relation_sorted_index")),
            passages=StringIdMap(pids),
            rel_subject=arr("rel_subject"),
            rel_object=arr("rel_object"),
            ent_rel=CSR(arr("ent_rel_indptr"), arr("ent_rel_indices")),
            rel_pas=CSR(arr("rel_pas_indptr"), arr("rel_pas_indices")),
            pas_rel=CSR(arr("pas_rel_indptr"), arr("pas_rel_indices")),
        )
        if (index.n_entities, index.n_relations, index.n_passages) != (
            manifest["entities"],
            manifest["relations"],
            manifest["passages"],
        ):
            raise ValueError(f"graph index in {path} does not match its manifest")
        return index


def _order_rows(csr: CSR, rows: I32, rel_subject: I32, rel_object: I32) -> CSR:
    """Sort the given rows of entity→relation by (other entity's degree, relation index)."""
    if rows.size == 0 or csr.indices.size == 0:
        return csr
    degree = np.diff(csr.indptr)
    owner, rels = gather_rows(csr, rows)
    if rels.size == 0:
        return csr
    ent = rows[owner]
    other = np.where(rel_subject[rels] == ent, rel_object[rels], rel_subject[rels])
    other_degree = degree[other].astype(np.int64)
    bits_rel = max(int(rel_subject.size).bit_length(), 1)
    bits_deg = max(int(other_degree.max()).bit_length(), 1)
    if int(owner.max()).bit_length() + bits_deg + bits_rel <= 62:  # one int64 key: faster than lexsort
        key = (owner.astype(np.int64) << (bits_deg + bits_rel)) | (other_degree << bits_rel) | rels
        order = np.argsort(key)
    else:  # pragma: no cover - graphs beyond ~2^62 combined range
        order = np.lexsort((rels, other_degree, owner))
    starts = csr.indptr[rows.astype(np.int64)]
    lens = csr.indptr[rows.astype(np.int64) + 1] - starts
    positions = np.repeat(starts - (np.cumsum(lens) - lens), lens) + np.arange(rels.size)
    indices = np.array(csr.indices, copy=True)
    indices[positions] = rels[order]
    return CSR(csr.indptr, indices)


def _rmtree(path: Path) -> None:
    for child in path.iterdir():
        child.unlink()
    path.rmdir()
