"""``ingest PATH...``: files and folders → chunks → triplets → Milvus, with ``--sync``.

Each file is one source (its absolute path). A file whose stored chunks all carry its
current fingerprint is skipped without being read; a new or changed file is loaded, split
and upserted (its old chunks that are gone are deleted, unchanged ones are kept and not
re-embedded). With ``--sync``, sources stored under the given paths whose file no longer
exists are deleted afterwards — never anything outside those paths.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_graphrag_milvus.cli.common import add_store_arguments, log, make_extractor, open_store, show_progress

if TYPE_CHECKING:
    from langchain_core.documents import Document

    from langchain_graphrag_milvus.ingest.loaders import ChunkSettings, LoadedFile, SourceFile
    from langchain_graphrag_milvus.store import MilvusGraphStore

__all__ = ["IngestSummary", "run"]

_BATCH_PASSAGES = 128


@dataclass
class IngestSummary:
    """What one ``ingest`` run did (printed at the end; ``--json`` prints it as JSON)."""

    files_found: int = 0
    files_ingested: int = 0
    files_unchanged: int = 0
    files_skipped: int = 0
    files_deleted: int = 0
    chunks: int = 0
    passages_added: int = 0
    passages_updated: int = 0
    passages_unchanged: int = 0
    passages_deleted: int = 0
    entities_added: int = 0
    relations_added: int = 0
    entities_deleted: int = 0
    relations_deleted: int = 0
    texts_embedded: int = 0
    extraction_calls: int = 0
    extraction_failures: int = 0
    seconds: float = 0.0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)

    def text(self) -> str:
        """The human summary."""
        lines = [
            f"files: {self.files_found} found, {self.files_ingested} new or changed, {self.files_unchanged} "
            f"unchanged, {self.files_skipped} skipped, {self.files_deleted} deleted (vanished)",
            f"passages: {self.chunks} chunks loaded; {self.passages_added} added, {self.passages_updated} updated, "
            f"{self.passages_unchanged} unchanged, {self.passages_deleted} deleted",
            f"graph: {self.entities_added} entities and {self.relations_added} relations added; "
            f"{self.entities_deleted} entities and {self.relations_deleted} relations deleted",
            f"embedded {self.texts_embedded} texts; extraction: {self.extraction_calls} calls, "
            f"{self.extraction_failures} failed; {self.seconds:.1f}s",
        ]
        lines += [f"  skipped {source}: {reason}" for source, reason in self.skipped[:50]]
        if len(self.skipped) > 50:
            lines.append(f"  ... and {len(self.skipped) - 50} more skipped")
        return "\n".join(lines)

    def add_ingest(self, report: Any) -> None:
        """Add an ``IngestReport``'s counts."""
        self.passages_added += report.passages_added
        self.passages_updated += report.passages_updated
        self.passages_unchanged += report.passages_unchanged
        self.entities_added += report.entities_added
        self.relations_added += report.relations_added
        self.entities_deleted += report.entities_removed
        self.relations_deleted += report.relations_removed
        self.texts_embedded += report.texts_embedded
        self.extraction_calls += report.extraction_calls
        self.extraction_failures += report.extraction_failures
        self.skipped += [(p.record_id, p.reason) for p in report.problems[:50]]

    def add_delete(self, report: Any) -> None:
        """Add a ``DeleteReport``'s counts."""
        self.passages_deleted += report.passages_deleted
        self.entities_deleted += report.entities_deleted
        self.relations_deleted += report.relations_deleted


def _bar(total: int, desc: str, unit: str, enabled: bool) -> Any:
    from tqdm.auto import tqdm

    # leave=True: the finished bars stay on the terminal as a record of the run
    return tqdm(total=total, desc=desc, unit=unit, leave=True, disable=not enabled, dynamic_ncols=True)


def _load_changed(
    store: MilvusGraphStore, files: list[SourceFile], settings: ChunkSettings, summary: IngestSummary, progress: bool
) -> list[LoadedFile]:
    from langchain_graphrag_milvus.cli.file_sources import stored_files
    from langchain_graphrag_milvus.ingest.loaders import fingerprint, load_file

    stored = stored_files(store, [f.source for f in files])
    loaded: list[LoadedFile] = []
    with _bar(len(files), "Loading", "file", progress) as bar:
        for file in files:
            bar.update(1)
            try:
                info = stored.get(file.source)
                if info is not None and info.matches(fingerprint(file.path, settings)):
                    summary.files_unchanged += 1
                    continue
                result = load_file(file, settings)
            except ImportError:
                raise
            except Exception as exc:  # a broken or unreadable file is skipped, never fatal
                summary.skipped.append((file.source, f"{type(exc).__name__}: {exc}"))
                continue
            if not result.documents:
                summary.skipped.append((file.source, "no text found"))
                continue
            loaded.append(result)
    return loaded


