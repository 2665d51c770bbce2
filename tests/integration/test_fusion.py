"""``fuse_dense``: MilvusGraphRetriever returns what ``fuse_orders`` says (Lite and server, sync and async)."""

from __future__ import annotations

from langchain_graphrag_milvus import MilvusGraphRetriever
from langchain_graphrag_milvus.datasets import NANO_QUESTION
from langchain_graphrag_milvus.retrieval.fusion import FUSION_DEPTH, fuse_orders

QUERIES = [NANO_QUESTION, "Who was Jakob Bernoulli's younger brother?", "fluid dynamics"]


async def test_the_retriever_returns_the_fused_order(nano_store, retrieve) -> None:
    changed = False
    for query in QUERIES:
        naive = [d.id for d in await retrieve(nano_store.as_naive_retriever(k=FUSION_DEPTH), query)]
        unfused = MilvusGraphRetriever(store=nano_store, k=FUSION_DEPTH, fuse_dense_unlinked=0.0)  # the walk alone
        docs = await retrieve(unfused, query)
        walk = [d.id for d in docs if d.metadata["_ranked_by"] == "graph"]  # the walk's order (then dense fills)
        assert walk, query
        for k, weight, c in ((2, 0.5, 0.0), (3, 0.3, 1.0), (4, 0.9, 60.0)):
            expected = list(dict.fromkeys(fuse_orders(walk, naive, weight=weight, c=c) + naive))[:k]
            only = {"fuse_dense_unlinked": 0.0}  # fuse_dense alone, linked or not
            retriever = MilvusGraphRetriever(store=nano_store, k=k, fuse_dense=weight, fuse_dense_c=c, **only)
            fused = await retrieve(retriever, query)
            assert [d.id for d in fused] == expected, (query, k, weight, c)
            per_call = await retrieve(
                MilvusGraphRetriever(store=nano_store, k=k, **only), query, fuse_dense=weight, fuse_dense_c=c
            )
            assert [d.id for d in per_call] == expected
            graph_first = [d.id for d in docs][:k]
            changed |= expected != graph_first
            for doc in fused:  # a passage keeps the provenance of the list that ranked it
                assert doc.metadata["_ranked_by"] == ("graph" if doc.id in walk else "passage_similarity")
    assert changed  # the fusion moved a dense hit into some top k


async def test_off_is_the_graph_order(nano_store, retrieve) -> None:
    for query in QUERIES:
        graph = [d.id for d in await retrieve(MilvusGraphRetriever(store=nano_store, k=4), query)]
        off = await retrieve(MilvusGraphRetriever(store=nano_store, k=4, fuse_dense=0.0, fuse_dense_c=7.0), query)
        assert [d.id for d in off] == graph


async def test_a_query_with_no_linked_entity_takes_the_unlinked_weight(nano_store, retrieve) -> None:
    """``fuse_dense_unlinked``: the dense share of a query whose names link to no graph entity, else ``fuse_dense``."""
    kinds = set()
    for query in [*QUERIES, "what moves the liquid in a pipe"]:
        linked = bool(nano_store.entity_linker().find(query))
        kinds.add(linked)
        naive = [d.id for d in await retrieve(nano_store.as_naive_retriever(k=FUSION_DEPTH), query)]
        unfused = MilvusGraphRetriever(store=nano_store, k=FUSION_DEPTH, fuse_dense_unlinked=0.0)  # the walk alone
        walk = [d.id for d in await retrieve(unfused, query) if d.metadata["_ranked_by"] == "graph"]
        for base, unlinked in ((0.0, 1.0), (0.2, 0.7), (0.5, 0.1)):
            weight = base if linked else max(base, unlinked)
            expected = list(dict.fromkeys(fuse_orders(walk, naive, weight=weight, c=0.0) + naive))[:4]
            settings = {"fuse_dense": base, "fuse_dense_unlinked": unlinked}
            got = await retrieve(MilvusGraphRetriever(store=nano_store, k=4, **settings), query)
            assert [d.id for d in got] == expected, (query, linked, base, unlinked)
    assert kinds == {True, False}  # both kinds of query were asked
