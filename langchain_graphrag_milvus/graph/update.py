"""Growing and shrinking a :class:`~langchain_graphrag_milvus.graph.GraphIndex` in place of a rebuild.

Every function returns a *new* index and leaves its input untouched, so concurrent
readers of the old one never see a half-updated graph.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from langchain_graphrag_milvus.graph.csr import CSR, csr_extend, csr_from_pairs, gather_rows, without_empty_rows
from langchain_graphrag_milvus.graph.data import GraphData
from langchain_graphrag_milvus.graph.ids import KeyMap, StringIdMap

__all__ = ["RemovedItems", "add_relations", "remove_links", "remove_passages"]

I32 = npt.NDArray[np.int32]
G = TypeVar("G", bound=GraphData)


@dataclass(frozen=True)
class RemovedItems:
    """What an update removed from the graph (relations, entities and passages left empty)."""

    relation_keys: npt.NDArray[np.uint64]
    entity_keys: npt.NDArray[np.uint64]
    passage_ids: list[str]


def _first_occurrences(keys: npt.NDArray[np.uint64]) -> npt.NDArray[np.intp]:
    """Positions of the first occurrence of each distinct key, in input order."""
    if keys.size < 2:
        return np.arange(keys.size)
    order = np.argsort(keys, kind="stable")
    ordered = keys[order]
    first = np.concatenate([[True], ordered[1:] != ordered[:-1]])
    return np.sort(order[first])


def add_relations(
    graph: G,
    *,
    relation_keys: npt.ArrayLike,
    subject_keys: npt.ArrayLike,
    object_keys: npt.ArrayLike,
    passage_ids: Sequence[Sequence[str]],
    entity_keys: npt.ArrayLike | None = None,
    synonym_pairs: tuple[npt.ArrayLike, npt.ArrayLike] | None = None,
) -> G:
    """A new index with these relations added (``self`` is unchanged).

    Relations already present only gain the passage links they lacked; new entities,
    relations and passages are appended (existing indices never move). The cost is
    one pass of memory copies over the existing arrays, with no rebuild from Milvus.
    ``synonym_pairs`` (two aligned arrays of entity keys) link entities that name the
    same thing; pairs naming an unknown entity are ignored.
    """
    rkeys, skeys, okeys, pids = _deduped_batch(relation_keys, subject_keys, object_keys, passage_ids)
    existing = graph.relations.find(rkeys)
    is_new = existing < 0
    entities = _extended_entities(graph, skeys[is_new], okeys[is_new], entity_keys)

    # new relations
    new_rkeys = rkeys[is_new]
    relations = graph.relations.extended(new_rkeys)
    r0 = graph.n_relations
    new_ridx = np.arange(r0, r0 + new_rkeys.size, dtype=np.int32)
    subj = entities.lookup(skeys[is_new], "entity")
    obj = entities.lookup(okeys[is_new], "entity")
    rel_subject = np.concatenate([graph.rel_subject, subj])
    rel_object = np.concatenate([graph.rel_object, obj])
    ent_rel = _extended_ent_rel(graph.ent_rel, subj, obj, new_ridx, rel_subject, rel_object, len(entities))

    # passage links (new relations and new links of existing ones)
    ridx_all = np.where(is_new, 0, existing)
    ridx_all[is_new] = new_ridx
    passages, link_r, link_p = _new_passage_links(graph, ridx_all, pids)
    n_rel = len(relations)
    rel_pas = csr_extend(graph.rel_pas, link_r, link_p, n_rel)
    pas_rel = csr_extend(graph.pas_rel, link_p, link_r, len(passages))
    synonyms = _extended_synonyms(graph.synonyms, entities, synonym_pairs)
    return type(graph)(
        entities=entities,
        relations=relations,
        passages=passages,
        rel_subject=rel_subject,
        rel_object=rel_object,
        ent_rel=ent_rel,
        rel_pas=rel_pas,
        pas_rel=pas_rel,
        synonyms=synonyms,
    )


def _deduped_batch(
    relation_keys: npt.ArrayLike,
    subject_keys: npt.ArrayLike,
    object_keys: npt.ArrayLike,
    passage_ids: Sequence[Sequence[str]],
) -> tuple[npt.NDArray[np.uint64], npt.NDArray[np.uint64], npt.NDArray[np.uint64], list[Sequence[str]]]:
    """The batch as aligned key arrays, checked for length, each relation kept once (first)."""
    rkeys = np.asarray(relation_keys, dtype=np.uint64).ravel()
    skeys = np.asarray(subject_keys, dtype=np.uint64).ravel()
    okeys = np.asarray(object_keys, dtype=np.uint64).ravel()
    if not (rkeys.size == skeys.size == okeys.size == len(passage_ids)):
        raise ValueError("relation_keys, subject_keys, object_keys and passage_ids must align")
    first = _first_occurrences(rkeys)
    pids = [passage_ids[i] for i in first.tolist()]
    return rkeys[first], skeys[first], okeys[first], pids


def _extended_entities(
    graph: GraphData,
    new_subjects: npt.NDArray[np.uint64],
    new_objects: npt.NDArray[np.uint64],
    entity_keys: npt.ArrayLike | None,
) -> KeyMap:
    """The entity map with the unknown entities of the new relations (and ``entity_keys``) appended."""
    ent_candidates = np.concatenate([new_subjects, new_objects])
    if entity_keys is not None:
        ent_candidates = np.concatenate([ent_candidates, np.asarray(entity_keys, np.uint64).ravel()])
    ent_candidates = ent_candidates[_first_occurrences(ent_candidates)]
    new_ent = ent_candidates[graph.entities.find(ent_candidates) < 0]
    return graph.entities.extended(new_ent)


def _extended_ent_rel(
    ent_rel: CSR, subj: I32, obj: I32, new_ridx: I32, rel_subject: I32, rel_object: I32, n_entities: int
) -> CSR:
    """Entity→relation rows with the new relations added, touched rows re-sorted by specificity."""
    loop = subj == obj
    extended = csr_extend(
        ent_rel,
        np.concatenate([subj, obj[~loop]]),
        np.concatenate([new_ridx, new_ridx[~loop]]),
        n_entities,
    )
    touched = np.flatnonzero(np.bincount(np.concatenate([subj, obj]), minlength=n_entities)).astype(np.int32)
    return _order_rows(extended, touched, rel_subject, rel_object)


def _new_passage_links(graph: GraphData, ridx_all: I32, pids: list[Sequence[str]]) -> tuple[StringIdMap, I32, I32]:
    """The passage map with new passages appended, and the (relation, passage) links not yet present."""
    r0 = graph.n_relations
    flat_pids: list[str] = []
    flat_rel: list[int] = []
    for r, plist in zip(ridx_all.tolist(), pids):
        for pid in dict.fromkeys(plist):
            flat_pids.append(pid)
            flat_rel.append(r)
    passages = graph.passages.extended(flat_pids)
    link_r = np.asarray(flat_rel, dtype=np.int32)
    link_p = passages.find(flat_pids)
    if link_r.size:
        # drop links that already exist (re-ingest of the same data adds nothing)
        old = link_r < r0
        if old.any():
            known = _has_links(graph, link_r[old], link_p[old])
            keep = np.ones(link_r.size, bool)
            keep[np.flatnonzero(old)[known]] = False
            link_r, link_p = link_r[keep], link_p[keep]
        if link_r.size:
            pair = np.unique(link_r.astype(np.int64) * (len(passages) + 1) + link_p)
            link_r = (pair // (len(passages) + 1)).astype(np.int32)
            link_p = (pair % (len(passages) + 1)).astype(np.int32)
    return passages, link_r, link_p


def _extended_synonyms(
    synonyms: CSR, entities: KeyMap, synonym_pairs: tuple[npt.ArrayLike, npt.ArrayLike] | None
) -> CSR:
    """Synonym rows grown to the entity count, with the new (known, distinct) pairs in both directions."""
    synonyms = csr_extend(synonyms, [], [], len(entities))
    if synonym_pairs is None:
        return without_empty_rows(synonyms)
    a = entities.find(np.asarray(synonym_pairs[0], np.uint64).ravel())
    b = entities.find(np.asarray(synonym_pairs[1], np.uint64).ravel())
    ok = (a >= 0) & (b >= 0) & (a != b)
    rows, cols = np.concatenate([a[ok], b[ok]]), np.concatenate([b[ok], a[ok]])
    owner_rows = np.unique(rows)
    present = {(int(owner_rows[o]), int(c)) for o, c in zip(*gather_rows(synonyms, owner_rows))}
    fresh = sorted({(int(r), int(c)) for r, c in zip(rows.tolist(), cols.tolist())} - present)
    if fresh:
        synonyms = csr_extend(synonyms, [r for r, _ in fresh], [c for _, c in fresh], len(entities))
    return without_empty_rows(synonyms)


def remove_links(graph: G, *, relation_keys: npt.ArrayLike, passage_ids: Sequence[str]) -> tuple[G, RemovedItems]:
    """A new index without the given (relation, passage) links, and what disappeared.

    A relation left without passages is removed, then an entity left without relations
    and a passage left without relations. Unknown pairs are ignored. Indices are
    renumbered (the survivors keep their order); the cost is one pass over the arrays.
    """
    rkeys = np.asarray(relation_keys, dtype=np.uint64).ravel()
    if rkeys.size != len(passage_ids):
        raise ValueError("relation_keys and passage_ids must align")
    r = graph.relations.find(rkeys).astype(np.int64)
    p = graph.passages.find(list(passage_ids)).astype(np.int64)
    ok = (r >= 0) & (p >= 0)
    width = np.int64(graph.n_passages + 1)
    drop = np.unique(r[ok] * width + p[ok])
    rows = np.repeat(np.arange(graph.n_relations, dtype=np.int64), np.diff(graph.rel_pas.indptr))
    pair = rows * width + graph.rel_pas.indices
    keep = ~np.isin(pair, drop)
    return _compacted(graph, rows[keep], graph.rel_pas.indices[keep].astype(np.int64))


def remove_passages(graph: G, passage_ids: Sequence[str]) -> tuple[G, RemovedItems]:
    """A new index without these passages (and what only they supported)."""
    p = graph.passages.find(list(passage_ids))
    gone = np.zeros(graph.n_passages, bool)
    gone[p[p >= 0]] = True
    rows = np.repeat(np.arange(graph.n_relations, dtype=np.int64), np.diff(graph.rel_pas.indptr))
    cols = graph.rel_pas.indices.astype(np.int64)
    keep = ~gone[cols]
    return _compacted(graph, rows[keep], cols[keep])


def _compacted(graph: G, link_rel: npt.NDArray[np.int64], link_pas: npt.NDArray[np.int64]) -> tuple[G, RemovedItems]:
    """Rebuild from the surviving relation→passage links, dropping what became empty."""
    rel_alive = np.bincount(link_rel, minlength=graph.n_relations) > 0
    ent_alive = np.zeros(graph.n_entities, bool)
    ent_alive[graph.rel_subject[rel_alive]] = True
    ent_alive[graph.rel_object[rel_alive]] = True
    pas_alive = np.bincount(link_pas, minlength=graph.n_passages) > 0
    removed = RemovedItems(
        relation_keys=graph.relations.keys[~rel_alive].copy(),
        entity_keys=graph.entities.keys[~ent_alive].copy(),
        passage_ids=[graph.passages.ids[i] for i in np.flatnonzero(~pas_alive).tolist()],
    )
    new_rel = np.cumsum(rel_alive) - 1
    new_ent = np.cumsum(ent_alive) - 1
    new_pas = np.cumsum(pas_alive) - 1
    n_r, n_e, n_p = int(rel_alive.sum()), int(ent_alive.sum()), int(pas_alive.sum())
    # entity rows keep their (specificity) order: filter and renumber, no re-sort
    er_rows = np.repeat(np.arange(graph.n_entities, dtype=np.int64), np.diff(graph.ent_rel.indptr))
    er_keep = rel_alive[graph.ent_rel.indices]
    ent_rel = csr_from_pairs(new_ent[er_rows[er_keep]], new_rel[graph.ent_rel.indices[er_keep]], n_e)
    rel_pas = csr_from_pairs(new_rel[link_rel], new_pas[link_pas], n_r)
    pas_rel = csr_from_pairs(new_pas[link_pas], new_rel[link_rel], n_p)
    syn_rows = np.repeat(np.arange(graph.n_entities, dtype=np.int64), np.diff(graph.synonyms.indptr))
    syn_cols = graph.synonyms.indices.astype(np.int64)
    syn_keep = ent_alive[syn_rows] & ent_alive[syn_cols]
    synonyms = without_empty_rows(csr_from_pairs(new_ent[syn_rows[syn_keep]], new_ent[syn_cols[syn_keep]], n_e))
    new = type(graph)(
        entities=KeyMap.from_keys(graph.entities.keys[ent_alive]),
        relations=KeyMap.from_keys(graph.relations.keys[rel_alive]),
        passages=graph.passages.take(np.flatnonzero(pas_alive)),
        rel_subject=new_ent[graph.rel_subject[rel_alive]].astype(np.int32),
        rel_object=new_ent[graph.rel_object[rel_alive]].astype(np.int32),
        ent_rel=ent_rel,
        rel_pas=rel_pas,
        pas_rel=pas_rel,
        synonyms=synonyms,
    )
    return new, removed


def _has_links(graph: GraphData, rels: I32, pas: I32) -> npt.NDArray[np.bool_]:
    owner, cols = gather_rows(graph.rel_pas, rels)
    if cols.size == 0:
        return np.zeros(rels.size, bool)
    hit = cols == pas[owner]
    out = np.zeros(rels.size, bool)
    out[owner[hit]] = True
    return out


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
