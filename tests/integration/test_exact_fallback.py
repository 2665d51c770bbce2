"""Filtered searches on an approximate index that come back short are answered exactly (milvus/exact.py).

The reference is Milvus itself: the same documents in a FLAT collection, searched with the
same filter. A spy on the real client counts the extra query (only where the answer was short).
"""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding

from langchain_graphrag_milvus.milvus import exact, expr


def docs(n: int = 60) -> list[Document]:
    return [
        Document(
            id=f"d{i}",
            page_content=f"Passage {i} on topic {i % 9}.",
            metadata={
                "triplets": [[f"Thing {i}", f"relates {i % 5}", f"Thing {(i * 7) % n}"]],
                "group": i % 4,
                "bucket": i // 10,
            },
        )
        for i in range(n)
    ]


class QuerySpy:
    """Counts the client's ``query`` calls that read vectors (the exact fallback's)."""

    def __init__(self, client: Any) -> None:
        self.client, self.calls = client, 0
        self.real = client.query

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if "vector" in (kwargs.get("output_fields") or []):
            self.calls += 1
        return self.real(*args, **kwargs)


def _answers(hits: list[list[Any]]) -> list[list[tuple[str, float]]]:
    return [[(h.id, round(h.score, 4)) for h in per] for per in hits]


@pytest.mark.parametrize("metric", ["COSINE", "IP"])
def test_short_filtered_search_on_hnsw_equals_flat(make_store, monkeypatch, metric: str) -> None:
    hnsw = make_store(
        DeterministicFakeEmbedding(size=16),
        index_params={"index_type": "HNSW", "metric_type": metric, "params": {"M": 8, "efConstruction": 64}},
    )
    flat = make_store(DeterministicFakeEmbedding(size=16), index_params={"index_type": "FLAT", "metric_type": metric})
    for store in (hnsw, flat):
        store.add_documents(docs())
    assert hnsw._connection.index_type("relations") == "HNSW"
    ids = sorted(r["pk"] for r in flat._reads.iterate("relations", ()))
    random.Random(3).shuffle(ids)
    chosen = ids[:7]
    vectors = [hnsw.embedding.embed_query(q) for q in ("thing relates", "passage on topic 3")]
    spy = QuerySpy(hnsw._connection.client)
    monkeypatch.setattr(hnsw._connection.client, "query", spy)
    fields = ("text", "passage_ids")
    got = hnsw._reads.search("relations", vectors, 20, filter_expr=expr.in_list("pk", chosen), output_fields=fields)
    want = flat._reads.search("relations", vectors, 20, filter_expr=expr.in_list("pk", chosen), output_fields=fields)
    assert spy.calls == 1  # 7 rows for a limit of 20: short, so answered exactly
    assert _answers(got) == _answers(want)
    assert [sorted(h.id for h in per) for per in got] == [sorted(chosen)] * 2
    assert all(set(h.fields) >= {"text", "passage_ids"} and "vector" not in h.fields for per in got for h in per)
    # async: the same answer, through the same fallback
    spy.calls = 0
    got_async = asyncio.run(
        hnsw._reads.asearch("relations", vectors, 20, filter_expr=expr.in_list("pk", chosen), output_fields=fields)
    )
    assert _answers(got_async) == _answers(want)


def test_full_answers_and_flat_collections_read_no_vectors(make_store, monkeypatch) -> None:
    hnsw = make_store(DeterministicFakeEmbedding(size=16), index="hnsw")
    flat = make_store(DeterministicFakeEmbedding(size=16))
    for store in (hnsw, flat):
        store.add_documents(docs())
    vector = [hnsw.embedding.embed_query("thing")]
    few = expr.in_list("pk", [r["pk"] for r in flat._reads.iterate("relations", ())][:5])
    spies = {}
    for name, store in (("hnsw", hnsw), ("flat", flat)):
        spies[name] = QuerySpy(store._connection.client)
        monkeypatch.setattr(store._connection.client, "query", spies[name])
    assert len(hnsw._reads.search("relations", vector, 5, filter_expr=few)[0]) == 5  # its limit: as is
    assert len(hnsw._reads.search("relations", vector, 100)[0]) == 60  # no filter: nothing to read
    assert len(flat._reads.search("relations", vector, 20, filter_expr=few)[0]) == 5  # FLAT is exact
    assert spies["hnsw"].calls == 0 and spies["flat"].calls == 0


def test_a_short_tenant_filter_on_hnsw_passages(make_store) -> None:
    store = make_store(DeterministicFakeEmbedding(size=16), index="hnsw")
    flat = make_store(DeterministicFakeEmbedding(size=16))
    for s in (store, flat):
        s.add_documents(docs())
    query = "passage on topic 2"
    filt = "bucket == 2 and group == 1"
    got = store.as_naive_retriever(k=10, filter=filt).invoke(query)
    want = flat.as_naive_retriever(k=10, filter=filt).invoke(query)
    assert [d.id for d in got] == [d.id for d in want] and len(got) == 3


def test_exact_hits_keeps_the_index_answer_for_wide_filters() -> None:
    request = {"data": [[1.0, 0.0]], "limit": 3, "anns_field": "vector", "filter": "x > 0", "output_fields": ["pk"]}
    rows = [{"pk": str(i), "vector": [1.0, float(i)]} for i in range(exact.EXACT_ROWS + 1)]
    assert exact.exact_hits(request, rows, "pk") is None
    top = exact.exact_hits(request, rows[:4], "pk")
    assert top is not None and [h["id"] for h in top[0]] == ["0", "1", "2"]  # cosine to (1, 0), closest first
    l2 = exact.exact_hits({**request, "search_params": {"metric_type": "L2"}}, rows[:4], "pk")
    assert l2 is not None and [(h["id"], h["distance"]) for h in l2[0]] == [("0", 0.0), ("1", 1.0), ("2", 4.0)]
    assert exact.short_queries({**request, "filter": ""}, [0]) == []
    assert exact.short_queries(request, [3, 1]) == [1]
    assert exact.approximate("HNSW") and exact.approximate("AUTOINDEX") and not exact.approximate("FLAT")
