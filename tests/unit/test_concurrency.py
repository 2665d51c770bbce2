"""Concurrent use without Milvus: the graph index is safe for concurrent readers (store half: integration)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from langchain_graphrag_milvus.graph.ppr import personalized_pagerank

from .test_graph_index import random_graph


def test_graph_index_is_safe_for_concurrent_readers() -> None:
    g = random_graph(11, n_entities=300, n_relations=2000, n_passages=200)
    rng = np.random.default_rng(0)
    jobs = [
        (rng.choice(g.n_entities, 5, replace=False), rng.choice(g.n_relations, 3, replace=False)) for _ in range(64)
    ]

    def run(job):
        ents, rels = job
        e = g.expand(entity_seeds=ents, relation_seeds=rels, hops=2, max_neighbors=20, max_relations=100)
        p = personalized_pagerank(g, entity_weights=(ents, np.ones(ents.size)), relation_weights=(rels, np.ones(3)))
        return e.relations.tobytes(), e.scores.tobytes(), p.passage.tobytes()

    sequential = [run(j) for j in jobs]
    with ThreadPoolExecutor(8) as pool:
        assert list(pool.map(run, jobs)) == sequential
