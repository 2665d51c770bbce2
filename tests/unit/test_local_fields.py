"""The relation fields held beside the client's vectors: encoded compactly, in step with the graph's passage links."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from langchain_graphrag_milvus.graph import GraphIndex
from langchain_graphrag_milvus.graph.ids import id_to_key, key_to_id
from langchain_graphrag_milvus.milvus.local_fields import (
    decode_fields,
    encode_fields,
    graph_links,
    holds,
    links_checksum,
)
from langchain_graphrag_milvus.milvus.local_vectors import LocalVectors, VectorTable

PIDS = st.lists(st.text(min_size=1, max_size=8), min_size=1, max_size=5, unique=True)


def _rows(n: int, passages: list[list[str]]) -> list[dict]:
    return [
        {"pk": key_to_id(k + 1), "vector": [1.0, float(k)], "text": f"a rel\n{k} ü\"", "predicate": "p",
         "passage_ids": passages[k], "subject_id": "x"}
        for k in range(n)
    ]  # fmt: skip


@settings(max_examples=40, deadline=None)
@given(passages=st.lists(PIDS, min_size=1, max_size=6))
def test_the_graphs_checksums_are_the_rows(passages) -> None:
    """A graph built from the rows has, per relation, the checksum of the row's passage ids (any order)."""
    n = len(passages)
    graph = GraphIndex.from_relations(
        relation_keys=np.arange(1, n + 1, dtype=np.uint64),
        subject_keys=np.full(n, 100, np.uint64),
        object_keys=np.arange(200, 200 + n, dtype=np.uint64),
        passage_ids=passages,
    )
    held = encode_fields("relations", _rows(n, passages))
    assert held is not None
    strings, links = held
    by_key = dict(zip(range(1, n + 1), links.tolist()))
    assert [by_key[int(k)] for k in graph.relations.keys.tolist()] == graph_links(graph).tolist()
    assert links.tolist() == [links_checksum(list(reversed(p))) for p in passages]
    for k in range(n):
        row = decode_fields("relations", strings, k)
        assert row == {"text": f"a rel\n{k} ü\"", "predicate": "p", "passage_ids": passages[k]}


def test_holds_and_rows_without_fields() -> None:
    assert holds("relations", ["text", "passage_ids", "pk"]) and not holds("relations", ["subject_id"])
    assert holds("entities", ["pk"]) and not holds("entities", ["name"])
    assert encode_fields("relations", [{"pk": key_to_id(1), "text": "t"}]) is None
    assert encode_fields("entities", [{"pk": key_to_id(1), "vector": [1.0]}]) is None


def test_rows_whose_passages_changed_are_read_again() -> None:
    """A held row whose passage-id checksum differs from the graph's is read, with the missing ones."""
    local = LocalVectors(cosine=True)
    local.offer("relations", _rows(3, [["a"], ["b"], ["c"]]))
    now = [["a"], ["b", "d"], ["c"]]  # another writer linked relation 2 to passage d
    target = (np.array([1, 2, 3], np.uint64), np.array([links_checksum(p) for p in now], np.uint64))
    asked: list[list[int]] = []

    def fetch(kind, missing, total):
        asked.append(missing.tolist())
        rows = [r for r in _rows(3, now) if id_to_key(r["pk"]) in set(missing.tolist())]
        held = encode_fields(kind, rows)
        assert held is not None
        keys = np.array([id_to_key(r["pk"]) for r in rows], np.uint64)
        return VectorTable.build(keys, np.array([r["vector"] for r in rows], np.float32), True, *held)

    table = local.table("relations", object(), lambda: target, fetch)
    assert table is not None and table.fields is not None
    assert asked == [[2]]
    assert [decode_fields("relations", table.fields, i)["passage_ids"] for i in range(3)] == now
    again = local.table("relations", object(), lambda: target, fetch)  # in step: nothing read
    assert again is not None and asked == [[2]]


def test_a_row_offered_again_with_new_links_replaces_the_older_copy_unread() -> None:
    """A write that links a relation to one more passage offers it again: nothing is read from Milvus."""
    local = LocalVectors(cosine=True)
    local.offer("relations", _rows(3, [["a"], ["b"], ["c"]]))
    now = [["a"], ["b", "d"], ["c"]]
    local.offer("relations", [_rows(3, now)[1]])  # this store's own write: the new row, with its links
    target = (np.array([1, 2, 3], np.uint64), np.array([links_checksum(p) for p in now], np.uint64))
    asked: list[list[int]] = []

    def fetch(kind, missing, total):
        asked.append(missing.tolist())
        raise AssertionError("nothing should be read")

    table = local.table("relations", object(), lambda: target, fetch)
    assert table is not None and table.fields is not None and asked == []
    assert [decode_fields("relations", table.fields, i)["passage_ids"] for i in range(3)] == now


def test_a_table_without_fields_reads_them() -> None:
    """Rows held without fields (a table saved before fields were) are read again once."""
    local = LocalVectors(cosine=True)
    local.offer("relations", [{"pk": key_to_id(1), "vector": [1.0, 0.0]}])
    target = (np.array([1], np.uint64), np.array([links_checksum(["a"])], np.uint64))

    def fetch(kind, missing, total):
        rows = _rows(1, [["a"]])
        return VectorTable.build(np.array([1], np.uint64), np.array([[1.0, 0.0]], np.float32), True,
                                 *encode_fields(kind, rows))  # fmt: skip

    table = local.table("relations", object(), lambda: target, fetch)
    assert table is not None and table.fields is not None and table.links is not None
