"""One batch of an ingest: read what is stored, extract, embed, unlink, write, update the graph.

A batch is the passage records written together (``load.BATCH_PASSAGES`` at a time); a chunk is a
piece of a file's text (:mod:`.loaders`).

What to write is decided by the pure functions of :mod:`.plan`; this module does the I/O
around them, through the store's parts (:class:`~langchain_graphrag_milvus.ingest.context.IngestContext`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from langchain_core.runnables import Runnable

from langchain_graphrag_milvus.errors import ConcurrentWriteError
from langchain_graphrag_milvus.ingest.bulk import BulkLoad
from langchain_graphrag_milvus.ingest.context import IngestContext
from langchain_graphrag_milvus.ingest.extract import extract_records
from langchain_graphrag_milvus.ingest.plan import (
    BatchPlan,
    PlannedRelation,
    classify,
    entity_rows,
    links_by_passage,
    passage_rows,
    plan_writes,
    relation_rows,
    similar_pairs,
    triplet_rows,
)
from langchain_graphrag_milvus.ingest.records import PassageRecord, Problem, parse_triplets
from langchain_graphrag_milvus.ingest.report import IngestReport
from langchain_graphrag_milvus.ingest.reuse import StoredWork, known, reuse_stored, unembedded
from langchain_graphrag_milvus.ingest.skip_vectors import drop_bad_vectors
from langchain_graphrag_milvus.ingest.supplement import supplement_records
from langchain_graphrag_milvus.milvus.graph_cache import GraphDelta
from langchain_graphrag_milvus.milvus.read_seam import MAX_TOP_K
from langchain_graphrag_milvus.milvus.vectors import check_vectors, partition_vectors
from langchain_graphrag_milvus.milvus.writes import RELATION_ROW_FIELDS, apply_graph_change, write_rows
from langchain_graphrag_milvus.text.names import entity_id

__all__ = ["ingest_batch", "embed_texts"]


def embed_texts(
    ctx: IngestContext, texts: Sequence[str], report: Any, dim: int | None, bad: dict[str, str] | None = None
) -> dict[str, list[float]]:
    """Embed each unique text once; every batch is checked (:mod:`~langchain_graphrag_milvus.milvus.vectors`).

    Length-bucketed: the unique texts go to the model longest first, so each call (and each
    forward pass of a local model, which pads to its longest text) holds texts of like length;
    a passage's call does not carry entity names padded to the passage's length. The vectors
    come back keyed by text, so the order is the caller's.

    ``report.texts_embedded`` counts the texts. With ``bad`` (a dict), texts whose vector
    is unusable (NaN, infinite, zero...) are put there with the reason instead of raising.
    """
    unique = sorted(dict.fromkeys(texts), key=len, reverse=True)  # stable: equal lengths keep their order
    vectors: dict[str, list[float]] = {}
    size = ctx.batch_size
    for i in range(0, len(unique), size):
        batch = unique[i : i + size]
        answer = ctx.embedding.embed_documents(batch)
        if bad is None:
            checked = dict(zip(batch, check_vectors(batch, answer, dim=dim, cosine=ctx.cosine)))
        else:
            checked, unusable = partition_vectors(batch, answer, dim=dim, cosine=ctx.cosine)
            bad.update(unusable)
        if checked:
            dim = len(next(iter(checked.values())))  # later batches must agree with the first
        vectors.update(checked)
    report.texts_embedded += len(unique)
    return vectors


def _extract(
    ctx: IngestContext,
    records: Sequence[PassageRecord],
    report: IngestReport,
    extractor: Runnable[str, Any],
    strict: bool,
) -> None:
    """Fill the triplets of records that came without, from the cache or the extractor."""
    for record, raw, usage, cached in extract_records(
        records, extractor, ctx, report, strict=strict, what="triplet extraction"
    ):
        if cached:
            report.extraction_cached += 1
        else:
            report.extraction_calls += 1
            report.input_tokens += usage.get("input_tokens", 0)
            report.output_tokens += usage.get("output_tokens", 0)
        problems: list[Problem] = []
        try:
            record.triplets = parse_triplets(raw, record.id, strict=strict, problems=problems)
        finally:
            report.triplets_skipped += len(problems)
            report.triplets_seen += len(problems)
            for problem in problems:
                report._problem(problem)


def _synonyms(
    ctx: IngestContext,
    new_entities: dict[str, str],
    vectors: dict[str, list[float]],
    tenant_of: dict[str, str] | None = None,
) -> dict[str, list[str]]:
    """For each new entity, the entities (stored or new) whose names embed as close as the threshold.

    ``tenant_of`` (new entity id → tenant; per-tenant rows): only the same tenant's
    entities count, the searches going deeper while other tenants' entities fill them.
    """
    if not new_entities:
        return {}
    threshold = float(ctx.synonym_threshold or 0.0)
    top_k = ctx.synonym_top_k
    ids = list(new_entities)
    matrix = np.array([vectors[new_entities[e]] for e in ids], dtype=np.float32)
    found: dict[str, dict[str, float]] = {e: {} for e in ids}
    for start in range(0, len(ids), 256):  # the entities already stored: batched Milvus searches
        batch = ids[start : start + 256]
        for eid, per in zip(batch, _stored_hits(ctx, matrix[start : start + 256], batch, top_k + 1, tenant_of)):
            for hit in per:
                if hit.id != eid and hit.score >= threshold:
                    found[eid][hit.id] = hit.score
    for a, b, score in similar_pairs(ids, matrix, threshold):  # among the new ones
        if tenant_of is None or tenant_of.get(a) == tenant_of.get(b):
            found[a][b] = score
    return {
        e: [o for o, _ in sorted(others.items(), key=lambda kv: -kv[1])[:top_k]]
        for e, others in found.items()
        if others
    }


def _stored_hits(
    ctx: IngestContext, matrix: np.ndarray, ids: list[str], want: int, tenant_of: dict[str, str] | None
) -> list[list[Any]]:
    """The ``want`` nearest stored entities of each vector (of the same tenant with ``tenant_of``)."""
    reads, limit = ctx.parts.reads, want
    while True:
        hits = reads.search("entities", matrix.tolist(), limit)
        if tenant_of is None:
            return hits
        owners = _entity_tenants(ctx, {h.id for per in hits for h in per})
        kept = [[h for h in per if owners.get(h.id) == tenant_of.get(e)][:want] for e, per in zip(ids, hits)]
        short = any(len(k) < want and len(per) == limit for k, per in zip(kept, hits))
        if not short or limit >= MAX_TOP_K:
            return kept
        limit = min(limit * 4, MAX_TOP_K)


def _entity_tenants(ctx: IngestContext, entity_ids: set[str]) -> dict[str, str]:
    """The tenant of each stored entity (with per-tenant rows: that of any passage of its relations)."""
    graph = ctx.parts.graph.current()
    ids = sorted(entity_ids)
    one: dict[str, str] = {}
    for eid, idx in zip(ids, graph.entities.find_ids(ids).tolist()):
        rels = graph.ent_rel.row(idx).tolist() if idx >= 0 else []
        passages = graph.rel_pas.row(rels[0]).tolist() if rels else []
        if passages:
            one[eid] = graph.passages.ids[passages[0]]
    key = str(ctx.partition_key_field)
    rows = ctx.parts.reads.fetch("passages", sorted(set(one.values())), (key,)) if one else {}
    return {eid: str(rows[pid][key]) for eid, pid in one.items() if pid in rows}


def _unlink_changed(
    ctx: IngestContext, changed: Sequence[PassageRecord], new_links: dict[str, set[str]], report: IngestReport
) -> None:
    """Remove the links of changed passages to relations their new triplets no longer state."""
    graph = ctx.parts.graph.current()
    rel_keys: list[int] = []
    pas_ids: list[str] = []
    for record in changed:
        (pidx,) = graph.passages.find([record.id]).tolist()
        if pidx < 0:
            continue
        keep = new_links.get(record.id, set())
        rows = graph.pas_rel.row(pidx)
        for key, rid in zip(graph.relations.keys_at(rows).tolist(), graph.relations.ids_at(rows)):
            if rid not in keep:
                rel_keys.append(key)
                pas_ids.append(record.id)
    if rel_keys:
        after, removed = graph.remove_links(relation_keys=rel_keys, passage_ids=pas_ids)
        apply_graph_change(ctx.parts, after, removed, rel_keys)
        report.relations_removed += len(removed.relation_keys)
        report.entities_removed += len(removed.entity_keys)


def _plan(
    ctx: IngestContext,
    entities: dict[str, str],
    relations: dict[str, PlannedRelation],
    have_collections: bool,
    bulk: BulkLoad | None = None,
) -> BatchPlan:
    """Read the stored entities and relations of the batch (each once) and plan the writes.

    In a first load (``bulk``) only the relations this load wrote already are read.
    """
    reads = ctx.parts.reads
    if bulk is not None:
        old_entities: dict[str, Any] = bulk.stored_entities(entities)
        again = bulk.written_relations(relations)
        old_relations = reads.fetch("relations", again, RELATION_ROW_FIELDS) if again else {}
    else:
        old_entities = reads.fetch("entities", entities) if have_collections else {}
        old_relations = reads.fetch("relations", relations, RELATION_ROW_FIELDS) if have_collections else {}
    return plan_writes(entities, relations, old_entities, old_relations)


def _check_still_empty(ctx: IngestContext) -> None:
    """This batch planned on collections that did not exist: nobody may have written into them since.

    From here on this write holds the store's write lease (:mod:`~langchain_graphrag_milvus.milvus.write_guard`);
    if another writer created and filled the collections meanwhile, the plan (made without
    reading rows) would overwrite its links: refuse before writing anything.

    Raises:
        ConcurrentWriteError: Another writer wrote into the new collections first.
    """
    writes = ctx.parts.writes
    writes.keep_lease()
    if any(ctx.parts.reads.counts().values()):
        raise ConcurrentWriteError(
            f"another writer filled the new collections under {writes.location} "
            "while this ingest was preparing its first batch; nothing of it was written: re-run it"
        )


def _hold_lease(ctx: IngestContext, state: dict[str, bool], bulk: BulkLoad | None) -> BulkLoad | None:
    """Hold the write lease before reading what this batch plans from; the bulk load if it still holds.

    The write guard takes the lease when an operation starts, but only if the collections
    exist then (the lease is a property of the relation collection). If another writer
    created them since, the lease is taken here, before any read: the graph is refreshed
    from what that writer left, and a first load that decided "empty" without the lease
    counts again and reads like any other ingest if rows exist now.
    """
    if not ctx.parts.writes.keep_lease():  # renewed (or raises if another writer took it over), or none to hold
        return bulk
    if ctx.parts.graph.loaded is not None:
        ctx.parts.graph.refresh()
    if bulk is not None and not state.get("bumped") and any(ctx.parts.reads.counts().values()):
        bulk.active = False
        return None
    return bulk


def _bump_once(ctx: IngestContext, state: dict[str, bool], bulk: BulkLoad | None) -> None:
    if not state.get("bumped"):
        if bulk is not None:  # the collections exist now and are empty
            ctx.parts.graph.start_empty()
        ctx.parts.graph.bump_generation()
        state["bumped"] = True


def ingest_batch(
    ctx: IngestContext,
    records: Sequence[PassageRecord],
    report: IngestReport,
    state: dict[str, bool],
    *,
    extractor: Runnable[str, Any] | None = None,
    strict: bool = False,
    bulk: BulkLoad | None = None,
) -> None:
    """One batch: plan, embed and check, unlink what changed passages no longer state, write.

    ``bulk``: the load started on empty collections (:mod:`.bulk`); what exists is what
    it wrote, known in memory (no passage or entity reads, relation rows read only when
    stated again).

    Every vector is embedded and checked (length, finiteness) before anything is created
    or written, so a bad model answer leaves Milvus untouched. Write order: entities,
    relations, then passages. A passage row is the commit marker of its ingest: if
    anything fails before it is written, re-running the same ingest finds the passage
    missing (or with its old hash) and completes what is missing; existing rows are
    never written twice.
    """
    writes = ctx.parts.writes
    bulk = bulk if bulk is not None and bulk.active else None
    have_collections = writes.exists()
    if have_collections:
        bulk = _hold_lease(ctx, state, bulk)
    key = ctx.partition_key_field
    fields = ("doc_hash", key) if key else ("doc_hash",)
    reads_passages = have_collections and bulk is None
    old = ctx.parts.reads.fetch("passages", [r.id for r in records], fields) if reads_passages else {}
    if have_collections:
        writes.check_open()
    sorted_ = classify(records, old, key, report, strict)
    stored = reuse_stored(ctx, sorted_, extractor) if reads_passages else StoredWork()
    report.passages_metadata_updated += len(stored.kept)
    if not sorted_.to_write and not stored.kept:
        report.triplets_seen += sum(len(r.triplets) for r in records)
        return
    to_write = sorted_.to_write
    if extractor is not None:
        missing = [r for r in to_write if r.needs_extraction]
        if missing:
            _extract(ctx, missing, report, extractor, strict)
    report.triplets_seen += sum(len(r.triplets) for r in records)
    if ctx.supplement is not None and to_write:
        supplement_records(to_write, ctx.supplement, ctx, report, strict=strict)
    entities, relations = triplet_rows(((r.id, r.triplets) for r in to_write), ctx.row_tenants(to_write))
    plan = _plan(ctx, entities, relations, have_collections, bulk)
    texts = [r.text for r in to_write] + list(plan.new_entities.values())
    texts += [r.text for r in plan.new_relations.values()]
    pool = {**ctx.known_vectors, **stored.vectors}
    bad: dict[str, str] = {}
    vectors = embed_texts(ctx, unembedded(texts, pool), report, writes.check_open() if have_collections else None, bad)
    vectors.update(known([*texts, *(r.text for r in stored.kept)], pool))  # re-stamped: their stored vector
    if bad:  # only the documents that need a bad vector are left out (strict: raises, nothing written)
        to_write = drop_bad_vectors(sorted_, bad, report, strict)
        if not to_write and not stored.kept:
            return
        entities, relations = triplet_rows(((r.id, r.triplets) for r in to_write), ctx.row_tenants(to_write))
        plan = _plan(ctx, entities, relations, have_collections, bulk)
    if not have_collections:
        writes.ensure_collections(len(next(iter(vectors.values()))))  # created only from checked vectors
        _check_still_empty(ctx)
    _bump_once(ctx, state, bulk)
    if sorted_.changed:
        _unlink_changed(ctx, sorted_.changed, links_by_passage(relations), report)
        # the unlink may have deleted entities or relations the new triplets state again
        plan = _plan(ctx, entities, relations, True)
        again = [n for n in plan.new_entities.values() if n not in vectors]
        again += [r.text for r in plan.new_relations.values() if r.text not in vectors]
        vectors.update(known(again, pool))
        again = unembedded(again, pool)
        if again:
            vectors.update(embed_texts(ctx, again, report, writes.check_open()))
    _write_batch(ctx, [*to_write, *stored.kept], plan, vectors, sorted_.old_passages, report)
    if bulk is not None:
        bulk.record(plan.new_entities, plan.new_relations)


def _write_batch(
    ctx: IngestContext,
    to_write: Sequence[PassageRecord],
    plan: BatchPlan,
    vectors: dict[str, list[float]],
    old_passages: dict[str, dict[str, Any]],
    report: IngestReport,
) -> None:
    """Write entities, relations, then passages; fold the change into the graph."""
    parts = ctx.parts
    synonyms = (
        _synonyms(ctx, plan.new_entities, vectors, _entity_owners(ctx, to_write))
        if ctx.synonym_threshold is not None
        else {}
    )
    write_rows(parts, "entities", entity_rows(plan.new_entities, vectors, synonyms), ())
    relations = relation_rows(plan, vectors, report)
    write_rows(parts, "relations", relations, plan.linked)
    write_rows(parts, "passages", passage_rows(to_write, vectors), old_passages)
    report.entities_added += len(plan.new_entities)
    report.relations_added += len(plan.new_relations)
    report.relations_linked += len(plan.linked)
    report.links_dropped += plan.dropped
    parts.graph.apply(GraphDelta.from_relation_rows(relations, new_entities=plan.new_entities, synonyms=synonyms))


def _entity_owners(ctx: IngestContext, records: Sequence[PassageRecord]) -> dict[str, str] | None:
    """Entity id → tenant of the entities these records state (None: rows are not per tenant)."""
    tenants = ctx.row_tenants(records)
    if tenants is None:
        return None
    return {
        entity_id(name, t): t for r in records if (t := tenants.get(r.id)) for s, _, o in r.triplets for name in (s, o)
    }
