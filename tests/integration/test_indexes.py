"""Vector indexes that fit the size: FLAT by default, HNSW declared or switched to past a threshold; recall reported."""

from __future__ import annotations

import pytest
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding

from langchain_graphrag_milvus.milvus import index_params as indexes

from ..graph_checks import graph_signature


def docs(n: int = 40) -> list[Document]:
    return [
        Document(
            id=f"d{i}",
            page_content=f"Passage number {i} about thing {i % 7}.",
            metadata={"triplets": [[f"Thing {i}", f"relates {i % 5}", f"Thing {(i * 3) % n}"]]},
        )
        for i in range(n)
    ]


QUERIES = [f"thing {i} relates" for i in range(12)]


def test_flat_recall_is_exact(make_store) -> None:
    store = make_store(DeterministicFakeEmbedding(size=16))
    store.add_documents(docs())
    found = store.index_recall(QUERIES, k=5)
    assert {kind: (r["index"], r["recall"]) for kind, r in found.items()} == {
        "relations": ("FLAT", 1.0),
        "passages": ("FLAT", 1.0),
    }


def test_hnsw_declared_searches_past_the_default_ef(make_store) -> None:
    store = make_store(DeterministicFakeEmbedding(size=16), index="hnsw")
    store.add_documents(docs())
    assert store._connection.index_type("relations") == "HNSW"
    vector = store.embedding.embed_query("thing")
    hits = store._reads.search("relations", [vector], indexes.EF_SEARCH + 50)  # Milvus needs ef >= limit
    assert len(hits[0]) == 40
    found = store.index_recall(QUERIES, k=5)
    assert found["relations"]["index"] == "HNSW" and 0.0 <= found["relations"]["recall"] <= 1.0


def test_auto_switches_to_hnsw_past_the_threshold_on_a_server(make_store, monkeypatch) -> None:
    monkeypatch.setattr(indexes, "HNSW_THRESHOLD", 30)
    store = make_store(DeterministicFakeEmbedding(size=16), index="auto")
    store.add_documents(docs(20))
    assert store._connection.index_type("relations") == "FLAT"
    store.add_documents(docs(40))  # now 40 passages and relations: past the threshold
    expected = "FLAT" if make_store.backend == "lite" else "HNSW"  # Lite stays exact
    assert store._connection.index_type("relations") == expected
    assert store._connection.index_type("passages") == expected
    store._connection.forget_index_types()
    assert store._connection.index_type("passages") == expected  # what Milvus says, not a cached guess
    docs_found = store.as_naive_retriever(k=3).invoke("Passage number 7 about thing 0.")
    assert len(docs_found) == 3
    assert graph_signature(store.graph) == graph_signature(store.rebuild_graph())


def test_the_default_stays_exact_past_the_threshold(make_store, monkeypatch) -> None:
    monkeypatch.setattr(indexes, "HNSW_THRESHOLD", 10)
    store = make_store(DeterministicFakeEmbedding(size=16))
    store.add_documents(docs(20))
    assert store._connection.index_type("relations") == "FLAT"
    assert store._connection.index_type("passages") == "FLAT"


def test_index_modes_are_checked() -> None:
    with pytest.raises(ValueError, match="index must be one of"):
        indexes.creation_index("ivf", "COSINE")
    assert indexes.search_params_for({"metric_type": "COSINE", "params": {}}, "HNSW", 500)["params"]["ef"] == 500
    assert indexes.search_params_for({"params": {"ef": 900}}, "HNSW", 10)["params"]["ef"] == 900
    assert indexes.search_params_for({"params": {}}, "FLAT", 500) == {"params": {}}
