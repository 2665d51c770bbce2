"""Concurrent use: 100 concurrent ainvoke equal sequential calls; batch/abatch; shared graph reads."""

from __future__ import annotations

import asyncio

from langchain_core.runnables import RunnableLambda

from langchain_graphrag_milvus import MilvusGraphRetriever
from langchain_graphrag_milvus.datasets import NANO_QUESTION

from ..fakes import SelectingChatModel

QUERIES = [
    NANO_QUESTION,
    "Who was Jakob Bernoulli's younger brother?",
    "Where was Leonhard Euler born?",
    "What is Bernoulli's principle fundamental to?",
    "Who worked on infinitesimal calculus?",
    "What did Daniel Bernoulli contribute to?",
    "Who spread Leibniz's ideas across Europe?",
    "What is the Bernoulli theorem a precursor to?",
    "Who mentored Euler in mathematics?",
    "What problem is Johann Bernoulli known for?",
]


def signature(docs) -> list[tuple]:
    return [
        (d.id, d.metadata["_ranked_by"], round(d.metadata["_score"], 5), tuple(d.metadata.get("_relations", [])))
        for d in docs
    ]


async def test_hundred_concurrent_ainvoke_equal_sequential(nano_store) -> None:
    retriever = MilvusGraphRetriever(
        store=nano_store,
        k=3,
        llm=SelectingChatModel(select=[r"Daniel", r"Euler"]),
        entity_extractor=nano_store.entity_linker().as_runnable(),
    )
    queries = [QUERIES[i % len(QUERIES)] for i in range(100)]
    sequential = {q: signature(retriever.invoke(q)) for q in QUERIES}
    results = await asyncio.gather(*(retriever.ainvoke(q) for q in queries))
    assert [signature(r) for r in results] == [sequential[q] for q in queries]


async def test_batch_and_abatch(nano_store) -> None:
    slow = RunnableLambda(lambda payload: [0], afunc=None)
    retriever = MilvusGraphRetriever(store=nano_store, k=2, reranker=slow)
    expected = [signature(retriever.invoke(q)) for q in QUERIES]
    assert [signature(r) for r in retriever.batch(QUERIES, config={"max_concurrency": 8})] == expected
    assert [signature(r) for r in await retriever.abatch(QUERIES, config={"max_concurrency": 8})] == expected