def _ingest(store: MilvusGraphStore, loaded: list[LoadedFile], summary: IngestSummary, progress: bool) -> None:
    summary.chunks = sum(len(f.documents) for f in loaded)
    batch: list[Document] = []
    with _bar(summary.chunks, "Ingesting", "passage", progress) as bar:
        for index, file in enumerate(loaded):
            batch += file.documents
            if len(batch) >= _BATCH_PASSAGES or index == len(loaded) - 1:
                report = store.upsert_documents(batch, show_progress=False)
                summary.add_delete(report.deleted)
                summary.add_ingest(report.ingested)
                bar.update(len(batch))
                batch = []
    summary.files_ingested = len(loaded)


def _delete_vanished(store: MilvusGraphStore, roots: list[str], summary: IngestSummary) -> None:
    from langchain_graphrag_milvus.cli.file_sources import stored_sources

    vanished = sorted(s for s in stored_sources(store, roots) if not os.path.isfile(s))
    if vanished:
        summary.add_delete(store.delete_documents(vanished))
    summary.deleted = vanished
    summary.files_deleted = len(vanished)


def _roots(paths: list[str], sync: bool) -> tuple[list[str], list[str]]:
    """Existing paths to read, and every path as a source root (for ``--sync``)."""
    from langchain_graphrag_milvus.ingest.loaders import source_key

    existing = []
    for raw in paths:
        if Path(raw).exists():
            existing.append(raw)
        elif sync:
            log(f"{raw}: no such file or folder; with --sync its stored files are deleted")
        else:
            raise FileNotFoundError(f"no such file or folder: {raw!r}")
    return existing, [source_key(Path(p)) for p in paths]


def run(args: argparse.Namespace) -> int:
    """Run ``ingest``."""
    from langchain_graphrag_milvus.ingest.loaders import ChunkSettings, discover_files

    started = time.perf_counter()
    settings = ChunkSettings(chunk_size=args.chunk_size, chunk_overlap=args.chunk_overlap)
    existing, roots = _roots(args.paths, args.sync)
    found = discover_files(existing, include=args.include or None, exclude=args.exclude or ())
    summary = IngestSummary(files_found=len(found.files), skipped=list(found.skipped))
    progress = show_progress(args.progress)
    store = open_store(args, extractor=make_extractor(args.extractor, args.llm_model))
    try:
        loaded = _load_changed(store, found.files, settings, summary, progress)
        _ingest(store, loaded, summary, progress)
        if args.sync:
            _delete_vanished(store, roots, summary)
    finally:
        store.close()
    summary.files_skipped = len({source for source, _ in summary.skipped})
    summary.seconds = round(time.perf_counter() - started, 2)
    if args.json:
        print(json.dumps(asdict(summary), indent=1, ensure_ascii=False))  # noqa: T201
    else:
        print(summary.text())  # noqa: T201
    return 0


def add_parser(sub: Any) -> None:
    """The ``ingest`` subcommand's arguments."""
    p = sub.add_parser(
        "ingest",
        help="ingest files and folders (text, Markdown, PDF, HTML): split, extract triplets, store",
        description="Load files and folders with LangChain loaders, split them, extract triplets "
        "(an LLM with OPENAI_API_KEY, else spaCy offline) and upsert them by file. Unchanged files are skipped.",
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="files or folders (folders are read recursively)")
    p.add_argument("--sync", action="store_true", help="also delete stored files under PATHs that no longer exist")
    p.add_argument("--include", action="append", metavar="GLOB", help="only files matching (repeatable), e.g. '*.md'")
    p.add_argument("--exclude", action="append", metavar="GLOB", help="leave out files matching (repeatable)")
    p.add_argument("--chunk-size", type=int, default=1000, help="characters per chunk (default 1000)")
    p.add_argument("--chunk-overlap", type=int, default=150, help="characters shared by neighbouring chunks (150)")
    p.add_argument(
        "--extractor",
        choices=["llm", "offline", "none"],
        help="triplet extraction: llm (OpenAI), offline (spaCy) or none; default llm with OPENAI_API_KEY, else offline",
    )
    p.add_argument("--llm-model", default="gpt-4o-mini", help="OpenAI model of --extractor llm (gpt-4o-mini)")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument(
        "--progress", action=argparse.BooleanOptionalAction, default=None, help="progress bars (default: on a terminal)"
    )
    add_store_arguments(p)
    p.set_defaults(handler="langchain_graphrag_milvus.cli.ingest:run")
