"""What one batch of an ingest writes, computed from its records and the rows already stored (no I/O).

:func:`classify` sorts passages into new, changed and unchanged; :func:`triplet_rows`
merges the triplets of the passages to write into entities and relations;
:func:`plan_writes` says which of those are new and which stored relations gain passage
links; the ``*_rows`` functions build the rows. :mod:`.batch` does the reading and the
writing around them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from langchain_graphrag_milvus.errors import InvalidIdError
from langchain_graphrag_milvus.ingest.records import PassageRecord, Problem, Triplet
from langchain_graphrag_milvus.ingest.report import IngestReport
from langchain_graphrag_milvus.milvus.schema import MAX_PASSAGES_PER_RELATION
from langchain_graphrag_milvus.milvus.writes import relation_row
from langchain_graphrag_milvus.text.names import entity_id, relation_id, relation_text

__all__ = [
    "PlannedRelation",
    "BatchPlan",
    "Classified",
    "classify",
    "triplet_rows",
    "plan_writes",
    "links_by_passage",
    "similar_pairs",
    "entity_rows",
    "relation_rows",
    "passage_rows",
]


@dataclass
class PlannedRelation:
    """A relation stated by the passages of a batch."""

    text: str
    subject_id: str
    object_id: str
    predicate: str
    passage_ids: list[str]


def triplet_rows(
    stated: Iterable[tuple[str, Sequence[Triplet]]],
    tenants: Mapping[str, str] | None = None,
) -> tuple[dict[str, str], dict[str, PlannedRelation]]:
    """Entities (id → name, first spelling wins) and relations (id → relation) of ``(passage id, triplets)``.

    ``tenants`` (passage id → tenant; a store with per-tenant rows): each passage's
    entities and relations are its tenant's rows (ids hash the tenant), so a tenant's
    spelling and links never reach another tenant's rows.
    """
    entities: dict[str, str] = {}
    relations: dict[str, PlannedRelation] = {}
    for passage_id, triplets in stated:
        tenant = tenants.get(passage_id) if tenants is not None else None
        for s, p, o in triplets:
            sid, oid = entity_id(s, tenant), entity_id(o, tenant)
            entities.setdefault(sid, s)
            entities.setdefault(oid, o)
            rid = relation_id(s, p, o, tenant)
            rel = relations.get(rid)
            if rel is None:
                relations[rid] = PlannedRelation(relation_text(s, p, o), sid, oid, p, [passage_id])
            elif passage_id not in rel.passage_ids:
                rel.passage_ids.append(passage_id)
    return entities, relations


def links_by_passage(relations: Mapping[str, PlannedRelation]) -> dict[str, set[str]]:
    """Passage id → the relation ids it states."""
    links: dict[str, set[str]] = {}
    for rid, rel in relations.items():
        for pid in rel.passage_ids:
            links.setdefault(pid, set()).add(rid)
    return links


@dataclass
class Classified:
    """A batch's passages: to write (new or changed), the changed ones, and the stored rows kept."""

    to_write: list[PassageRecord] = field(default_factory=list)
    changed: list[PassageRecord] = field(default_factory=list)
    old_passages: dict[str, dict[str, Any]] = field(default_factory=dict)


def classify(
    records: Sequence[PassageRecord],
    old_passages: dict[str, dict[str, Any]],
    partition_key_field: str | None,
    report: IngestReport,
    strict: bool,
) -> Classified:
    """Sort records by their stored rows (``doc_hash`` and partition key); count them in ``report``.

    With a partition key, a passage id stored under another key value (another tenant's
    passage) is refused: raised with ``strict``, else skipped and counted.
    """
    key = partition_key_field
    out = Classified(old_passages=old_passages)
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
            out.to_write.append(record)
        elif old.get("doc_hash") != record.content_hash:
            report.passages_updated += 1
            out.to_write.append(record)
            out.changed.append(record)
        else:
            report.passages_unchanged += 1
    report.passages_seen += len(records)
    return out


