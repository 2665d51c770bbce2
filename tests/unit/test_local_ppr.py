"""Push-based local PageRank (graph/local_ppr.py) against the exact solve and the global solver."""

from __future__ import annotations

import numpy as np
import pytest

from langchain_graphrag_milvus import GraphIndex
from langchain_graphrag_milvus.graph.local_ppr import local_pagerank, push_pagerank
from langchain_graphrag_milvus.graph.ppr import personalized_pagerank
from langchain_graphrag_milvus.retrieval.walk_ranking import WalkParams, WalkSeeds, walk_ranking

from .test_graph_index import random_graph
from .test_ranking import nano_graph


def adjacency(g: GraphIndex, relation_mask=None, passage_mask=None) -> np.ndarray:
    """Dense E+R+P adjacency of the walk graph; masked relations and passages have no edges."""
    n_e, n_r, n_p = g.n_entities, g.n_relations, g.n_passages
    adj = np.zeros((n_e + n_r + n_p,) * 2)
    for e in range(n_e):
        for r in g.ent_rel.row(e):
            adj[e, n_e + r] = adj[n_e + r, e] = 1
    for r in range(n_r):
        for p in g.rel_pas.row(r):
            adj[n_e + r, n_e + n_r + p] = adj[n_e + n_r + p, n_e + r] = 1
    blocked = []
    if relation_mask is not None:
        blocked += (n_e + np.flatnonzero(~relation_mask)).tolist()
    if passage_mask is not None:
        blocked += (n_e + n_r + np.flatnonzero(~passage_mask)).tolist()
    adj[blocked, :] = 0
    adj[:, blocked] = 0
    return adj


def exact(g: GraphIndex, restart: np.ndarray, damping: float, relation_mask=None, passage_mask=None) -> np.ndarray:
    """The un-normalised solution of x = (1-d)·s + d·P·x (mass at a node without edges is lost)."""
    adj = adjacency(g, relation_mask, passage_mask)
    walk = adj / np.maximum(adj.sum(axis=0), 1)
    return np.linalg.solve(np.eye(adj.shape[0]) - damping * walk, (1 - damping) * restart)


def dense(g: GraphIndex, loc) -> np.ndarray:
    out = np.zeros(g.n_entities + g.n_relations + g.n_passages)
    out[loc.entity_idx] = loc.entity
    out[g.n_entities + loc.relation_idx] = loc.relation
    out[g.n_entities + g.n_relations + loc.passage_idx] = loc.passage
    return out


def case(seed: int):
    """A random graph (self-loops included), seeds on all three node types, and optional masks."""
    g = random_graph(seed, n_entities=30, n_relations=90, n_passages=20)
    rng = np.random.default_rng(seed)
    rmask = rng.random(g.n_relations) > 0.3 if seed % 2 else None
    pmask = rng.random(g.n_passages) > 0.3 if seed % 3 == 2 else None
    seeds = {"entity_weights": {0: 1.0, 3: 2.0}, "relation_weights": ([5, 7], [0.5, 1.0]), "passage_weights": {1: 1.0}}
    restart = np.zeros(g.n_entities + g.n_relations + g.n_passages)
    restart[[0, 3]] = [1.0, 2.0]
    restart[g.n_entities + np.array([5, 7])] = [0.5, 1.0]
    restart[g.n_entities + g.n_relations + 1] = 1.0
    if rmask is not None:
        restart[g.n_entities : g.n_entities + g.n_relations][~rmask] = 0
    if pmask is not None:
        restart[g.n_entities + g.n_relations :][~pmask] = 0
    return g, seeds, restart / restart.sum(), {"relation_mask": rmask, "passage_mask": pmask}


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("epsilon", [1e-2, 1e-4, 1e-7])
def test_push_keeps_the_acl_bound_per_node(seed: int, epsilon: float) -> None:
    g, seeds, restart, masks = case(seed)
    loc = local_pagerank(g, damping=0.85, epsilon=epsilon, **seeds, **masks)
    assert loc.converged
    x = exact(g, restart, 0.85, masks["relation_mask"], masks["passage_mask"])
    deg = adjacency(g, masks["relation_mask"], masks["passage_mask"]).sum(axis=0)
    gap = x - dense(g, loc)
    assert gap.min() > -1e-12  # the push never overestimates
    assert np.all(gap <= epsilon * deg + 1e-12)  # ACL: below epsilon times the degree, node by node
    assert gap.sum() <= loc.residual + 1e-12  # the missing mass is at most the residual left


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("epsilon", [1e-3, 1e-5, 1e-8])
def test_push_is_within_its_stated_l1_bound_of_the_global_solver(seed: int, epsilon: float) -> None:
    g, seeds, _, masks = case(seed)
    ref = personalized_pagerank(g, damping=0.85, tol=1e-13, max_iter=10_000, **seeds, **masks)
    got = push_pagerank(g, damping=0.85, epsilon=epsilon, **seeds, **masks)
    a = np.concatenate([ref.entity, ref.relation, ref.passage])
    b = np.concatenate([got.entity, got.relation, got.passage])
    assert abs(b.sum() - 1) < 1e-5
    assert np.abs(a - b).sum() <= got.residual + 1e-5  # residual: the L1 bound after normalising
    if epsilon <= 1e-8:
        assert np.abs(a - b).sum() < 1e-4


