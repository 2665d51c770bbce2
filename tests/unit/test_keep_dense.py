"""The merge that keeps the dense top hits (``retrieval/keep_dense.py``): pure, property-based."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from langchain_graphrag_milvus.retrieval.keep_dense import keep_dense
from langchain_graphrag_milvus.retrieval.params import RetrievalParams

ids = st.lists(st.integers(0, 30), max_size=25)
settings = st.tuples(st.integers(1, 12), st.integers(0, 6), st.integers(0, 6))  # k, keep, slack


@given(ids, ids, settings)
def test_every_protected_passage_is_in_the_result(graph, dense, ks) -> None:
    k, keep, slack = ks
    out = keep_dense(graph, dense, k=k, keep=keep, slack=slack)
    protected = list(dict.fromkeys(dense))[: min(keep, k)]
    assert set(protected) <= set(out)
    assert len(out) == len(set(out))  # distinct
    assert len(out) == min(k, len(set(graph) | set(protected)))  # k ids when there are that many


@given(ids, ids, settings)
def test_the_rest_keeps_the_graph_order_and_deadlines_hold(graph, dense, ks) -> None:
    k, keep, slack = ks
    out = keep_dense(graph, dense, k=k, keep=keep, slack=slack)
    protected = list(dict.fromkeys(dense))[: min(keep, k)]
    rest = [i for i in out if i not in protected]
    graph_order = [i for i in dict.fromkeys(graph) if i not in protected]
    assert rest == graph_order[: len(rest)]  # the graph's order, a prefix of it
    m = len(protected)
    for r, pid in enumerate(protected, start=1):  # rank r sits at position r + slack at the latest
        assert out.index(pid) + 1 <= min(r + slack, k - (m - r))


@given(ids, ids, st.integers(0, 4), st.integers(0, 4))
def test_prefix_of_a_longer_list_once_k_covers_keep_and_slack(graph, dense, keep, slack) -> None:
    short_k = keep + slack
    if short_k == 0:
        return
    short = keep_dense(graph, dense, k=short_k, keep=keep, slack=slack)
    long = keep_dense(graph, dense, k=short_k + 5, keep=keep, slack=slack)
    assert long[: len(short)] == short


def test_examples() -> None:
    graph, dense = ["g1", "g2", "g3", "g4", "g5", "d2"], ["d1", "d2", "g9"]
    assert keep_dense(graph, dense, k=5, keep=0, slack=0) == ["g1", "g2", "g3", "g4", "g5"]
    assert keep_dense(graph, dense, k=5, keep=2, slack=2) == ["g1", "g2", "d1", "d2", "g3"]
    assert keep_dense(graph, dense, k=5, keep=2, slack=0) == ["d1", "d2", "g1", "g2", "g3"]
    assert keep_dense(graph, dense, k=2, keep=2, slack=3) == ["d1", "d2"]  # squeezed: both fit
    assert keep_dense(["d2", "g1"], dense, k=5, keep=2, slack=0) == ["d1", "d2", "g1"]  # graph ran out
    assert keep_dense(graph, dense, k=0, keep=2, slack=0) == []


def test_settings_are_validated() -> None:
    assert RetrievalParams().ranking.keep_dense >= 0
    for bad in ({"keep_dense": -1}, {"keep_dense_slack": -1}, {"keep_dense": True}):
        with pytest.raises(ValueError, match="non-negative integer"):
            RetrievalParams(**bad)