@dataclass
class BatchPlan:
    """What is new in Milvus for a batch, and stored relations that gain passage links.

    ``linked`` maps a relation id to its stored row (the fields of
    :data:`~langchain_graphrag_milvus.milvus.writes.RELATION_ROW_FIELDS`) and its new
    passage list; ``dropped`` counts links beyond the per-relation cap.
    """

    new_entities: dict[str, str]
    new_relations: dict[str, PlannedRelation]
    linked: dict[str, tuple[dict[str, Any], list[str]]]
    dropped: int = 0


def plan_writes(
    entities: Mapping[str, str],
    relations: Mapping[str, PlannedRelation],
    old_entities: Mapping[str, Any],
    old_relations: Mapping[str, dict[str, Any]],
) -> BatchPlan:
    """New entities and relations, and stored relations gaining links (given the stored rows)."""
    linked = {}
    dropped = 0
    for rid, rel in relations.items():
        old_rel = old_relations.get(rid)
        if old_rel is not None:
            stored = list(old_rel.get("passage_ids") or [])
            extra = [p for p in rel.passage_ids if p not in stored]
            if extra and len(stored) < MAX_PASSAGES_PER_RELATION:
                linked[rid] = (old_rel, stored + extra)  # capped (and counted) when written
            elif extra:
                dropped += len(extra)
    return BatchPlan(
        {eid: name for eid, name in entities.items() if eid not in old_entities},
        {rid: rel for rid, rel in relations.items() if rid not in old_relations},
        linked,
        dropped,
    )


def similar_pairs(
    ids: Sequence[str], matrix: np.ndarray[Any, Any], threshold: float, block: int = 1024
) -> Iterable[tuple[str, str, float]]:
    """Pairs of distinct ``ids`` whose vectors (rows of ``matrix``) have a cosine of at least ``threshold``.

    Computed in blocks of rows, not all pairs at once.
    """
    unit = matrix / np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
    for start in range(0, len(ids), block):
        sims = unit[start : start + block] @ unit.T
        for row, col in zip(*np.nonzero(sims >= threshold)):
            a, b = ids[start + int(row)], ids[int(col)]
            if a != b:
                yield a, b, float(sims[row, col])


def _cap_links(passage_ids: list[str], report: IngestReport) -> list[str]:
    if len(passage_ids) > MAX_PASSAGES_PER_RELATION:
        report.links_dropped += len(passage_ids) - MAX_PASSAGES_PER_RELATION
        return passage_ids[:MAX_PASSAGES_PER_RELATION]
    return passage_ids


def entity_rows(
    new_entities: Mapping[str, str], vectors: Mapping[str, list[float]], synonyms: Mapping[str, list[str]]
) -> list[dict[str, Any]]:
    """Rows of the new entities."""
    return [
        {"pk": eid, "text": name, "vector": vectors[name], "synonym_ids": synonyms.get(eid, [])}
        for eid, name in new_entities.items()
    ]


def relation_rows(plan: BatchPlan, vectors: Mapping[str, list[float]], report: IngestReport) -> list[dict[str, Any]]:
    """Rows of the new relations, then of the stored ones gaining links (links capped and counted)."""
    rows: list[dict[str, Any]] = [
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
    rows += [relation_row(stored, _cap_links(pids, report)) for stored, pids in plan.linked.values()]
    return rows


def passage_rows(to_write: Sequence[PassageRecord], vectors: Mapping[str, list[float]]) -> list[dict[str, Any]]:
    """Passage rows (a failed extraction marks the hash, so a re-run retries it)."""
    return [
        {
            "pk": r.id,
            "text": r.text,
            "vector": vectors[r.text],
            "doc_hash": r.content_hash + ("!retry" if r.extraction_failed else ""),
            "source_id": r.source_id,
            **r.metadata,
        }
        for r in to_write
    ]
