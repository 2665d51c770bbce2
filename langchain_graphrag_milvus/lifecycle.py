"""Incremental updates: delete and upsert by source document, without rebuilding anything.

A *source document* is what the user ingested; it becomes one passage, or several when a
text splitter chunks it (chunk ids ``"{source}#0000"``, ``"{source}#0001"``, ...). Each
passage row records its ``source_id``: ``metadata["source_id"]``, else the document's id,
else ``metadata[source_field]`` (``"source"``, as LangChain loaders set it), else the
passage id (the rules are in :mod:`langchain_graphrag_milvus.identity`). So documents
from a loader (``id=None``, ``metadata["source"] = "corpus/daniel.txt"``) are replaced by
``upsert_documents`` and removed by ``delete_documents(["corpus/daniel.txt"])``.

* :func:`delete_passages` / :func:`delete_documents` remove passages; relations that only
  they supported are deleted, relations shared with other passages lose just the link,
  entities left without relations are deleted; the graph index follows in place.
* :func:`upsert_documents` makes the store hold exactly the given version of each source:
  chunks that disappeared are deleted, changed chunks are replaced (see ``ingest``), new
  ones added, unchanged ones left alone (and not re-embedded).

Every operation can be re-run after a crash: the graph is recomputed from what Milvus
holds, and each step is idempotent.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from langchain_core.documents import Document

from langchain_graphrag_milvus import expr
from langchain_graphrag_milvus.errors import GraphRAGError, MalformedRecordError
from langchain_graphrag_milvus.identity import (
    check_chunkable_source,
    check_id_list,
    chunk_id,
    default_passage_id,
    resolve_source,
)
from langchain_graphrag_milvus.ingest import IngestReport, ingest_documents, record_from_document
from langchain_graphrag_milvus.milvus_io import MAX_TOP_K
from langchain_graphrag_milvus.writes import apply_graph_change, delete_rows

if TYPE_CHECKING:
    from langchain_graphrag_milvus.store import MilvusGraphStore

__all__ = ["DeleteReport", "UpsertReport", "delete_passages", "delete_documents", "upsert_documents", "split"]

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
    """A delete of the passages a source no longer has, then an ingest of its current ones."""

    deleted: DeleteReport = field(default_factory=DeleteReport)
    ingested: IngestReport = field(default_factory=IngestReport)

    def __str__(self) -> str:
        return f"removed: {self.deleted}. ingested: {self.ingested}"


def delete_passages(store: MilvusGraphStore, passage_ids: Iterable[str]) -> DeleteReport:
    """Delete passages by id, with everything only they supported.

    Raises:
        TypeError: ``passage_ids`` is a single string instead of a list.
        InvalidIdError: An id is not one Milvus can hold (nothing is deleted then).
    """
    ids = check_id_list(passage_ids, "passage_ids")
    report = DeleteReport()
    if not ids or not store.exists():
        return report
    store.check_open()
    present = store.fetch("passages", ids)
    graph = store.graph
    known = [int(i) for i in graph.passages.find(ids) if i >= 0]
    if not present and not known:
        return report
    store.bump_generation()
    touched = sorted({int(graph.relations.keys[r]) for p in known for r in graph.pas_rel.row(p).tolist()})
    after, removed = graph.remove_passages(ids)
    # the passage rows go first: if anything below fails, a re-run finds the links in the
    # relations (or the rebuilt graph) and finishes the job
    delete_rows(store, "passages", list(present))
    apply_graph_change(store, after, removed, touched)
    store._after_change()
    report.passages_deleted = len(present)
    report.relations_deleted = len(removed.relation_keys)
    report.relations_unlinked = len(touched) - len(removed.relation_keys)
    report.entities_deleted = len(removed.entity_keys)
    return report


def passages_of_sources(store: MilvusGraphStore, source_ids: Sequence[str]) -> list[str]:
    """Ids of the passages whose ``source_id`` is one of ``source_ids``."""
    if not source_ids or not store.exists():
        return []
    store.check_open()
    found: list[str] = []
    pending = [list(source_ids[i : i + _SOURCE_CHUNK]) for i in range(0, len(source_ids), _SOURCE_CHUNK)]
    while pending:
        group = pending.pop()
        rows = store.client.query(
            store.collection_name("passages"),
            filter=expr.in_list("source_id", group),
            output_fields=["pk"],
            limit=MAX_TOP_K,
            timeout=store.timeout,
            consistency_level="Strong",
        )
        if len(rows) < MAX_TOP_K:
            found += [str(r["pk"]) for r in rows]
        elif len(group) > 1:  # the answer may be cut at Milvus' query window: ask in halves
            pending += [group[: len(group) // 2], group[len(group) // 2 :]]
        else:
            raise GraphRAGError(
                f"source {group[0]!r:.80} has {MAX_TOP_K} or more passages, more than one Milvus query returns; "
                "delete its passages by id (delete_passages) in smaller groups"
            )
    return found


def delete_documents(store: MilvusGraphStore, source_ids: Iterable[str]) -> DeleteReport:
    """Delete every passage of these source documents (and what only they supported).

    Raises:
        TypeError: ``source_ids`` is a single string instead of a list.
        InvalidIdError: A source id is not one Milvus can hold (nothing is deleted then).
    """
    return delete_passages(store, passages_of_sources(store, check_id_list(source_ids, "source_ids")))


def _metadata(doc: Document) -> dict[str, Any]:
    return {k: v for k, v in (doc.metadata or {}).items() if k != "triplets"}


def _source_of(doc: Document, source_field: str | None) -> str:
    """The source id of a document (the rules of :mod:`langchain_graphrag_milvus.identity`)."""
    given = str(doc.id) if doc.id is not None else None
    source = resolve_source(_metadata(doc), given, source_field, f"document {doc.id!r:.80}")
    return source if source is not None else default_passage_id(doc.page_content, _metadata(doc))


def _passage_id_of(doc: Document) -> str:
    return str(doc.id) if doc.id is not None else default_passage_id(doc.page_content, _metadata(doc))


def split(documents: Sequence[Document], splitter: Any, source_field: str | None = "source") -> list[Document]:
    """Chunk documents with a LangChain text splitter; chunk ids derive from the source id.

    Chunks of one source are numbered across all its documents in this call (the pages
    a PDF loader returns for one file get ``file.pdf#0000``, ``file.pdf#0001``...), so
    pass every document of a source together. The document's triplets (if any) cannot
    be split with its text, so documents that carry ``metadata["triplets"]`` are
    refused: chunk first, then extract.
    """
    out: list[Document] = []
    numbers: dict[str, int] = {}
    for doc in documents:
        if (doc.metadata or {}).get("triplets") is not None:
            raise MalformedRecordError(
                f"document {doc.id!r} carries triplets; they cannot be split with its text. "
                "Chunk documents without triplets and let the extractor read each chunk"
            )
        source = _source_of(doc, source_field)
        check_chunkable_source(source, f"document {doc.id!r:.80}")
        chunks = splitter.split_documents([Document(page_content=doc.page_content, metadata=dict(doc.metadata))])
        for chunk in chunks:
            meta = {**chunk.metadata, "source_id": source}
            number = numbers.get(source, 0)
            numbers[source] = number + 1
            out.append(Document(id=chunk_id(source, number), page_content=chunk.page_content, metadata=meta))
    return out


def upsert_documents(
    store: MilvusGraphStore,
    documents: Iterable[Document],
    *,
    splitter: Any = None,
    strict: bool = False,
    show_progress: bool | None = None,
    extractor: Any = None,
) -> UpsertReport:
    """Make the store hold exactly these versions of these source documents."""
    if isinstance(documents, (str, bytes, Document)):
        raise TypeError(f"documents must be a list of Documents, not {type(documents).__name__}")
    docs = list(documents)
    source_field = getattr(store, "source_field", "source")
    if splitter is not None:
        docs = split(docs, splitter, source_field)
    if strict:  # refuse invalid documents before anything is deleted, not after
        for doc in docs:
            record_from_document(doc, strict=True, problems=[], source_field=source_field)
    sources = list(dict.fromkeys(_source_of(d, source_field) for d in docs))
    current = {_passage_id_of(d) for d in docs}
    report = UpsertReport()
    stale = [p for p in passages_of_sources(store, sources) if p not in current]
    report.deleted = delete_passages(store, stale)
    report.ingested = ingest_documents(store, docs, strict=strict, show_progress=show_progress, extractor=extractor)
    return report
