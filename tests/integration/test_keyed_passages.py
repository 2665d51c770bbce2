"""A graph query's second wave read by key and scored in the client (issue 25, item 1).

Without client-held vectors (a server's default, ``local_search="off"``), a graph query reads,
after its walk, the passages it ranks that the dense search did not return, with their
similarity to the query. That used to be a scored Milvus ``search`` restricted to them
(``pk in [...]``); now it is one ``query`` by key of their fields and vectors, scored here with
the client's passage scoring (:mod:`langchain_graphrag_milvus.milvus.keyed_search`). These tests
drive the real pipeline with the real executors on a real store (Milvus Lite and the server),
record which Milvus client call answered which request, and compare the Documents with those of
Milvus' own scored search (the same store with the keyed read turned off).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from langchain_graphrag_milvus import MilvusGraphRetriever
from langchain_graphrag_milvus.datasets import nano_dataset
from langchain_graphrag_milvus.milvus import expr, keyed_search
from langchain_graphrag_milvus.retrieval.effects import Search
from langchain_graphrag_milvus.retrieval.graph_pipeline import graph_pipeline
from langchain_graphrag_milvus.retrieval.params import RetrievalParams

from ..fakes import LexicalEmbeddings
from .test_held_query import FILLER, MORE, PARAMS, QUERIES, Recorder


def _second_wave(requests: list[Any]) -> list[Search]:
    """The restricted passage searches made after the walk (the ranked passages dense search did not return)."""
    return [r for r in requests if isinstance(r, Search) and r.kind == "passages" and r.within is not None]


def _same_documents(got: list[Any], want: list[Any]) -> None:
    assert [d.id for d in got] == [d.id for d in want]
    for a, b in zip(got, want):  # the similarities scored here: Milvus' within 1e-5
        assert a.page_content == b.page_content and a.metadata.keys() == b.metadata.keys()
        for key, value in a.metadata.items():
            assert value == (pytest.approx(b.metadata[key], abs=1e-5) if isinstance(value, float) else b.metadata[key])


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_the_second_wave_is_a_read_by_key_with_the_same_documents(make_store, monkeypatch, mode) -> None:
    store = make_store(LexicalEmbeddings(), local_search="off")
    store.add_records(nano_dataset() + MORE + FILLER)
    p = RetrievalParams(**PARAMS)
    recorder = Recorder(store, monkeypatch)
    keyed = 0
    for query in QUERIES:
        docs = await recorder.run(graph_pipeline(query, p, entity_extractor=None, reranker=None), mode)
        calls, requests = list(recorder.calls), list(recorder.requests)
        with monkeypatch.context() as m:  # Milvus' scored search restricted to the same keys, as before
            m.setattr(keyed_search, "KEYED_MAX", 0)
            want = MilvusGraphRetriever(store=store, **PARAMS).invoke(query)
        _same_documents(docs, want)
        for wave in _second_wave(requests):  # one Milvus call: the read by key
            keyed += 1
            assert [name for name, answering in calls if answering is wave] == ["query"]
    assert keyed > 0  # the walk ranked passages the dense search did not return


def test_the_restricted_search_scores_as_milvus_does(make_store) -> None:
    """The store's search restricted to keys: the same hits, order and scores as Milvus' own search."""
    store = make_store(LexicalEmbeddings(), local_search="off")
    store.add_records(nano_dataset() + MORE + FILLER)
    vectors = store.embedding.embed_documents(QUERIES)
    ids = tuple(sorted(str(r["pk"]) for r in store.iterate("passages", ("pk",)))[:7])
    restricted = expr.in_list("pk", list(ids))
    fields = ("text", "$meta")
    got = store.search("passages", vectors, len(ids), filter_expr=restricted, output_fields=fields, within=ids)
    want = store.reads.search("passages", vectors, len(ids), filter_expr=restricted, output_fields=fields)
    assert got is not None and len(got) == len(want) == len(QUERIES)
    for g, w in zip(got, want):
        assert sorted(h.id for h in g) == sorted(h.id for h in w) and len(g) == len(ids)
        scores = {h.id: h.score for h in w}
        assert all(h.score == pytest.approx(scores[h.id], abs=1e-5) for h in g)
        assert [h.score for h in g] == sorted((h.score for h in g), reverse=True)
        fields = {h.id: dict(h.fields) for h in w}
        assert all(dict(h.fields) == fields[h.id] for h in g)  # the fields a search returns (no vector, no key)


def test_a_filtered_or_long_restriction_is_milvus_search(make_store, monkeypatch) -> None:
    store = make_store(LexicalEmbeddings(), local_search="off")
    store.add_records(nano_dataset() + MORE + FILLER)
    (vector,) = store.embedding.embed_documents([QUERIES[0]])
    ids = tuple(sorted(str(r["pk"]) for r in store.iterate("passages", ("pk",)))[:5])
    assert keyed_search.keyed_search(store.reads, store._connection, "passages", [vector], 5, ids, ("text",))
    monkeypatch.setattr(keyed_search, "KEYED_MAX", 4)
    assert keyed_search.keyed_search(store.reads, store._connection, "passages", [vector], 5, ids, ("text",)) is None
    monkeypatch.setattr(keyed_search, "KEYED_MAX", 64)
    # a limit that cuts the rows: Milvus breaks its ties its own way, so it answers
    assert keyed_search.keyed_search(store.reads, store._connection, "passages", [vector], 4, ids, ("text",)) is None
    assert keyed_search.keyed_search(store.reads, store._connection, "relations", [vector], 5, ids, ("pk",)) is None
    # a filtered graph query sends no keys (its restriction is the filter's too): Milvus' scored search
    recorder = Recorder(store, monkeypatch)
    p = RetrievalParams(**PARAMS, filter='source_id != "nobody"')
    for query in QUERIES:
        asyncio.run(recorder.run(graph_pipeline(query, p, entity_extractor=None, reranker=None), "sync"))
        assert not _second_wave(recorder.requests)


def test_a_quantized_index_is_searched_by_milvus(make_store) -> None:
    if make_store.backend != "server":
        pytest.skip("Milvus Lite builds no quantized index")
    params = {"index_type": "IVF_SQ8", "metric_type": "COSINE", "params": {"nlist": 4}}
    store = make_store(LexicalEmbeddings(), local_search="off", index_params=params)
    store.add_records(nano_dataset() + MORE)
    assert store._connection.index_type("passages") == "IVF_SQ8"
    (vector,) = store.embedding.embed_documents([QUERIES[0]])
    ids = tuple(sorted(str(r["pk"]) for r in store.iterate("passages", ("pk",)))[:3])
    assert keyed_search.keyed_search(store.reads, store._connection, "passages", [vector], 3, ids, ("text",)) is None
