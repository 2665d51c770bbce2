"""Quickstart: the seed notebook's Bernoulli/Euler example, naive RAG vs graph RAG.

    python examples/quickstart.py
    python examples/quickstart.py --given-triplets    # the seed's hand-made triplets instead

Runs offline on Milvus Lite (a directory under examples/data/). By default the four
passages go in as raw text, and the graph is built by the offline extractor (spaCy, no
LLM, no key). With OPENAI_API_KEY set it uses OpenAI embeddings and gpt-4o for the
question's entities and the rerank, as the seed does. It prints which path ran.

Then it shows what the graph reached that naive search did not: the chain of relations
from the question to each passage naive search missed, where that passage stands in the
default ranking, the path retriever, and the subgraph page (examples/data/quickstart_subgraph.html,
or beside EXAMPLES_MILVUS_URI's store). Last, one real MuSiQue question on a bundled excerpt
(examples/musique_excerpt.jsonl; see _musique.py).
"""

from __future__ import annotations

import argparse
import os
import textwrap

from _common import DB_URI, OUT_DIR, banner, chat_model, embeddings
from _musique import musique_example
from _reach import chains_to
from langchain_core.documents import Document

from langchain_graphrag_milvus import MilvusGraphRetriever, MilvusGraphStore, MilvusPathRetriever
from langchain_graphrag_milvus.datasets import NANO_QUESTION, nano_dataset
from langchain_graphrag_milvus.path_retriever import NoPathEvents

K = 2


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


def what_the_graph_reached(store: MilvusGraphStore, graph: MilvusGraphRetriever, naive_ids: list[str]) -> None:
    """The chains from the question to the passages naive top-k lacks, and their rank."""
    print(f"What the graph reached that naive top-{K} did not (from graph.explain(question)):")
    sub = graph.explain(NANO_QUESTION)
    page = OUT_DIR / "quickstart_subgraph.html"
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    sub.write_html(page)
    linked = sub.settings.get("query_entities") or []
    print(f"  question entities linked: {', '.join(linked) if linked else 'none'}")
    ranking = graph.invoke(NANO_QUESTION, k=10)  # the same default ranking, further down
    rank = {str(d.id): i for i, d in enumerate(ranking, 1)}
    texts = {str(d.id): d.page_content for d in ranking}
    reached = {pid for n in sub.nodes if n.kind == "relation" for pid in n.data.get("passage_ids", [])}
    missed = sorted((p for p in reached if p not in naive_ids), key=lambda p: rank.get(p, 99))
    chains, how = chains_to(sub, missed)
    print(f"  the graph started from {how}")
    for chain in chains:
        pid = chain.passage_id
        where = f"rank {rank[pid]} of the graph's ranking" if pid in rank else "not ranked"
        in_top = "IN" if rank.get(pid, 99) <= K else "NOT in"
        print(f"  {chain.render()}")
        print(f"    → passage {pid}: {textwrap.shorten(texts.get(pid, ''), 80)}")
        print(f"      {where}, {in_top} the top-{K}")
    if not chains:
        print("  (nothing: every passage the graph touched is already in naive top-k)")
    elif all(rank.get(c.passage_id, 99) > K for c in chains) and graph.llm is not None:
        print(f"  The LLM rerank did not choose them for the top-{K}.")
    elif all(rank.get(c.passage_id, 99) > K for c in chains):
        print(
            f"  The default no-LLM top-{K} does NOT include them (relation similarity to the question and\n"
            "  PageRank from the most similar relations rank them lower). With OPENAI_API_KEY set, the LLM\n"
            "  rerank chooses among these reached facts instead."
        )
    shown = os.path.relpath(page)  # examples/data/... from the repository root
    print(f"  subgraph page (open it in a browser): {page if shown.startswith('..') else shown}\n")
    show_paths(store, chains)


def show_paths(store: MilvusGraphStore, chains) -> None:
    """The path retriever on the question, then between the ends of the graph's first chain."""
    paths = MilvusPathRetriever(store=store)
    why = NoPathEvents()
    docs = paths.invoke(NANO_QUESTION, config={"callbacks": [why]})
    print("Path retriever (it needs two entities named in the question):")
    if docs:
        for doc in docs:
            print(f"  {' → '.join(doc.metadata['_path'])}")
    else:
        print(f"  on the question: no path ({why.last['reason'] if why.last else 'no reason given'})")
    for chain in chains:  # between names the graph's chains found, not names the user gave
        ends = [chain.entities()[0], chain.entities()[-1]]
        docs = paths.invoke(NANO_QUESTION, entities=ends)
        print(f"  between the ends of the chain to {chain.passage_id} ({ends[0]} – {ends[1]}):")
        for doc in docs[:2]:
            print(f"    {' → '.join(doc.metadata['_path'])}  ({doc.metadata['_hops']} hops)")
    print()


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

    naive = store.as_naive_retriever(k=K)
    graph = MilvusGraphRetriever(store=store, llm=chat_model(), k=K)

    print(f"Question: {NANO_QUESTION}\n")
    naive_docs = naive.invoke(NANO_QUESTION)
    show("Passages retrieved from naive RAG:", naive_docs)
    show("Passages retrieved from graph RAG:", graph.invoke(NANO_QUESTION))
    what_the_graph_reached(store, graph, [str(d.id) for d in naive_docs])
    store.close()
    musique_example(embedding, name, chat_model())


if __name__ == "__main__":
    main()
