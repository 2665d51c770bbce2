"""The store's write operations: ingest, upsert, delete by source or id, merge entities.

:class:`WriteOperations` is the write side of :class:`~langchain_graphrag_milvus.store.MilvusGraphStore`
(which forwards its methods here). Each call takes a fresh
:class:`~langchain_graphrag_milvus.ingest.context.IngestContext` from the store, so a
changed setting (``store.extractor = ...``) applies to the next call, and runs under the
store's write guard (:mod:`~langchain_graphrag_milvus.milvus.write_guard`): one writer per
collection prefix at a time, threads and processes alike.
"""

from __future__ import annotations

import asyncio
import os
import warnings
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from langchain_graphrag_milvus.errors import NoRelationsWarning
from langchain_graphrag_milvus.ingest.context import IngestContext
from langchain_graphrag_milvus.ingest.report import IngestReport

if TYPE_CHECKING:
    from langchain_core.documents import Document
    from langchain_core.runnables import Runnable

    from langchain_graphrag_milvus.ingest.merge import MergeReport
    from langchain_graphrag_milvus.ingest.updates import DeleteReport, UpsertReport

__all__ = ["WriteOperations"]


#: What an ingest that leaves the store without relations says (report, summary and warning).
NO_RELATIONS = "0 relations: the graph retriever will rank by similarity only"


def _check_relations(context: IngestContext, report: IngestReport) -> None:
    """Say so (report, :class:`~.errors.NoRelationsWarning`) when passages were written and the store has no relation.

    No silent fallback: without an extractor and without triplets, the store holds
    passages and no graph, and the graph retriever would quietly be a similarity search.
    """
    if not (report.passages_added or report.passages_updated):
        return
    if context.parts.graph.current().n_relations:
        return
    store = context.parts.graph.label
    message = (
        f"{NO_RELATIONS} ({store} holds passages but no relations: no extractor and no triplets). "
        "Pass extractor= (extractor='offline' for the spaCy extractor, or an LLM extractor) to the store "
        "or to this call, or give each passage its triplets; on the command line: ingest --extractor offline."
    )
    if message not in report.warnings:
        report.warnings.append(message)
    warnings.warn(message, NoRelationsWarning, stacklevel=5)


