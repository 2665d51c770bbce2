"""Ingestion: records → normalised entities and relations → embeddings → Milvus → graph.

Per batch of passages (:mod:`langchain_graphrag_milvus.ingest.batch`):

1. validate records (malformed triplets skipped and counted, or raised with ``strict``);
2. ask Milvus which passages exist already and whether their content changed;
3. extract triplets for passages that came without them (if an extractor is set);
4. merge entity names by their normalised key; build relations with deterministic ids;
5. embed each new unique text once, in batches;
6. write entities, then relations, then passages (a passage row is the commit marker: an
   interrupted ingest re-run finds what is missing and completes it, writing nothing twice);
7. update the in-memory graph index incrementally (no rebuild).

A passage whose text or metadata changed is *replaced*: its links to relations its new
triplets no longer state are removed first (relations and entities left without support
are deleted), then the new ones are added. One whose text is the stored text keeps its
stored vector, and its links too when the extractor would read the same input
(:mod:`.reuse`): only its metadata is rewritten.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from langchain_core.documents import Document
from langchain_core.runnables import Runnable
from tqdm.auto import tqdm

from langchain_graphrag_milvus.errors import MalformedRecordError, MalformedTripletError
from langchain_graphrag_milvus.ingest.batch import ingest_batch
from langchain_graphrag_milvus.ingest.bulk import BulkLoad, starts_empty
from langchain_graphrag_milvus.ingest.context import IngestContext
from langchain_graphrag_milvus.ingest.records import (
    PassageRecord,
    Problem,
    check_partition_key,
    check_passage_text,
    iter_jsonl,
    parse_triplets,
    passage_identity,
    record_from_mapping,
    validate_metadata,
)
from langchain_graphrag_milvus.ingest.report import MAX_PROBLEMS_KEPT, IngestReport

__all__ = [
    "IngestReport",
    "MAX_PROBLEMS_KEPT",
    "ingest_mappings",
    "ingest_documents",
    "ingest_jsonl",
    "record_from_document",
]

BATCH_PASSAGES = 256


def _progress(total: int | None, show: bool | None, desc: str) -> Any:
    if show is None:
        show = sys.stderr.isatty() and not os.environ.get("CI")
    return tqdm(total=total, disable=not show, desc=desc, unit="passage", leave=False)


def _collect(
    ctx: IngestContext,
    records: Iterable[PassageRecord],
    report: IngestReport,
    *,
    total: int | None,
    show_progress: bool | None,
    strict: bool,
    extractor: Runnable[str, Any] | None,
) -> IngestReport:
    started = time.perf_counter()
    if strict:  # validate everything before writing anything
        records = list(records)
    state: dict[str, bool] = {}
    parts = ctx.parts
    bulk = BulkLoad() if ctx.bulk_load and starts_empty(parts.writes, parts.reads, parts.graph.loaded) else None
    try:
        _batches(ctx, records, report, state, total, show_progress, strict, extractor, bulk)
    except BaseException:
        if bulk is not None and state.get("bumped"):
            ctx.parts.graph.forget()  # a failed batch may be half written: the next query rebuilds
        raise
    if state.get("bumped"):
        ctx.parts.graph.persist()
    # index="auto": HNSW past the threshold (also when this run wrote nothing: a re-run after a
    # switch that failed half-way finishes it)
    ctx.parts.writes.fit_indexes()
    report.bulk_load = bulk is not None and bulk.active
    report.seconds = time.perf_counter() - started
    return report


def _batches(
    ctx: IngestContext,
    records: Iterable[PassageRecord],
    report: IngestReport,
    state: dict[str, bool],
    total: int | None,
    show_progress: bool | None,
    strict: bool,
    extractor: Runnable[str, Any] | None,
    bulk: BulkLoad | None,
) -> None:
    """Ingest the records batch by batch (a repeated passage id is skipped and counted)."""
    seen_ids: set[str] = set()
    batch: list[PassageRecord] = []
    with _progress(total, show_progress, "Ingesting") as bar:
        for record in records:
            if record.id in seen_ids:
                report.records_skipped += 1
                report._problem(Problem(record.id, "duplicate passage id in this ingest; kept the first"))
                continue
            seen_ids.add(record.id)
            batch.append(record)
            if len(batch) >= BATCH_PASSAGES:
                ingest_batch(ctx, batch, report, state, extractor=extractor, strict=strict, bulk=bulk)
                bar.update(len(batch))
                batch = []
        if batch:
            ingest_batch(ctx, batch, report, state, extractor=extractor, strict=strict, bulk=bulk)
            bar.update(len(batch))


ParseFn = Callable[[Any, list[Problem]], PassageRecord]


def _ingest(
    ctx: IngestContext,
    items: Iterable[tuple[str, Any]],
    parse: ParseFn,
    *,
    total: int | None,
    strict: bool,
    show_progress: bool | None,
    extractor: Runnable[str, Any] | None,
    report: IngestReport | None = None,
) -> IngestReport:
    """Parse ``(where, item)`` pairs into records (skipping or raising on bad ones) and ingest."""
    report = report or IngestReport()
    triplet_problems: list[Problem] = []

    def records() -> Iterator[PassageRecord]:
        for where, item in items:
            try:
                record = parse(item, triplet_problems)
                check_partition_key(ctx.partition_key_field, record)
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

    extractor = extractor if extractor is not None else ctx.extractor
    return _collect(
        ctx, records(), report, total=total, show_progress=show_progress, strict=strict, extractor=extractor
    )


def ingest_mappings(
    ctx: IngestContext,
    records: Iterable[Mapping[str, Any]],
    *,
    strict: bool = False,
    show_progress: bool | None = None,
    extractor: Runnable[str, Any] | None = None,
) -> IngestReport:
    """Ingest seed- or MuSiQue-style record dicts into the store of ``ctx``."""
    total = len(records) if isinstance(records, Sequence) else None

    def parse(item: tuple[int, Mapping[str, Any]], problems: list[Problem]) -> PassageRecord:
        return record_from_mapping(
            item[1], position=item[0], strict=strict, problems=problems, source_field=ctx.source_field
        )

    items = ((f"record #{i}", (i, r)) for i, r in enumerate(records))
    return _ingest(ctx, items, parse, total=total, strict=strict, show_progress=show_progress, extractor=extractor)


def ingest_jsonl(
    ctx: IngestContext,
    path: str | os.PathLike[str],
    *,
    strict: bool = False,
    show_progress: bool | None = None,
    extractor: Runnable[str, Any] | None = None,
) -> IngestReport:
    """Ingest a JSONL file of records; a bad line is skipped and counted as ``"line N"``.

    A line that cannot be read (invalid UTF-8 or JSON, nested too deeply, a number of
    thousands of digits) or whose record is invalid is skipped and reported with its
    line number; the other lines are ingested. With ``strict`` the first such line
    raises :class:`~langchain_graphrag_milvus.errors.MalformedRecordError` (or a
    subclass) whose message starts with ``"{path}:{line}: "``.
    """
    report = IngestReport()
    line_problems: list[Problem] = []
    with open(path, "rb") as handle:
        total = sum(1 for line in handle if line.strip())

    def parse(item: tuple[int, Any], problems: list[Problem]) -> PassageRecord:
        try:
            return record_from_mapping(
                item[1], position=item[0], strict=strict, problems=problems, source_field=ctx.source_field
            )
        except MalformedRecordError as exc:
            if not strict:
                raise
            raise type(exc)(f"{os.fspath(path)}:{item[0]}: {exc}") from None
        except (RecursionError, ValueError) as exc:  # a value too deep or too long to print or convert
            error = MalformedRecordError(f"{os.fspath(path)}:{item[0]}: unusable value ({type(exc).__name__})")
            raise error from None

    lines = iter_jsonl(path, None if strict else line_problems)
    items = ((f"line {n}", (n, raw)) for n, raw in lines)
    _ingest(
        ctx,
        items,
        parse,
        total=total,
        strict=strict,
        show_progress=show_progress,
        extractor=extractor,
        report=report,
    )
    report.records_skipped += len(line_problems)
    for problem in line_problems:
        report._problem(problem)
    return report


def record_from_document(
    doc: Document, *, strict: bool, problems: list[Problem], source_field: str | None = "source"
) -> PassageRecord:
    """Validate a ``Document``; ``metadata["triplets"]`` holds its triplets (absent: extract).

    The passage id is ``doc.id``, else a hash of the text and metadata; the source is
    ``metadata["source_id"]``, else ``doc.id``, else ``metadata[source_field]`` (see
    :mod:`langchain_graphrag_milvus.ingest.identity`).
    """
    if not isinstance(doc, Document):
        raise MalformedRecordError(f"expected a Document, got {type(doc).__name__}")
    where = f"document {doc.id!r:.80}"
    text = check_passage_text(doc.page_content, where)
    metadata = dict(doc.metadata or {})
    has_triplets = "triplets" in metadata
    raw_triplets = metadata.pop("triplets", None)
    metadata = validate_metadata(metadata, str(doc.id))
    passage_id, source = passage_identity(doc.id, text, metadata, source_field, where)
    return PassageRecord(
        id=passage_id,
        text=text,
        metadata=metadata,
        triplets=parse_triplets(raw_triplets, passage_id, strict=strict, problems=problems),
        needs_extraction=not has_triplets,
        source=source,
    )


def ingest_documents(
    ctx: IngestContext,
    documents: Iterable[Document],
    *,
    strict: bool = False,
    show_progress: bool | None = None,
    extractor: Runnable[str, Any] | None = None,
) -> IngestReport:
    """Ingest LangChain Documents (with ``metadata["triplets"]``, or extracted)."""
    total = len(documents) if isinstance(documents, Sequence) else None

    def parse(doc: Document, problems: list[Problem]) -> PassageRecord:
        return record_from_document(doc, strict=strict, problems=problems, source_field=ctx.source_field)

    items = ((f"document #{i}", d) for i, d in enumerate(documents))
    return _ingest(ctx, items, parse, total=total, strict=strict, show_progress=show_progress, extractor=extractor)
