"""Quickstart: the seed notebook's Bernoulli/Euler example, naive RAG vs graph RAG.

    python examples/quickstart.py
    python examples/quickstart.py --given-triplets    # the seed's hand-made triplets instead

Runs offline on Milvus Lite (a directory under examples/data/). By default the four
passages go in as raw text, and the graph is built by the offline extractor (spaCy, no
LLM, no key). With OPENAI_API_KEY set it uses OpenAI embeddings and gpt-4o for the
question's entities and the rerank, as the seed does. It prints which path ran.
"""

from __future__ import annotations

import argparse
import textwrap

from _common import DB_URI, banner, chat_model, embeddings
from langchain_core.documents import Document

from langchain_graphrag_milvus import MilvusGraphRetriever, MilvusGraphStore
from langchain_graphrag_milvus.datasets import NANO_QUESTION, nano_dataset


def show(title: str, docs) -> None:
    print(title)
    for i, doc in enumerate(docs, 1):
        print(f"  {i}. {textwrap.shorten(doc.page_content, 110)}")
        if doc.metadata.get("_relations"):
            print(f"     via: {doc.metadata['_relations'][0]!r} ({doc.metadata['_ranked_by']})")
    print()


def offline_store(embedding, name: str) -> MilvusGraphStore | None:
    """The passages as raw text, triplets from the offline extractor (None: spaCy missing)."""
    from langchain_graphrag_milvus.ingest.offline import (
        OfflineExtractorUnavailableError,
        create_offline_triplet_extractor,
    )

    try:
        extractor = create_offline_triplet_extractor()
    except OfflineExtractorUnavailableError as exc:
        print(f"(offline extractor unavailable: {exc}; using the seed's given triplets)\n")
        return None
    store = MilvusGraphStore(embedding, uri=DB_URI, collection_prefix=f"quickstart_offline_{name}", extractor=extractor)
    docs = [Document(id=f"nano-{i}", page_content=r["passage"]) for i, r in enumerate(nano_dataset())]
    print(f"Graph built from RAW TEXT by the offline extractor ({extractor.pipeline}, no LLM):")
    report = store.add_documents(docs)  # idempotent: a re-run adds nothing
    print(f"  {report}")
    sample = extractor.invoke(docs[3])["triplets"]  # what it read in the Euler passage
    for s, p, o in sample[:4]:
        print(f"  e.g. ({s!r}, {p!r}, {o!r})")
    print()
    return store


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--given-triplets", action="store_true", help="ingest the seed's hand-made triplets")
    args = parser.parse_args()
    banner()
    embedding, name = embeddings()
    store = None if args.given_triplets else offline_store(embedding, name)
    if store is None:
        store = MilvusGraphStore(embedding, uri=DB_URI, collection_prefix=f"quickstart_{name}")
        print("Graph built from the seed's GIVEN triplets (hand-made, 22 facts):")
        print(f"  {store.add_records(nano_dataset())}\n")

    naive = store.as_naive_retriever(k=2)
    graph = MilvusGraphRetriever(store=store, llm=chat_model(), k=2)

    print(f"Question: {NANO_QUESTION}\n")
    show("Passages retrieved from naive RAG:", naive.invoke(NANO_QUESTION))
    show("Passages retrieved from graph RAG:", graph.invoke(NANO_QUESTION))
    store.close()


if __name__ == "__main__":
    main()
