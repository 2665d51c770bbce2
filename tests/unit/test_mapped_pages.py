"""A reopened index gives back the pages its checks read (``persist.release_pages``), and answers the same.

Opening a saved index reads some arrays through (shape and content checks, the walk lists' check,
the name table's checks); those pages would stay in the process's resident memory though a query
needs few of them. The maps are read-only views of the files, so dropping the pages loses nothing.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from langchain_graphrag_milvus.graph import GraphIndex, persist
from langchain_graphrag_milvus.graph.ids import key_to_id
from langchain_graphrag_milvus.milvus.graph_saved import save_index, saved_names
from langchain_graphrag_milvus.text.name_map import NameMap
from langchain_graphrag_milvus.text.name_table import NameTable

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/smaps")


def _resident(path: Path) -> int:
    """Resident bytes of this process's maps of files under ``path`` (``/proc/self/smaps``)."""
    total, inside = 0, False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        head = line.split()
        if head and "-" in head[0] and len(head) >= 5 and not line.startswith(("Rss", "Size")):
            inside = len(head) >= 6 and head[-1].startswith(str(path))
        elif inside and line.startswith("Rss:"):
            total += int(line.split()[1]) * 1024
    return total


def _graph(n: int) -> tuple[GraphIndex, NameMap]:
    rng = np.random.default_rng(0)
    subjects = rng.integers(1, n // 2, n).astype(np.uint64)
    objects = rng.integers(n // 2, n, n).astype(np.uint64)
    graph = GraphIndex.from_relations(
        relation_keys=np.arange(10**6, 10**6 + n, dtype=np.uint64),
        subject_keys=subjects,
        object_keys=objects,
        passage_ids=[[f"p{i % 997}"] for i in range(n)],
    )
    names = NameMap.from_items((key_to_id(int(k)), f"Name {int(k)} Of Entity") for k in graph.entities.keys)
    return graph, names


def test_release_pages_leaves_unmapped_arrays_alone() -> None:
    plain = np.arange(10)
    assert persist.release_pages([plain, plain[2:]]) == 0
    assert plain.tolist() == list(range(10))


@linux
def test_release_pages_drops_the_pages_read_and_keeps_the_values(tmp_path: Path) -> None:
    values = np.arange(1 << 20, dtype=np.int64)  # 8 MiB
    np.save(tmp_path / "a.npy", values)
    mapped = np.asarray(np.load(tmp_path / "a.npy", mmap_mode="r"))
    assert int(mapped.sum()) == int(values.sum())  # every page read
    before = _resident(tmp_path)
    assert before >= 4 << 20
    assert persist.release_pages([mapped, mapped[10:]]) == 1  # one map, however many views
    assert _resident(tmp_path) < before // 4
    assert np.array_equal(mapped, values)  # read again from the file


@linux
def test_a_reopened_index_keeps_few_pages_resident_and_answers_the_same(tmp_path: Path) -> None:
    graph, names = _graph(60_000)
    table = NameTable.for_names(names)
    save_index(graph, tmp_path / "g", {"t": 1}, table)
    loaded = GraphIndex.load(tmp_path / "g")
    opened = saved_names(tmp_path / "g")
    assert opened is not None
    files = sum(f.stat().st_size for f in (tmp_path / "g").iterdir())
    assert _resident(tmp_path / "g") < files // 4  # the checks read far more than this
    seeds = loaded.entities.lookup(graph.entities.keys[:5])
    assert np.array_equal(
        loaded.expand(entity_seeds=seeds, hops=2).relations, graph.expand(entity_seeds=seeds, hops=2).relations
    )
    assert opened.names() == names
    assert np.array_equal(loaded.ent_rel.indices, graph.ent_rel.indices)
