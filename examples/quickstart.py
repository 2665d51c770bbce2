"""Quickstart: the seed notebook's Bernoulli/Euler example, naive RAG vs graph RAG.

    python examples/quickstart.py

Runs offline on Milvus Lite (a directory under examples/data/). With OPENAI_API_KEY set
it uses OpenAI embeddings and gpt-4o for entity extraction and reranking, as the seed does.
"""

from __future__ import annotations

import textwrap

from _common import DB_URI, banner, chat_model, embeddings

from langchain_graphrag_milvus import MilvusGraphRetriever, MilvusGraphStore
from langchain_graphrag_milvus.datasets import NANO_QUESTION, nano_dataset


def show(title: str, docs) -> None:
    print(title)
    for i, doc in enumerate(docs, 1):
        print(f"  {i}. {textwrap.shorten(doc.page_content, 110)}")
        if doc.metadata.get("_relations"):
            print(f"     via: {doc.metadata['_relations'][0]!r} ({doc.metadata['_ranked_by']})")
    print()


def main() -> None:
    banner()
    embedding, name = embeddings()
    store = MilvusGraphStore(embedding, uri=DB_URI, collection_prefix=f"quickstart_{name}")
    report = store.add_records(nano_dataset())  # idempotent: a re-run adds nothing
    print(f"Ingest: {report}\n")

    naive = store.as_naive_retriever(k=2)
    graph = MilvusGraphRetriever(store=store, llm=chat_model(), k=2)

    print(f"Question: {NANO_QUESTION}\n")
    show("Passages retrieved from naive RAG:", naive.invoke(NANO_QUESTION))
    show("Passages retrieved from graph RAG:", graph.invoke(NANO_QUESTION))
    store.close()


if __name__ == "__main__":
    main()
