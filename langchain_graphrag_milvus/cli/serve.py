"""``serve``: one warm process answering REST, MCP (HTTP at ``/mcp``, or ``--mcp stdio``) and the browse page.

The store is opened once (its embedding model, Milvus clients and graph index stay loaded)
with ``Strong`` reads, so passages written by a CLI ``ingest`` into the same server URI
are seen; the graph reloads when another writer changes the data (``refresh_interval``).
``--token`` (or ``GRAPHRAG_API_TOKEN``) requires ``Authorization: Bearer <token>`` on every
route except ``/health`` and the page. ``/ask`` uses an OpenAI chat model when
``OPENAI_API_KEY`` is set (``--llm``), else answers 503.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from langchain_graphrag_milvus.cli.common import add_store_arguments, log, make_chat_model, make_extractor

__all__ = ["run", "add_parser"]


def _state(args: argparse.Namespace) -> Any:
    from langchain_graphrag_milvus.cli.common import open_store
    from langchain_graphrag_milvus.cli.tenancy import existing_partition_key
    from langchain_graphrag_milvus.server.state import ServerLimits, ServerState

    limits = ServerLimits(
        max_body_bytes=int(args.max_body_mb * 2**20), max_k=args.max_k, ingest_queue=args.ingest_queue
    )
    extractor = make_extractor(args.extractor, "gpt-4o-mini" if args.llm == "fake" else args.llm)
    probe = open_store(args, extractor=extractor, reader=True)
    try:
        key = existing_partition_key(probe)
    finally:
        probe.close()
    key = key or args.partition_key_field
    store = open_store(args, extractor=extractor, reader=True, partition_key_field=key)
    # small write batches: the embedding model encodes one call at a time, so a query's embedding
    # waits for at most one ingest batch (measured: query p50 during an ingest 3.4 s at 256)
    store.batch_size = args.ingest_batch
    llm = make_chat_model(args.llm)
    return ServerState(store=store, partition_key=key, limits=limits, llm=llm)


def _warm(state: Any) -> None:
    """Load the model and the graph now, so the first request does not pay for them."""
    state.store.embedding.embed_query("warm up")
    if state.store.exists():
        _ = state.store.graph
        state.store.entity_names()


def run(args: argparse.Namespace) -> int:
    """Run ``serve``."""
    token = args.token_api or os.environ.get("GRAPHRAG_API_TOKEN") or None
    state = _state(args)
    _warm(state)
    if args.mcp == "stdio":
        from langchain_graphrag_milvus.server.mcp_tools import create_mcp_server

        log("serving MCP over stdio")
        try:
            create_mcp_server(state).run("stdio")
        finally:
            state.store.close()
        return 0
    import uvicorn

    from langchain_graphrag_milvus.server.app import create_app

    app = create_app(state, token=token, host=args.host)
    log(f"serving on http://{args.host}:{args.port} (docs at /docs, MCP at /mcp/, browse at /)")
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level)
    return 0


def add_parser(sub: Any) -> None:
    """The ``serve`` subcommand's arguments."""
    p = sub.add_parser(
        "serve",
        help="run the server: REST API, MCP (HTTP or stdio) and a browse page over a warm store",
        description="Keep the embedding model, the store and the graph loaded and answer REST (/query, /explain, "
        "/ask, /documents, /files, /stats), MCP (/mcp or --mcp stdio) and the browse page (/).",
    )
    p.add_argument("--host", default="127.0.0.1", help="interface to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    p.add_argument(
        "--api-token",
        dest="token_api",
        help="require Authorization: Bearer TOKEN (default: $GRAPHRAG_API_TOKEN; none: open)",
    )
    p.add_argument("--mcp", choices=["http", "stdio"], default="http", help="MCP at /mcp (http) or over stdio only")
    p.add_argument("--max-k", type=int, default=50, help="largest k of a query (default 50)")
    p.add_argument("--max-body-mb", type=float, default=16, help="largest request body in MiB (default 16)")
    p.add_argument("--ingest-queue", type=int, default=2, help="ingests that may wait while one runs; more get 429")
    p.add_argument(
        "--extractor",
        choices=["llm", "offline", "none"],
        help="triplet extraction of ingested text without triplets (default llm with OPENAI_API_KEY, else offline)",
    )
    p.add_argument("--llm", default="gpt-4o-mini", help="OpenAI chat model of /ask and --extractor llm")
    p.add_argument("--partition-key-field", help="create a new store partitioned by this metadata field")
    p.add_argument(
        "--ingest-batch", type=int, default=32, help="texts per embedding call of an ingest (default 32: short waits)"
    )
    p.add_argument("--log-level", default="warning", help="uvicorn's log level (default warning)")
    add_store_arguments(p)
    p.set_defaults(handler="langchain_graphrag_milvus.cli.serve:run")
