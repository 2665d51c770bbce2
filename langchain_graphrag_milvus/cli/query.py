"""``query "..."``: passages with their source, page and score, and the relations that led there."""

from __future__ import annotations

import argparse
import json
import textwrap
from typing import TYPE_CHECKING, Any

from langchain_graphrag_milvus.cli.common import add_store_arguments, log, open_store, parse_filter, require_openai_key

if TYPE_CHECKING:
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever

    from langchain_graphrag_milvus.store import MilvusGraphStore

__all__ = ["run", "add_parser", "document_row"]

_SNIPPET = 300


def _llm(model: str | None) -> Any:
    if not model:
        return None
    require_openai_key("--llm")
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(model=model, temperature=0)


def make_retriever(store: MilvusGraphStore, args: argparse.Namespace) -> BaseRetriever:
    """The retriever of ``--mode`` with ``-k``, ``--filter`` and ``--llm``."""
    filter_value = parse_filter(args.filter)
    if args.mode == "naive":
        return store.as_naive_retriever(k=args.k, filter=filter_value)
    if args.mode == "paths":
        return store.as_path_retriever(k=args.k, filter=filter_value, sentences=True, llm=_llm(args.llm))
    from langchain_graphrag_milvus.retrievers import MilvusGraphRetriever

    return MilvusGraphRetriever(store=store, k=args.k, filter=filter_value, llm=_llm(args.llm))


def document_row(doc: Document, rank: int) -> dict[str, Any]:
    """One result as plain data (what ``--json`` prints)."""
    meta = doc.metadata or {}
    row: dict[str, Any] = {
        "rank": rank,
        "id": meta.get("_passage_id", doc.id),
        "source": meta.get("source", meta.get("source_id")),
        "page": meta.get("page"),
        "score": meta.get("_score"),
        "text": doc.page_content,
    }
    for key in ("_relations", "_hops", "_ranked_by", "_path", "_passage_ids", "_path_found", "_reason"):
        if key in meta:
            row[key.lstrip("_")] = meta[key]
    return row


def _print_row(row: dict[str, Any]) -> None:
    where = str(row.get("source") or row.get("id") or "")
    if isinstance(row.get("page"), int):
        where += f" (page {row['page'] + 1})"
    score = row.get("score")
    head = f"{row['rank']}. " + (f"[{score:.3f}] " if isinstance(score, (int, float)) else "") + where
    lines = [head]
    if "path" in row:
        lines.append(textwrap.indent(row["text"], "   "))
    else:
        text = " ".join(row["text"].split())
        lines.append("   " + (text if len(text) <= _SNIPPET else text[: _SNIPPET - 3] + "..."))
        relations = row.get("relations") or []
        hops = row.get("hops")
        for relation in relations[:5]:
            lines.append(f"   via: {relation}" + (f"  (hop {hops})" if isinstance(hops, int) else ""))
    print("\n".join(lines))  # noqa: T201


def run(args: argparse.Namespace) -> int:
    """Run ``query``."""
    if args.html and args.mode != "graph":
        raise ValueError("--html draws the graph retriever's subgraph: use it with --mode graph")
    store = open_store(args, reader=True)
    try:
        retriever = make_retriever(store, args)
        if args.html:  # one retrieval for both the passages and the picture
            from langchain_graphrag_milvus.retrieval.explain import query_documents_and_subgraph

            docs, graph = query_documents_and_subgraph(retriever, args.query)  # type: ignore[arg-type]
            args.html.write_text(graph.to_html(), encoding="utf-8")
            log(f"wrote {args.html} ({len(graph.nodes)} nodes, {len(graph.edges)} edges)")
        else:
            docs = retriever.invoke(args.query)
        rows = [document_row(doc, i) for i, doc in enumerate(docs, 1)]
    finally:
        store.close()
    if args.json:
        print(json.dumps(rows, indent=1, ensure_ascii=False, default=str))  # noqa: T201
    elif not rows:
        print("no passages found")  # noqa: T201
    else:
        for row in rows:
            _print_row(row)
    return 0


def add_parser(sub: Any) -> None:
    """The ``query`` subcommand's arguments."""
    from pathlib import Path

    p = sub.add_parser(
        "query",
        help="retrieve passages for a question (graph, naive or paths) and show why",
        description="Print the passages retrieved for QUERY with source, page, score and the relations "
        "that led to each.",
    )
    p.add_argument("query", help="the question")
    p.add_argument(
        "--mode",
        choices=["graph", "naive", "paths"],
        default="graph",
        help="graph retriever (default), naive vector search, or paths between the question's entities",
    )
    p.add_argument("-k", type=int, default=4, help="passages (or paths) to return (default 4)")
    p.add_argument(
        "--filter", help='metadata filter: a JSON object {"field": "value"} (escaped) or a Milvus expression'
    )
    p.add_argument("--llm", metavar="MODEL", help="OpenAI chat model for entity extraction and rerank (default: none)")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument("--html", type=Path, metavar="FILE", help="also write the subgraph behind the answer as a page")
    add_store_arguments(p)
    p.set_defaults(handler="langchain_graphrag_milvus.cli.query:run")
