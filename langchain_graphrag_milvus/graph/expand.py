"""Capped frontier expansion on a :class:`~langchain_graphrag_milvus.graph.GraphIndex`.

Walks frontiers from the hit rows only: it never forms the seed's ``A·Aᵀ`` / ``Aᵀ·A``
products, whose size explodes past ~100k relations. With the caps off its answer equals
the seed's matrix-product answer exactly (tested against ``reference.SeedMatrices``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from langchain_graphrag_milvus.graph.csr import gather_rows, reduce_max_min
from langchain_graphrag_milvus.graph.data import GraphData

__all__ = ["Expansion", "expand", "capped_neighbors"]

I32 = npt.NDArray[np.int32]
F32 = npt.NDArray[np.float32]
H16 = npt.NDArray[np.int16]


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


def capped_neighbors(
    graph: GraphData, frontier: I32, limit: int | None, mask: npt.NDArray[np.bool_] | None
) -> tuple[I32, I32, bool]:
    """(owner position, relation) pairs of frontier entities, ≤ ``limit`` per entity.

    Rule when an entity has more than ``limit`` (allowed) relations: keep those whose
    other entity has the fewest relations (specific facts before hub-to-hub ones),
    ties broken by relation index. Rows are stored in that order (re-sorted for the
    rows an ingest touches), so the cap is a slice, not a sort per query. The rule
    is deterministic and independent of the query.
    """
    degree = graph.entity_degree()
    truncated = bool(limit is not None and np.any(degree[frontier] > limit))
    if mask is None or limit is None:
        owner, rels = gather_rows(graph.ent_rel, frontier, limit)
        if mask is not None and rels.size:
            keep = mask[rels]
            owner, rels = owner[keep], rels[keep]
        return owner, rels, truncated
    # with a mask, a hub's first `limit` *allowed* relations are wanted
    small = degree[frontier] <= limit
    owner_s, rels_s = gather_rows(graph.ent_rel, frontier[small])
    owner_parts = [np.flatnonzero(small).astype(np.int32)[owner_s]]
    rel_parts = [rels_s]
    truncated = False
    for pos in np.flatnonzero(~small).tolist():
        row = graph.ent_rel.row(int(frontier[pos]))
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
    graph: GraphData,
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
        graph: The graph.
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
    _check_caps(hops, max_neighbors, max_frontier, max_relations)
    e_idx, e_sc = _seed_arrays(entity_seeds, entity_scores, graph.n_entities, "entity")
    r_idx, r_sc = _seed_arrays(relation_seeds, relation_scores, graph.n_relations, "relation")
    if relation_mask is not None and r_idx.size:
        keep = relation_mask[r_idx]
        r_idx, r_sc = r_idx[keep], r_sc[keep]
    if e_idx.size == 0 and r_idx.size == 0:
        return _empty_expansion()

    max_frontier = _frontier_cap(max_frontier, max_relations)
    expanded = np.full(graph.n_entities, -np.inf, np.float32)
    rel_chunks: list[tuple[I32, F32, int]] = []
    ent_chunks: list[tuple[I32, F32, int]] = [(e_idx, e_sc, 0)]
    truncated = False
    f_ent, f_sc = e_idx, e_sc  # entities whose relations are taken at this hop
    rels, scores = r_idx, r_sc  # relations reached at this hop besides the frontier's
    for hop in range(hops + 1):
        f_ent, f_sc, cut = _select_frontier(graph, f_ent, f_sc, expanded, max_frontier)
        truncated |= cut
        owner, new_rels, cut = capped_neighbors(graph, f_ent, max_neighbors, relation_mask)
        truncated |= cut
        rels = np.concatenate([rels, new_rels])
        scores = np.concatenate([scores, f_sc[owner]])
        if rels.size == 0:
            break
        rel_chunks.append((rels, scores, hop))  # duplicates are reduced once, at the end
        # the entities of this hop's relations are the next frontier
        f_ent = np.concatenate([graph.rel_subject[rels], graph.rel_object[rels]])
        f_sc = (np.concatenate([scores, scores]) * np.float32(decay)).astype(np.float32)
        ent_chunks.append((f_ent, f_sc, hop + 1))
        rels, scores = np.empty(0, np.int32), np.empty(0, np.float32)

    if not rel_chunks:
        return _empty_expansion()
    return _assemble(graph, rel_chunks, ent_chunks, max_relations, truncated)


def _check_caps(hops: int, max_neighbors: int | None, max_frontier: int | None, max_relations: int | None) -> None:
    """Reject a depth outside 0..3 and a cap below 1 (``None`` means no cap)."""
    if not 0 <= hops <= 3:
        raise ValueError("hops must be 0, 1, 2 or 3")
    for name, cap in (
        ("max_neighbors", max_neighbors),
        ("max_frontier", max_frontier),
        ("max_relations", max_relations),
    ):
        if cap is not None and cap < 1:
            raise ValueError(f"{name} must be positive or None")


def _frontier_cap(max_frontier: int | None, max_relations: int | None) -> int | None:
    """The frontier cap, tightened to ``max_relations``.

    A relation's score is its best frontier entity's score, so the best
    ``max_relations`` relations of a hop come from its best entities.
    """
    if max_frontier is None and max_relations is not None:
        return max_relations
    if max_frontier is not None and max_relations is not None:
        return min(max_frontier, max_relations)
    return max_frontier


def _select_frontier(
    graph: GraphData, f_ent: I32, f_sc: F32, expanded: F32, max_frontier: int | None
) -> tuple[I32, F32, bool]:
    """The entities to expand at this hop, and whether the frontier cap dropped any.

    Adds the synonyms of the candidates, keeps each entity's best score, skips entities
    already expanded as well or better, keeps the best ``max_frontier`` and records
    them in ``expanded`` (updated in place).
    """
    if graph.synonyms.indices.size and f_ent.size:  # a synonym stands where its entity stands
        owner, syn = gather_rows(graph.synonyms, f_ent)
        f_ent, f_sc = np.concatenate([f_ent, syn]), np.concatenate([f_sc, f_sc[owner]])
    f_ent, f_sc, _ = _reduce([(f_ent, f_sc, 0)], graph.n_entities)
    better = f_sc > expanded[f_ent]  # skip entities already expanded as well or better
    f_ent, f_sc = f_ent[better], f_sc[better]
    truncated = False
    if max_frontier is not None and f_ent.size > max_frontier:
        top = _top(f_ent, f_sc, np.zeros(f_ent.size, np.int16), max_frontier)
        f_ent, f_sc = f_ent[top], f_sc[top]
        truncated = True
    expanded[f_ent] = f_sc
    return f_ent, f_sc, truncated


def _assemble(
    graph: GraphData,
    rel_chunks: list[tuple[I32, F32, int]],
    ent_chunks: list[tuple[I32, F32, int]],
    max_relations: int | None,
    truncated: bool,
) -> Expansion:
    """Reduce the per-hop chunks and order relations and entities best first."""
    reached, rscores, rhops = _reduce(rel_chunks, graph.n_relations)
    order = _top(reached, rscores, rhops, max_relations)
    truncated |= max_relations is not None and reached.size > max_relations
    ents, escores, ehops = _reduce(ent_chunks, graph.n_entities)
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
