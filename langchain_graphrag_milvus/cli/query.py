"""``query "..."``: passages with their source, page and score, and the relations that led there.

Every printed value (passage text, source, relations) goes through :mod:`.output`, so
a stored passage cannot send control sequences to the terminal. On a store with a
partition key, ``--tenant`` (or ``--all-tenants``) is required; results are filtered on it.
"""

from __future__ import annotations

import argparse
import textwrap
from typing import TYPE_CHECKING, Any

from langchain_graphrag_milvus.cli.common import (
    K_HELP,
    add_store_arguments,
    given_k,
    log,
    parse_filter,
    require_openai_key,
)
from langchain_graphrag_milvus.cli.output import emit, terminal_json, terminal_text

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


def make_retriever(store: MilvusGraphStore, args: argparse.Namespace, key: str | None = None) -> BaseRetriever:
    """The retriever of ``--mode``: ``-k``, ``--filter`` (``--tenant`` on field ``key``), ``--llm``, ``--min-score``."""
    from langchain_graphrag_milvus.cli.tenancy import tenant_filter

    filter_value = tenant_filter(parse_filter(args.filter), key, getattr(args, "tenant", None))
    min_score = getattr(args, "min_score", None)
    k = given_k(args)
    if args.mode == "naive":
        return store.as_naive_retriever(**k, filter=filter_value, min_score=min_score)
    if args.mode == "paths":
        return store.as_path_retriever(**k, filter=filter_value, sentences=True, llm=_llm(args.llm))
    from langchain_graphrag_milvus.retrievers import MilvusGraphRetriever

    return MilvusGraphRetriever(store=store, **k, filter=filter_value, llm=_llm(args.llm), min_score=min_score)


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
    keys = ("_similarity", "_raw_score", "_relations", "_hops", "_ranked_by", "_path", "_passage_ids", "_sources")
    for key in (*keys, "_path_found", "_reason"):
        if key in meta:
            row[key.lstrip("_")] = meta[key]
    return row


def _where(row: dict[str, Any]) -> str:
    """Source and page as printed: ``guide.pdf (page 3)`` (PDF pages are stored from 0, shown from 1)."""
    where = terminal_text(row.get("source") or row.get("id") or "")
    page = row.get("page")
    if isinstance(page, int) and not isinstance(page, bool):
        where += f" (page {page + 1})"
    elif isinstance(page, str) and page:
        where += f" (page {terminal_text(page)})"
    return where


def _print_row(row: dict[str, Any]) -> None:
    score, similarity = row.get("score"), row.get("similarity")
    head = f"{row['rank']}. " + (f"[{score:.3f}] " if isinstance(score, (int, float)) else "")
    head += f"path, {row.get('hops')} hops" if "path" in row else _where(row)
    if isinstance(similarity, (int, float)) and similarity != score:
        head += f"  similarity {similarity:.3f}"
    lines = [head]
    if "path" in row:
        lines.append(textwrap.indent("\n".join(terminal_text(t) for t in str(row["text"]).split("\n")), "   "))
        sources = list(dict.fromkeys(row.get("sources") or []))
        if sources:
            lines.append("   passages from: " + "; ".join(terminal_text(x) for x in sources))
    else:
        text = terminal_text(" ".join(row["text"].split()))
        lines.append("   " + (text if len(text) <= _SNIPPET else text[: _SNIPPET - 3] + "..."))
        relations = row.get("relations") or []
        hops = row.get("hops")
        for relation in relations[:5]:
            lines.append(f"   via: {terminal_text(relation)}" + (f"  (hop {hops})" if isinstance(hops, int) else ""))
    emit("\n".join(lines))


def _nothing(args: argparse.Namespace, reason: str | None) -> str:
    """What to print when no passage came back, with the reason the library knows."""
    if args.mode == "paths":
        return f"no path found: {terminal_text(reason or 'no reason given')}"  # one line, whatever names it holds
    if getattr(args, "min_score", None) is not None:
        return f"no passages found with similarity of at least --min-score {args.min_score}"
    return "no passages found"


def _retrieve(store: MilvusGraphStore, args: argparse.Namespace, key: str | None) -> tuple[list[Document], str | None]:
    """The Documents for ``args.query`` (and the page, with ``--html``); the no-path reason in paths mode."""
    retriever = make_retriever(store, args, key)
    if args.html:  # one retrieval for both the passages and the picture
        from langchain_graphrag_milvus.retrieval.explain import query_documents_and_subgraph

        docs, graph = query_documents_and_subgraph(retriever, args.query)  # type: ignore[arg-type]
        args.html.write_text(graph.to_html(), encoding="utf-8")
        log(f"wrote {args.html} ({len(graph.nodes)} nodes, {len(graph.edges)} edges)")
        return docs, None
    if args.mode == "paths":
        return retriever.invoke_with_reason(args.query)  # type: ignore[attr-defined,no-any-return]
    return retriever.invoke(args.query), None


def run(args: argparse.Namespace) -> int:
    """Run ``query``."""
    if args.html and args.mode != "graph":
        raise ValueError("--html draws the graph retriever's subgraph: use it with --mode graph")
    if getattr(args, "min_score", None) is not None and args.mode == "paths":
        raise ValueError("--min-score cuts passages by similarity: use it with --mode graph or naive")
    from langchain_graphrag_milvus.cli.tenancy import open_tenant_store
    from langchain_graphrag_milvus.retrieval.documents import no_graph

    store, key = open_tenant_store(args, reader=True)
    try:
        docs, reason = _retrieve(store, args, key)
        rows = [document_row(doc, i) for i, doc in enumerate(docs, 1)]
    finally:
        store.close()
    if any(no_graph(row.get("ranked_by")) for row in rows):
        log("note: the store (or the filtered part) has no relations, so the passages are ranked by similarity only; "
            "ingest with --extractor offline (or llm) to build the graph")  # fmt: skip
    if args.json:
        if not rows and reason:
            log(_nothing(args, reason))
        emit(terminal_json(rows))
    elif not rows:
        emit(_nothing(args, reason))
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
    p.add_argument("-k", type=int, help=f"passages (or paths) to return (default: the retriever's, {K_HELP})")
    p.add_argument(
        "--filter", help='metadata filter: a JSON object {"field": "value"} (escaped) or a Milvus expression'
    )
    p.add_argument(
        "--min-score",
        type=float,
        metavar="S",
        help="leave out passages whose similarity to the question is below S (graph and naive; default: off)",
    )
    p.add_argument("--llm", metavar="MODEL", help="OpenAI chat model for entity extraction and rerank (default: none)")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument("--html", type=Path, metavar="FILE", help="also write the subgraph behind the answer as a page")
    p.add_argument("--tenant", help="only this tenant's passages (required on a store with a partition key)")
    p.add_argument(
        "--all-tenants", action="store_true", help="on a store with a partition key: search every tenant's passages"
    )
    add_store_arguments(p)
    p.set_defaults(handler="langchain_graphrag_milvus.cli.query:run")
