"""``benchmarks/cv_pair_idf.py``: its IDF-weighted bridge is the formula it claims, the package's modes and pair
score are left as they were, and the baseline grid is the grid's prefix."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

import langchain_graphrag_milvus.retrieval.pair_order as po
from langchain_graphrag_milvus.retrieval.pair_order import PairParams, pair_order, pair_score

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import cv_pair  # noqa: E402
from cv_pair_idf import bridge_weight, grid, idf_scorer, idf_weights, scored_by  # noqa: E402

# the query names entity 1; 10 names it and the bridge 7 (10 is about 1); 11 shares only the hub 5 with 10;
# 12 shares nothing; 13 shares the rare 7 (13 is about 7); 14 shares 7 but is about 4
ENTS = {10: {1: 3, 7: 1, 5: 1}, 11: {5: 1, 8: 2}, 12: {9: 2}, 13: {7: 3, 4: 1}, 14: {7: 1, 4: 2, 5: 1}}
DF = {1: 10, 4: 2, 5: 80, 7: 2, 8: 1, 9: 1}
N = 100


def test_the_weights_are_normalised_idf() -> None:
    w = idf_weights(DF, N)
    assert w[8] == pytest.approx(1.0)  # one passage: the largest possible idf
    assert w[5] == pytest.approx(math.log(100 / 80) / math.log(100))
    assert w[7] == pytest.approx(math.log(50) / math.log(100)) and 0 < w[5] < w[7] < 1
    assert idf_weights({3: 100, 4: 0}, 100) == {3: 0.0, 4: 1.0}  # in all passages: 0; clipped to [0, 1]
    assert idf_weights({3: 1}, 1) == {3: 0.0}


def test_the_bridge_weight() -> None:
    w = idf_weights(DF, N)
    q = {1}
    assert bridge_weight((ENTS[10], ENTS[12]), q, w, "idf") == 0.0  # nothing shared
    assert bridge_weight((ENTS[10], ENTS[11]), q, w, "idf") == pytest.approx(w[5])  # the hub only
    assert bridge_weight((ENTS[10], ENTS[14]), q, w, "idf") == pytest.approx(w[7])  # the rarer of 7 and 5
    assert bridge_weight((ENTS[10], ENTS[14]), q, w, "idf_main") == pytest.approx(w[7])  # 7 is main of neither
    assert bridge_weight((ENTS[10], ENTS[13]), q, w, "idf_main") == 1.0  # 13 is about 7
    assert bridge_weight((ENTS[10], ENTS[13]), q, w, "idf") == pytest.approx(w[7])
    assert bridge_weight((ENTS[10], ENTS[13]), {1, 7}, w, "idf") == 0.0  # named by the query: no bridge


def test_the_scorer_keeps_the_package_modes_and_adds_the_weighted_bridge() -> None:
    w = idf_weights(DF, N)
    score = idf_scorer(pair_score, w)
    q = {1}
    for ranks, a, b in (((0, 1), 10, 11), ((0, 3), 10, 13), ((1, 2), 11, 12), ((0, 4), 10, 14)):
        pair = (ENTS[a], ENTS[b])
        for mode in ("shared", "main"):
            p = PairParams(bridge=2.5, cover=3.0, bridge_mode=mode)
            assert score(ranks, pair, q, p) == pair_score(ranks, pair, q, p)  # the package's, exactly
        for mode in ("idf", "idf_main"):
            p = PairParams(bridge=2.5, cover=3.0, bridge_mode=mode)
            covered = len(q & (set(ENTS[a]) | set(ENTS[b]))) / len(q)
            want = 2.5 * bridge_weight(pair, q, w, mode) + 3.0 * covered - sum(ranks)
            assert score(ranks, pair, q, p) == pytest.approx(want)


def test_a_rare_shared_entity_wins_the_second_place_and_the_package_is_restored() -> None:
    order = [10, 11, 12, 14]
    p = PairParams(window=4, bridge=4.0, cover=0.0, bridge_mode="idf")
    assert pair_order(order, ENTS.__getitem__, [1], PairParams(window=4, bridge=4.0, cover=0.0)) == order
    original = po.pair_score
    with scored_by(idf_weights(DF, N)):  # (0, 1): 4 w[5] - 1 ~ -0.8; (0, 3): 4 w[7] - 3 ~ 0.4
        assert pair_order(order, ENTS.__getitem__, [1], p) == [10, 14, 11, 12]
    assert po.pair_score is original


def test_the_baseline_grid_is_the_prefix() -> None:
    base = cv_pair.pair_grid((True,), (3, 4, 5))
    full = grid((True,), (3, 4, 5), ("idf", "idf_main"))
    assert full[: len(base)] == base and len(full) == len(base) + 2 * 3 * 8 * 9
    assert PairParams() in full[: len(base)] and full.index(PairParams()) == base.index(PairParams())
    assert {g.bridge_mode for g in full[len(base) :] if g is not None} == {"idf", "idf_main"}
    assert all(g is not None and g.bridge for g in full[len(base) :])
