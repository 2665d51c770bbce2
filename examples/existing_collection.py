"""Graph RAG over a collection a team already has (made with langchain_milvus.Milvus.from_documents).

    .venv/bin/python examples/existing_collection.py

The four passages go into a plain langchain-milvus collection, as a team would have them.
The graph store adopts it: the passages stay there; triplets come from the offline
extractor (spaCy, no LLM) when it is installed, else from the seed's hand-made triplets;
only the entity and relation collections are created beside it. Then the naive and the
graph retriever answer the seed's question from the same collection.
"""

from __future__ import annotations

from _common import DB_URI, banner, embeddings
from langchain_core.documents import Document
from langchain_milvus import Milvus

from langchain_graphrag_milvus import ExistingCollectionGraphStore, MilvusGraphRetriever
from langchain_graphrag_milvus.datasets import NANO_QUESTION, nano_dataset


def main() -> None:
    banner()
    embedding, name = embeddings()
    collection = f"team_docs_{name}"
    sources = ["jakob.txt", "johann.txt", "daniel.txt", "euler.txt"]
    docs = [Document(page_content=r["passage"], metadata={"source": s}) for r, s in zip(nano_dataset(), sources)]
    team = Milvus(embedding, collection_name=collection, connection_args={"uri": DB_URI}, auto_id=True)
    if not team.client.has_collection(collection) or not team.similarity_search("Euler", k=1):
        team.add_documents(docs)  # what the team already has
    print(f"Existing collection {collection!r}: {len(docs)} passages (langchain_milvus.Milvus)\n")

    store = ExistingCollectionGraphStore(embedding, collection_name=collection, uri=DB_URI)
    try:
        from langchain_graphrag_milvus.ingest.offline import create_offline_triplet_extractor

        report = store.index_passages(extractor=create_offline_triplet_extractor())
        how = "the offline extractor (spaCy, no LLM)"
    except ImportError:
        by_text = {r["passage"]: r["triplets"] for r in nano_dataset()}
        rows = team.client.query(collection, filter="", output_fields=["pk", "text"], limit=100)
        report = store.index_passages(triplets={str(r["pk"]): by_text[r["text"]] for r in rows})
        how = "the seed's given triplets"
    print(f"Graph indexed from {how}:\n  {report}\n")

    print(f"Question: {NANO_QUESTION}\n")
    for label, retriever in (
        ("naive RAG", store.as_naive_retriever(k=2)),
        ("graph RAG", MilvusGraphRetriever(store=store, k=2)),
    ):
        print(f"Passages retrieved from {label}:")
        for i, doc in enumerate(retriever.invoke(NANO_QUESTION), 1):
            print(f"  {i}. [{doc.metadata['source']}] {doc.page_content[:90]} [...]")
        print()
    store.close()


if __name__ == "__main__":
    main()
