"""The fusion of the graph's order with the dense order (``retrieval/fusion.py``): pure, property-based."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from langchain_graphrag_milvus.retrieval.fusion import FUSION_DEPTH, fuse_orders
from langchain_graphrag_milvus.retrieval.params import RetrievalParams

ids = st.lists(st.integers(0, 40), max_size=45)
weights = st.floats(0.0, 1.0)
offsets = st.sampled_from([0.0, 1.0, 2.0, 5.0, 60.0]) | st.floats(0.0, 100.0)
depths = st.integers(1, 25)


@given(ids, ids, weights, offsets, depths)
def test_a_permutation_of_the_union(graph, dense, weight, c, depth) -> None:
    out = fuse_orders(graph, dense, weight=weight, c=c, depth=depth)
    assert len(out) == len(set(out))
    expected = set(graph) | (set(list(dict.fromkeys(dense))[:depth]) if weight > 0 else set())
    assert set(out) == expected


@given(ids, ids, weights, offsets, depths)
def test_deterministic_and_blind_to_what_lies_past_the_depth(graph, dense, weight, c, depth) -> None:
    out = fuse_orders(graph, dense, weight=weight, c=c, depth=depth)
    assert fuse_orders(list(graph), list(dense), weight=weight, c=c, depth=depth) == out
    top_dense = list(dict.fromkeys(dense))[:depth]
    assert fuse_orders(graph, top_dense, weight=weight, c=c, depth=depth) == out  # dense past the depth: unread


@given(ids, ids, weights, offsets, depths, st.integers(0, 20))
def test_the_prefix_does_not_depend_on_how_deep_the_graph_order_was_read(graph, dense, weight, c, depth, extra) -> None:
    """The pipeline reads the walk max(k, max_candidates, depth) deep: the fused prefix is the same for every k."""
    unique = list(dict.fromkeys(graph))
    short = fuse_orders(unique[: depth + extra], dense, weight=weight, c=c, depth=depth)
    long = fuse_orders(unique, dense, weight=weight, c=c, depth=depth)
    assert long[: len(short)] == short


@given(ids, ids, offsets, depths)
def test_the_extremes(graph, dense, c, depth) -> None:
    assert fuse_orders(graph, dense, weight=0.0, c=c, depth=depth) == list(dict.fromkeys(graph))
    top_dense = list(dict.fromkeys(dense))[:depth]
    assert fuse_orders(graph, dense, weight=1.0, c=c, depth=depth)[: len(top_dense)] == top_dense


@given(ids, ids, weights, offsets, depths)
def test_an_item_ranked_better_by_both_lists_comes_first(graph, dense, weight, c, depth) -> None:
    out = fuse_orders(graph, dense, weight=weight, c=c, depth=depth)
    g = {x: r for r, x in enumerate(list(dict.fromkeys(graph))[:depth])}
    d = {x: r for r, x in enumerate(list(dict.fromkeys(dense))[:depth])}
    inf = float("inf")
    for a in out:
        for b in out:
            if g.get(a, inf) < g.get(b, inf) and d.get(a, inf) < d.get(b, inf):
                assert out.index(a) < out.index(b)


def test_examples() -> None:
    graph, dense = ["g1", "g2", "g3", "s", "g4"], ["d1", "s", "d2", "d3"]
    # equal shares, c = 0: the two orders alternate (a tie goes to the graph), "s" (both lists) rises
    assert fuse_orders(graph, dense, weight=0.5, c=0.0) == ["g1", "d1", "s", "g2", "g3", "d2", "d3", "g4"]
    # a small dense weight with c = 0: the graph's order, a dense hit moves up only where ranks tie closely
    assert fuse_orders(graph, dense, weight=0.1, c=0.0)[:3] == ["g1", "g2", "g3"]
    # a passage past the depth follows in the graph's order
    long = [f"g{i}" for i in range(FUSION_DEPTH + 3)]
    assert fuse_orders(long, ["d"], weight=0.5, c=0.0)[-3:] == long[-3:]
    assert fuse_orders([], [], weight=0.5, c=1.0) == []


def test_bad_arguments_and_settings_are_refused() -> None:
    for kwargs in ({"weight": -0.1, "c": 0.0}, {"weight": 1.5, "c": 0.0}, {"weight": 0.5, "c": -1.0}):
        with pytest.raises(ValueError):
            fuse_orders([1], [2], **kwargs)
    with pytest.raises(ValueError, match="depth"):
        fuse_orders([1], [2], weight=0.5, c=0.0, depth=0)
    assert RetrievalParams().ranking.fuse_dense == 0.0  # off by default (benchmarks/README.md: chosen by CV)
    for bad, message in (
        ({"fuse_dense": 1.2}, "fuse_dense must be in"),
        ({"fuse_dense": True}, "fuse_dense must be in"),
        ({"fuse_dense": float("nan")}, "fuse_dense must be in"),
        ({"fuse_dense_c": -1}, "fuse_dense_c must be a non-negative number"),
    ):
        with pytest.raises(ValueError, match=message):
            RetrievalParams(**bad)
    assert RetrievalParams(fuse_dense=0.5).walk_limit >= FUSION_DEPTH


def test_the_unlinked_weight() -> None:
    from langchain_graphrag_milvus.retrieval.rankings import PageRankWalk
    from langchain_graphrag_milvus.retrieval.stages import Ranked

    assert RetrievalParams().ranking.fuse_dense_unlinked == 0.6  # the default, chosen by cross-validation
    walk = PageRankWalk(fuse_dense=0.2, fuse_dense_unlinked=0.7)
    assert (walk.fusion_weight(True), walk.fusion_weight(False)) == (0.2, 0.7)
    assert PageRankWalk(fuse_dense=0.5, fuse_dense_unlinked=0.1).fusion_weight(False) == 0.5  # at least fuse_dense
    assert PageRankWalk(fuse_dense_unlinked=1.0).dense_depth() == FUSION_DEPTH  # the dense order is read deep enough
    ranked = [Ranked(i, 1.0, "graph") for i in ("g1", "g2", "g3")]
    dense = [Ranked(i, 1.0, "passage_similarity") for i in ("d1", "d2")]
    only_unlinked = PageRankWalk(fuse_dense_unlinked=1.0)
    assert [r.id for r in only_unlinked.merge_dense(ranked, dense, 3, linked=True)] == ["g1", "g2", "g3"]
    assert [r.id for r in only_unlinked.merge_dense(ranked, dense, 3, linked=False)][:2] == ["d1", "d2"]
    for bad in (1.5, -0.1, True, float("nan")):
        with pytest.raises(ValueError, match="fuse_dense_unlinked must be in"):
            RetrievalParams(fuse_dense_unlinked=bad)