def test_masked_nodes_get_nothing_and_scores_equal_a_graph_without_them() -> None:
    g = random_graph(3, n_entities=30, n_relations=90, n_passages=20)
    rng = np.random.default_rng(0)
    pmask = rng.random(g.n_passages) > 0.4
    # a tenant view: allowed passages, and the relations at least one of them supports
    rmask = np.array([pmask[g.rel_pas.row(r)].any() for r in range(g.n_relations)])
    kept = np.flatnonzero(rmask)
    small = GraphIndex.from_relations(
        relation_keys=g.relations.keys[kept],
        subject_keys=g.entities.keys[g.rel_subject[kept]],
        object_keys=g.entities.keys[g.rel_object[kept]],
        passage_ids=[[g.passages.ids[p] for p in g.rel_pas.row(r) if pmask[p]] for r in kept],
    )
    seed_ents = [e for e in range(g.n_entities) if rmask[g.ent_rel.row(e)].any()][:3]
    seed_rel, seed_pas = int(kept[2]), int(np.flatnonzero(pmask)[0])
    masked_out_rel, masked_out_pas = int(np.flatnonzero(~rmask)[0]), int(np.flatnonzero(~pmask)[0])
    big = push_pagerank(
        g,
        entity_weights={e: 1.0 for e in seed_ents},
        relation_weights={seed_rel: 1.0, masked_out_rel: 5.0},  # seeds outside the view are dropped
        passage_weights={seed_pas: 1.0, masked_out_pas: 5.0},
        damping=0.85,
        epsilon=1e-9,
        relation_mask=rmask,
        passage_mask=pmask,
    )
    assert not big.relation[~rmask].any() and not big.passage[~pmask].any()
    assert not big.entity[[e for e in range(g.n_entities) if not rmask[g.ent_rel.row(e)].any()]].any()
    alone = push_pagerank(
        small,
        entity_weights={int(small.entities.lookup([g.entities.keys[e]])[0]): 1.0 for e in seed_ents},
        relation_weights={int(small.relations.lookup([g.relations.keys[seed_rel]])[0]): 1.0},
        passage_weights={int(small.passages.lookup([g.passages.ids[seed_pas]])[0]): 1.0},
        damping=0.85,
        epsilon=1e-9,
    )
    for keys, a_vals, b_vals, b_ids in (
        (g.entities.keys, big.entity, alone.entity, small.entities.keys),
        (g.relations.keys, big.relation, alone.relation, small.relations.keys),
    ):
        mapping = dict(zip(keys.tolist(), a_vals.tolist()))
        assert np.allclose([mapping[k] for k in b_ids.tolist()], b_vals, atol=1e-7)
    by_id = dict(zip(g.passages.ids, big.passage.tolist()))
    assert np.allclose([by_id[p] for p in small.passages.ids], alone.passage, atol=1e-7)


def test_push_ranks_the_seed_graph_like_the_global_walk() -> None:
    g, rel, ent = nano_graph()
    none = np.empty(0, np.int32)
    cases = [
        ([ent["Johann"]], [rel[("Euler", "was a student of", "Johann")]], []),
        ([ent["Daniel"], ent["Euler"]], [], [0, 2]),
        ([], [rel[("Jakob", "is known for", "Bernoulli numbers")], rel[("Johann", "worked on", "calculus")]], [1]),
    ]
    for ents, rels, pas in cases:
        seeds = WalkSeeds(
            np.array(rels, np.int32) if rels else none,
            np.linspace(0.9, 0.8, len(rels)).astype(np.float32),
            np.array(pas, np.int32) if pas else none,
            np.linspace(0.9, 0.8, len(pas)).astype(np.float32),
            np.array(ents, np.int32) if ents else none,
        )
        glob = walk_ranking(g, seeds, WalkParams(ppr_stop="residual"), limit=4)  # scores to the tolerance
        push = walk_ranking(g, seeds, WalkParams(ppr_method="push", push_epsilon=1e-8), limit=4)
        assert glob[0].tolist() == push[0].tolist() and len(glob[0]) > 0
        assert np.allclose(glob[1], push[1], atol=1e-4)


