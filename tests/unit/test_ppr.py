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


def dense_reference(g, restart: np.ndarray, damping: float, mask=None) -> np.ndarray:
    """Textbook PPR by a linear solve on the dense E+R+P adjacency."""
    n_e, n_r, n_p = g.n_entities, g.n_relations, g.n_passages
    n = n_e + n_r + n_p
    adj = np.zeros((n, n))
    for e in range(n_e):
        for r in g.ent_rel.row(e):
            adj[e, n_e + r] = adj[n_e + r, e] = 1
    for r in range(n_r):
        for p in g.rel_pas.row(r):
            adj[n_e + r, n_e + n_r + p] = adj[n_e + n_r + p, n_e + r] = 1
    if mask is not None:  # a masked relation is no node of the walk: no edges, no degree
        blocked = n_e + np.flatnonzero(~mask)
        adj[blocked, :] = 0
        adj[:, blocked] = 0
    P = adj / np.maximum(adj.sum(axis=0), 1)  # column-stochastic
    x = np.linalg.solve(np.eye(n) - damping * P, (1 - damping) * restart)
    return x / x.sum()


@pytest.mark.parametrize("masked", [False, True])
def test_ppr_matches_the_dense_linear_solve(masked: bool) -> None:
    g = random_graph(7, n_entities=20, n_relations=50, n_passages=12)
    mask = None
    if masked:
        mask = np.ones(g.n_relations, bool)
        mask[::3] = False
    restart = np.zeros(g.n_entities + g.n_relations + g.n_passages)
    restart[[1, 4]] = [1.0, 3.0]
    restart[g.n_entities + 10] = 2.0
    if mask is not None:
        restart[g.n_entities : g.n_entities + g.n_relations][~mask] = 0
    restart /= restart.sum()
    got = personalized_pagerank(
        g,
        entity_weights={1: 1.0, 4: 3.0},
        relation_weights={10: 2.0},
        damping=0.5,
        tol=1e-10,
        max_iter=500,
        relation_mask=mask,
    )
    ref = dense_reference(g, restart, 0.5, mask)
    assert np.allclose(np.concatenate([got.entity, got.relation, got.passage]), ref, atol=1e-5)
