"""``keep_dense``: the dense top hits keep a place in MilvusGraphRetriever's result (Lite and server)."""

from __future__ import annotations

from langchain_graphrag_milvus import MilvusGraphRetriever
from langchain_graphrag_milvus.datasets import NANO_QUESTION

QUERIES = [NANO_QUESTION, "Who was Jakob Bernoulli's younger brother?", "fluid dynamics"]


async def test_kept_dense_hits_are_placed_by_their_deadline(nano_store, retrieve) -> None:
    changed = False
    for query in QUERIES:
        naive = [d.id for d in await retrieve(nano_store.as_naive_retriever(k=4), query)]
        graph = [d.id for d in await retrieve(MilvusGraphRetriever(store=nano_store, k=4), query)]
        assert len(naive) == len(graph) == 4
        # keep the dense top 2, no slack: exactly naive's top 2, in naive's order
        kept = await retrieve(MilvusGraphRetriever(store=nano_store, k=2, keep_dense=2), query)
        assert [d.id for d in kept] == naive[:2]
        changed |= naive[:2] != graph[:2]
        # keep the dense top 1 with one position of slack: the graph's first, unless naive's first is it
        retriever = MilvusGraphRetriever(store=nano_store, k=3, keep_dense=1, keep_dense_slack=1)
        docs = await retrieve(retriever, query)
        ids = [d.id for d in docs]
        assert len(ids) == len(set(ids)) == 3 and naive[0] in ids[:2]
        rest = [i for i in graph if i != naive[0]]
        assert [i for i in ids if i != naive[0]] == rest[: len(ids) - (naive[0] in ids)]
        assert ids[0] == graph[0]  # the slack position is the graph's
        # the same per call, and off by default
        per_call = await retrieve(MilvusGraphRetriever(store=nano_store, k=3), query, keep_dense=1, keep_dense_slack=1)
        assert [d.id for d in per_call] == ids
        for doc in docs:  # a kept passage the graph also ranked keeps its graph provenance
            assert doc.metadata["_ranked_by"] in ("graph", "passage_similarity")
    assert changed  # "fluid dynamics": naive's second passage is not the graph's, and is kept


async def test_off_is_the_graph_order(nano_store, retrieve) -> None:
    for query in QUERIES:
        graph = [d.id for d in await retrieve(MilvusGraphRetriever(store=nano_store, k=4), query)]
        off = await retrieve(MilvusGraphRetriever(store=nano_store, k=4, keep_dense=0, keep_dense_slack=3), query)
        assert [d.id for d in off] == graph