def test_work_follows_the_neighbourhood_not_the_graph() -> None:
    """Seeds in one component: a second, 50 times larger component is never touched."""
    small = random_graph(4, n_entities=20, n_relations=60, n_passages=10)
    far = random_graph(5, n_entities=1000, n_relations=3000, n_passages=500)
    both = GraphIndex.from_relations(
        relation_keys=np.concatenate([small.relations.keys, far.relations.keys + 10**6]),
        subject_keys=np.concatenate(
            [small.entities.keys[small.rel_subject], far.entities.keys[far.rel_subject] + 10**6]
        ),
        object_keys=np.concatenate([small.entities.keys[small.rel_object], far.entities.keys[far.rel_object] + 10**6]),
        passage_ids=[list(map(str, small.rel_pas.row(r))) for r in range(small.n_relations)]
        + [[f"far{p}" for p in far.rel_pas.row(r)] for r in range(far.n_relations)],
    )
    e_small = int(small.rel_subject[0])
    e_both = int(both.entities.lookup([small.entities.keys[e_small]])[0])
    a = local_pagerank(small, entity_weights={e_small: 1.0}, damping=0.85, epsilon=1e-6)
    b = local_pagerank(both, entity_weights={e_both: 1.0}, damping=0.85, epsilon=1e-6)
    assert (a.touched, a.pushes, a.edges, a.rounds) == (b.touched, b.pushes, b.edges, b.rounds)
    assert a.touched <= small.n_entities + small.n_relations + small.n_passages
    assert np.isclose(a.mass, b.mass) and b.passage_idx.size == a.passage_idx.size


def test_push_inputs_and_edge_cases() -> None:
    g = random_graph(2)
    empty = push_pagerank(g)
    assert empty.iterations == 0 and not (empty.entity.any() or empty.relation.any() or empty.passage.any())
    with pytest.raises(IndexError):
        push_pagerank(g, entity_weights={10_000: 1.0})
    with pytest.raises(ValueError):
        push_pagerank(g, entity_weights={0: -1.0})
    with pytest.raises(ValueError):
        push_pagerank(g, entity_weights={0: 1.0}, damping=1.0)
    with pytest.raises(ValueError):
        push_pagerank(g, entity_weights={0: 1.0}, epsilon=0.0)
    capped = local_pagerank(g, entity_weights={0: 1.0}, epsilon=1e-9, max_rounds=2)
    assert capped.rounds == 2 and not capped.converged
    # an entity whose every relation is masked out: its seed keeps (1-d) and loses the rest, like the global
    mask = np.ones(g.n_relations, bool)
    mask[g.ent_rel.row(0)] = False
    alone = push_pagerank(g, entity_weights={0: 1.0}, relation_mask=mask)
    assert alone.entity[0] == pytest.approx(1.0) and alone.entity.sum() == pytest.approx(1.0)
    with pytest.raises(ValueError, match="ppr_method"):
        WalkParams(ppr_method="local")
    with pytest.raises(ValueError, match="push_epsilon"):
        WalkParams(ppr_method="push", push_epsilon=0.0)


def test_reused_state_leaves_no_trace_between_calls() -> None:
    """Each graph keeps its push state between calls: a call must not see an earlier one's mass."""
    g = random_graph(6)
    mask = np.ones(g.n_relations, bool)
    mask[::4] = False

    def run(**kw):
        loc = local_pagerank(g, damping=0.85, **kw)
        return dense(g, loc), loc.residual

    first = run(entity_weights={0: 1.0}, epsilon=1e-6)
    run(entity_weights={5: 1.0}, passage_weights={2: 1.0}, epsilon=1e-3)  # leaves residual behind
    run(entity_weights={7: 1.0}, epsilon=1e-9, max_rounds=1)  # stops mid-way
    run(relation_weights={1: 1.0}, epsilon=1e-7, relation_mask=mask)
    again = run(entity_weights={0: 1.0}, epsilon=1e-6)
    assert np.array_equal(first[0], again[0]) and first[1] == again[1]
    fresh = random_graph(6)
    assert np.array_equal(dense(fresh, local_pagerank(fresh, entity_weights={0: 1.0}, damping=0.85)), first[0])


