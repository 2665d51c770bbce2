"""Validate an upsert completely before anything is deleted or written.

``upsert_documents`` replaces whole sources. A source is identified by its source id
and, in a store with a partition key, by the tenant (the partition key value) of its
documents: ``(tenant, source)``. Before the first delete, every document is validated
(text, id, metadata, partition key, chunk-id form) and every explicit id is checked
against the passages already stored: an id that another tenant owns is refused. With
``strict`` the first problem raises; otherwise a source with any invalid document is
skipped as a whole (its stored version stays untouched, the report names the source
and the reason) and the other sources proceed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.documents import Document

from langchain_graphrag_milvus.errors import InvalidIdError, MalformedRecordError
from langchain_graphrag_milvus.ingest.context import IngestContext
from langchain_graphrag_milvus.ingest.identity import default_passage_id, resolve_source
from langchain_graphrag_milvus.ingest.load import record_from_document
from langchain_graphrag_milvus.ingest.records import PassageRecord, check_partition_key

__all__ = ["SkippedSource", "UpsertPlan", "plan_upsert", "tenant_of", "source_of"]

SourceKey = tuple[str | None, str]


@dataclass(frozen=True)
class SkippedSource:
    """A source an upsert left untouched because one of its new documents is invalid."""

    source: str
    tenant: str | None
    reason: str

    def __str__(self) -> str:
        where = f" of tenant {self.tenant!r:.60}" if self.tenant is not None else ""
        return f"source {self.source!r:.80}{where} skipped: {self.reason}"


@dataclass
class UpsertPlan:
    """The documents to ingest, their sources grouped by tenant, and what was skipped."""

    documents: list[Document] = field(default_factory=list)
    sources: dict[str | None, dict[str, None]] = field(default_factory=dict)
    passage_ids: set[str] = field(default_factory=set)
    skipped: list[SkippedSource] = field(default_factory=list)
    documents_skipped: int = 0


def tenant_of(partition_key_field: str | None, metadata: Any) -> str | None:
    """The partition key value of a document's metadata (None: no key, or not a string)."""
    key = partition_key_field
    if key is None or not isinstance(metadata, dict):
        return None
    value = metadata.get(key)
    return value if isinstance(value, str) else None


def source_of(doc: Document, source_field: str | None) -> str:
    """The source id of a document (the rules of :mod:`langchain_graphrag_milvus.ingest.identity`)."""
    meta = {k: v for k, v in (doc.metadata or {}).items() if k != "triplets"}
    given = str(doc.id) if doc.id is not None else None
    source = resolve_source(meta, given, source_field, f"document {doc.id!r:.80}")
    return source if source is not None else default_passage_id(doc.page_content, meta)


def _validate(
    ctx: IngestContext, docs: Sequence[Document], strict: bool
) -> tuple[list[tuple[Document, PassageRecord | None, SourceKey | None]], dict[SourceKey, str]]:
    """Each document with its record (None: invalid) and source key (None: unknown)."""
    source_field, key_field = ctx.source_field, ctx.partition_key_field
    checked: list[tuple[Document, PassageRecord | None, SourceKey | None]] = []
    bad: dict[SourceKey, str] = {}
    for doc in docs:
        try:
            record = record_from_document(doc, strict=strict, problems=[], source_field=source_field)
            check_partition_key(key_field, record)
        except MalformedRecordError as exc:
            if strict:
                raise
            try:
                key: SourceKey | None = (tenant_of(key_field, doc.metadata), source_of(doc, source_field))
            except MalformedRecordError:
                key = None  # no source can be named: the ingest skips and counts the document
            if key is not None:
                bad.setdefault(key, f"document {doc.id!r:.80} is invalid: {exc}")
            checked.append((doc, None, key))
            continue
        checked.append((doc, record, (tenant_of(key_field, record.metadata), record.source_id)))
    return checked, bad


def _foreign_ids(ctx: IngestContext, records: Sequence[PassageRecord]) -> dict[str, str]:
    """Ids of these records that another tenant's stored passage holds, with the message."""
    key = ctx.partition_key_field
    if key is None or not records or not ctx.parts.writes.exists():
        return {}
    stored = ctx.parts.reads.fetch("passages", [r.id for r in records], (key,))
    found = {}
    for record in records:
        old = stored.get(record.id)
        if old is not None and old.get(key) != record.metadata.get(key):
            found[record.id] = (
                f"passage {record.id!r:.80} belongs to {key} {old.get(key)!r:.60}, not "
                f"{record.metadata.get(key)!r:.60}; an upsert never moves or overwrites another partition's "
                "passage (delete it first)"
            )
    return found


def plan_upsert(ctx: IngestContext, docs: Sequence[Document], *, strict: bool) -> UpsertPlan:
    """Validate every document of an upsert before anything is deleted.

    Raises:
        MalformedRecordError: With ``strict``, the first invalid document (an
            ``InvalidIdError`` for an id another tenant owns); nothing was changed.
    """
    checked, bad = _validate(ctx, docs, strict)
    records = [r for _, r, _ in checked if r is not None]
    foreign = _foreign_ids(ctx, records)
    for doc, record, key in checked:
        if record is not None and key is not None and record.id in foreign:
            if strict:
                raise InvalidIdError(foreign[record.id])
            bad.setdefault(key, foreign[record.id])
    plan = UpsertPlan(skipped=[SkippedSource(src, tenant, why) for (tenant, src), why in bad.items()])
    for doc, record, key in checked:
        if key is not None and key in bad:
            plan.documents_skipped += 1
            continue
        plan.documents.append(doc)  # an invalid document of no nameable source: the ingest counts it
        if record is not None and key is not None:
            plan.passage_ids.add(record.id)
            plan.sources.setdefault(key[0], {})[key[1]] = None
    return plan
