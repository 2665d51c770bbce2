"""A MilvusGraphStore on the in-memory backend (tests/compliance/memory_backend.py): no Milvus at all.

The store is built through its ``backend=`` keyword; ingestion, the graph and both retrievers run on it, and
the Milvus-only features raise ``BackendFeatureError`` (not ``AttributeError``).
"""

from __future__ import annotations

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from langchain_graphrag_milvus import MilvusGraphStore
from langchain_graphrag_milvus.datasets import nano_dataset
from langchain_graphrag_milvus.errors import BackendFeatureError, GraphRAGError
from langchain_graphrag_milvus.retrievers import MilvusGraphRetriever

from ..compliance.memory import MemoryState
from ..compliance.memory_backend import MemoryStoreBackend


@pytest.fixture
def memory_store() -> MilvusGraphStore:
    store = MilvusGraphStore(DeterministicFakeEmbedding(size=32), backend=MemoryStoreBackend(), graph_path=None)
    store.add_records(nano_dataset())
    return store


def test_a_store_on_the_memory_backend_ingests_and_retrieves(memory_store: MilvusGraphStore) -> None:
    assert isinstance(memory_store._state, MemoryState)
    counts = memory_store.counts()
    assert counts["passages"] == len(nano_dataset()) and counts["relations"] > 0
    assert memory_store.exists() and memory_store.check_open() == 32
    assert len(memory_store.entity_names()) == counts["entities"]
    docs = MilvusGraphRetriever(store=memory_store, k=3).invoke("Who taught Euler?")
    assert 0 < len(docs) <= 3
    assert isinstance(memory_store.as_path_retriever(k=3).invoke("Euler and Bernoulli"), list)  # compared: integration


@pytest.mark.parametrize(
    "feature",
    [
        lambda s: s.passage_store,
        lambda s: s.vector_store("entities"),
        lambda s: s.client,
        lambda s: s.index_recall(["Euler"]),
        lambda s: s.drop(),
        lambda s: s.collection_name("passages"),
    ],
)
def test_milvus_only_features_raise_a_typed_error(memory_store: MilvusGraphStore, feature) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(BackendFeatureError, match="not Milvus|Milvus backend") as caught:
        feature(memory_store)
    assert isinstance(caught.value, GraphRAGError) and not isinstance(caught.value, AttributeError)


def test_close_on_the_memory_backend_is_a_no_op(memory_store: MilvusGraphStore) -> None:
    memory_store.close()
    assert memory_store.counts()["passages"] == len(nano_dataset())