def reference_rounds(walk, state, cand, seen, setting):
    """The push rounds as first written (two comparisons, edges by owner): the reference the loop must equal."""
    from langchain_graphrag_milvus.graph.local_ppr import _distinct

    damping, epsilon, max_rounds = setting
    res, est, stamp = state.res, state.est, state.stamp
    other = {"relations": "nodes", "nodes": "relations"}
    rounds = pushes = edges = 0
    while (cand["relations"].size or cand["nodes"].size) and rounds < max_rounds:
        rounds += 1
        for side in ("relations", "nodes"):
            nodes, to = cand[side], other[side]
            if not nodes.size:
                continue
            deg = walk.degrees(side, nodes)
            mass = res[side][nodes]
            act = (mass > 0) & (mass >= epsilon * deg)
            nodes, mass, deg = nodes[act], mass[act], deg[act]
            pushes += nodes.size
            est[side][nodes] += (1.0 - damping) * mass
            res[side][nodes] = 0.0
            share = np.divide(damping * mass, deg, out=np.zeros(mass.size), where=deg > 0)
            targets, owner = walk.targets(side, nodes)
            edges += targets.size
            np.add.at(res[to], targets, share[owner])
            new = _distinct(np.concatenate([cand[to], targets]), stamp[to])
            cand[side], cand[to] = nodes[:0], new
            seen[to].append(new)
    return rounds, pushes, edges, not (cand["relations"].size or cand["nodes"].size)


FIELDS = ("entity_idx", "entity", "relation_idx", "relation", "passage_idx", "passage")


@pytest.mark.parametrize("seed", range(8))
def test_the_push_rounds_equal_the_reference_bit_for_bit(seed: int, monkeypatch) -> None:
    """``mass > 0 and mass ≥ epsilon·deg`` in one comparison, edges spread by row: the same floats, the same work."""
    import langchain_graphrag_milvus.graph.local_ppr as local_ppr

    g, seeds, _, masks = case(seed)
    mask = np.ones(g.n_relations, bool)
    mask[g.ent_rel.row(0)] = False  # entity 0 keeps its seed mass and has no edge (degree 0)
    runs = [
        dict(seeds, epsilon=eps, damping=d, **m)
        for eps in (1e-3, 1e-6, 1e-9)
        for d in (0.0, 0.5, 0.85)
        for m in (masks, {"relation_mask": mask}, {"passage_mask": np.arange(g.n_passages) % 2 == 0})
    ]
    runs.append(dict(entity_weights={0: 1.0}, relation_mask=mask, epsilon=1e-6))
    runs.append(dict(entity_weights={0: 0.0, 3: 1.0}, relation_mask=mask, epsilon=1e-6))  # no mass, no degree
    ours = [local_pagerank(g, **kw) for kw in runs]
    monkeypatch.setattr(local_ppr, "_rounds", reference_rounds)
    for kw, mine in zip(runs, ours):
        ref = local_pagerank(g, **kw)
        for field in FIELDS:
            assert np.array_equal(getattr(mine, field), getattr(ref, field)), field
            assert getattr(mine, field).dtype == getattr(ref, field).dtype, field
        assert (mine.residual, mine.rounds, mine.pushes, mine.touched, mine.edges, mine.converged) == (
            ref.residual, ref.rounds, ref.pushes, ref.touched, ref.edges, ref.converged,
        )  # fmt: skip


@pytest.mark.parametrize("masked", ["none", "relations", "passages", "both"])
def test_spread_gives_each_edge_its_nodes_share(masked: str) -> None:
    from langchain_graphrag_milvus.graph.push_walk import PushWalk

    g = random_graph(3, n_entities=30, n_relations=90, n_passages=20)
    rng = np.random.default_rng(3)
    rmask = rng.random(g.n_relations) > 0.3 if masked in ("relations", "both") else None
    pmask = rng.random(g.n_passages) > 0.3 if masked in ("passages", "both") else None
    walk = PushWalk(g, rmask, pmask)
    sizes = {"relations": g.n_relations, "nodes": g.n_entities + g.n_passages}
    for side, n in sizes.items():
        some = rng.choice(n, 7, replace=False).astype(np.int64)
        for nodes in (np.arange(n, dtype=np.int64), some, np.zeros(0, np.int64)):
            share = rng.random(nodes.size)
            targets, owner = walk.targets(side, nodes)
            spread_to, values = walk.spread(side, nodes, share)
            assert np.array_equal(spread_to, targets) and np.array_equal(values, share[owner])
