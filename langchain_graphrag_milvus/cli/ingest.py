"""``ingest PATH...``: files and folders → chunks → triplets → Milvus, with ``--sync``.

Each file is one source (its absolute path). A file whose stored chunks all carry its
current fingerprint is skipped without being read; a new or changed file is loaded, split
and upserted (its old chunks that are gone are deleted, unchanged ones are kept and not
re-embedded). With ``--sync``, sources stored under the given paths whose file no longer
exists are deleted afterwards — never anything outside those paths — and so are the
stored passages of a file that is now empty or unreadable (without ``--sync`` they stay,
and the summary says so).

Which files are read (symbolic links, ``--include``/``--exclude``, undecodable names) is
decided by :mod:`.discovery`; ``--tenant`` and ``--graph-path`` checks by :mod:`.tenancy`;
chunk ids and tenant metadata by :mod:`.ingest_files`. Everything printed goes through
:mod:`.output` (control characters escaped).
"""

from __future__ import annotations

import argparse
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from langchain_graphrag_milvus.cli.common import add_store_arguments, log, make_extractor, show_progress
from langchain_graphrag_milvus.cli.output import emit, terminal_json, terminal_text

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
    files_cleared: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    cleared: list[tuple[str, str]] = field(default_factory=list)
    outside_links: list[str] = field(default_factory=list)
    tenant: str | None = None

    def text(self) -> str:
        """The human summary."""
        lines = [
            f"files: {self.files_found} found, {self.files_ingested} new or changed, {self.files_unchanged} "
            f"unchanged, {self.files_skipped} skipped, {self.files_deleted} deleted (vanished), "
            f"{self.files_cleared} emptied or unreadable (passages removed)",
            f"passages: {self.chunks} chunks loaded; {self.passages_added} added, {self.passages_updated} updated, "
            f"{self.passages_unchanged} unchanged, {self.passages_deleted} deleted",
            f"graph: {self.entities_added} entities and {self.relations_added} relations added; "
            f"{self.entities_deleted} entities and {self.relations_deleted} relations deleted",
            f"embedded {self.texts_embedded} texts; extraction: {self.extraction_calls} calls, "
            f"{self.extraction_failures} failed; {self.seconds:.1f}s",
        ]
        if self.tenant is not None:
            lines.insert(0, f"tenant: {terminal_text(self.tenant)}")
        lines += [f"  skipped {terminal_text(s)}: {terminal_text(r)}" for s, r in self.skipped[:50]]
        if len(self.skipped) > 50:
            lines.append(f"  ... and {len(self.skipped) - 50} more skipped")
        lines += [f"  removed the stored passages of {terminal_text(s)}: {terminal_text(r)}" for s, r in self.cleared]
        if self.outside_links:
            lines.append(f"  {len(self.outside_links)} symbolic links leave the given folders and were not followed")
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


def _roots(paths: list[str], sync: bool) -> tuple[list[str], list[str]]:
    """Existing paths to read, and every path as a source root (for ``--sync``)."""
    from langchain_graphrag_milvus.cli.discovery import display_path
    from langchain_graphrag_milvus.ingest.loaders import source_key

    existing = []
    for raw in paths:
        if Path(raw).exists():
            existing.append(raw)
        elif sync:
            log(f"{display_path(raw)}: no such file or folder; with --sync its stored files are deleted")
        else:
            raise FileNotFoundError(f"no such file or folder: {display_path(raw)!r}")
    return existing, [display_path(source_key(Path(p))) for p in paths]


def run(args: argparse.Namespace) -> int:
    """Run ``ingest``."""
    from langchain_graphrag_milvus.cli.discovery import find_files
    from langchain_graphrag_milvus.cli.ingest_files import Target, delete_vanished, ingest_loaded, load_changed
    from langchain_graphrag_milvus.cli.tenancy import check_graph_path, open_tenant_store
    from langchain_graphrag_milvus.ingest.loaders import ChunkSettings

    started = time.perf_counter()
    settings = ChunkSettings(chunk_size=args.chunk_size, chunk_overlap=args.chunk_overlap)
    check_graph_path(args.graph_path, args.paths)
    existing, roots = _roots(args.paths, args.sync)
    found = find_files(existing, include=args.include or None, exclude=args.exclude or ())
    summary = IngestSummary(files_found=len(found.files), skipped=list(found.skipped), tenant=args.tenant)
    summary.outside_links = found.outside
    progress = show_progress(args.progress)
    store, key = open_tenant_store(args, extractor=make_extractor(args.extractor, args.llm_model))
    target = Target(store, key, args.tenant, args.sync)
    try:
        loaded = load_changed(target, found.files, settings, summary, progress)
        ingest_loaded(target, loaded, summary, progress)
        if args.sync:
            delete_vanished(target, roots, summary, found.aliases)
    finally:
        store.close()
    summary.files_skipped = len({source for source, _ in summary.skipped})
    summary.seconds = round(time.perf_counter() - started, 2)
    emit(terminal_json(asdict(summary)) if args.json else summary.text())
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
    p.add_argument(
        "--sync",
        action="store_true",
        help="also delete stored files under PATHs that no longer exist, are empty or unreadable",
    )
    p.add_argument(
        "--include",
        action="append",
        metavar="PATTERN",
        help="only files matching this .gitignore-style pattern (repeatable), e.g. '*.md' or 'docs/'",
    )
    p.add_argument(
        "--exclude",
        action="append",
        metavar="PATTERN",
        help="leave out files and folders matching this .gitignore-style pattern (repeatable), e.g. 'drafts'",
    )
    p.add_argument("--tenant", help="the tenant of these files, for a store with a partition key (required there)")
    p.add_argument(
        "--partition-key-field",
        default="tenant",
        help="metadata field of --tenant when ingest creates a new store (default: tenant)",
    )
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
