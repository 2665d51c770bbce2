"""How are two entities related? Paths on the graph as pseudo-documents (the second seed).

    .venv/bin/python examples/paths.py

Builds the seed's nano dataset on Milvus Lite, then asks "How is Leonhard Euler related to
Daniel Bernoulli?": neither passage alone answers it, and the naive retriever returns the
two passages without the link between them. The path retriever finds the shortest paths
between the two entities on the graph, keeps a diverse few, and linearises each as text
with the supporting sentences of its source passages. With OPENAI_API_KEY set, an LLM
answers from those paths in an LCEL chain; offline, the chain's prompt is printed instead.
"""

from __future__ import annotations

import textwrap

from _common import DB_URI, banner, chat_model, embeddings
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnableLambda, RunnablePassthrough

from langchain_graphrag_milvus import MilvusGraphStore, MilvusPathRetriever
from langchain_graphrag_milvus.datasets import nano_dataset
from langchain_graphrag_milvus.path_retriever import NoPathEvents

QUESTION = "How is Leonhard Euler related to Daniel Bernoulli?"

PROMPT = ChatPromptTemplate.from_template(
    "Answer the question from the paths between its entities in a knowledge graph.\n\n"
    "Paths:\n{paths}\n\nQuestion: {question}\nAnswer:"
)


def format_paths(docs) -> str:
    if not docs:  # no path: the retriever returns nothing (the reason goes to its callbacks)
        return "(no path between the question's entities)"
    return "\n\n".join(doc.page_content for doc in docs)


def main() -> None:
    banner()
    embedding, name = embeddings()
    store = MilvusGraphStore(embedding, uri=DB_URI, collection_prefix=f"paths_{name}")
    store.add_records(nano_dataset())
    paths = MilvusPathRetriever(store=store, sentences=True)

    print(f"Question: {QUESTION}\n")
    naive = store.as_naive_retriever(k=2).invoke(QUESTION)
    print("Naive RAG passages (no link between them):")
    for doc in naive:
        print(f"  - {textwrap.shorten(doc.page_content, 100)}")
    print()

    docs = paths.invoke(QUESTION)
    print("Paths between the question's entities:")
    for doc in docs:
        meta = doc.metadata
        print(textwrap.indent(doc.page_content, "  "))
        print(f"  ({meta['_hops']} hops; passages {', '.join(meta['_passage_ids'])})\n")

    chain = {"paths": paths | RunnableLambda(format_paths), "question": RunnablePassthrough()} | PROMPT
    llm = chat_model()
    if llm is not None:
        print("Answer:", (chain | llm | StrOutputParser()).invoke(QUESTION))
    else:
        print("The LCEL chain's prompt (an LLM would answer it):")
        print(textwrap.indent(chain.invoke(QUESTION).to_string(), "  | ", lambda _: True))
    print()

    three = "How are Jakob Bernoulli, Leonhard Euler and Daniel Bernoulli related?"
    print(f"Three entities, one path per pair: {three}")
    for doc in paths.invoke(three, sentences=False):
        print(f"  {' → '.join(doc.metadata['_path'])}")
    print()
    why = NoPathEvents()  # collects the reason of a retrieval that finds no path
    far = paths.invoke("?", entities=["Basel", "the law of large numbers"], max_hops=2, config={"callbacks": [why]})
    print(f"Basel – the law of large numbers, 2 hops per side: {len(far)} paths; {why.last['reason']}")
    store.close()


if __name__ == "__main__":
    main()
