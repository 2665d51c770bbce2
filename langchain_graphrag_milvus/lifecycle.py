"""Incremental updates: delete and upsert by source document, without rebuilding anything.

A *source document* is what the user ingested; it becomes one passage, or several when a
text splitter chunks it (chunk ids ``"{source}#0000"``, ``"{source}#0001"``, ...). Each
passage row records its ``source_id``.

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
from langchain_graphrag_milvus.errors import MalformedRecordError
from langchain_graphrag_milvus.ingest import IngestReport, ingest_documents
from langchain_graphrag_milvus.records import default_passage_id
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
    """Delete passages by id, with everything only they supported."""
    ids = list(dict.fromkeys(str(p) for p in passage_ids))
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
    for i in range(0, len(source_ids), _SOURCE_CHUNK):
        rows = store.client.query(
            store.collection_name("passages"),
            filter=expr.in_list("source_id", source_ids[i : i + _SOURCE_CHUNK]),
            output_fields=["pk"],
            limit=16_384,
            timeout=store.timeout,
            consistency_level="Strong",
        )
        found += [str(r["pk"]) for r in rows]
    return found


def delete_documents(store: MilvusGraphStore, source_ids: Iterable[str]) -> DeleteReport:
    """Delete every passage of these source documents (and what only they supported)."""
    return delete_passages(store, passages_of_sources(store, list(dict.fromkeys(map(str, source_ids)))))


def _source_of(doc: Document) -> str:
    value = (doc.metadata or {}).get("source_id")
    if isinstance(value, str) and value:
        return value
    if doc.id is not None:
        return str(doc.id)
    return default_passage_id(doc.page_content)


def split(documents: Sequence[Document], splitter: Any) -> list[Document]:
    """Chunk documents with a LangChain text splitter; chunk ids derive from the source id.

    The document's triplets (if any) cannot be split with its text, so documents that
    carry ``metadata["triplets"]`` are refused: chunk first, then extract.
    """
    out: list[Document] = []
    for doc in documents:
        if (doc.metadata or {}).get("triplets") is not None:
            raise MalformedRecordError(
                f"document {doc.id!r} carries triplets; they cannot be split with its text. "
                "Chunk documents without triplets and let the extractor read each chunk"
            )
        source = _source_of(doc)
        chunks = splitter.split_documents([Document(page_content=doc.page_content, metadata=dict(doc.metadata))])
        for i, chunk in enumerate(chunks):
            meta = {**chunk.metadata, "source_id": source}
            out.append(Document(id=f"{source}#{i:04d}", page_content=chunk.page_content, metadata=meta))
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
    docs = list(documents)
    if splitter is not None:
        docs = split(docs, splitter)
    sources = list(dict.fromkeys(_source_of(d) for d in docs))
    current = {str(d.id) if d.id is not None else default_passage_id(d.page_content) for d in docs}
    report = UpsertReport()
    stale = [p for p in passages_of_sources(store, sources) if p not in current]
    report.deleted = delete_passages(store, stale)
    report.ingested = ingest_documents(store, docs, strict=strict, show_progress=show_progress, extractor=extractor)
    return report
