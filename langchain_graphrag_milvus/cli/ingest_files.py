"""The writing half of ``ingest``: load changed files, own their chunk ids, upsert, delete.

**Chunk ids.** A file's chunks get ids of the reserved chunk form of
:mod:`langchain_graphrag_milvus.ingest.identity`: ``"{source}#{n}"`` where ``n`` is a
decimal number made from a hash of the chunk's text (and its repeat count in the file),
followed by ``@`` and the tenant hash in a partitioned store. The store accepts an id of
that form only for a passage whose source is exactly ``{source}``: a document added
through the API cannot take over, or overwrite, a passage of a file ingested here (it
is refused with ``InvalidIdError``). A chunk whose text did not change keeps its id
when text before it changes, so it is neither re-embedded nor re-extracted.

**Emptied or unreadable files.** A file that has stored passages and is now empty,
holds no text, or cannot be read: with ``--sync`` its stored passages (and the graph
facts only they supported) are deleted, and the summary lists it under ``cleared``;
without ``--sync`` they stay, and the summary's skip reason says so.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langchain_core.documents import Document

    from langchain_graphrag_milvus.cli.summary import IngestSummary
    from langchain_graphrag_milvus.ingest.loaders import ChunkSettings, LoadedFile, SourceFile
    from langchain_graphrag_milvus.store import MilvusGraphStore

__all__ = ["Target", "own_chunk_ids", "load_changed", "ingest_loaded", "delete_vanished", "cli_fingerprint"]

_BATCH_PASSAGES = 128
#: Part of the stored fingerprint: bumped when the CLI's ids or metadata change, so files re-load once.
_CLI_VERSION = "ids2"


@dataclass(frozen=True)
class Target:
    """Where ``ingest`` writes: the store, its partition key field and the tenant, ``--sync``."""

    store: MilvusGraphStore
    key: str | None
    tenant: str | None
    sync: bool

    @property
    def scope(self) -> tuple[str, str] | None:
        """(partition key field, tenant) for reads and deletes, or None."""
        return (self.key, self.tenant) if self.key is not None and self.tenant is not None else None


def cli_fingerprint(path: Any, settings: ChunkSettings) -> str:
    """The loader's fingerprint of a file, tagged with the CLI's id version."""
    from langchain_graphrag_milvus.ingest.loaders import fingerprint

    return f"{fingerprint(path, settings)}-{_CLI_VERSION}"


def own_chunk_ids(documents: list[Document], source: str, tenant: str | None) -> None:
    """Give a file's chunks ids of the reserved chunk form of ``source`` (see the module rules)."""
    from langchain_graphrag_milvus.ingest.identity import chunk_id

    seen: dict[str, int] = {}
    for doc in documents:
        seen[doc.page_content] = count = seen.get(doc.page_content, 0) + 1
        payload = doc.page_content if count == 1 else f"{doc.page_content}\0{count}"
        number = int.from_bytes(hashlib.blake2b(payload.encode("utf-8"), digest_size=8).digest(), "big")
        doc.id = chunk_id(source, number, scope=tenant)


def _bar(total: int, desc: str, unit: str, enabled: bool) -> Any:
    from tqdm.auto import tqdm

    # leave=True: the finished bars stay on the terminal as a record of the run
    return tqdm(total=total, desc=desc, unit=unit, leave=True, disable=not enabled, dynamic_ncols=True)


def _prepare(target: Target, result: LoadedFile, stamp: str) -> None:
    own_chunk_ids(result.documents, result.file.source, target.tenant if target.key else None)
    for doc in result.documents:
        doc.metadata["file_fingerprint"] = stamp
        if target.key is not None and target.tenant is not None:
            doc.metadata[target.key] = target.tenant


def _unusable(target: Target, file: SourceFile, stored: bool, reason: str, summary: IngestSummary) -> str | None:
    """Record a file that gave no passages; returns its source if its stored passages go."""
    if stored and target.sync:
        summary.cleared.append((file.source, reason))
        return file.source
    note = "; its stored passages stay (--sync removes them)" if stored else ""
    summary.skipped.append((file.source, reason + note))
    return None


def load_changed(
    target: Target, files: list[SourceFile], settings: ChunkSettings, summary: IngestSummary, progress: bool
) -> list[LoadedFile]:
    """Load the files whose stored chunks are missing or stale; clear emptied files under ``--sync``."""
    from langchain_graphrag_milvus.cli.file_sources import stored_files
    from langchain_graphrag_milvus.cli.pdf_log import describe, pdf_warnings
    from langchain_graphrag_milvus.ingest.loaders import load_file

    stored = stored_files(target.store, [f.source for f in files], target.scope)
    loaded: list[LoadedFile] = []
    cleared: list[str] = []
    with _bar(len(files), "Loading", "file", progress) as bar:
        for file in files:
            bar.update(1)
            info = stored.get(file.source)
            try:
                stamp = cli_fingerprint(file.path, settings)
                if info is not None and info.matches(stamp):
                    summary.files_unchanged += 1
                    continue
                with pdf_warnings() as logged:
                    result = load_file(file, settings)
            except ImportError:
                raise
            except Exception as exc:  # a broken or unreadable file is skipped, never fatal
                gone = _unusable(target, file, info is not None, f"{type(exc).__name__}: {exc}", summary)
            else:
                if logged:  # outside the try: a file read is never counted unreadable for how it is described
                    summary.read_with_warnings.append((file.source, describe(logged)))
                if result.documents:
                    _prepare(target, result, stamp)
                    loaded.append(result)
                    continue
                gone = _unusable(target, file, info is not None, "no text found", summary)
            if gone is not None:
                cleared.append(gone)
    if cleared:
        summary.add_delete(target.store.delete_documents(cleared, tenant=target.tenant if target.key else None))
    summary.files_cleared = len(cleared)
    return loaded


def ingest_loaded(target: Target, loaded: list[LoadedFile], summary: IngestSummary, progress: bool) -> None:
    """Upsert the loaded files' chunks in batches of whole files."""
    summary.chunks = sum(len(f.documents) for f in loaded)
    batch: list[Document] = []
    with _bar(summary.chunks, "Ingesting", "passage", progress) as bar:
        for index, file in enumerate(loaded):
            batch += file.documents
            if len(batch) >= _BATCH_PASSAGES or index == len(loaded) - 1:
                report = target.store.upsert_documents(batch, show_progress=False)
                summary.add_delete(report.deleted)
                summary.add_ingest(report.ingested)
                bar.update(len(batch))
                batch = []
    summary.files_ingested = len(loaded)


def delete_vanished(target: Target, roots: list[str], summary: IngestSummary, aliases: set[str]) -> None:
    """``--sync``: delete the stored sources under ``roots`` (of the tenant) whose file is gone.

    ``aliases`` (links to a file read under another name, links leaving the roots) go too.
    """
    from langchain_graphrag_milvus.cli.file_sources import stored_sources

    stored = stored_sources(target.store, roots, target.scope)
    vanished = sorted(s for s in stored if s in aliases or not os.path.isfile(s))
    if vanished:
        summary.add_delete(target.store.delete_documents(vanished, tenant=target.tenant if target.key else None))
    summary.deleted = vanished
    summary.files_deleted = len(vanished)
