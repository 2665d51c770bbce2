"""The replay of ``benchmarks/bench_walk_solvers.py``: its solver variants are the ones they claim to be.

The replay's own copy of the sweeps must give the library's walk bit for bit (else every variant is
measured against something that is not the default); a warm start from the converged walk stops at
once; the replayed rows count the solves whose top ``k`` differs from the converged walk's.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import langchain_graphrag_milvus.graph.ppr as ppr
from langchain_graphrag_milvus.graph.ppr import personalized_pagerank

from .test_graph_index import random_graph

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from bench_walk_solvers import make_sweeps, replay, top_passages  # noqa: E402


def solves(seed: int, n: int = 6) -> tuple[object, list[dict]]:
    g = random_graph(seed, n_entities=300, n_relations=1200, n_passages=200)
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        out.append(
            dict(
                entity_weights=(rng.choice(g.n_entities, 3, replace=False), rng.random(3)),
                relation_weights=(rng.choice(g.n_relations, 20, replace=False), rng.random(20) ** 4),
                passage_weights=(rng.choice(g.n_passages, 2, replace=False), rng.random(2)),
                damping=0.85,
                relation_mask=(rng.random(g.n_relations) > 0.2) if i % 3 == 2 else None,
                passage_mask=None,
                settle=5,
            )
        )
    return g, out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_replays_sweeps_are_the_librarys_bit_for_bit(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    g, kws = solves(seed)
    for kw in kws:
        want = personalized_pagerank(g, **kw)
        monkeypatch.setattr(ppr, "_sweeps", make_sweeps())
        got = personalized_pagerank(g, **kw)
        monkeypatch.undo()
        assert got.iterations == want.iterations and got.settled == want.settled
        assert np.array_equal(got.passage, want.passage) and np.array_equal(got.entity, want.entity)


def test_a_warm_start_from_the_converged_walk_stops_after_one_sweep(monkeypatch: pytest.MonkeyPatch) -> None:
    g, kws = solves(3, 1)
    kw = {**kws[0], "settle": 0, "relation_mask": None}
    exact = personalized_pagerank(g, **{**kw, "tol": 1e-12, "max_iter": 5000})
    cold = personalized_pagerank(g, **kw)
    # the fixed point before the final normalisation: the solver's own unnormalised vectors
    captured: list = []
    real = ppr._sweeps

    def keep(*args, **kwargs):  # type: ignore[no-untyped-def]
        out = real(*args, **kwargs)
        captured.append((out[0].copy(), out[1].copy()))
        return out

    monkeypatch.setattr(ppr, "_sweeps", keep)
    personalized_pagerank(g, **{**kw, "tol": 1e-12, "max_iter": 5000})
    monkeypatch.setattr(ppr, "_sweeps", make_sweeps(init=[captured[-1]]))
    warm = personalized_pagerank(g, **kw)
    assert cold.iterations > 5
    assert warm.iterations == 1
    every = np.arange(g.n_passages)
    assert top_passages(every, warm.passage, 5) == top_passages(every, exact.passage, 5)


def test_replay_rows_count_the_solves_whose_top_differs_from_the_converged_walk() -> None:
    g, kws = solves(4)
    rows = {name: (mean, wrong) for name, mean, _, wrong, _ in replay(g, kws, [1e-3])}
    assert set(rows) == {
        "order (default)", "residual (1e-4)", "order, observed rate", "push 0.001", "push 0.001 -> order",
    }  # fmt: skip
    assert rows["order (default)"][0] < rows["residual (1e-4)"][0]  # the settled stop needs fewer sweeps
    assert rows["residual (1e-4)"][1] == 0  # the tolerance's walk has the converged top 5 on these graphs
    assert rows["push 0.001"][0] == 0  # no global sweep
    # a coarse push misses the converged top 5 on some solve: the count is of real differences
    assert rows["push 0.001"][1] > 0
