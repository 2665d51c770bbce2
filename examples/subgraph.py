"""See the subgraph behind an answer: the demo question's entities, relations hop by hop, passages.

    .venv/bin/python examples/subgraph.py

Writes examples/data/subgraph.html (open it in a browser: it works offline, no CDN), the
same subgraph as GraphML and JSON, and the whole stored graph as GraphML.
"""

from __future__ import annotations

from _common import DB_URI, HERE, banner, chat_model, embeddings

from langchain_graphrag_milvus import MilvusGraphRetriever, MilvusGraphStore
from langchain_graphrag_milvus.datasets import NANO_QUESTION, nano_dataset


def main() -> None:
    banner()
    embedding, name = embeddings()
    store = MilvusGraphStore(embedding, uri=DB_URI, collection_prefix=f"quickstart_{name}")
    store.add_records(nano_dataset())  # idempotent: a re-run adds nothing
    retriever = MilvusGraphRetriever(store=store, llm=chat_model(), k=2)

    sub = retriever.explain(NANO_QUESTION)  # runs the retrieval once and records what it did
    out = HERE / "data"
    sub.write_html(out / "subgraph.html")
    sub.write_graphml(out / "subgraph.graphml")
    sub.write_json(out / "subgraph.json")
    store.export_graph().write_graphml(out / "graph.graphml")

    print(f"Question: {NANO_QUESTION}")
    for node in sub.nodes:
        if node.kind == "passage":
            print(f"  passage #{node.data['rank']} (score {node.score:.3f}): {node.label[:70]}")
    by_hop: dict[object, int] = {}
    for node in sub.nodes:
        if node.kind == "relation":
            by_hop[node.hop] = by_hop.get(node.hop, 0) + 1
    print(f"  relations shown by hop: {dict(sorted(by_hop.items(), key=str))}")
    graph = sub.to_networkx()
    print(f"  networkx: {graph.number_of_nodes()} nodes, {graph.number_of_edges()} edges")
    for path in ("subgraph.html", "subgraph.graphml", "subgraph.json", "graph.graphml"):
        print(f"wrote {out / path}")
    store.close()


if __name__ == "__main__":
    main()
