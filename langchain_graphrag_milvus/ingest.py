"""Ingestion: records → normalised entities and relations → embeddings → Milvus → graph.

Per chunk of passages:

1. validate records (malformed triplets skipped and counted, or raised with ``strict``);
2. merge entity names by their normalised key; build relations with deterministic ids;
3. ask Milvus which passages, entities and relations exist already;
4. embed each new unique text once, in batches;
5. write passages, then entities, then relations (relations last: an interrupted ingest
   leaves no relation pointing at a missing row, and re-running it completes the rest);
6. update the in-memory graph index incrementally (no rebuild).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from langchain_core.documents import Document
from tqdm.auto import tqdm

from langchain_graphrag_milvus.errors import MalformedRecordError, MalformedTripletError
from langchain_graphrag_milvus.milvus_schema import MAX_PASSAGES_PER_RELATION, Kind
from langchain_graphrag_milvus.normalize import entity_id, id_to_key, relation_id, relation_text
from langchain_graphrag_milvus.records import (
    PassageRecord,
    Problem,
    check_passage_id,
    check_passage_text,
    default_passage_id,
    iter_jsonl,
    parse_triplets,
    record_from_mapping,
    validate_metadata,
)

if TYPE_CHECKING:
    from langchain_graphrag_milvus.store import MilvusGraphStore

__all__ = ["IngestReport", "ingest_mappings", "ingest_documents", "ingest_jsonl", "record_from_document"]

CHUNK_PASSAGES = 256
MAX_PROBLEMS_KEPT = 1000


@dataclass
class IngestReport:
    """What an ingest did. ``str(report)`` gives a one-paragraph summary.

    Counts are exact; ``problems`` keeps the first 1,000 skipped items with their reasons.
    """

    passages_seen: int = 0
    passages_added: int = 0
    passages_updated: int = 0
    passages_unchanged: int = 0
    records_skipped: int = 0
    triplets_seen: int = 0
    triplets_skipped: int = 0
    entities_added: int = 0
    relations_added: int = 0
    relations_linked: int = 0
    links_dropped: int = 0
    texts_embedded: int = 0
    seconds: float = 0.0
    problems: list[Problem] = field(default_factory=list)

    def _problem(self, problem: Problem) -> None:
        if len(self.problems) < MAX_PROBLEMS_KEPT:
            self.problems.append(problem)

    def __str__(self) -> str:
        text = (
            f"{self.passages_seen} passages seen: {self.passages_added} added, "
            f"{self.passages_updated} updated, {self.passages_unchanged} unchanged, "
            f"{self.records_skipped} skipped; {self.triplets_seen} triplets seen, "
            f"{self.triplets_skipped} malformed skipped; {self.entities_added} entities and "
            f"{self.relations_added} relations added, {self.relations_linked} relations gained "
            f"passages; {self.texts_embedded} texts embedded in {self.seconds:.1f}s"
        )
        if self.links_dropped:
            text += f"; {self.links_dropped} passage links beyond {MAX_PASSAGES_PER_RELATION} per relation dropped"
        return text


@dataclass
class _Relation:
    text: str
    subject_id: str
    object_id: str
    predicate: str
    passage_ids: list[str]


def _progress(total: int | None, show: bool | None, desc: str) -> Any:
    if show is None:
        show = sys.stderr.isatty() and not os.environ.get("CI")
    return tqdm(total=total, disable=not show, desc=desc, unit="passage", leave=False)


def _collect(
    store: MilvusGraphStore,
    records: Iterable[PassageRecord],
    report: IngestReport,
    total: int | None,
    show_progress: bool | None,
    strict: bool,
) -> IngestReport:
    started = time.perf_counter()
    if strict:  # validate everything before writing anything
        records = list(records)
    seen_ids: set[str] = set()
    chunk: list[PassageRecord] = []
    with _progress(total, show_progress, "Ingesting") as bar:
        for record in records:
            if record.id in seen_ids:
                report.records_skipped += 1
                report._problem(Problem(record.id, "duplicate passage id in this ingest; kept the first"))
                continue
            seen_ids.add(record.id)
            chunk.append(record)
            if len(chunk) >= CHUNK_PASSAGES:
                _ingest_chunk(store, chunk, report)
                bar.update(len(chunk))
                chunk = []
        if chunk:
            _ingest_chunk(store, chunk, report)
            bar.update(len(chunk))
    report.seconds = time.perf_counter() - started
    return report


ParseFn = Callable[[Any, list[Problem]], PassageRecord]


def _ingest(
    store: MilvusGraphStore,
    items: Iterable[tuple[str, Any]],
    parse: ParseFn,
    *,
    total: int | None,
    strict: bool,
    show_progress: bool | None,
    report: IngestReport | None = None,
) -> IngestReport:
    """Parse ``(where, item)`` pairs into records (skipping or raising on bad ones) and ingest."""
    report = report or IngestReport()
    triplet_problems: list[Problem] = []

    def records() -> Iterator[PassageRecord]:
        for where, item in items:
            try:
                record = parse(item, triplet_problems)
                _check_partition_key(store, [record])
            except MalformedTripletError:
                raise
            except MalformedRecordError as exc:
                if strict:
                    raise
                report.records_skipped += 1
                report._problem(Problem(where, str(exc)))
                continue
            finally:
                for problem in triplet_problems:
                    report.triplets_skipped += 1
                    report.triplets_seen += 1
                    report._problem(problem)
                triplet_problems.clear()
            yield record

    return _collect(store, records(), report, total, show_progress, strict)


def ingest_mappings(
    store: MilvusGraphStore,
    records: Iterable[Mapping[str, Any]],
    *,
    strict: bool = False,
    show_progress: bool | None = None,
) -> IngestReport:
    """Ingest seed- or MuSiQue-style record dicts into ``store``."""
    total = len(records) if isinstance(records, Sequence) else None

    def parse(item: tuple[int, Mapping[str, Any]], problems: list[Problem]) -> PassageRecord:
        return record_from_mapping(item[1], position=item[0], strict=strict, problems=problems)

    items = ((f"record #{i}", (i, r)) for i, r in enumerate(records))
    return _ingest(store, items, parse, total=total, strict=strict, show_progress=show_progress)


def ingest_jsonl(
    store: MilvusGraphStore, path: str | os.PathLike[str], *, strict: bool = False, show_progress: bool | None = None
) -> IngestReport:
    """Ingest a JSONL file of records; bad JSON lines are skipped and counted (or raise)."""
    report = IngestReport()
    line_problems: list[Problem] = []
    with open(path, encoding="utf-8") as handle:
        total = sum(1 for line in handle if line.strip())

    def parse(item: tuple[int, Any], problems: list[Problem]) -> PassageRecord:
        return record_from_mapping(item[1], position=item[0], strict=strict, problems=problems)

    lines = iter_jsonl(path, None if strict else line_problems)
    items = ((f"line {n}", (n, raw)) for n, raw in lines)
    _ingest(store, items, parse, total=total, strict=strict, show_progress=show_progress, report=report)
    report.records_skipped += len(line_problems)
    for problem in line_problems:
        report._problem(problem)
    return report


def record_from_document(doc: Document, *, strict: bool, problems: list[Problem]) -> PassageRecord:
    """Validate a ``Document`` whose ``metadata["triplets"]`` holds its triplets."""
    if not isinstance(doc, Document):
        raise MalformedRecordError(f"expected a Document, got {type(doc).__name__}")
    text = check_passage_text(doc.page_content, f"document {doc.id!r}")
    passage_id = check_passage_id(doc.id, "document") if doc.id is not None else default_passage_id(text)
    metadata = dict(doc.metadata or {})
    raw_triplets = metadata.pop("triplets", None)
    return PassageRecord(
        id=passage_id,
        text=text,
        metadata=validate_metadata(metadata, passage_id),
        triplets=parse_triplets(raw_triplets, passage_id, strict=strict, problems=problems),
    )


def ingest_documents(
    store: MilvusGraphStore, documents: Iterable[Document], *, strict: bool = False, show_progress: bool | None = None
) -> IngestReport:
    """Ingest LangChain Documents carrying ``metadata["triplets"]``."""
    total = len(documents) if isinstance(documents, Sequence) else None

    def parse(doc: Document, problems: list[Problem]) -> PassageRecord:
        return record_from_document(doc, strict=strict, problems=problems)

    items = ((f"document #{i}", d) for i, d in enumerate(documents))
    return _ingest(store, items, parse, total=total, strict=strict, show_progress=show_progress)


# ---------------------------------------------------------------------- one chunk
def _plan_chunk(records: Sequence[PassageRecord], report: IngestReport) -> tuple[dict[str, str], dict[str, _Relation]]:
    entities: dict[str, str] = {}
    relations: dict[str, _Relation] = {}
    for record in records:
        report.passages_seen += 1
        report.triplets_seen += len(record.triplets)
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


def _embed(store: MilvusGraphStore, texts: Sequence[str], report: IngestReport) -> dict[str, list[float]]:
    unique = list(dict.fromkeys(texts))
    vectors: dict[str, list[float]] = {}
    for i in range(0, len(unique), store.batch_size):
        batch = unique[i : i + store.batch_size]
        embedded = store.embedding.embed_documents(batch)
        if len(embedded) != len(batch):
            raise RuntimeError(f"embedding model returned {len(embedded)} vectors for {len(batch)} texts")
        vectors.update(zip(batch, (list(map(float, v)) for v in embedded)))
    report.texts_embedded += len(unique)
    return vectors


def _write(
    store: MilvusGraphStore, kind: Kind, rows: list[dict[str, Any]], existing: set[str] | frozenset[str]
) -> None:
    """Insert new rows; replace existing ones (upsert, or delete + insert where upsert is unsafe).

    Milvus 2.3 servers route upserted rows of a partition-key collection to the wrong
    partition (a filter on the key then misses them; measured with the ``milvus`` 2.3.5
    wheel), so there rows are replaced by a delete and an insert.
    """
    name = store.collection_name(kind)
    new = [r for r in rows if r["pk"] not in existing]
    old = [r for r in rows if r["pk"] in existing]
    for i in range(0, len(new), store.batch_size):
        store.client.insert(name, new[i : i + store.batch_size], timeout=store.timeout)
    replace_by_delete = kind == "passages" and store.partition_key_field is not None
    for i in range(0, len(old), store.batch_size):
        batch = old[i : i + store.batch_size]
        if replace_by_delete:
            store.client.delete(name, ids=[r["pk"] for r in batch], timeout=store.timeout)
            store.client.insert(name, batch, timeout=store.timeout)
        else:
            store.client.upsert(name, batch, timeout=store.timeout)


def _cap_links(passage_ids: list[str], report: IngestReport) -> list[str]:
    if len(passage_ids) > MAX_PASSAGES_PER_RELATION:
        report.links_dropped += len(passage_ids) - MAX_PASSAGES_PER_RELATION
        return passage_ids[:MAX_PASSAGES_PER_RELATION]
    return passage_ids


def _check_partition_key(store: MilvusGraphStore, records: Sequence[PassageRecord]) -> None:
    key = store.partition_key_field
    if key is None:
        return
    for record in records:
        value = record.metadata.get(key)
        if not isinstance(value, str) or not value:
            raise MalformedRecordError(
                f"record {record.id!r}: the partition key field {key!r} must be a non-empty string in its metadata"
            )


def _ingest_chunk(store: MilvusGraphStore, records: Sequence[PassageRecord], report: IngestReport) -> None:
    entities, relations = _plan_chunk(records, report)
    have_collections = store.exists()
    if have_collections:
        store.check_open()
        old_passages = store.fetch("passages", [r.id for r in records], ("doc_hash",))
        old_entities = store.fetch("entities", entities)
        old_relations = store.fetch("relations", relations, ("passage_ids",))
    else:
        old_passages, old_entities, old_relations = {}, {}, {}

    passages_to_write = []
    for record in records:
        old = old_passages.get(record.id)
        if old is None:
            report.passages_added += 1
            passages_to_write.append(record)
        elif old.get("doc_hash") != record.content_hash:
            report.passages_updated += 1
            passages_to_write.append(record)
        else:
            report.passages_unchanged += 1
    new_entities = {eid: name for eid, name in entities.items() if eid not in old_entities}
    new_relations = {rid: rel for rid, rel in relations.items() if rid not in old_relations}
    linked = {}
    for rid, rel in relations.items():
        old_rel = old_relations.get(rid)
        if old_rel is not None:
            stored = list(old_rel.get("passage_ids") or [])
            extra = [p for p in rel.passage_ids if p not in stored]
            if extra and len(stored) < MAX_PASSAGES_PER_RELATION:
                linked[rid] = _cap_links(stored + extra, report)
            elif extra:
                report.links_dropped += len(extra)

    texts = [r.text for r in passages_to_write] + list(new_entities.values()) + [r.text for r in new_relations.values()]
    vectors = _embed(store, texts, report) if texts else {}
    if vectors:
        dim = len(next(iter(vectors.values())))
        if not have_collections or dim != store.check_open():
            store.ensure_collections(dim)  # creates, or raises EmbeddingDimensionError
    elif not have_collections:
        return

    _write(
        store,
        "passages",
        [
            {"pk": r.id, "text": r.text, "vector": vectors[r.text], "doc_hash": r.content_hash, **r.metadata}
            for r in passages_to_write
        ],
        set(old_passages),
    )
    _write(
        store,
        "entities",
        [{"pk": eid, "text": name, "vector": vectors[name]} for eid, name in new_entities.items()],
        frozenset(),
    )
    new_rows: list[dict[str, Any]] = [
        {
            "pk": rid,
            "text": rel.text,
            "vector": vectors[rel.text],
            "subject_id": rel.subject_id,
            "object_id": rel.object_id,
            "predicate": rel.predicate,
            "passage_ids": _cap_links(rel.passage_ids, report),
        }
        for rid, rel in new_relations.items()
    ]
    if linked:
        full = store.fetch("relations", linked, ("text", "vector", "subject_id", "object_id", "predicate"))
        new_rows += [
            {
                **{k: full[rid][k] for k in ("pk", "text", "vector", "subject_id", "object_id", "predicate")},
                "passage_ids": pids,
            }
            for rid, pids in linked.items()
        ]
    _write(store, "relations", new_rows, set(linked))
    report.entities_added += len(new_entities)
    report.relations_added += len(new_relations)
    report.relations_linked += len(linked)

    delta_rows = new_rows
    store._after_ingest(
        {
            "relation_keys": [id_to_key(r["pk"]) for r in delta_rows],
            "subject_keys": [id_to_key(r["subject_id"]) for r in delta_rows],
            "object_keys": [id_to_key(r["object_id"]) for r in delta_rows],
            "passage_ids": [r["passage_ids"] for r in delta_rows],
        },
        new_entities,
    )