class WriteOperations:
    """Ingestion, updates and merges of one store.

    Args:
        context: Makes the store's parts and current write settings.
        check: Refuses an embedding model other than the collections' before anything is written
            (:meth:`~langchain_graphrag_milvus.milvus.fingerprint.EmbeddingCheck.before_write`); None: none.
    """

    def __init__(self, context: Callable[[], IngestContext], check: Callable[[], None] | None = None) -> None:
        self._context = context
        self._check = check

    def _run(self, operation: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """``operation(context, *args, **kwargs)`` alone on this store's data (the write guard)."""
        context = self._context()
        with context.parts.writes.guard(context.parts.graph):
            if self._check is not None:
                self._check()
            result = operation(context, *args, **kwargs)
            ingested = getattr(result, "ingested", result)  # an upsert's ingest part
            if isinstance(ingested, IngestReport):
                _check_relations(context, ingested)
            return result

    def add_records(
        self,
        records: Iterable[Mapping[str, Any]],
        *,
        strict: bool = False,
        show_progress: bool | None = None,
        extractor: Runnable[str, Any] | None = None,
    ) -> IngestReport:
        """Ingest seed-style ``{"passage", "triplets"}`` or ``{"id", "title", "text", "triplets"}`` records.

        Malformed triplets are skipped and counted in the report (``strict=True`` raises
        :class:`~langchain_graphrag_milvus.errors.MalformedTripletError` instead). Records
        without a ``"triplets"`` key get theirs from the extractor, if one is set.
        Re-ingesting the same records adds nothing.
        """
        from langchain_graphrag_milvus.ingest.load import ingest_mappings

        result: IngestReport = self._run(
            ingest_mappings, records, strict=strict, show_progress=show_progress, extractor=extractor
        )
        return result

    def add_documents(
        self,
        documents: Iterable[Document],
        *,
        strict: bool = False,
        show_progress: bool | None = None,
        extractor: Runnable[str, Any] | None = None,
        splitter: Any = None,
    ) -> IngestReport:
        """Ingest ``Document``s; ``metadata["triplets"]`` holds their triplets (absent: extracted).

        The passage id is ``Document.id`` (or, when it is ``None``, a hash of the text and
        metadata); the rest of the metadata is stored with the passage and returned on
        retrieval. With a LangChain text ``splitter``, documents are chunked first (chunk
        ids ``"{source}#0000"``...; ``metadata["source_id"]`` keeps the source: the
        document id, else ``metadata[source_field]``).
        """
        from langchain_graphrag_milvus.ingest.load import ingest_documents
        from langchain_graphrag_milvus.ingest.updates import split

        if isinstance(documents, (str, bytes)) or hasattr(documents, "page_content"):
            raise TypeError(f"documents must be a list of Documents, not {type(documents).__name__}")

        def run(context: IngestContext) -> IngestReport:
            docs = (
                split(list(documents), splitter, context.source_field, context.partition_key_field)
                if splitter is not None
                else documents
            )
            return ingest_documents(context, docs, strict=strict, show_progress=show_progress, extractor=extractor)

        result: IngestReport = self._run(run)
        return result

    def add_jsonl(
        self,
        path: str | os.PathLike[str],
        *,
        strict: bool = False,
        show_progress: bool | None = None,
        extractor: Runnable[str, Any] | None = None,
    ) -> IngestReport:
        """Ingest a JSONL file of records (the format of ``musique100/passages.jsonl``)."""
        from langchain_graphrag_milvus.ingest.load import ingest_jsonl

        result: IngestReport = self._run(
            ingest_jsonl, path, strict=strict, show_progress=show_progress, extractor=extractor
        )
        return result

    def upsert_documents(
        self,
        documents: Iterable[Document],
        *,
        splitter: Any = None,
        strict: bool = False,
        show_progress: bool | None = None,
        extractor: Runnable[str, Any] | None = None,
    ) -> UpsertReport:
        """Make the store hold exactly these versions of these source documents.

        Passages of a source that are not in the new version are deleted (with the
        relations and entities only they supported), changed ones replaced, new ones added,
        unchanged ones left alone. The source id is ``metadata["source_id"]``, else
        ``Document.id``, else ``metadata[source_field]`` (``"source"``: a loader's file);
        with ``partition_key_field`` a source is (tenant, source id). Everything is
        validated before the first delete: a source with an invalid new document is kept
        as it was and listed in ``report.sources_skipped`` (``strict``: raises).
        """
        from langchain_graphrag_milvus.ingest.updates import upsert_documents

        result: UpsertReport = self._run(
            upsert_documents,
            documents,
            splitter=splitter,
            strict=strict,
            show_progress=show_progress,
            extractor=extractor,
        )
        return result

    def delete_documents(
        self, source_ids: Iterable[str], *, tenant: str | None = None, all_tenants: bool = False
    ) -> DeleteReport:
        """Delete all passages of these source documents, and what only they supported.

        With ``partition_key_field`` pass ``tenant="..."`` (that tenant's passages of these
        sources) or ``all_tenants=True`` (every tenant's); otherwise ``ValueError``.
        """
        from langchain_graphrag_milvus.ingest.updates import delete_documents

        result: DeleteReport = self._run(delete_documents, source_ids, tenant=tenant, all_tenants=all_tenants)
        return result

    def delete_passages(self, passage_ids: Iterable[str], *, tenant: str | None = None) -> DeleteReport:
        """Delete passages by id (only ``tenant``'s when given), and what only they supported."""
        from langchain_graphrag_milvus.ingest.updates import delete_passages

        result: DeleteReport = self._run(delete_passages, passage_ids, tenant=tenant)
        return result

    def merge_entities(
        self, names: Iterable[str], *, into: str, tenant: str | None = None, all_tenants: bool = False
    ) -> MergeReport:
        """Merge duplicate entities into one: ``store.merge_entities(["Euler"], into="Leonhard Euler")``.

        Relations naming a merged entity are rewritten to name ``into`` (joining an equal
        relation if there is one), the merged entity rows are deleted, and the graph index
        is updated in place. Crash-safe and re-runnable; see
        :mod:`~langchain_graphrag_milvus.ingest.merge`. With ``partition_key_field`` pass
        ``tenant="..."`` (only that tenant's entities change) or ``all_tenants=True``;
        otherwise ``ValueError``.
        """
        from langchain_graphrag_milvus.ingest.merge import merge_entities

        result: MergeReport = self._run(merge_entities, names, into, tenant=tenant, all_tenants=all_tenants)
        return result

    # ------------------------------------------------------------------ async: the same writes off the event loop
    async def aadd_documents(
        self,
        documents: Iterable[Document],
        *,
        strict: bool = False,
        show_progress: bool | None = None,
        extractor: Runnable[str, Any] | None = None,
        splitter: Any = None,
    ) -> IngestReport:
        """Async :meth:`add_documents` (same arguments): runs in a worker thread, the event loop stays free.

        Writes stay serialized by the write guard, so concurrent calls run one after another.
        """
        docs = documents if isinstance(documents, (str, bytes)) else list(documents)
        return await asyncio.to_thread(
            self.add_documents, docs, strict=strict, show_progress=show_progress, extractor=extractor, splitter=splitter
        )

    async def aupsert_documents(
        self,
        documents: Iterable[Document],
        *,
        splitter: Any = None,
        strict: bool = False,
        show_progress: bool | None = None,
        extractor: Runnable[str, Any] | None = None,
    ) -> UpsertReport:
        """Async :meth:`upsert_documents` (same arguments), in a worker thread."""
        docs = documents if isinstance(documents, (str, bytes)) else list(documents)
        return await asyncio.to_thread(
            self.upsert_documents, docs, splitter=splitter, strict=strict, show_progress=show_progress,
            extractor=extractor,
        )  # fmt: skip

    async def adelete_documents(
        self, source_ids: Iterable[str], *, tenant: str | None = None, all_tenants: bool = False
    ) -> DeleteReport:
        """Async :meth:`delete_documents`, in a worker thread."""
        ids = source_ids if isinstance(source_ids, str) else list(source_ids)
        return await asyncio.to_thread(self.delete_documents, ids, tenant=tenant, all_tenants=all_tenants)

    async def amerge_entities(
        self, names: Iterable[str], *, into: str, tenant: str | None = None, all_tenants: bool = False
    ) -> MergeReport:
        """Async :meth:`merge_entities`, in a worker thread."""
        listed = names if isinstance(names, str) else list(names)
        return await asyncio.to_thread(
            self.merge_entities, listed, into=into, tenant=tenant, all_tenants=all_tenants
        )


def __getattr__(name: str) -> Any:
    """``StoreWrites``, this class's name before the write seam took it: the same class, with a warning."""
    if name == "StoreWrites":
        warnings.warn(
            "langchain_graphrag_milvus.ingest.store_writes.StoreWrites is now WriteOperations "
            "(StoreWrites names the write seam, langchain_graphrag_milvus.milvus.write_seam)",
            DeprecationWarning,
            stacklevel=2,
        )
        return WriteOperations
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
