"""``ask "..."``: an answer with ``[n]`` citations, each mapped to its source, page and relations.

Retrieves like ``query`` (``--mode``, ``-k``, ``--filter``, ``--tenant``), then asks an OpenAI
chat model (``--llm``, needs ``OPENAI_API_KEY``) to answer from the numbered passages with
:func:`~langchain_graphrag_milvus.answers.create_cited_answer_chain`. The answer streams to
the terminal as it is written; the citations follow. ``--json`` prints the whole result.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from langchain_graphrag_milvus.cli.common import K_HELP, add_store_arguments, make_chat_model
from langchain_graphrag_milvus.cli.output import emit, terminal_json, terminal_text

__all__ = ["run", "add_parser"]


def _citation_line(item: dict[str, Any]) -> str:
    where = terminal_text(str(item.get("source") or item.get("passage_id") or ""))
    if isinstance(item.get("page"), int):
        where += f" (page {item['page'] + 1})"
    lines = [f"[{item['n']}] {where}"]
    lines += [f"     via: {terminal_text(r)}" for r in (item.get("relations") or [])[:3]]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Run ``ask``."""
    from langchain_graphrag_milvus.answers import create_cited_answer_chain
    from langchain_graphrag_milvus.cli.query import make_retriever
    from langchain_graphrag_milvus.cli.tenancy import open_tenant_store

    llm = make_chat_model(args.llm, required="ask")
    store, key = open_tenant_store(args, reader=True)
    try:
        chain = create_cited_answer_chain(make_retriever(store, _query_args(args), key), llm)
        if args.json:
            emit(terminal_json(chain.invoke(args.question)))
            return 0
        final: dict[str, Any] = {}
        for chunk in chain.stream(args.question):
            if "answer" in chunk:
                sys.stdout.write(terminal_text(chunk["answer"]))
                sys.stdout.flush()
            final.update({k: v for k, v in chunk.items() if k != "answer"})
        sys.stdout.write("\n")
    finally:
        store.close()
    cited = final.get("citations") or []
    emit("\nSources:\n" + "\n".join(_citation_line(c) for c in cited) if cited else "\n(no passage cited)")
    return 0


def _query_args(args: argparse.Namespace) -> argparse.Namespace:
    """``query``'s options for :func:`~.query.make_retriever` (no LLM rerank)."""
    return argparse.Namespace(**{**vars(args), "llm": None})


def add_parser(sub: Any) -> None:
    """The ``ask`` subcommand's arguments."""
    p = sub.add_parser(
        "ask",
        help="answer a question from the store with [n] citations (needs OPENAI_API_KEY)",
        description="Retrieve passages (as query does) and have a chat model answer from them, citing [n]; "
        "each citation is mapped to its source, page and the relations behind the passage.",
    )
    p.add_argument("question", help="the question")
    p.add_argument("--mode", choices=["graph", "naive", "paths"], default="graph", help="retriever (default graph)")
    p.add_argument("-k", type=int, help=f"passages given to the model (default: the retriever's, {K_HELP})")
    p.add_argument("--filter", help='metadata filter: a JSON object {"field": "value"} or a Milvus expression')
    p.add_argument("--llm", default="gpt-4o-mini", help="OpenAI chat model (default gpt-4o-mini)")
    p.add_argument("--json", action="store_true", help="print the answer, citations and passages as JSON")
    p.add_argument("--tenant", help="only this tenant's passages (required on a store with a partition key)")
    p.add_argument("--all-tenants", action="store_true", help="on a partitioned store: every tenant's passages")
    add_store_arguments(p)
    p.set_defaults(handler="langchain_graphrag_milvus.cli.ask:run")
