"""The store's composed parts without Milvus: the graph cache's typed deltas and the facade's forwards."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from langchain_graphrag_milvus.graph import GraphIndex
from langchain_graphrag_milvus.graph.ids import id_to_key
from langchain_graphrag_milvus.milvus.connection import MilvusConnection
from langchain_graphrag_milvus.milvus.graph_cache import GraphCache, GraphDelta
from langchain_graphrag_milvus.milvus.local_search import LocalSearch
from langchain_graphrag_milvus.milvus.reads import MilvusReads
from langchain_graphrag_milvus.store import MilvusGraphStore
from langchain_graphrag_milvus.text.names import entity_id, relation_id


def _cache(tmp_path) -> GraphCache[list[str]]:
    connection = MilvusConnection(
        uri=str(tmp_path / "unused.db"),
        connection_args={},
        collection_prefix="t",
        index_params={},
        consistency_level="Session",
        partition_key_field=None,
        timeout=1.0,
    )  # nothing is contacted before first use
    return GraphCache(connection, MilvusReads(connection, {}), lambda names: sorted(names), refresh_interval=None)


def _rel(s: str, p: str, o: str, passages: list[str]) -> dict[str, object]:
    return {"pk": relation_id(s, p, o), "subject_id": entity_id(s), "object_id": entity_id(o), "passage_ids": passages}


def test_a_typed_delta_unlinks_then_adds_and_keeps_names_in_step(tmp_path) -> None:
    cache = _cache(tmp_path)
    assert cache.loaded is None
    cache.apply(GraphDelta.from_relation_rows([_rel("A", "r", "B", ["p1"])]))  # no graph yet: nothing to fold
    assert cache.loaded is None
    old = _rel("A", "r", "B", ["p1", "p2"])
    graph = GraphIndex.from_relations(
        relation_keys=np.array([id_to_key(str(old["pk"]))], np.uint64),
        subject_keys=np.array([id_to_key(entity_id("A"))], np.uint64),
        object_keys=np.array([id_to_key(entity_id("B"))], np.uint64),
        passage_ids=[["p1", "p2"]],
    )
    cache.replace(graph)
    assert cache.loaded is graph
    # what a merge of "A" into "Z" applies: the old relation's links go, the rewritten relation comes
    delta = GraphDelta.from_relation_rows(
        [_rel("Z", "r", "B", ["p1", "p2"])],
        new_entities={entity_id("Z"): "Z"},
        unlinked_relation_keys=[id_to_key(str(old["pk"]))] * 2,
        unlinked_passage_ids=["p1", "p2"],
        removed_entities=[entity_id("A")],
    )
    cache.apply(delta)
    after = cache.loaded
    assert after is not None and after.n_relations == 1 and after.n_passages == 2
    assert int(after.relations.keys[0]) == id_to_key(relation_id("Z", "r", "B"))
    assert sorted(after.entities.keys.tolist()) == sorted([id_to_key(entity_id("Z")), id_to_key(entity_id("B"))])
    cache.forget()
    assert cache.loaded is None


def test_graph_cache_settings_are_validated(tmp_path) -> None:
    connection = _cache(tmp_path).connection
    reads = MilvusReads(connection, {})
    with pytest.raises(ValueError, match="on_stale"):
        GraphCache(connection, reads, list, on_stale="ignore")  # type: ignore[arg-type]
    for bad in (-1, "1", True):
        with pytest.raises(ValueError, match="refresh_interval"):
            GraphCache(connection, reads, list, refresh_interval=bad)  # type: ignore[arg-type]


def test_facade_forwards_keep_the_parts_signatures_docs_and_async_nature() -> None:
    assert inspect.signature(MilvusGraphStore.search) == inspect.signature(LocalSearch.search)
    # the store's search takes what Milvus' takes, and ``within`` (the keys its filter selects)
    reads = inspect.signature(MilvusReads.search).parameters
    store = inspect.signature(MilvusGraphStore.search).parameters
    assert list(store) == [*reads, "within"]
    assert all(store[name] == reads[name] for name in reads)
    assert MilvusGraphStore.fetch.__doc__ == MilvusReads.fetch.__doc__
    assert inspect.iscoroutinefunction(MilvusGraphStore.asearch)
    assert inspect.iscoroutinefunction(MilvusGraphStore.afetch)
    assert not inspect.iscoroutinefunction(MilvusGraphStore.search)
    assert MilvusGraphStore.refresh.__doc__ == GraphCache.refresh.__doc__
