"""``graph export`` (GraphML or JSON, the whole store or a query's subgraph) and ``stats``."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

from langchain_graphrag_milvus.cli.common import add_store_arguments, given_k, log, open_store, parse_filter
from langchain_graphrag_milvus.cli.output import emit, terminal_json, terminal_text
from langchain_graphrag_milvus.retrieval.defaults import PASSAGES_K

__all__ = ["run_export", "run_stats", "add_parsers"]


def _format(args: argparse.Namespace) -> str:
    if args.format:
        return str(args.format)
    return "graphml" if args.output.suffix.lower() == ".graphml" else "json"


def run_export(args: argparse.Namespace) -> int:
    """Run ``graph export``."""
    from langchain_graphrag_milvus.subgraph import query_subgraph, store_subgraph

    fmt = _format(args)
    started = time.perf_counter()
    store = open_store(args, reader=True)
    try:
        filter_value = parse_filter(args.filter)
        if args.query:
            from langchain_graphrag_milvus.retrievers import MilvusGraphRetriever

            retriever = MilvusGraphRetriever(store=store, **given_k(args), filter=filter_value)
            graph = query_subgraph(retriever, args.query)
        else:
            graph = store_subgraph(store, filter=filter_value, limit=args.limit)
    finally:
        store.close()
    if fmt == "graphml":
        graph.write_graphml(args.output)
    else:
        args.output.write_text(json.dumps(graph.to_json(), indent=1, ensure_ascii=False), encoding="utf-8")
    log(
        f"wrote {args.output} ({fmt}: {len(graph.nodes)} nodes, {len(graph.edges)} edges) "
        f"in {time.perf_counter() - started:.1f}s"
    )
    return 0


def _stats(args: argparse.Namespace) -> dict[str, Any]:
    from langchain_graphrag_milvus.cli.file_sources import stored_sources
    from langchain_graphrag_milvus.milvus.schema import KINDS

    store = open_store(args, reader=True)
    try:
        store.check_open()  # a clear CollectionNotFoundError when there is nothing yet
        counts = store.counts()
        graph = store.graph
        sources = stored_sources(store)
        return {
            "uri": args.uri,
            "prefix": args.prefix,
            "collections": {store.collection_name(kind): counts[kind] for kind in KINDS},
            "entities": counts["entities"],
            "relations": counts["relations"],
            "passages": counts["passages"],
            "sources": len(sources),
            "graph": {
                "entities": graph.n_entities,
                "relations": graph.n_relations,
                "passages_linked": graph.n_passages,
                "bytes": graph.nbytes,
                "saved_at": str(store.graph_path) if store.graph_path else None,
            },
            "memory": store.memory_report().as_dict(),
        }
    finally:
        store.close()


def run_stats(args: argparse.Namespace) -> int:
    """Run ``stats``."""
    stats = _stats(args)
    if args.json:
        emit(terminal_json(stats))
        return 0
    graph = stats["graph"]
    lines = [f"store {terminal_text(stats['uri'])} (prefix {terminal_text(stats['prefix'])})"]
    lines += [f"  {name}: {count} rows" for name, count in stats["collections"].items()]
    lines.append(
        f"{stats['passages']} passages from {stats['sources']} sources; {stats['entities']} entities, "
        f"{stats['relations']} relations"
    )
    lines.append(
        f"graph index: {graph['entities']} entities, {graph['relations']} relations, {graph['passages_linked']} "
        f"passages linked; {graph['bytes'] / 2**20:.2f} MiB of arrays"
        + (f", saved in {graph['saved_at']}" if graph["saved_at"] else "")
    )
    memory = stats["memory"]
    lines.append(
        f"in memory: {memory['total'] / 2**20:.2f} MiB "
        f"({memory['mib_per_million_relations']} MiB per million relations)"
    )
    lines += [f"  {name}: {size / 2**20:.2f} MiB" for name, size in memory["items"].items() if size]
    if memory["mapped"]:
        lines.append(
            f"  memory-mapped from {terminal_text(str(graph['saved_at']))}: {memory['mapped'] / 2**20:.2f} MiB"
        )
    emit("\n".join(lines))
    return 0


def add_parsers(sub: Any) -> None:
    """The ``graph`` (with ``export``) and ``stats`` subcommands."""
    graph = sub.add_parser("graph", help="export the graph (GraphML or JSON): the whole store or a query's subgraph")
    graph_sub = graph.add_subparsers(dest="graph_command", required=True)
    ex = graph_sub.add_parser(
        "export",
        help="write the stored graph, or the subgraph behind a query's answer, as GraphML or JSON",
        description="Nodes are entities, relations and passages (plus, with --query, the query's entities); "
        "GraphML loads in networkx, Gephi, yEd or Cytoscape.",
    )
    ex.add_argument("-o", "--output", type=Path, required=True, help="the file to write")
    ex.add_argument("--format", choices=["graphml", "json"], help="default: from the suffix (.graphml), else json")
    ex.add_argument("--query", help="export the subgraph behind this question's answer instead of the whole store")
    ex.add_argument("-k", type=int, help=f"passages of the query's answer (default {PASSAGES_K})")
    ex.add_argument("--filter", help='restrict to passages matching {"field": "value"} or a Milvus expression')
    ex.add_argument("--limit", type=int, help="at most this many relations of the whole store")
    add_store_arguments(ex)
    ex.set_defaults(handler="langchain_graphrag_milvus.cli.graph:run_export")

    st = sub.add_parser("stats", help="collections, row counts, sources and graph index size")
    st.add_argument("--json", action="store_true", help="print the numbers as JSON")
    add_store_arguments(st)
    st.set_defaults(handler="langchain_graphrag_milvus.cli.graph:run_stats")
