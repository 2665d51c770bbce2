"""The graph's id maps without per-id Python objects: ``KeyMap`` (argsort + sample), ``StringIdMap`` (blob + CRC-32).

Both must answer exactly as the dict they replace: every key or id found at its index, every
unknown one -1, whatever the batch size (``KeyMap`` searches small batches block by block and
large ones in a sorted copy), after appends, and after a save and a load.
"""

from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from langchain_graphrag_milvus.graph import GraphIndex
from langchain_graphrag_milvus.graph.ids import KEY_STEP, KeyMap
from langchain_graphrag_milvus.graph.string_ids import IdStrings, StringIdMap


def _keys(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    keys = np.unique(rng.integers(0, 2**64 - 1, 2 * n + 2, dtype=np.uint64))[:n]
    rng.shuffle(keys)
    return keys


@pytest.mark.parametrize("n", [0, 1, KEY_STEP - 1, KEY_STEP, KEY_STEP + 1, 1000, 20_000])
def test_keymap_finds_every_key_in_small_and_large_batches(n: int) -> None:
    keys = _keys(n)
    m = KeyMap.from_keys(keys)
    rng = np.random.default_rng(n)
    unknown = np.array([0, 2**64 - 1, *rng.integers(0, 2**64 - 1, 20, dtype=np.uint64)], np.uint64)
    unknown = unknown[~np.isin(unknown, keys)]
    expected = {int(k): i for i, k in enumerate(keys)}
    for batch in (keys[:3], keys[-5:], keys, unknown, np.concatenate([unknown, keys[::7]])):
        assert m.find(batch).tolist() == [expected.get(int(k), -1) for k in batch]
    assert m.nbytes < 13 * max(n, 1) + 8 * KEY_STEP  # keys, argsort and 1/KEY_STEP of a sorted copy


@given(st.lists(st.integers(0, 2**64 - 1), unique=True, max_size=300), st.integers(0, 300))
def test_keymap_extended_equals_one_built_at_once(values: list[int], cut: int) -> None:
    keys = np.array(values, np.uint64)
    grown = KeyMap.from_keys(keys[:cut]).extended(keys[cut:])
    assert grown.find(keys).tolist() == list(range(len(values)))
    assert grown.keys.tolist() == values


def test_keymap_refuses_repeated_keys() -> None:
    with pytest.raises(ValueError):
        KeyMap.from_keys([3, 1, 3])


@given(st.lists(st.text(max_size=12), unique=True, max_size=60))
def test_string_id_map_finds_every_id(values: list[str]) -> None:
    m = StringIdMap(values)
    assert list(m.ids) == values and m.ids == values and len(m) == len(values)
    assert m.find(values).tolist() == list(range(len(values)))
    absent = [v + "\x00" for v in values[:5] if v + "\x00" not in values]
    assert m.find(absent).tolist() == [-1] * len(absent)
    assert all(v in m for v in values) and 5 not in m  # type: ignore[operator]


def test_string_id_map_extends_and_takes() -> None:
    m = StringIdMap(["p1", "Zürich §2"]).extended(["p3", "p1", "日本", "lone \ud800", "p3"])
    assert m.ids == ["p1", "Zürich §2", "p3", "日本", "lone \ud800"]
    assert m.ids[-1] == "lone \ud800" and m.ids[1:3] == ["Zürich §2", "p3"]
    assert m.find(["日本", "p1", "nope"]).tolist() == [3, 0, -1]
    assert m.extended(["p1"]) is m
    assert m.take([4, 0]).ids == ["lone \ud800", "p1"]
    with pytest.raises(ValueError):
        StringIdMap(["a", "a"])
    with pytest.raises(IndexError):
        m.ids[5]


def test_string_id_map_from_blob_checks_its_offsets() -> None:
    blob = "aü日".encode()
    assert StringIdMap.from_blob(blob, [0, 1, 3, 6]).ids == ["a", "ü", "日"]
    for bad in ([0, 2, 6], [0, 1, 3, 5], [1, 6], [0, 4, 3, 6]):  # mid-character, short, not from 0, backwards
        with pytest.raises(ValueError):
            StringIdMap.from_blob(blob, bad)
    with pytest.raises(ValueError):
        StringIdMap.from_blob(b"aa", [0, 1, 2])  # a repeated id


def _colliding_pair() -> tuple[str, str]:
    """Two distinct ids with the same CRC-32 (a birthday search over numbered ids)."""
    seen: dict[int, str] = {}
    i = 0
    while True:
        pid = f"passage-{i}"
        h = zlib.crc32(pid.encode())
        if h in seen:
            return seen[h], pid
        seen[h] = pid
        i += 1


def test_hash_collisions_are_told_apart() -> None:
    a, b = _colliding_pair()
    assert a != b and zlib.crc32(a.encode()) == zlib.crc32(b.encode())
    m = StringIdMap(["plain", a])
    assert m.find([b, a]).tolist() == [-1, 1]  # same hash, other bytes: unknown
    both = m.extended([b])
    assert both.find([b, a, "plain"]).tolist() == [2, 1, 0]


def test_id_strings_compare_as_lists() -> None:
    ids = StringIdMap(["x", "y"]).ids
    assert isinstance(ids, IdStrings)
    assert ids == ["x", "y"] and ids == ("x", "y") and ids != ["y", "x"] and ids == StringIdMap(["x", "y"]).ids


def test_a_saved_graph_opens_with_the_same_maps(tmp_path: Path) -> None:
    keys = _keys(500, seed=3)
    graph = GraphIndex.from_relations(
        relation_keys=keys,
        subject_keys=keys[::-1],
        object_keys=np.roll(keys, 1),
        passage_ids=[[f"p{i % 37}", "Zürich"] for i in range(len(keys))],
    )
    graph.save(tmp_path / "g")
    loaded = GraphIndex.load(tmp_path / "g")
    assert loaded.passages.ids == graph.passages.ids
    assert loaded.relations.find(keys).tolist() == graph.relations.find(keys).tolist() == list(range(len(keys)))
    assert loaded.entities.find(keys).tolist() == graph.entities.find(keys).tolist()
    assert loaded.passages.find(["Zürich", "p3"]).tolist() == graph.passages.find(["Zürich", "p3"]).tolist()


def test_a_graph_without_synonyms_holds_no_synonym_rows(tmp_path: Path) -> None:
    keys = _keys(200, seed=5)
    plain = GraphIndex.from_relations(
        relation_keys=keys, subject_keys=keys[::-1], object_keys=np.roll(keys, 3), passage_ids=[["p"]] * 200
    )
    assert plain.synonyms.indptr.strides == (0,) and plain.synonyms.n_rows == plain.n_entities
    assert plain.synonyms.indptr.tolist() == [0] * (plain.n_entities + 1)
    linked = plain.add_relations(
        relation_keys=[], subject_keys=[], object_keys=[], passage_ids=[], synonym_pairs=(keys[:1], keys[1:2])
    )
    assert linked.synonyms.indices.size == 2 and linked.synonyms.indptr.strides == (8,)
    seeds = linked.entities.lookup(keys[:1])
    assert set(linked.expand(entity_seeds=seeds, hops=0).entities.tolist()) >= set(linked.entities.lookup(keys[:2]))
    smaller, _ = plain.remove_passages(["nothing"])
    assert smaller.synonyms.indptr.strides == (0,)
    plain.save(tmp_path / "g")
    loaded = GraphIndex.load(tmp_path / "g")
    assert loaded.synonyms.indptr.tolist() == plain.synonyms.indptr.tolist()
    assert (
        loaded.expand(entity_seeds=seeds, hops=1).relations.tolist()
        == plain.expand(entity_seeds=seeds, hops=1).relations.tolist()
    )
