"""The graph retriever inside an LCEL chain: retriever | format | prompt | llm.

    .venv/bin/python examples/lcel_chain.py

The naive retriever over the same passages drops into the same chain, so the two can be
compared (or swapped) with one line. Without OPENAI_API_KEY there is no LLM: the chain
stops at the prompt and prints what the LLM would receive.
"""

from __future__ import annotations

from _common import DB_URI, banner, chat_model, embeddings
from langchain_core.documents import Document
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import Runnable, RunnablePassthrough

from langchain_graphrag_milvus import MilvusGraphRetriever, MilvusGraphStore
from langchain_graphrag_milvus.datasets import NANO_QUESTION, nano_dataset

# the seed notebook's answer prompt
PROMPT = ChatPromptTemplate.from_messages(
    [
        (
            "human",
            "Use the following pieces of retrieved context to answer the question. If there is not enough "
            "information in the retrieved context to answer the question, just say that you don't know.\n"
            "Question: {question}\nContext: {context}\nAnswer:",
        )
    ]
)


def format_docs(docs: list[Document]) -> str:
    return "\n".join(doc.page_content for doc in docs)


def rag_chain(retriever: Runnable, llm) -> Runnable:
    head = {"context": retriever | format_docs, "question": RunnablePassthrough()} | PROMPT
    return head | llm | StrOutputParser() if llm is not None else head


def main() -> None:
    banner()
    embedding, name = embeddings()
    store = MilvusGraphStore(embedding, uri=DB_URI, collection_prefix=f"quickstart_{name}")
    store.add_records(nano_dataset())
    llm = chat_model()

    for label, retriever in (
        ("naive RAG", store.as_naive_retriever(k=2)),
        ("graph RAG", MilvusGraphRetriever(store=store, llm=llm, k=2)),
    ):
        result = rag_chain(retriever, llm).invoke(NANO_QUESTION)
        if llm is None:
            print(f"--- {label}: no LLM, so here is the prompt the LLM would receive ---")
            print(result.to_messages()[0].content, "\n")
        else:
            print(f"--- {label} answer ---\n{result}\n")
    store.close()


if __name__ == "__main__":
    main()
