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


def _textbook_sweeps(to_nodes, to_relations, s_nodes, s_rel, blocked, setting, settle=(0, 0)):
    """The sweep as first written (a new array per operation): the buffered one must match it bit for bit."""
    damping, tol, max_iter = setting
    x_rel, x_nodes = s_rel.copy(), s_nodes.copy()
    residual, iterations = float("inf"), 0
    for iterations in range(1, max_iter + 1):
        new_nodes = (1.0 - damping) * s_nodes + damping * (to_nodes @ x_rel)
        new_rel = (1.0 - damping) * s_rel + damping * (to_relations @ new_nodes)
        if blocked is not None:
            new_rel[blocked] = 0.0
        residual = float(np.abs(new_nodes - x_nodes).sum() + np.abs(new_rel - x_rel).sum())
        x_nodes, x_rel = new_nodes, new_rel
        if residual < tol:
            break
    return x_nodes, x_rel, iterations, residual, False


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
@pytest.mark.parametrize("masked", [False, True])
@pytest.mark.parametrize("damping", [0.5, 0.85])
def test_buffered_sweeps_are_bit_identical_to_the_textbook_expression(
    seed: int, masked: bool, damping: float, monkeypatch: pytest.MonkeyPatch
) -> None:
    from langchain_graphrag_milvus.graph import ppr

    g = random_graph(seed, n_entities=300, n_relations=900, n_passages=80)
    rng = np.random.default_rng(seed)
    mask = rng.random(g.n_relations) > 0.2 if masked else None
    kwargs = dict(
        entity_weights=(rng.choice(g.n_entities, 3, replace=False), rng.random(3)),
        relation_weights=(rng.choice(g.n_relations, 20, replace=False), rng.random(20)),
        passage_weights=({int(rng.integers(g.n_passages)): 1.0}),
        damping=damping,
        relation_mask=mask,
    )
    got = personalized_pagerank(g, **kwargs)
    monkeypatch.setattr(ppr, "_sweeps", _textbook_sweeps)
    ref = personalized_pagerank(g, **kwargs)
    assert got.iterations == ref.iterations > 3 and got.residual == ref.residual
    for part in ("entity", "relation", "passage"):
        assert np.array_equal(getattr(got, part), getattr(ref, part))


def test_the_product_kernel_writes_what_matmul_returns() -> None:
    from langchain_graphrag_milvus.graph.ppr import _product, transition_matrices

    g = random_graph(4)
    to_nodes, to_relations = transition_matrices(g)
    x = np.random.default_rng(0).random(g.n_relations).astype(np.float32)
    out = np.full(to_nodes.shape[0], 7.0, np.float32)  # whatever the buffer held before
    _product(to_nodes, x, out)
    assert np.array_equal(out, to_nodes @ x)
    y = np.random.default_rng(1).random(to_relations.shape[1])  # float64: the plain product
    out64 = np.zeros(to_relations.shape[0], np.float32)
    _product(to_relations, y, out64)
    assert np.array_equal(out64, (to_relations @ y).astype(np.float32))
