"""The proof of the backend factory: the same store, retrievers and answers on Milvus and on the memory backend.

A ``MilvusGraphStore`` built with ``backend=MemoryStoreBackend()`` (``tests/compliance/memory_backend.py``,
outside the package) ingests the nano dataset with the real MiniLM embeddings, and the graph retriever
(default ranking) and the path retriever answer as the same store on Milvus (Lite and server) does:
the same passage ids in the same order, for every query. The in-memory scores are float64 cosines,
Milvus' float32; they agree to 1e-4.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings

from langchain_graphrag_milvus import MilvusGraphStore
from langchain_graphrag_milvus.datasets import nano_dataset
from langchain_graphrag_milvus.retrievers import MilvusGraphRetriever

from ..compliance.memory_backend import MemoryStoreBackend

pytestmark = pytest.mark.model

QUERIES = [
    "Who taught Leonhard Euler?",
    "What is Bernoulli's principle fundamental to?",
    "Which Bernoulli worked on the calculus of variations?",
    "Euler and the Bernoulli family",
    "law of large numbers",
    "How is Leonhard Euler related to Daniel Bernoulli?",
    "How is Jakob Bernoulli related to Leonhard Euler?",
]


def _ids(docs: list[Document]) -> list[str]:
    return [str(d.id or d.metadata.get("id")) for d in docs]


def _scores(docs: list[Document]) -> list[float]:
    return [float(d.metadata.get("score", 0.0)) for d in docs]


def test_memory_backend_answers_as_milvus(make_store: Callable[..., MilvusGraphStore], minilm: Embeddings) -> None:
    on_milvus = make_store(minilm)
    on_memory = MilvusGraphStore(minilm, backend=MemoryStoreBackend(), graph_path=None)
    for store in (on_milvus, on_memory):
        store.add_records(nano_dataset())
    assert on_memory.counts() == on_milvus.counts()
    assert on_memory.entity_names() == on_milvus.entity_names()
    found_paths = 0
    for query in QUERIES:
        graph = [MilvusGraphRetriever(store=s, k=4).invoke(query) for s in (on_milvus, on_memory)]
        paths = [s.as_path_retriever(sentences=True).invoke(query) for s in (on_milvus, on_memory)]
        found_paths += bool(paths[0])
        assert graph[0] and _ids(graph[1]) == _ids(graph[0]), query
        assert [d.page_content for d in graph[1]] == [d.page_content for d in graph[0]], query
        assert _scores(graph[1]) == pytest.approx(_scores(graph[0]), abs=1e-4), query
        assert _ids(paths[1]) == _ids(paths[0]), query
        assert [d.page_content for d in paths[1]] == [d.page_content for d in paths[0]], query
    assert found_paths >= 2  # the path retriever found paths, and the same ones on both
