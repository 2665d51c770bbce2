"""The sparse walk ranking (retrieval/walk_ranking.py) against the dense implementation it replaced.

``dense_walk_reference.py`` is the former dense code, verbatim. On random graphs, with and
without a tenant view's masks, for every chain mode and ``novel_seeds`` setting: the global
solver gives bit-identical orders and scores (its groups are normalised by the dense sums,
as before); the push solver gives the same orders and scores equal up to the last float32 bit
of a group's sum (summed over the non-zero entries instead of the whole array).
"""

from __future__ import annotations

import numpy as np
import pytest

from langchain_graphrag_milvus.graph import GraphIndex
from langchain_graphrag_milvus.retrieval.walk_params import AUTO_MID_PUSH_EPSILON, AUTO_WALK_PUSH_RELATIONS
from langchain_graphrag_milvus.retrieval.walk_ranking import (
    AUTO_PUSH_RELATIONS,
    WalkParams,
    WalkSeeds,
    ranked_walks,
    walk_epsilon,
    walk_method,
    walk_ranking,
)

from .dense_walk_reference import dense_walk_ranking
from .test_graph_index import random_graph

SETTINGS = [
    {},
    {"chain": 0},
    {"chain": 2},
    {"novel_seeds": "none"},
    {"novel_seeds": "all"},
    {"chain_mode": "passages"},
    {"cover_query_entities": False, "passage_seeds": 10},
]


def random_case(seed: int) -> tuple[GraphIndex, WalkSeeds, dict[str, np.ndarray | None]]:
    """A random graph, seeds of all three kinds (some outside the graph: -1), masks on odd seeds."""
    g = random_graph(seed, n_entities=60, n_relations=200, n_passages=50)
    rng = np.random.default_rng(seed)
    rels = rng.choice(g.n_relations, 12, replace=False).astype(np.int32)
    pas = rng.choice(g.n_passages, 4, replace=False).astype(np.int32)
    pas[rng.integers(0, 4)] = -1
    seeds = WalkSeeds(
        rels,
        np.sort(rng.uniform(0.4, 0.9, rels.size)).astype(np.float32)[::-1].copy(),
        pas,
        np.sort(rng.uniform(0.4, 0.9, pas.size)).astype(np.float32)[::-1].copy(),
        rng.choice(g.n_entities, 3, replace=False).astype(np.int32),
    )
    masks: dict[str, np.ndarray | None] = {"relation_mask": None, "allowed_passages": None}
    if seed % 2:
        view = g.view(np.flatnonzero(rng.random(g.n_passages) > 0.3))
        masks = {"relation_mask": view.relations, "allowed_passages": view.passages}
    return g, seeds, masks


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: ",".join(f"{k}={v}" for k, v in s.items()) or "default")
def test_global_walks_are_bit_identical_to_the_dense_ranking(seed: int, setting: dict[str, object]) -> None:
    g, seeds, masks = random_case(seed)
    # walks solved to the tolerance, as the dense code did (ppr_stop="order": tests/unit/test_ppr_settle.py)
    params = WalkParams(ppr_method="global", ppr_stop="residual", **setting)  # type: ignore[arg-type]
    want_order, want_scores = dense_walk_ranking(g, seeds, params, limit=12, **masks)
    order, scores = walk_ranking(g, seeds, params, limit=12, **masks)
    assert len(want_order) > 1  # the case ranks something
    assert order.tolist() == want_order.tolist()
    assert np.array_equal(scores, want_scores)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("epsilon", [1e-3, 1e-5])
@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: ",".join(f"{k}={v}" for k, v in s.items()) or "default")
def test_push_walks_rank_like_the_dense_push_ranking(seed: int, epsilon: float, setting: dict[str, object]) -> None:
    g, seeds, masks = random_case(seed)
    params = WalkParams(ppr_method="push", push_epsilon=epsilon, **setting)  # type: ignore[arg-type]
    want_order, want_scores = dense_walk_ranking(g, seeds, params, limit=12, **masks)
    result = ranked_walks(g, seeds, params, limit=12, **masks)
    assert len(want_order) > 1
    assert result.order.tolist() == want_order.tolist()
    # the first walk's scores: no group sum is involved, so they are exactly the dense ones
    assert np.array_equal(result.dense(g.n_passages), want_scores)
    assert np.array_equal(result.passage_idx, np.flatnonzero(want_scores))
    if masks["allowed_passages"] is not None:
        assert masks["allowed_passages"][result.order].all()


def test_a_limit_cuts_the_order_where_the_full_order_would_be_cut() -> None:
    g, seeds, masks = random_case(3)
    for method in ("global", "push"):
        params = WalkParams(ppr_method=method)
        full = ranked_walks(g, seeds, params, limit=g.n_passages, **masks).order.tolist()
        for limit in (1, 2, 3, 7):
            assert ranked_walks(g, seeds, params, limit=limit, **masks).order.tolist() == full[:limit]


def _graph_of(n: int) -> GraphIndex:
    rng = np.random.default_rng(0)
    return GraphIndex.from_relations(
        relation_keys=np.arange(1, n + 1),
        subject_keys=rng.integers(1, 5000, n),
        object_keys=rng.integers(1, 5000, n),
        passage_ids=[[f"p{i // 8}"] for i in range(n)],
    )


