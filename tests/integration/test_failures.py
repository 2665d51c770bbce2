"""Clear, typed failures within bounded time: bad URI, no server, missing data, wrong model."""

from __future__ import annotations

import time

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from langchain_graphrag_milvus import (
    CollectionNotFoundError,
    EmbeddingDimensionError,
    MilvusGraphRetriever,
    MilvusGraphStore,
    StoreConnectionError,
)
from langchain_graphrag_milvus.datasets import nano_dataset


@pytest.mark.parametrize("uri", ["http://127.0.0.1:1", "foo://bar", "http://[not-a-host"])
def test_unreachable_or_malformed_uri(uri) -> None:
    store = MilvusGraphStore(DeterministicFakeEmbedding(size=8), uri=uri, timeout=10)  # no I/O yet
    started = time.monotonic()
    with pytest.raises(StoreConnectionError, match="cannot connect to Milvus at") as info:
        store.add_records(nano_dataset())
    assert time.monotonic() - started < 30
    assert "http://host:19530" in str(info.value)  # says what to fix
    with pytest.raises(StoreConnectionError):
        MilvusGraphRetriever(store=store).invoke("x")


def test_lite_path_with_missing_parent_fails_at_construction(tmp_path) -> None:
    from langchain_graphrag_milvus.errors import LitePathError

    for uri in ("/nonexistent_dir/sub/g.db", str(tmp_path / "new" / "dir" / "g.db")):
        with pytest.raises(LitePathError, match="does not exist") as info:
            MilvusGraphStore(DeterministicFakeEmbedding(size=8), uri=uri)
        assert isinstance(info.value, StoreConnectionError) and isinstance(info.value, FileNotFoundError)
    assert not (tmp_path / "new").exists()  # nothing created
    store = MilvusGraphStore(DeterministicFakeEmbedding(size=8), uri=str(tmp_path / "g.db"))
    store.add_records(nano_dataset()[:1])
    assert (tmp_path / "g.db").is_dir()
    store.close()


def test_missing_collections_and_dimension_mismatch(make_store) -> None:
    empty = make_store()
    with pytest.raises(CollectionNotFoundError, match="ingest data first"):
        empty.counts()
    store = make_store(DeterministicFakeEmbedding(size=16))
    store.add_records(nano_dataset())
    wrong = make_store(DeterministicFakeEmbedding(size=24), prefix=store.collection_prefix)
    with pytest.raises(EmbeddingDimensionError, match="24-dimensional vectors but .* store 16"):
        MilvusGraphRetriever(store=wrong).invoke("Who taught Euler?")
    with pytest.raises(EmbeddingDimensionError):
        wrong.as_naive_retriever().invoke("Who taught Euler?")


async def test_async_paths_fail_the_same_way(make_store) -> None:
    store = make_store(DeterministicFakeEmbedding(size=16))
    with pytest.raises(CollectionNotFoundError):
        await MilvusGraphRetriever(store=store).ainvoke("x")
    bad = MilvusGraphStore(DeterministicFakeEmbedding(size=8), uri="http://127.0.0.1:1", timeout=5)
    with pytest.raises(StoreConnectionError):
        await MilvusGraphRetriever(store=bad).ainvoke("x")
