"""graph/: its modules form a DAG below GraphIndex, and the id <-> key <-> index helpers."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import grimp
import numpy as np
import pytest

from langchain_graphrag_milvus.errors import UnknownIdError
from langchain_graphrag_milvus.graph import GraphIndex, persist
from langchain_graphrag_milvus.graph.data import GraphData
from langchain_graphrag_milvus.graph.ids import KeyMap, id_to_key, ids_to_keys, key_to_id, keys_to_ids
from langchain_graphrag_milvus.text import names

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("check_import_cycles", ROOT / "scripts" / "check_import_cycles.py")
assert _spec is not None and _spec.loader is not None
cycles = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cycles)


def _graph_imports() -> dict[str, set[str]]:
    imports = grimp.build_graph("langchain_graphrag_milvus", cache_dir=None)
    inside = {m for m in imports.modules if m.startswith("langchain_graphrag_milvus.graph.")}
    return {m: imports.find_modules_directly_imported_by(m) & inside for m in inside}


def test_graph_modules_form_a_dag_with_the_operations_below_graph_index() -> None:
    graph = _graph_imports()
    assert cycles.strongly_connected(graph) == []
    below_index = ["data", "expand", "update", "persist", "ids", "csr"]
    for name in below_index:  # TYPE_CHECKING and function-level imports count too
        assert "langchain_graphrag_milvus.graph.index" not in graph[f"langchain_graphrag_milvus.graph.{name}"], name
    assert {"expand", "update", "persist", "data"} <= {
        m.rsplit(".", 1)[1] for m in graph["langchain_graphrag_milvus.graph.index"]
    }


def test_graph_index_keeps_its_api_on_top_of_graph_data(tmp_path: Path) -> None:
    g = GraphIndex.from_relations(
        relation_keys=[1, 2], subject_keys=[10, 20], object_keys=[20, 30], passage_ids=[["p1"], ["p2", "p1"]]
    )
    assert isinstance(g, GraphData)
    grown = g.add_relations(relation_keys=[3], subject_keys=[30], object_keys=[40], passage_ids=[["p3"]])
    smaller, removed = grown.remove_passages(["p3"])
    assert type(grown) is GraphIndex and type(smaller) is GraphIndex
    assert removed.relation_keys.tolist() == [3] and removed.passage_ids == ["p3"]
    path = g.save(tmp_path / "g")
    for loaded in (GraphIndex.load(path), GraphIndex.load(path, check=False), GraphIndex.load(path, mmap=False)):
        assert type(loaded) is GraphIndex
        assert loaded.relations.keys.tolist() == [1, 2] and loaded.passages.ids == ["p1", "p2"]
        assert (
            loaded.expand(entity_seeds=[0], hops=1).relations.tolist()
            == g.expand(entity_seeds=[0], hops=1).relations.tolist()
        )
    plain = persist.load(path)  # the arrays alone (no operations) unless a class is given
    assert type(plain) is GraphData and plain.n_relations == 2
    assert type(persist.load(path, cls=GraphIndex)) is GraphIndex


def test_id_helpers_agree_with_the_ids_the_package_makes() -> None:
    ids = [names.entity_id("Leonhard Euler"), names.entity_id("Basel"), "0000000000000000", "ffffffffffffffff"]
    keys = ids_to_keys(ids)
    assert keys.dtype == np.uint64
    assert keys.tolist() == [int(i, 16) for i in ids] == [id_to_key(i) for i in ids]
    assert keys_to_ids(keys) == ids
    assert [key_to_id(k) for k in keys.tolist()] == [format(k, "016x") for k in keys.tolist()] == ids
    assert keys_to_ids([]) == [] and ids_to_keys([]).size == 0
    with pytest.raises(ValueError):
        ids_to_keys(["not hex"])


def test_key_map_converts_ids_and_indices_both_ways() -> None:
    ids = [key_to_id(k) for k in (7, 2**64 - 1, 42)]
    m = KeyMap.from_keys(ids_to_keys(ids))
    assert m.find_ids([ids[2], "00000000000000ff", ids[0]]).tolist() == [2, -1, 0]
    assert m.lookup_ids(ids[::-1]).tolist() == [2, 1, 0]
    with pytest.raises(UnknownIdError, match="00000000000000ff"):
        m.lookup_ids([ids[0], "00000000000000ff"], "entity")
    assert m.ids_at([1, 0]) == [ids[1], ids[0]]
    assert m.ids_at(np.array([True, False, True])) == [ids[0], ids[2]]
    assert m.ids_at(np.empty(0, np.int32)) == []
    assert m.id_at(1) == ids[1] and m.id_at(np.int32(2)) == ids[2]
