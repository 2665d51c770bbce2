"""The rebuild's compact heap: passage ids made again side by side, the same graph as before.

``StringIdMap.repack`` drops the id strings decoded with the rows and makes them again from one
bytes object; ``graph_read.read_graph`` is the store's rebuild (rows → graph and names, then the
repack and the heap release). The memory it saves is measured by ``benchmarks/bench_memory.py``
(``RSS from rows``); here: nothing changes but where the strings live.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from langchain_graphrag_milvus.graph.ids import StringIdMap
from langchain_graphrag_milvus.milvus.graph_read import read_graph, read_graph_rows

from .test_state_seam import _entity, _relation

ids = st.lists(st.text(min_size=0, max_size=12), unique=True, max_size=40)


@given(ids)
def test_repack_keeps_every_id_and_its_index(values: list[str]) -> None:
    """Any ids (empty, non-ASCII, lone surrogates): same order, same lookups, new string objects."""
    m = StringIdMap(values)
    before = list(m.ids)
    m.repack()
    assert m.ids == before
    assert m.find([*before, "\x00never"]).tolist() == [*range(len(before)), -1]
    assert len(m) == len(before) and all(v in m for v in before)
    long = [v for v in m.ids if len(v) > 1]  # one-character strings are shared singletons in CPython
    assert all(a is not b for a, b in zip(long, [v for v in before if len(v) > 1]))


def test_repack_of_an_extended_map_and_of_an_empty_one() -> None:
    """A map grown by ``extended`` repacks to the same map; an empty map stays empty and usable."""
    m = StringIdMap(["p1", "Zürich §2"]).extended(["p3", "p1", "日本", "lone \ud800"])
    m.repack()
    assert m.ids == ["p1", "Zürich §2", "p3", "日本", "lone \ud800"]
    assert m.lookup(["日本", "p1"]).tolist() == [3, 0]
    empty = StringIdMap()
    empty.repack()
    assert (len(empty), empty.find(["x"]).tolist()) == (0, [-1])
    assert empty.extended(["a"]).ids == ["a"]


def test_the_rebuild_gives_the_graph_and_names_the_rows_give() -> None:
    """``read_graph`` on the in-memory backend: the same arrays, passage ids and names as the plain build."""
    from ..compliance.memory import MemoryBackend, MemoryReads, MemoryWrites

    backend = MemoryBackend()
    writes = MemoryWrites(backend)
    writes.ensure_collections(4)
    names = ["Euler", "Bernoulli", "Basel", "Zürich", "Daniel"]
    writes.write("entities", [_entity(n) for n in names], batch_size=2)
    triplets = [
        ("Euler", "studied under", "Bernoulli", ["p1", "p2"]),
        ("Bernoulli", "taught in", "Basel", ["p2"]),
        ("Daniel", "born in", "Zürich", ["p3 ünïcode"]),
        ("Daniel", "son of", "Bernoulli", ["p1", "p3 ünïcode"]),
    ]
    writes.write("relations", [_relation(*t) for t in triplets], batch_size=3)
    reads = MemoryReads(backend)
    graph, name_map = read_graph(reads, parallel=2)
    rows = read_graph_rows(reads, 2)
    plain = rows.to_graph()
    assert graph.passages.ids == plain.passages.ids
    assert sorted(graph.passages.ids) == ["p1", "p2", "p3 ünïcode"]
    assert graph.passages.find(["p3 ünïcode", "p2"]).tolist() == plain.passages.find(["p3 ünïcode", "p2"]).tolist()
    for attr in ("keys",):
        assert np.array_equal(getattr(graph.entities, attr), getattr(plain.entities, attr))
        assert np.array_equal(getattr(graph.relations, attr), getattr(plain.relations, attr))
    assert graph.rel_pas.row(0).tolist() == plain.rel_pas.row(0).tolist()
    assert dict(name_map.items()) == rows.names
