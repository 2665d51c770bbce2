"""Incremental updates: delete and upsert by source document, without rebuilding anything.

A *source document* is what the user ingested; it becomes one passage, or several when a
text splitter chunks it (chunk ids ``"{source}#0000"``, ``"{source}#0001"``, ...). Each
passage row records its ``source_id``: ``metadata["source_id"]``, else the document's id,
else ``metadata[source_field]`` (``"source"``, as LangChain loaders set it), else the
passage id (the rules are in :mod:`langchain_graphrag_milvus.ingest.identity`). So documents
from a loader (``id=None``, ``metadata["source"] = "corpus/daniel.txt"``) are replaced by
``upsert_documents`` and removed by ``delete_documents(["corpus/daniel.txt"])``.

**Tenants.** In a store with ``partition_key_field`` a source is the pair (tenant, source
id): ``upsert_documents`` replaces only the passages of that source in the new documents'
tenant, and ``delete_documents`` needs ``tenant="..."`` (delete in one tenant) or
``all_tenants=True`` (every tenant's passages of these sources: the explicit choice of
an operator, never a default). ``delete_passages`` takes an optional ``tenant`` too: ids
of another tenant are then left alone.

* :func:`delete_passages` / :func:`delete_documents` remove passages; relations that only
  they supported are deleted, relations shared with other passages lose just the link,
  entities left without relations are deleted; the graph index follows in place.
* :func:`upsert_documents` makes the store hold exactly the given version of each source:
  chunks that disappeared are deleted, changed chunks are replaced (see ``ingest``), new
  ones added, unchanged ones left alone (and not re-embedded); a chunk whose text is
  unchanged but whose metadata changed keeps its stored vector and links (:mod:`.reuse`).

Every operation can be re-run after a failure at any write and then reaches the store a
clean run reaches (tested by injecting a failure at each Milvus write, in
``tests/integration/test_rerun.py``): each step is idempotent, and the rows that say what is
left to do are written last -- an ingest writes a passage row after its entities and
relations (the passage row is the commit marker), a delete removes the passage rows after
the relations and entities only they supported (so a re-run still finds a source's
passages by their ``source_id``), an upsert deletes stale passages before it ingests new
ones. A failed operation also drops the in-memory graph, which is rebuilt from Milvus on next
use. Writes run one at a time per collection prefix (:mod:`~langchain_graphrag_milvus.milvus.write_guard`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from langchain_core.documents import Document

from langchain_graphrag_milvus.errors import GraphRAGError, MalformedRecordError
from langchain_graphrag_milvus.ingest.context import IngestContext
from langchain_graphrag_milvus.ingest.identity import check_chunkable_source, check_id_list, chunk_id
from langchain_graphrag_milvus.ingest.load import ingest_documents
from langchain_graphrag_milvus.ingest.report import IngestReport
from langchain_graphrag_milvus.ingest.reuse import stale_vectors
from langchain_graphrag_milvus.ingest.upsert_plan import SkippedSource, plan_upsert, source_of
from langchain_graphrag_milvus.milvus import expr
from langchain_graphrag_milvus.milvus.read_seam import MAX_TOP_K
from langchain_graphrag_milvus.milvus.writes import apply_graph_change, delete_rows

__all__ = [
    "DeleteReport",
    "UpsertReport",
    "delete_passages",
    "delete_documents",
    "upsert_documents",
    "passages_of_sources",
    "split",
]

_SOURCE_CHUNK = 256


@dataclass
class DeleteReport:
    """What a delete removed."""

    passages_deleted: int = 0
    relations_deleted: int = 0
    relations_unlinked: int = 0
    entities_deleted: int = 0

    def __str__(self) -> str:
        return (
            f"{self.passages_deleted} passages deleted; {self.relations_deleted} relations deleted, "
            f"{self.relations_unlinked} kept with fewer passages; {self.entities_deleted} entities deleted"
        )


@dataclass
class UpsertReport:
    """A delete of the passages a source no longer has, then an ingest of its current ones.

    ``sources_skipped`` names each source left untouched (old version kept) because one
    of its new documents was invalid, with the reason; ``documents_skipped`` counts their
    documents.
    """

    deleted: DeleteReport = field(default_factory=DeleteReport)
    ingested: IngestReport = field(default_factory=IngestReport)
    sources_skipped: list[SkippedSource] = field(default_factory=list)
    documents_skipped: int = 0

    def __str__(self) -> str:
        skipped = f" {len(self.sources_skipped)} sources skipped (kept as they were)." if self.sources_skipped else ""
        return f"removed: {self.deleted}. ingested: {self.ingested}.{skipped}"


def _tenant_filter(ctx: IngestContext, tenant: str | None) -> str | None:
    """``key == "tenant"`` (escaped), or None without a tenant; a tenant needs a partition key."""
    if tenant is None:
        return None
    if ctx.partition_key_field is None:
        raise ValueError("tenant= needs a store with partition_key_field; this store has no tenants")
    if not isinstance(tenant, str) or not tenant:
        raise TypeError(f"tenant must be a non-empty string, got {type(tenant).__name__} {tenant!r:.60}")
    return expr.eq_filter({ctx.partition_key_field: tenant})


def delete_passages(ctx: IngestContext, passage_ids: Iterable[str], *, tenant: str | None = None) -> DeleteReport:
    """Delete passages by id, with everything only they supported.

    Passage ids are unique in the whole store (generated ids already include the tenant),
    so without ``tenant`` each given id is deleted whoever owns it. With ``tenant`` only
    ids stored in that tenant are deleted; another tenant's ids are left alone.

    Raises:
        TypeError: ``passage_ids`` is a single string instead of a list.
        InvalidIdError: An id is not one Milvus can hold (nothing is deleted then).
        ValueError: ``tenant`` given on a store without ``partition_key_field``.
    """
    ids = check_id_list(passage_ids, "passage_ids")
    scope = _tenant_filter(ctx, tenant)
    report = DeleteReport()
    parts = ctx.parts
    if not ids or not parts.writes.exists():
        return report
    parts.writes.check_open()
    present = parts.reads.fetch("passages", ids, filter_expr=scope)
    if scope is not None:
        ids = [i for i in ids if i in present]
    graph = parts.graph.current()
    known = [int(i) for i in graph.passages.find(ids) if i >= 0]
    if not present and not known:
        return report
    parts.graph.bump_generation()
    touched = sorted({k for p in known for k in graph.relations.keys_at(graph.pas_rel.row(p)).tolist()})
    after, removed = graph.remove_passages(ids)
    # the passage rows go last: they are how a re-run finds what to delete (a source's passages
    # are found by their rows' source_id). If anything fails before, the rows are still there
    # and the re-run recomputes what is left of the links from the relations
    apply_graph_change(parts, after, removed, touched)
    delete_rows(parts, "passages", list(present))
    parts.graph.persist()
    report.passages_deleted = len(present)
    report.relations_deleted = len(removed.relation_keys)
    report.relations_unlinked = len(touched) - len(removed.relation_keys)
    report.entities_deleted = len(removed.entity_keys)
    return report


def passages_of_sources(
    ctx: IngestContext, source_ids: Sequence[str], tenant: str | None = None, *, window: int = MAX_TOP_K
) -> list[str]:
    """Ids of the passages whose ``source_id`` is one of ``source_ids`` (in ``tenant`` if given).

    Never a truncated answer: a query that fills Milvus' query window (``window`` rows,
    :data:`~langchain_graphrag_milvus.milvus.reads.MAX_TOP_K`) may have been cut, so its
    sources are asked again in halves; a single source with that many passages raises.

    Raises:
        GraphRAGError: One source has ``window`` passages or more.
    """
    scope = _tenant_filter(ctx, tenant)
    writes = ctx.parts.writes
    if not source_ids or not writes.exists():
        return []
    writes.check_open()
    window = min(window, MAX_TOP_K)  # the most rows one query returns
    found: list[str] = []
    pending = [list(source_ids[i : i + _SOURCE_CHUNK]) for i in range(0, len(source_ids), _SOURCE_CHUNK)]
    while pending:
        group = pending.pop()
        where = expr.and_all(expr.in_list("source_id", group), scope) or ""
        rows = ctx.parts.reads.query("passages", where, ("pk",), limit=window)
        if len(rows) < window:
            found += [str(r["pk"]) for r in rows]
        elif len(group) > 1:  # the answer may be cut at Milvus' query window: ask in halves
            pending += [group[: len(group) // 2], group[len(group) // 2 :]]
        else:
            raise GraphRAGError(
                f"source {group[0]!r:.80} has {window} or more passages, more than one Milvus query returns; "
                "delete its passages by id (delete_passages) in smaller groups"
            )
    return found


def delete_documents(
    ctx: IngestContext, source_ids: Iterable[str], *, tenant: str | None = None, all_tenants: bool = False
) -> DeleteReport:
    """Delete every passage of these source documents (and what only they supported).

    In a store with ``partition_key_field`` a source belongs to a tenant: pass
    ``tenant="..."`` to delete that tenant's passages of these sources, or
    ``all_tenants=True`` to delete every tenant's. Without a partition key neither is needed.

    Raises:
        TypeError: ``source_ids`` is a single string instead of a list.
        InvalidIdError: A source id is not one Milvus can hold (nothing is deleted then).
        ValueError: A partitioned store got neither ``tenant`` nor ``all_tenants=True``
            (or both), or a store without a partition key got ``tenant``.
    """
    ids = check_id_list(source_ids, "source_ids")
    if ctx.partition_key_field is not None and (tenant is None) == (not all_tenants):
        raise ValueError(
            f"this store keeps sources per {ctx.partition_key_field!r}: pass tenant=<value> to delete one "
            "tenant's documents, or all_tenants=True to delete these sources in every tenant (not both)"
        )
    if all_tenants and tenant is not None:
        raise ValueError("pass tenant= or all_tenants=True, not both")
    return delete_passages(ctx, passages_of_sources(ctx, ids, tenant), tenant=tenant)


def split(
    documents: Sequence[Document],
    splitter: Any,
    source_field: str | None = "source",
    partition_key_field: str | None = None,
) -> list[Document]:
    """Chunk documents with a LangChain text splitter; chunk ids derive from the source id.

    Chunks of one source are numbered across all its documents in this call (the pages
    a PDF loader returns for one file get ``file.pdf#0000``, ``file.pdf#0001``...), so
    pass every document of a source together. With ``partition_key_field`` the chunks
    of each (tenant, source) are numbered apart and their ids carry a hash of the tenant
    (see :func:`~langchain_graphrag_milvus.ingest.identity.chunk_id`). The document's triplets
    (if any) cannot be split with its text, so documents that carry
    ``metadata["triplets"]`` are refused: chunk first, then extract.
    """
    out: list[Document] = []
    numbers: dict[tuple[str | None, str], int] = {}
    for doc in documents:
        if (doc.metadata or {}).get("triplets") is not None:
            raise MalformedRecordError(
                f"document {doc.id!r} carries triplets; they cannot be split with its text. "
                "Chunk documents without triplets and let the extractor read each chunk"
            )
        source = source_of(doc, source_field)
        check_chunkable_source(source, f"document {doc.id!r:.80}", scoped=partition_key_field is not None)
        raw_tenant = (doc.metadata or {}).get(partition_key_field) if partition_key_field is not None else None
        scope = raw_tenant if isinstance(raw_tenant, str) else None
        chunks = splitter.split_documents([Document(page_content=doc.page_content, metadata=dict(doc.metadata))])
        for chunk in chunks:
            meta = {**chunk.metadata, "source_id": source}
            number = numbers.get((scope, source), 0)
            numbers[(scope, source)] = number + 1
            out.append(Document(id=chunk_id(source, number, scope), page_content=chunk.page_content, metadata=meta))
    return out


def upsert_documents(
    ctx: IngestContext,
    documents: Iterable[Document],
    *,
    splitter: Any = None,
    strict: bool = False,
    show_progress: bool | None = None,
    extractor: Any = None,
) -> UpsertReport:
    """Make the store hold exactly these versions of these source documents.

    Every document is validated before the first delete (see :mod:`.upsert_plan`): with
    ``strict`` an invalid one raises and nothing changes; otherwise a source with any
    invalid document is kept as it was and named in ``report.sources_skipped``, and the
    other sources are replaced. With a partition key a source is (tenant, source id):
    only the new documents' tenant's passages of it are replaced.
    """
    if isinstance(documents, (str, bytes, Document)):
        raise TypeError(f"documents must be a list of Documents, not {type(documents).__name__}")
    docs = list(documents)
    if splitter is not None:
        docs = split(docs, splitter, ctx.source_field, ctx.partition_key_field)
    plan = plan_upsert(ctx, docs, strict=strict)
    report = UpsertReport(sources_skipped=plan.skipped, documents_skipped=plan.documents_skipped)
    stale = [
        p
        for tenant, sources in plan.sources.items()
        for p in passages_of_sources(ctx, list(sources), tenant if ctx.partition_key_field else None)
        if p not in plan.passage_ids
    ]
    pool = stale_vectors(ctx, stale, (d.page_content for d in plan.documents))
    report.deleted = delete_passages(ctx, stale)
    report.ingested = ingest_documents(
        replace(ctx, known_vectors=pool) if pool else ctx,
        plan.documents,
        strict=strict,
        show_progress=show_progress,
        extractor=extractor,
    )
    return report
