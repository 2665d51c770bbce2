"""``benchmarks/cv_pair_mmr.py``: its redundancy penalty is the formula it claims, and the package's pair score is
left as it was."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import langchain_graphrag_milvus.retrieval.pair_order as po
from langchain_graphrag_milvus.retrieval.pair_order import PairParams, pair_order, pair_score

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import cv_pair  # noqa: E402
from cv_pair_mmr import Vectored, cosine, grid, redundancy, redundancy_scorer, scored_by  # noqa: E402


def _unit(*xs: float) -> np.ndarray:
    v = np.array(xs, np.float32)
    return v / np.linalg.norm(v)


# the query names entity 1; 10 names it and the bridge 7; 11 is nearly 10's text (about 1 again); 13 is about 7
VEC = {10: _unit(1, 0, 0), 11: _unit(1, 0.1, 0), 12: _unit(0, 0, 1), 13: _unit(0.3, 1, 0)}
ENTS = {10: {1: 2, 7: 1}, 11: {1: 3, 8: 1}, 12: {9: 2}, 13: {7: 3, 4: 1}}
PASSAGES = {p: Vectored(ENTS[p], VEC[p]) for p in ENTS}


def test_cosine_and_the_threshold() -> None:
    assert cosine(np.array([1.0, 0.0]), np.array([2.0, 0.0])) == pytest.approx(1.0)
    assert cosine(np.array([1.0, 0.0]), np.array([0.0, 3.0])) == pytest.approx(0.0)
    assert cosine(np.array([1.0, 0.0]), np.array([-1.0, 0.0])) == pytest.approx(-1.0)
    assert cosine(np.zeros(2), np.array([1.0, 0.0])) == 0.0
    assert redundancy(0.3) == 0.3 and redundancy(-0.2) == -0.2  # threshold 0: the cosine itself
    assert redundancy(0.4, 0.5) == 0.0 and redundancy(0.75, 0.5) == pytest.approx(0.5)
    assert redundancy(1.0, 0.6) == pytest.approx(1.0)  # identical passages lose the full weight whatever τ


def test_the_scorer_is_the_pair_score_minus_the_weighted_cosine() -> None:
    query = {1}
    for ranks, a, b in (((0, 1), 10, 11), ((0, 3), 10, 13), ((1, 2), 11, 12)):
        plain = pair_score(ranks, (ENTS[a], ENTS[b]), query, PairParams())
        off = redundancy_scorer(pair_score, 0.0)(ranks, (PASSAGES[a], PASSAGES[b]), query, PairParams())
        assert off == plain  # weight 0: exactly the package's score
        for w, t in ((2.0, 0.0), (3.0, 0.5)):
            got = redundancy_scorer(pair_score, w, t)(ranks, (PASSAGES[a], PASSAGES[b]), query, PairParams())
            assert got == pytest.approx(plain - w * redundancy(cosine(VEC[a], VEC[b]), t))


def test_a_near_duplicate_second_gives_way_and_the_package_is_restored() -> None:
    order = [10, 11, 12, 13]
    p = PairParams(window=4, bridge=1.5, cover=0.0)  # (0, 1): -1; (0, 3): 1.5 - 3 = -1.5, so the walk's second stays
    assert pair_order(order, PASSAGES.__getitem__, [1], p) == order
    original = po.pair_score
    with scored_by(1.0):  # (0, 1) loses cos(10, 11) ~ 0.995, (0, 3) only ~ 0.29
        assert pair_order(order, PASSAGES.__getitem__, [1], p) == [10, 13, 11, 12]
    assert po.pair_score is original
    assert pair_order(order, PASSAGES.__getitem__, [1], p) == order
    with scored_by(1.0, 0.5):  # over τ = 0.5 only: 11 still pays ~ 0.99, 13 nothing
        assert pair_order(order, PASSAGES.__getitem__, [1], p) == [10, 13, 11, 12]
    with scored_by(0.0):
        assert pair_order(order, PASSAGES.__getitem__, [1], p) == order


def test_the_grid_starts_with_cv_pairs_own_settings() -> None:
    base = cv_pair.pair_grid((True,), (3, 4, 5))
    settings = grid((True,), (3, 4, 5), (0.0, 0.5, 2.0), (0.0, 0.6))
    assert settings[0] is None and base[0] is None
    assert [s[0] for s in settings[1 : len(base)]] == base[1:]
    assert {s[1:] for s in settings[1 : len(base)]} == {(0.0, 0.0)}
    assert len(settings) == 1 + (len(base) - 1) * (1 + 2 * 2)  # redundancy 0 once, not per threshold
    assert [s[1:] for s in settings[len(base) :: len(base) - 1]] == [(0.5, 0.0), (2.0, 0.0), (0.5, 0.6), (2.0, 0.6)]
