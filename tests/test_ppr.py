from __future__ import annotations

import numpy as np
import pytest

from langchain_graphrag_milvus import GraphIndex
from langchain_graphrag_milvus.graph.ppr import personalized_pagerank

from .test_graph_index import random_graph


def total(r) -> float:
    return float(r.entity.sum() + r.relation.sum() + r.passage.sum())


@pytest.mark.parametrize("seed", [0, 1])
def test_ppr_is_a_probability_vector(seed: int) -> None:
    g = random_graph(seed)
    r = personalized_pagerank(
        g, entity_weights={0: 1.0, 3: 2.0}, relation_weights=([5], [0.5]), passage_weights={1: 1.0}, tol=1e-8
    )
    assert r.converged
    assert abs(total(r) - 1.0) < 1e-5
    assert min(r.entity.min(), r.relation.min(), r.passage.min()) >= 0


def test_ppr_prefers_nodes_near_the_seed() -> None:
    g = GraphIndex.from_relations(
        relation_keys=[1, 2, 3],
        subject_keys=[10, 20, 30],
        object_keys=[20, 30, 40],
        passage_ids=[["p1"], ["p2"], ["p3"]],
    )
    r = personalized_pagerank(g, entity_weights={0: 1.0})
    p = dict(zip(g.passages.ids, r.passage.tolist()))
    assert p["p1"] > p["p2"] > p["p3"] > 0


def test_ppr_without_seeds_is_zero_and_mask_blocks() -> None:
    g = random_graph(2)
    r = personalized_pagerank(g)
    assert total(r) == 0 and r.iterations == 0
    mask = np.ones(g.n_relations, bool)
    mask[:50] = False
    m = personalized_pagerank(g, entity_weights={1: 1.0}, relation_mask=mask)
    assert np.all(m.relation[:50] == 0)
    assert abs(total(m) - 1.0) < 1e-5


def test_ppr_validates_input() -> None:
    g = random_graph(2)
    with pytest.raises(IndexError):
        personalized_pagerank(g, entity_weights={10_000: 1.0})
    with pytest.raises(ValueError):
        personalized_pagerank(g, entity_weights={0: -1.0})
    with pytest.raises(ValueError):
        personalized_pagerank(g, entity_weights={0: 1.0}, damping=1.5)
