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
    shared, main = PairParams(bridge=2.0, cover=0.0), PairParams(bridge=2.0, cover=0.0, bridge_mode="main")
    weak = ({1: 3, 7: 1}, {8: 3, 7: 1})  # 7 shared, but neither passage is about it
    assert pair_score((0, 1), weak, {1}, shared) == 2.0 - 1
    assert pair_score((0, 1), weak, {1}, main) == -1


def test_a_bridged_pair_further_down_moves_up_when_it_outweighs_its_ranks() -> None:
    order = [10, 11, 12, 13, 14]
    assert pair_order(order, ENTS.__getitem__, [1], PairParams(window=5, bridge=2.5, cover=0.0)) == [10, 13, 11, 12, 14]
    # worth 2 ranks: (0, 3) scores 2 - 3 = -1, the walk's pair (0, 1) -1 as well: the tie keeps the walk's
    assert pair_order(order, ENTS.__getitem__, [1], PairParams(window=5, bridge=2.0, cover=0.0)) == order
    # outside the window: nothing moves
    assert pair_order(order, ENTS.__getitem__, [1], PairParams(window=3, bridge=9.0, cover=0.0)) == order


def test_only_the_window_is_permuted_and_no_passage_is_lost() -> None:
    order = [12, 14, 10, 13, 11, 99]
    out = pair_order(
        order, lambda p: ENTS.get(p, {}), [1], PairParams(window=5, bridge=4.0, cover=2.0)
    )  # (2, 3): 4 + 2 - 5 > (0, 2): 2 - 2
    assert out[:2] == [10, 13]
    assert sorted(out) == sorted(order) and out[5:] == order[5:] and set(out[:5]) == set(order[:5])


def test_no_query_entity_or_short_order_is_left_alone() -> None:
    order = [12, 10, 13]
    assert pair_order(order, ENTS.__getitem__, [], PairParams(bridge=9.0, cover=9.0)) == order
    assert pair_order([12, 10], ENTS.__getitem__, [1], PairParams(bridge=9.0, cover=9.0)) == [12, 10]
