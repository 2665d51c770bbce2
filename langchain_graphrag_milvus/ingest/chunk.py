"""One chunk of an ingest: extract, plan, unlink, embed, write, update the graph."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from langchain_core.runnables import Runnable

from langchain_graphrag_milvus.errors import InvalidIdError, MalformedRecordError
from langchain_graphrag_milvus.ingest.records import PassageRecord, Problem, parse_triplets
from langchain_graphrag_milvus.ingest.triplets import extract_texts
from langchain_graphrag_milvus.milvus.schema import MAX_PASSAGES_PER_RELATION, PARTITION_KEY_BYTES
from langchain_graphrag_milvus.milvus.vectors import check_vectors
from langchain_graphrag_milvus.milvus.writes import RELATION_ROW_FIELDS, apply_graph_change, write_rows
from langchain_graphrag_milvus.text.names import entity_id, id_to_key, key_to_id, relation_id, relation_text

if TYPE_CHECKING:
    from langchain_graphrag_milvus.ingest.load import IngestReport
    from langchain_graphrag_milvus.store import MilvusGraphStore

__all__ = ["ingest_chunk", "check_partition_key"]


@dataclass
class _Relation:
    text: str
    subject_id: str
    object_id: str
    predicate: str
    passage_ids: list[str]


def _plan_chunk(records: Sequence[PassageRecord]) -> tuple[dict[str, str], dict[str, _Relation]]:
    entities: dict[str, str] = {}
    relations: dict[str, _Relation] = {}
    for record in records:
        for s, p, o in record.triplets:
            sid, oid = entity_id(s), entity_id(o)
            entities.setdefault(sid, s)
            entities.setdefault(oid, o)
            rid = relation_id(s, p, o)
            rel = relations.get(rid)
            if rel is None:
                relations[rid] = _Relation(relation_text(s, p, o), sid, oid, p, [record.id])
            elif record.id not in rel.passage_ids:
                rel.passage_ids.append(record.id)
    return entities, relations


def _embed(
    store: MilvusGraphStore, texts: Sequence[str], report: IngestReport, dim: int | None
) -> dict[str, list[float]]:
    """Embed each unique text once; every batch is checked (:mod:`.vectors`) before use."""
    unique = list(dict.fromkeys(texts))
    vectors: dict[str, list[float]] = {}
    cosine = str(store.index_params.get("metric_type", "COSINE")).upper() == "COSINE"
    for i in range(0, len(unique), store.batch_size):
        batch = unique[i : i + store.batch_size]
        checked = check_vectors(batch, store.embedding.embed_documents(batch), dim=dim, cosine=cosine)
        dim = len(checked[0])  # later batches must agree with the first
        vectors.update(zip(batch, checked))
    report.texts_embedded += len(unique)
    return vectors


def _cap_links(passage_ids: list[str], report: IngestReport) -> list[str]:
    if len(passage_ids) > MAX_PASSAGES_PER_RELATION:
        report.links_dropped += len(passage_ids) - MAX_PASSAGES_PER_RELATION
        return passage_ids[:MAX_PASSAGES_PER_RELATION]
    return passage_ids


def check_partition_key(store: MilvusGraphStore, record: PassageRecord) -> None:
    """Raise if the store partitions passages by a key this record does not carry."""
    key = store.partition_key_field
    if key is None:
        return
    value = record.metadata.get(key)
    if not isinstance(value, str) or not value or len(value.encode("utf-8")) > PARTITION_KEY_BYTES:
        raise MalformedRecordError(
            f"record {record.id!r}: the partition key field {key!r} must be a non-empty string of at most "
            f"{PARTITION_KEY_BYTES} bytes in its metadata"
        )


def _extract(
    store: MilvusGraphStore,
    records: Sequence[PassageRecord],
    report: IngestReport,
    extractor: Runnable[str, Any],
    strict: bool,
) -> None:
    """Fill the triplets of records that came without, from the cache or the extractor."""
    results = extract_texts(
        [r.text for r in records],
        extractor,
        store.extraction_cache,
        max_concurrency=store.extraction_concurrency,
        titles=[t if isinstance(t := r.metadata.get("title"), str) else None for r in records],
    )
    for record, (raw, usage, cached, error) in zip(records, results):
        if error is not None:
            if strict:
                raise error
            record.extraction_failed = True
            report.extraction_failures += 1
            report._problem(Problem(record.id, f"triplet extraction failed: {type(error).__name__}: {error}"))
            continue
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
    store: MilvusGraphStore, new_entities: dict[str, str], vectors: dict[str, list[float]]
) -> dict[str, list[str]]:
    """For each new entity, the entities (stored or new) whose names embed as close as the threshold."""
    if not new_entities:
        return {}
    threshold = float(store.synonym_threshold or 0.0)
    ids = list(new_entities)
    matrix = np.array([vectors[new_entities[e]] for e in ids], dtype=np.float32)
    found: dict[str, dict[str, float]] = {e: {} for e in ids}
    for start in range(0, len(ids), 256):  # the entities already stored: batched Milvus searches
        hits = store.search("entities", matrix[start : start + 256].tolist(), store.synonym_top_k + 1)
        for eid, per in zip(ids[start : start + 256], hits):
            for hit in per:
                if hit.id != eid and hit.score >= threshold:
                    found[eid][hit.id] = hit.score
    unit = matrix / np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
    for start in range(0, len(ids), 1024):  # among the new ones (blocks, not all pairs at once)
        sims = unit[start : start + 1024] @ unit.T
        for row, col in zip(*np.nonzero(sims >= threshold)):
            a, b = ids[start + int(row)], ids[int(col)]
            if a != b:
                found[a][b] = float(sims[row, col])
    return {
        e: [o for o, _ in sorted(others.items(), key=lambda kv: -kv[1])[: store.synonym_top_k]]
        for e, others in found.items()
        if others
    }


def _unlink_changed(
    store: MilvusGraphStore, changed: Sequence[PassageRecord], new_links: dict[str, set[str]], report: IngestReport
) -> None:
    """Remove the links of changed passages to relations their new triplets no longer state."""
    graph = store.graph
    rel_keys: list[int] = []
    pas_ids: list[str] = []
    for record in changed:
        (pidx,) = graph.passages.find([record.id]).tolist()
        if pidx < 0:
            continue
        keep = new_links.get(record.id, set())
        for r in graph.pas_rel.row(pidx).tolist():
            key = int(graph.relations.keys[r])
            if key_to_id(key) not in keep:
                rel_keys.append(key)
                pas_ids.append(record.id)
    if rel_keys:
        after, removed = graph.remove_links(relation_keys=rel_keys, passage_ids=pas_ids)
        apply_graph_change(store, after, removed, rel_keys)
        report.relations_removed += len(removed.relation_keys)
        report.entities_removed += len(removed.entity_keys)


def _classify(
    store: MilvusGraphStore,
    records: Sequence[PassageRecord],
    report: IngestReport,
    have_collections: bool,
    strict: bool,
) -> tuple[list[PassageRecord], list[PassageRecord], dict[str, dict[str, Any]]]:
    """Records to write (new or changed) and the changed ones, with the stored passage rows.

    With a partition key, a passage id stored under another key value (another tenant's
    passage) is refused: raised with ``strict``, else skipped and counted.
    """
    key = store.partition_key_field
    fields = ("doc_hash", key) if key else ("doc_hash",)
    old_passages = store.fetch("passages", [r.id for r in records], fields) if have_collections else {}
    if have_collections:
        store.check_open()
    to_write, changed = [], []
    for record in records:
        old = old_passages.get(record.id)
        if old is not None and key and old.get(key) != record.metadata.get(key):
            message = (
                f"passage {record.id!r:.80} belongs to {key} {old.get(key)!r:.60}, not "
                f"{record.metadata.get(key)!r:.60}; an ingest never moves or overwrites another partition's "
                "passage (delete it first)"
            )
            if strict:
                raise InvalidIdError(message)
            report.records_skipped += 1
            report._problem(Problem(record.id, message))
            old_passages.pop(record.id)
            continue
        if old is None:
            report.passages_added += 1
            to_write.append(record)
        elif old.get("doc_hash") != record.content_hash:
            report.passages_updated += 1
            to_write.append(record)
            changed.append(record)
        else:
            report.passages_unchanged += 1
    report.passages_seen += len(records)
    return to_write, changed, old_passages


@dataclass
class _Plan:
    """What is new in Milvus for a chunk, and relations that gain passage links."""

    new_entities: dict[str, str]
    new_relations: dict[str, _Relation]
    linked: dict[str, list[str]]
    dropped: int = 0


def _plan_writes(
    store: MilvusGraphStore,
    entities: dict[str, str],
    relations: dict[str, _Relation],
    have_collections: bool,
) -> _Plan:
    old_entities = store.fetch("entities", entities) if have_collections else {}
    old_relations = store.fetch("relations", relations, ("passage_ids",)) if have_collections else {}
    linked = {}
    dropped = 0
    for rid, rel in relations.items():
        old_rel = old_relations.get(rid)
        if old_rel is not None:
            stored = list(old_rel.get("passage_ids") or [])
            extra = [p for p in rel.passage_ids if p not in stored]
            if extra and len(stored) < MAX_PASSAGES_PER_RELATION:
                linked[rid] = stored + extra  # capped (and counted) when written
            elif extra:
                dropped += len(extra)
    return _Plan(
        {eid: name for eid, name in entities.items() if eid not in old_entities},
        {rid: rel for rid, rel in relations.items() if rid not in old_relations},
        linked,
        dropped,
    )


def _bump_once(store: MilvusGraphStore, state: dict[str, bool]) -> None:
    if not state.get("bumped"):
        store.bump_generation()
        state["bumped"] = True


def ingest_chunk(
    store: MilvusGraphStore,
    records: Sequence[PassageRecord],
    report: IngestReport,
    state: dict[str, bool],
    *,
    extractor: Runnable[str, Any] | None = None,
    strict: bool = False,
) -> None:
    """One chunk: plan, embed and check, unlink what changed passages no longer state, write.

    Every vector is embedded and checked (length, finiteness) before anything is created
    or written, so a bad model answer leaves Milvus untouched. Write order: entities,
    relations, then passages. A passage row is the commit marker of its ingest: if
    anything fails before it is written, re-running the same ingest finds the passage
    missing (or with its old hash) and completes what is missing; existing rows are
    never written twice.
    """
    have_collections = store.exists()
    to_write, changed, old_passages = _classify(store, records, report, have_collections, strict)
    if not to_write:
        report.triplets_seen += sum(len(r.triplets) for r in records)
        return
    if extractor is not None:
        missing = [r for r in to_write if r.needs_extraction]
        if missing:
            _extract(store, missing, report, extractor, strict)
    report.triplets_seen += sum(len(r.triplets) for r in records)
    entities, relations = _plan_chunk(to_write)
    plan = _plan_writes(store, entities, relations, have_collections)
    texts = [r.text for r in to_write] + list(plan.new_entities.values())
    texts += [r.text for r in plan.new_relations.values()]
    vectors = _embed(store, texts, report, store.check_open() if have_collections else None)
    if not have_collections:
        store.ensure_collections(len(next(iter(vectors.values()))))  # created only from checked vectors
    _bump_once(store, state)
    if changed:
        new_links: dict[str, set[str]] = {}
        for rid, rel in relations.items():
            for pid in rel.passage_ids:
                new_links.setdefault(pid, set()).add(rid)
        _unlink_changed(store, changed, new_links, report)
        # the unlink may have deleted entities or relations the new triplets state again
        plan = _plan_writes(store, entities, relations, True)
        again = [n for n in plan.new_entities.values() if n not in vectors]
        again += [r.text for r in plan.new_relations.values() if r.text not in vectors]
        if again:
            vectors.update(_embed(store, again, report, store.check_open()))
    _write_chunk(store, to_write, plan, vectors, old_passages, report)


def _write_chunk(
    store: MilvusGraphStore,
    to_write: Sequence[PassageRecord],
    plan: _Plan,
    vectors: dict[str, list[float]],
    old_passages: dict[str, dict[str, Any]],
    report: IngestReport,
) -> None:
    """Write entities, relations, then passages; fold the change into the graph."""
    new_entities, linked = plan.new_entities, plan.linked
    synonyms = _synonyms(store, new_entities, vectors) if store.synonym_threshold is not None else {}
    write_rows(
        store,
        "entities",
        [
            {"pk": eid, "text": name, "vector": vectors[name], "synonym_ids": synonyms.get(eid, [])}
            for eid, name in new_entities.items()
        ],
        (),
    )
    relation_rows: list[dict[str, Any]] = [
        {
            "pk": rid,
            "text": rel.text,
            "vector": vectors[rel.text],
            "subject_id": rel.subject_id,
            "object_id": rel.object_id,
            "predicate": rel.predicate,
            "passage_ids": _cap_links(rel.passage_ids, report),
        }
        for rid, rel in plan.new_relations.items()
    ]
    if linked:
        full = store.fetch("relations", linked, RELATION_ROW_FIELDS)
        relation_rows += [
            {**{k: full[rid][k] for k in ("pk", *RELATION_ROW_FIELDS)}, "passage_ids": _cap_links(pids, report)}
            for rid, pids in linked.items()
            if rid in full
        ]
    write_rows(store, "relations", relation_rows, linked)
    write_rows(
        store,
        "passages",
        [
            {
                "pk": r.id,
                "text": r.text,
                "vector": vectors[r.text],
                "doc_hash": r.content_hash + ("!retry" if r.extraction_failed else ""),
                "source_id": r.source_id,
                **r.metadata,
            }
            for r in to_write
        ],
        old_passages,
    )
    report.entities_added += len(new_entities)
    report.relations_added += len(plan.new_relations)
    report.relations_linked += len(linked)
    report.links_dropped += plan.dropped
    store._after_ingest(
        {
            "relation_keys": [id_to_key(r["pk"]) for r in relation_rows],
            "subject_keys": [id_to_key(r["subject_id"]) for r in relation_rows],
            "object_keys": [id_to_key(r["object_id"]) for r in relation_rows],
            "passage_ids": [r["passage_ids"] for r in relation_rows],
            "synonym_pairs": (
                [id_to_key(a) for a, others in synonyms.items() for _ in others],
                [id_to_key(b) for others in synonyms.values() for b in others],
            ),
        },
        new_entities,
    )