_SEEDS = WalkSeeds(
    np.arange(10, dtype=np.int32), np.linspace(0.9, 0.5, 10, dtype=np.float32),
    np.empty(0, np.int32), np.empty(0, np.float32), np.array([3], np.int32),
)  # fmt: skip


def test_auto_solves_globally_below_the_threshold_and_by_pushes_above() -> None:
    small = random_graph(0)
    assert WalkParams().ppr_method == "auto" and walk_method(WalkParams(), small) == "global"
    assert walk_method(WalkParams(ppr_method="push"), small) == "push"
    big = _graph_of(AUTO_PUSH_RELATIONS)
    assert walk_method(WalkParams(), big) == "push" and walk_method(WalkParams(ppr_method="global"), big) == "global"
    assert walk_epsilon(WalkParams(), big) == WalkParams().push_epsilon == 1e-4
    auto = ranked_walks(big, _SEEDS, WalkParams(), limit=5)
    push = ranked_walks(big, _SEEDS, WalkParams(ppr_method="push"), limit=5)
    assert auto.order.tolist() == push.order.tolist() and np.array_equal(auto.passage_scores, push.passage_scores)
    with pytest.raises(ValueError, match="ppr_method"):
        WalkParams(ppr_method="local")


def test_auto_pushes_to_the_finer_tolerance_between_the_two_thresholds() -> None:
    """From 15,000 relations ``"auto"`` pushes, to 3e-5 (not ``push_epsilon``) below 30,000 (issue 25)."""
    assert AUTO_WALK_PUSH_RELATIONS < AUTO_PUSH_RELATIONS and AUTO_MID_PUSH_EPSILON < WalkParams().push_epsilon
    below, mid = _graph_of(AUTO_WALK_PUSH_RELATIONS - 1), _graph_of(AUTO_WALK_PUSH_RELATIONS)
    assert walk_method(WalkParams(), below) == "global" and walk_method(WalkParams(), mid) == "push"
    assert walk_epsilon(WalkParams(), mid) == AUTO_MID_PUSH_EPSILON
    assert walk_epsilon(WalkParams(push_epsilon=1e-6), mid) == 1e-6  # a finer one asked for is kept
    assert walk_epsilon(WalkParams(ppr_method="push"), mid) == WalkParams().push_epsilon  # an explicit push: as asked
    auto = ranked_walks(mid, _SEEDS, WalkParams(), limit=5)
    fine = ranked_walks(mid, _SEEDS, WalkParams(ppr_method="push", push_epsilon=AUTO_MID_PUSH_EPSILON), limit=5)
    coarse = ranked_walks(mid, _SEEDS, WalkParams(ppr_method="push"), limit=5)
    assert auto.order.tolist() == fine.order.tolist() and np.array_equal(auto.passage_scores, fine.passage_scores)
    assert not np.array_equal(auto.passage_scores, coarse.passage_scores)  # the tolerance is the one applied
    exact = ranked_walks(mid, _SEEDS, WalkParams(ppr_method="global", ppr_stop="residual"), limit=5)
    assert auto.order.tolist() == exact.order.tolist()


def all_passage_hops(graph, entities, relations, passages, p, view) -> dict[int, int]:  # type: ignore[no-untyped-def]
    """The former ``stages._passage_hops``, verbatim: the hop of every passage the expansion reaches."""
    expansion = graph.expand(
        entity_seeds=np.array(sorted(set(entities)), np.int32),
        relation_seeds=relations,
        hops=1,
        max_neighbors=p.max_neighbors,
        max_relations=None,
        relation_mask=None if view is None else view.relations,
    )
    hop_of: dict[int, int] = {}
    for rel, hop in zip(expansion.relations.tolist(), expansion.hops.tolist()):
        for pas in graph.rel_pas.row(rel).tolist():
            hop_of[pas] = min(hop, hop_of.get(pas, hop))
    for pas in passages.tolist():
        hop_of[int(pas)] = 0
    return hop_of


@pytest.mark.parametrize("seed", range(8))
def test_the_ranked_passages_hops_are_those_of_the_whole_expansion(seed: int) -> None:
    from langchain_graphrag_milvus.retrieval.params import RetrievalParams
    from langchain_graphrag_milvus.retrieval.stages import _passage_hops

    g, seeds, masks = random_case(seed)
    view = None
    if masks["allowed_passages"] is not None:
        view = g.view(np.flatnonzero(masks["allowed_passages"]))
    rng = np.random.default_rng(seed)
    p = RetrievalParams(max_neighbors=int(rng.choice([2, 5, 100])))
    ents = seeds.entity_idx.tolist()[: seed % 4]
    rels, pas = seeds.relation_idx[: seed % 3 * 3], seeds.passage_idx[seeds.passage_idx >= 0]
    ranked = rng.permutation(g.n_passages)[:20]
    want = all_passage_hops(g, ents, rels, pas, p, view)
    got = _passage_hops(g, ents, (rels, pas), ranked, p, view)
    assert got == {int(r): want[int(r)] for r in ranked if int(r) in want}
    assert set(got.values()) <= {0, 1} and (seed == 0 or got)
