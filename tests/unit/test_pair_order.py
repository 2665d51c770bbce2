"""The pair step (retrieval/pair_order.py): pure functions on small entity maps."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_graphrag_milvus.retrieval.pair_order import (
    DEFAULT_PAIR,
    PairParams,
    dense_bonus,
    graph_pair_order,
    main_entities,
    pair_order,
    pair_score,
)

# passage -> {entity: relations of the passage it is in}; the query names entity 1
ENTS = {
    10: {1: 2, 7: 1},  # names the query's entity and the bridge 7
    11: {1: 1, 8: 3},  # names the query's entity, about 8 (no second passage on 8)
    12: {9: 2},  # unrelated
    13: {7: 3, 4: 1},  # about the bridge 7
    14: {5: 1},
}


def test_main_entities_are_the_most_counted() -> None:
    assert main_entities({1: 2, 7: 1}) == {1}
    assert main_entities({1: 2, 7: 2, 3: 1}) == {1, 7}
    assert main_entities({}) == set()


def test_pair_score_counts_rank_bridge_and_cover() -> None:
    p = PairParams(window=5, bridge=2.0, cover=1.0)
    assert pair_score((0, 3), (ENTS[10], ENTS[13]), {1}, p) == 2.0 + 1.0 - 3
    assert pair_score((0, 1), (ENTS[10], ENTS[11]), {1}, p) == 0.0 + 1.0 - 1  # entity 1 is the query's: no bridge
    assert pair_score((2, 4), (ENTS[12], ENTS[14]), {1}, p) == -6


def test_main_mode_needs_the_bridge_to_be_what_a_passage_is_about() -> None:
    shared = PairParams(bridge=2.0, cover=0.0, bridge_mode="shared")
    main = PairParams(bridge=2.0, cover=0.0, bridge_mode="main")
    weak = ({1: 3, 7: 1}, {8: 3, 7: 1})  # 7 shared, but neither passage is about it
    assert pair_score((0, 1), weak, {1}, shared) == 2.0 - 1
    assert pair_score((0, 1), weak, {1}, main) == -1


def test_about_counts_the_query_entities_a_passage_of_the_pair_is_about() -> None:
    count = PairParams(bridge=0.0, cover=0.0, about=1.5)
    share = PairParams(bridge=0.0, cover=0.0, about=1.5, about_mode="share")
    # the query names 1 and 7: passage 10 is about 1 (and mentions 7), passage 13 is about 7
    assert pair_score((0, 3), (ENTS[10], ENTS[13]), {1, 7}, count) == 1.5 * 2 - 3
    assert pair_score((0, 3), (ENTS[10], ENTS[13]), {1, 7}, share) == 1.5 * 1.0 - 3
    # mentioning is not enough: 11 mentions 1 but is about 8, 12 is about 9
    assert pair_score((1, 2), (ENTS[11], ENTS[12]), {1, 8}, count) == 1.5 * 1 - 3
    assert pair_score((1, 2), (ENTS[11], ENTS[12]), {1, 8}, share) == 1.5 * 0.5 - 3
    assert pair_score((2, 4), (ENTS[12], ENTS[14]), {1, 8}, count) == -6
    # an entity both passages are about counts once
    assert pair_score((0, 1), ({1: 2}, {1: 3, 5: 1}), {1, 5}, count) == 1.5 - 1


def test_about_zero_is_the_score_without_the_term() -> None:
    query = {1, 7, 8}
    for ranks, a, b in (((0, 1), 10, 11), ((0, 3), 10, 13), ((1, 4), 11, 14), ((2, 3), 12, 13)):
        for mode in ("shared", "main"):
            old = PairParams(bridge=2.5, cover=3.0, bridge_mode=mode)
            for about_mode in ("count", "share"):
                off = PairParams(bridge=2.5, cover=3.0, bridge_mode=mode, about=0.0, about_mode=about_mode)
                assert pair_score(ranks, (ENTS[a], ENTS[b]), query, off) == pair_score(
                    ranks, (ENTS[a], ENTS[b]), query, old
                )
    assert PairParams().about == 0.0


def test_the_passage_about_the_second_query_entity_moves_up_from_beyond_the_top_five() -> None:
    # query names 1 and 2; 20 is about 1, 21-24 mention both (about neither), 25 is about 2 (6th)
    ents = {20: {1: 3, 2: 1}, 21: {1: 1, 2: 1, 6: 2}, 22: {1: 1, 2: 1, 6: 2}, 23: {9: 2, 2: 1}, 24: {9: 2, 1: 1},
            25: {2: 4, 3: 1}}  # fmt: skip
    order = [20, 21, 22, 23, 24, 25, 26]
    of = lambda p: ents.get(p, {})  # noqa: E731
    without = PairParams(window=6, bridge=0.0, cover=3.0)
    assert pair_order(order, of, [1, 2], without) == order  # every pair with 20 covers both: the walk's second stays
    with_about = PairParams(window=6, bridge=0.0, cover=3.0, about=4.5)  # 4.5 > 5 - 1 ranks further down
    out = pair_order(order, of, [1, 2], with_about)
    assert out == [20, 25, 21, 22, 23, 24, 26]  # into the top five: R@5 can change when the window is over 5
    assert pair_order(order, of, [1, 2], PairParams(window=6, bridge=0.0, cover=3.0, about=4.0)) == order  # a tie
    assert pair_order(order, of, [1, 2], PairParams(window=5, bridge=0.0, cover=3.0, about=9.0)) == order  # 25 outside
    share = PairParams(window=6, bridge=0.0, cover=3.0, about=9.0, about_mode="share")  # 9 × 1/2 = 4.5
    assert pair_order(order, of, [1, 2], share) == out


def test_a_bridged_pair_further_down_moves_up_when_it_outweighs_its_ranks() -> None:
    order = [10, 11, 12, 13, 14]
    assert pair_order(order, ENTS.__getitem__, [1], PairParams(window=5, bridge=2.5, cover=0.0)) == [10, 13, 11, 12, 14]
    # worth 2 ranks: (0, 3) scores 2 - 3 = -1, the walk's pair (0, 1) -1 as well: the tie keeps the walk's
    assert pair_order(order, ENTS.__getitem__, [1], PairParams(window=5, bridge=2.0, cover=0.0)) == order
    # outside the window: nothing moves
    assert pair_order(order, ENTS.__getitem__, [1], PairParams(window=3, bridge=9.0, cover=0.0)) == order


def test_only_the_window_is_permuted_and_no_passage_is_lost() -> None:
    order = [12, 14, 10, 13, 11, 99]
    free = PairParams(window=5, bridge=4.0, cover=2.0, bridge_mode="shared", keep_first=False)
    out = pair_order(order, lambda p: ENTS.get(p, {}), [1], free)  # (2, 3): 4 + 2 - 5 > (0, 2): 2 - 2
    assert out[:2] == [10, 13]
    # keep_first: the walk's first stays; its best partner: (0, 2) scores 2 - 2, (0, 1) -1
    anchored = PairParams(window=5, bridge=4.0, cover=2.0, bridge_mode="shared", keep_first=True)
    assert pair_order(order, lambda p: ENTS.get(p, {}), [1], anchored)[:2] == [12, 10]
    assert sorted(out) == sorted(order) and out[5:] == order[5:] and set(out[:5]) == set(order[:5])


def test_no_query_entity_or_short_order_is_left_alone() -> None:
    order = [12, 10, 13]
    assert pair_order(order, ENTS.__getitem__, [], PairParams(bridge=9.0, cover=9.0)) == order
    assert pair_order([12, 10], ENTS.__getitem__, [1], PairParams(bridge=9.0, cover=9.0)) == [12, 10]


def test_on_a_graph_the_passage_about_the_bridge_comes_second() -> None:
    from langchain_graphrag_milvus.retrieval.walk_ranking import WalkParams, walk_ranking
    from tests.unit.test_ranking import graph_of, seeds_for

    # "first" names the query's A and the bridge B; "second" is about B; "nearA"/"nearA2" say more about A
    g, _, pas, ent = graph_of(
        {
            "first": [("A", "r", "B")],
            "second": [("B", "s", "C"), ("B", "t", "F")],
            "nearA": [("A", "t", "D")],
            "nearA2": [("A", "u", "E")],
        }
    )
    seeds = seeds_for([pas["first"], pas["nearA"], pas["nearA2"]], [0.9, 0.6, 0.6], [ent["A"]])
    walk = walk_ranking(g, seeds, WalkParams(chain=0), limit=5)[0].tolist()  # one walk: more about A first
    assert [g.passages.ids[i] for i in walk[:1]] == ["first"] and walk.index(pas["second"]) >= 2
    paired = graph_pair_order(g, walk, [ent["A"]], PairParams())
    assert [g.passages.ids[i] for i in paired[:2]] == ["first", "second"]  # B: shared, "second" is about it
    assert sorted(paired) == sorted(walk)
    assert graph_pair_order(g, walk, [ent["A"]], PairParams(window=2)) == walk  # a window of two: off


def test_the_retriever_default_is_the_pair_step() -> None:
    from langchain_graphrag_milvus.retrieval.params import RetrievalParams
    from langchain_graphrag_milvus.retrieval.rankings import PageRankWalk

    assert PairParams() == PairParams(window=4, bridge=2.5, cover=3.0, bridge_mode="main", keep_first=True)
    ranking = RetrievalParams().ranking
    assert isinstance(ranking, PageRankWalk) and ranking.pair_step
    assert RetrievalParams(ppr_pair_step=False).ranking == PageRankWalk(pair_step=False)


def test_shared_bridge_counts_any_shared_entity_the_query_does_not_name() -> None:
    weak = ({1: 3, 7: 1}, {8: 3, 7: 1})  # 7 shared, neither passage about it: not a main bridge
    p = PairParams(bridge=2.0, cover=0.0, bridge_mode="main", shared_bridge=1.5)
    assert pair_score((0, 1), weak, {1}, p) == 1.5 - 1
    assert pair_score((0, 3), (ENTS[10], ENTS[13]), {1}, p) == 2.0 + 1.5 - 3  # 7: main of 13, and shared
    assert pair_score((0, 1), (ENTS[10], ENTS[11]), {1}, p) == -1  # only the query's entity is shared


def test_about_each_counts_each_passage_s_query_entities() -> None:
    each = PairParams(bridge=0.0, cover=0.0, about=1.5, about_mode="each")
    assert pair_score((0, 1), ({1: 2}, {1: 3, 5: 1}), {1, 5}, each) == 1.5 * 2 - 1  # both about 1: twice
    assert pair_score((0, 3), (ENTS[10], ENTS[13]), {1, 7}, each) == 1.5 * 2 - 3
    assert pair_score((1, 2), (ENTS[11], ENTS[12]), {1, 8}, each) == 1.5 - 3


def test_dense_adds_each_passage_s_similarity_above_the_floor() -> None:
    p = PairParams(bridge=0.0, cover=0.0, dense=10.0)
    assert pair_score((0, 2), (ENTS[12], ENTS[14]), {1}, p, (0.25, 0.125)) == 10.0 * 0.375 - 2
    off = PairParams(bridge=0.0, cover=0.0)
    assert pair_score((0, 2), (ENTS[12], ENTS[14]), {1}, off, (0.25, 0.125)) == -2  # dense 0: not read


def test_dense_bonus_is_the_similarity_above_the_top_s_last() -> None:
    hits = [("a", 0.9), ("b", 0.7), ("c", 0.6), ("d", 0.5)]
    assert dense_bonus(hits, 3) == {"a": 0.9 - 0.6, "b": 0.7 - 0.6, "c": 0.0}
    assert dense_bonus(hits, 9) == {"a": 0.9 - 0.5, "b": 0.7 - 0.5, "c": 0.6 - 0.5, "d": 0.0}  # fewer hits: the last
    assert dense_bonus([], 5) == {}


def test_dense_bonus_skips_repeats_and_non_finite_scores_and_caps_at_one() -> None:
    nan, inf = float("nan"), float("inf")
    assert dense_bonus([("a", 0.9), ("a", 0.8), ("b", 0.7)], 2) == pytest.approx({"a": 0.2, "b": 0.0})
    assert dense_bonus([("a", nan), ("b", 0.5), ("c", inf), ("d", 0.25)], 2) == {"b": 0.25, "d": 0.0}
    assert dense_bonus([("a", nan)], 5) == {}
    assert dense_bonus([("a", 7.0), ("b", 1.0)], 2) == {"a": 1.0, "b": 0.0}  # inner products far apart: capped


def test_a_nan_similarity_does_not_switch_the_pair_step_off() -> None:
    order = [10, 11, 12, 13, 14]
    bonus = dense_bonus([(11, float("nan")), (12, 0.5), (14, 0.4)], 5)
    p = PairParams(window=5, bridge=2.5, cover=0.0, dense=1.0)
    assert pair_order(order, ENTS.__getitem__, [1], p, lambda g: bonus.get(g, 0.0))[:2] == [10, 13]


def test_pair_params_refuse_an_unknown_about_mode_or_depth() -> None:
    with pytest.raises(ValueError, match="about_mode"):
        PairParams(about_mode="counts")
    for depth in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="dense_depth"):
            PairParams(dense_depth=depth)  # type: ignore[arg-type]


def test_the_ranking_reads_the_pair_steps_dense_top() -> None:
    from langchain_graphrag_milvus.retrieval.rankings import PageRankWalk

    assert PageRankWalk(fuse_dense_unlinked=0.0).passage_hits() == DEFAULT_PAIR.dense_depth == 5
    assert PageRankWalk(fuse_dense_unlinked=0.0, pair_step=False).passage_hits() == 3  # the walk's passage seeds
    assert PageRankWalk().passage_hits() == 20  # the unlinked fusion's depth


def test_a_passage_close_to_the_query_takes_second_place_with_the_dense_term() -> None:
    order = [10, 11, 12, 14, 13]
    of = lambda p: ENTS.get(p, {})  # noqa: E731
    dense = {14: 0.25}.get
    p = PairParams(window=5, bridge=0.0, cover=0.0, dense=8.0)  # 14 at rank 3: 8 × 0.25 - 3 = -1, a tie with (0, 1)
    assert pair_order(order, of, [1], p, lambda g: dense(g, 0.0)) == order
    more = PairParams(window=5, bridge=0.0, cover=0.0, dense=9.0)
    assert pair_order(order, of, [1], more, lambda g: dense(g, 0.0)) == [10, 14, 11, 12, 13]
    assert pair_order(order, of, [1], more) == order  # no dense_of: the term reads 0


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(0, 30), min_size=0, max_size=12, unique=True),
    st.lists(st.integers(0, 8), max_size=4),
    st.dictionaries(st.integers(0, 30), st.floats(0, 1), max_size=8),
)
def test_the_default_permutes_only_its_window_and_keeps_the_first(
    order: list[int], query: list[int], dense: dict[int, float]
) -> None:
    of = lambda p: {p % 9: 1 + p % 3, (p * 7) % 9: 1}  # noqa: E731  a passage's entities, by its index
    out = pair_order(order, of, query, DEFAULT_PAIR, lambda g: dense.get(g, 0.0))
    w = DEFAULT_PAIR.window
    assert sorted(out) == sorted(order) and out[w:] == order[w:] and set(out[:w]) == set(order[:w])
    assert out[:1] == order[:1]  # keep_first


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(0, 30), min_size=0, max_size=12, unique=True),
    st.lists(st.integers(0, 8), max_size=4),
    st.dictionaries(st.integers(0, 30), st.floats(0, 1), max_size=8),
)
def test_without_keep_first_only_the_window_is_permuted(order: list[int], query: list[int], dense: dict) -> None:
    free = replace(DEFAULT_PAIR, keep_first=False)
    of = lambda p: {p % 9: 1 + p % 3, (p * 7) % 9: 1}  # noqa: E731
    out = pair_order(order, of, query, free, lambda g: dense.get(g, 0.0))
    w = free.window
    assert sorted(out) == sorted(order) and out[w:] == order[w:] and set(out[:w]) == set(order[:w])


def test_graph_pair_order_reads_the_dense_bonus_by_graph_index() -> None:
    from tests.unit.test_ranking import graph_of

    g, _, pas, ent = graph_of(
        {"first": [("A", "r", "B")], "x": [("A", "t", "D")], "y": [("A", "u", "E")], "close": [("A", "v", "F")]}
    )
    walk = [pas["first"], pas["x"], pas["y"], pas["close"]]
    p = PairParams(window=4, bridge=0.0, cover=0.0, dense=10.0)
    assert graph_pair_order(g, walk, [ent["A"]], p) == walk
    assert graph_pair_order(g, walk, [ent["A"]], p, {pas["close"]: 0.5})[:2] == [pas["first"], pas["close"]]


def test_the_retriever_uses_the_learned_weights() -> None:
    assert DEFAULT_PAIR.keep_first and DEFAULT_PAIR.window == 5 and DEFAULT_PAIR.dense > 0
    assert DEFAULT_PAIR.about_mode == "each" and DEFAULT_PAIR.shared_bridge > 0
