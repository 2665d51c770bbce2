"""The client-side vector tables (issue 25, item 2): their search is a FLAT search, their check keeps them in step."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_graphrag_milvus.graph.ids import key_to_id
from langchain_graphrag_milvus.milvus.local_vectors import (
    IncompleteRead,
    LocalVectors,
    NowhereToKeep,
    VectorTable,
    local_vectors_for,
)


def _table(keys: list[int], dim: int = 4, seed: int = 0, cosine: bool = True) -> VectorTable:
    rng = np.random.default_rng(seed)
    return VectorTable.build(np.array(keys, np.uint64), rng.normal(size=(len(keys), dim)).astype(np.float32), cosine)


@settings(max_examples=60, deadline=None)
@given(
    keys=st.lists(st.integers(0, 2**64 - 1), min_size=0, max_size=40, unique=True),
    n_queries=st.integers(1, 3),
    limit=st.integers(1, 50),
    cosine=st.booleans(),
    seed=st.integers(0, 10_000),
)
def test_top_is_a_full_sort_by_score_then_key(keys, n_queries, limit, cosine, seed) -> None:
    rng = np.random.default_rng(seed)
    raw = rng.normal(size=(len(keys), 5)).astype(np.float32)
    raw[: len(keys) // 3] = raw[0] if len(keys) else raw[: len(keys) // 3]  # equal rows: ties
    table = VectorTable.build(np.array(keys, np.uint64), raw, cosine)
    queries = rng.normal(size=(n_queries, 5)).astype(np.float32)
    for query, (positions, scores) in zip(queries, table.top(queries, limit, cosine)):
        q = query / np.linalg.norm(query) if cosine else query
        rows = raw / np.maximum(np.linalg.norm(raw, axis=1, keepdims=True), 1e-30) if cosine else raw
        # the table sorts keys; score every stored row by its key's raw vector
        by_key = {int(k): rows[i] for i, k in enumerate(keys)}
        expected = sorted(by_key, key=lambda k: (-float(np.dot(by_key[k], q)), k))[:limit]
        got = [int(table.keys[p]) for p in positions]
        assert len(got) == min(limit, len(keys))
        # same scores position by position (ties may order by key, which the sort does too)
        assert np.allclose(scores, [np.dot(by_key[k], q) for k in got], atol=1e-5)
        assert np.allclose(sorted(scores, reverse=True), scores)
        assert np.allclose([np.dot(by_key[k], q) for k in expected], scores, atol=1e-5)


def test_build_keeps_a_repeated_keys_last_row() -> None:
    table = VectorTable.build(np.array([5, 3, 5], np.uint64), np.array([[1, 0], [0, 1], [0, 2]], np.float32), False)
    assert table.keys.tolist() == [3, 5]
    assert table.matrix.tolist() == [[0, 1], [0, 2]]


@settings(max_examples=60, deadline=None)
@given(
    have=st.sets(st.integers(0, 60), max_size=30),
    offered=st.sets(st.integers(0, 60), max_size=30),
    target=st.sets(st.integers(0, 60), max_size=30),
)
def test_synced_holds_exactly_the_target_and_reads_only_what_it_lacks(have, offered, target) -> None:
    def vec(k: int) -> list[float]:
        return [float(k), 1.0, 0.5]

    def make(keys: set[int]) -> VectorTable:
        ks = sorted(keys)
        return VectorTable.build(
            np.array(ks, np.uint64), np.array([vec(k) for k in ks], np.float32).reshape(-1, 3), True
        )

    asked: list[list[int]] = []

    def fetch(missing: np.ndarray) -> VectorTable:
        asked.append(missing.tolist())
        return make(set(missing.tolist()))

    table = make(have).synced(np.array(sorted(target), np.uint64), [make(offered)], fetch)
    assert table.keys.tolist() == sorted(target)
    lacking = sorted(target - have - offered)
    assert asked == ([lacking] if lacking else [])
    expected = make(target)
    assert np.allclose(table.matrix.reshape(-1, 3), expected.matrix.reshape(-1, 3))


def test_a_short_read_raises_and_the_store_keeps_the_offered_rows() -> None:
    local = LocalVectors(cosine=True)
    local.offer("relations", [{"pk": key_to_id(1), "vector": [1.0, 0.0]}])
    reads: list[int] = []

    def fetch(kind, missing, total):  # the row of key 2 is not visible yet
        reads.append(len(missing))
        return VectorTable.empty()

    source = object()
    assert local.table("relations", source, lambda: np.array([1, 2], np.uint64), fetch) is None
    assert local.current("relations", source) is None
    # the next check still has key 1's offered row: it reads only key 2
    table = local.table(
        "relations", source, lambda: np.array([1, 2], np.uint64), lambda k, m, t: _table(m.tolist(), dim=2)
    )
    assert table is not None and table.keys.tolist() == [1, 2]
    assert reads == [1]
    with pytest.raises(IncompleteRead):
        VectorTable.empty().synced(np.array([7], np.uint64), [], lambda m: VectorTable.empty())


def test_a_table_is_checked_again_only_when_its_source_changes() -> None:
    local = LocalVectors(cosine=True)
    calls: list[int] = []

    def target() -> np.ndarray:
        calls.append(1)
        return np.array([1, 2], np.uint64)

    source = object()
    fetch = lambda k, m, t: _table(m.tolist())  # noqa: E731
    first = local.table("entities", source, target, fetch)
    assert local.table("entities", source, target, fetch) is first
    assert len(calls) == 1
    local.table("entities", object(), target, fetch)
    assert len(calls) == 2


def test_a_state_that_cannot_be_held_is_not_checked_again_until_it_changes() -> None:
    local = LocalVectors(cosine=True)
    calls: list[int] = []

    def target() -> np.ndarray:
        calls.append(1)
        return np.array([1, 2, 3], np.uint64)

    def nowhere(kind, missing, total):
        raise NowhereToKeep(f"{len(missing)} rows to read, and no saved index to keep them in")

    source = object()
    assert local.table("relations", source, target, nowhere) is None
    assert local.table("relations", source, target, nowhere) is None
    assert len(calls) == 1  # remembered: no key set computed again, nothing read
    later = object()  # the graph changed: checked again, and held if it can be
    assert local.table("relations", later, target, lambda k, m, t: _table(m.tolist())) is not None
    assert len(calls) == 2 and local._refused == {}


def test_more_rows_than_max_rows_are_searched_in_milvus() -> None:
    local = LocalVectors(cosine=True, max_rows=2)
    assert (
        local.table("relations", object(), lambda: np.arange(3, dtype=np.uint64), lambda *a: _table([0, 1, 2])) is None
    )
    rows = [{"pk": key_to_id(k), "vector": [1.0, float(k)]} for k in range(3)]
    local.offer("relations", rows)  # more than a table may hold: not kept
    assert local.held()[1]["relations"] == []


def test_the_setting() -> None:
    assert local_vectors_for("auto", lite=False, cosine=True) is None
    assert local_vectors_for("off", lite=True, cosine=True) is None
    assert local_vectors_for("auto", lite=True, cosine=True) is not None
    on = local_vectors_for("on", lite=False, cosine=False)
    assert on is not None and on.max_rows is None and not on.cosine
    with pytest.raises(ValueError, match="local_search must be 'auto', 'on' or 'off', got 'yes'"):
        local_vectors_for("yes", lite=True, cosine=True)  # type: ignore[arg-type]
