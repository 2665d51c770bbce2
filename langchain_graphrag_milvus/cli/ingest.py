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
from dataclasses import asdict
from pathlib import Path
from typing import Any

from langchain_graphrag_milvus.cli.common import (
    add_store_arguments,
    explicit_graph_path,
    log,
    make_extractor,
    show_progress,
)
from langchain_graphrag_milvus.cli.output import emit, terminal_json
from langchain_graphrag_milvus.cli.summary import IngestSummary
from langchain_graphrag_milvus.cli.triplet_cache import add_cache_arguments

__all__ = ["IngestSummary", "run"]

_BATCH_PASSAGES = 128


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
    from langchain_graphrag_milvus.cli.discovery import check_graph_path, find_files
    from langchain_graphrag_milvus.cli.ingest_files import Target, delete_vanished, ingest_loaded, load_changed
    from langchain_graphrag_milvus.cli.tenancy import open_tenant_store
    from langchain_graphrag_milvus.cli.triplet_cache import extraction_cache_path
    from langchain_graphrag_milvus.ingest.loaders import ChunkSettings
    from langchain_graphrag_milvus.milvus.lite import is_lite
    from langchain_graphrag_milvus.milvus.saved_graph import lite_graphs_dir

    started = time.perf_counter()
    settings = ChunkSettings(chunk_size=args.chunk_size, chunk_overlap=args.chunk_overlap)
    check_graph_path(explicit_graph_path(args.graph_path), args.paths)
    existing, roots = _roots(args.paths, args.sync)
    # a Lite store and its saved graph indexes inside a root are not read as documents
    own = [args.uri, *(p for p in [lite_graphs_dir(args.uri)] if p)] if is_lite(args.uri) else []
    found = find_files(existing, include=args.include or None, exclude=args.exclude or (), own=own)
    summary = IngestSummary(files_found=len(found.files), skipped=list(found.skipped), tenant=args.tenant)
    summary.outside_links = found.outside
    summary.count_read(found.files)
    progress = show_progress(args.progress)
    extractor = make_extractor(args.extractor, args.llm_model)
    store, key = open_tenant_store(args, extractor=extractor, extraction_cache=extraction_cache_path(args, extractor))
    target = Target(store, key, args.tenant, args.sync)
    if store.supplement is not None:  # what ran beside the extractor, by its CLI name
        summary.supplement = "offline_links" if getattr(store.supplement, "links_only", False) else "offline"
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
        help="ingest files and folders (text, Markdown, reST, PDF, HTML): split, extract triplets, store",
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
    p.add_argument(
        "--supplement",
        choices=["auto", "offline_links", "offline", "none"],
        default="auto",
        help="add spaCy's title-mention links (offline_links) or all its triplets (offline) to the extractor's; "
        "auto (default): the links with --extractor llm when the offline extra is installed, else none",
    )
    add_cache_arguments(p)
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument(
        "--progress", action=argparse.BooleanOptionalAction, default=None, help="progress bars (default: on a terminal)"
    )
    add_store_arguments(p)
    p.set_defaults(handler="langchain_graphrag_milvus.cli.ingest:run")
