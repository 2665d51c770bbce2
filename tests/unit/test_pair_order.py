"""The pair step (retrieval/pair_order.py): pure functions on small entity maps."""

from __future__ import annotations

from langchain_graphrag_milvus.retrieval.pair_order import PairParams, main_entities, pair_order, pair_score

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
    from langchain_graphrag_milvus.retrieval.pair_order import graph_pair_order
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
