"""``benchmarks/cv_bm25seed.py``: its BM25 seeds are the share it claims, and the package's walk is left as it was."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import langchain_graphrag_milvus.retrieval.walk_ranking as wr
from langchain_graphrag_milvus.retrieval.walk_ranking import WalkParams, WalkSeeds, ranked_walks

from .test_graph_index import random_graph

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from cv_bm25seed import Seed, bm25_seeds  # noqa: E402


def _seeds(g: object) -> WalkSeeds:
    rng = np.random.default_rng(1)
    return WalkSeeds(
        rng.choice(g.n_relations, 30, replace=False).astype(np.int32),  # type: ignore[attr-defined]
        np.sort(rng.random(30).astype(np.float32))[::-1],
        np.array([3, 4, 5], np.int32),
        np.array([0.9, 0.8, 0.7], np.float32),
        np.array([1, 2], np.int32),
    )


@pytest.mark.parametrize("mode", ["within", "extra"])
def test_bm25_share_and_restore(mode: str) -> None:
    g = random_graph(0, n_entities=200, n_relations=800, n_passages=120)
    seeds, params = _seeds(g), WalkParams()
    original = wr.seed_weights
    _, _, plain = original(g, seeds, params)
    hits = (np.array([40, 41, -1, 42], np.int64), np.array([6.0, 2.0, 1.5, 1.0], np.float32))
    with bm25_seeds(hits, Seed(3, 0.5, mode)):
        _, _, pas = wr.seed_weights(g, seeds, params)
    assert wr.seed_weights is original
    got = dict(zip(pas[0].tolist(), pas[1].tolist()))
    total = 1.5 if mode == "within" else 1.0  # "extra": the group weighs 1 + w; the walk normalises all groups
    # the top 3 hits, the one outside the graph dropped (it counts towards m): 40 and 41 by score; 42 is fourth
    assert got[40] == pytest.approx(0.5 * 6 / 8 / total) and got[41] == pytest.approx(0.5 * 2 / 8 / total)
    assert 42 not in got
    for p, w in zip(plain[0].tolist(), plain[1].tolist()):
        assert got[p] == pytest.approx(w / total)


def test_no_seed_is_the_default_walk() -> None:
    g = random_graph(2, n_entities=200, n_relations=800, n_passages=120)
    seeds, params = _seeds(g), WalkParams()
    plain = ranked_walks(g, seeds, params, limit=20).order
    with bm25_seeds((np.array([7], np.int64), np.array([3.0], np.float32)), Seed()):
        same = ranked_walks(g, seeds, params, limit=20).order
    with bm25_seeds((np.array([7], np.int64), np.array([3.0], np.float32)), Seed(1, 2.0, "extra")):
        moved = ranked_walks(g, seeds, params, limit=20).order
    assert same.tolist() == plain.tolist()
    assert 7 in moved[:5].tolist()


def test_next_mode_keeps_the_first_pick() -> None:
    g = random_graph(3, n_entities=200, n_relations=800, n_passages=120)
    seeds, params = _seeds(g), WalkParams()
    plain = ranked_walks(g, seeds, params, limit=20).order
    hits = (np.array([9], np.int64), np.array([3.0], np.float32))
    with bm25_seeds(hits, Seed(1, 2.0, "next")):
        moved = ranked_walks(g, seeds, params, limit=20).order
    assert wr._next_walk.__name__ == "_next_walk" and wr.seed_weights.__name__ == "seed_weights"
    assert moved[0] == plain[0] != 9
    assert 9 in moved[1:5].tolist()
