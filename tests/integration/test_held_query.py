"""A default graph query in one Milvus wave when the store holds its vectors in the client (issue 25, item 1).

With the entity, relation and passage vectors held in the client (``local_search``: ``"auto"`` on
Milvus Lite, ``"on"`` here on the server), every search of the query is scored here and the walk
ranks its passages before any Milvus call; the one wave is the read of the rows returned (by key)
with the check of the generation counter and the store's freshness check. These tests drive the
real pipeline with the real executors on a real store and record, for every call made on the
Milvus client, which request was being answered.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from langchain_graphrag_milvus import MilvusGraphRetriever, MilvusGraphStore
from langchain_graphrag_milvus.datasets import nano_dataset
from langchain_graphrag_milvus.milvus.reads import MilvusReads
from langchain_graphrag_milvus.retrieval.effects import CheckGraph, Fetch, Gather, SearchHeld, Unchanged
from langchain_graphrag_milvus.retrieval.executors import answer_async, answer_sync
from langchain_graphrag_milvus.retrieval.graph_pipeline import graph_pipeline
from langchain_graphrag_milvus.retrieval.params import RetrievalParams

from ..fakes import LexicalEmbeddings

QUERIES = [
    "Who taught Euler?",
    "Daniel Bernoulli fluid dynamics",
    "Which mathematician was a pupil of Johann Bernoulli?",
]
# passages the dense search ranks high for the queries' words, which the graph does not connect to the answer
WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta"]
FILLER = [
    {"id": f"filler{i}", "passage": f"Who taught whom? Fluid dynamics, a pupil: {' '.join(WORDS[: i + 1])}.",
     "triplets": [[f"Note {i}", "mentions", "fluid dynamics"]]}
    for i in range(6)
]  # fmt: skip (distinct words: no two passages of equal score, which Milvus would order its own way)
MORE = [
    {"id": "zeta", "passage": "Zeta Quokka was a pupil of Johann Bernoulli.",
     "triplets": [["Zeta Quokka", "was a pupil of", "Johann Bernoulli"], ["Zeta Quokka", "wrote", "Hydra Notes"]]},
    {"id": "omega", "passage": "Omega Lynx studied fluid dynamics with Daniel Bernoulli.",
     "triplets": [["Omega Lynx", "studied with", "Daniel Bernoulli"]]},
]  # fmt: skip
#: The dense search reads only k = 3 hits (no fusion, one passage seed): the walk ranks passages beyond them.
PARAMS = dict(k=3, ppr_passage_seeds=1, fuse_dense=0.0, fuse_dense_unlinked=0.0)
CLIENT_CALLS = ("search", "query", "get", "describe_collection", "query_iterator", "hybrid_search")


class Recorder:
    """Runs a pipeline like ``run_sync`` / ``run_async``; notes the request answered at each Milvus client call."""

    def __init__(self, store: MilvusGraphStore, monkeypatch: pytest.MonkeyPatch) -> None:
        self.store, self.answering = store, None
        self.requests: list[Any] = []
        self.calls: list[tuple[str, Any]] = []
        client = store._connection.client
        for name in CLIENT_CALLS:
            method = getattr(client, name)

            def spy(*args: Any, _name: str = name, _method: Any = method, **kwargs: Any) -> Any:
                self.calls.append((_name, self.answering))
                return _method(*args, **kwargs)

            monkeypatch.setattr(client, name, spy)

    async def run(self, pipeline: Any, mode: str) -> Any:
        self.requests, self.calls = [], []
        value: object = None
        while True:
            try:
                effect = pipeline.send(value)
            except StopIteration as stop:
                return stop.value
            self.answering = effect
            self.requests.append(effect)
            value = answer_sync(effect, self.store) if mode == "sync" else await answer_async(effect, self.store)


def _mode(make_store: Any) -> str:
    return "auto" if make_store.backend == "lite" else "on"


def _dense(store: MilvusGraphStore, query: str, k: int) -> list[str]:
    reference = MilvusReads(store._connection, store.search_params, store._reads.layout)  # Milvus' own search
    (hits,) = reference.search("passages", store.embedding.embed_documents([query]), k)
    return [h.id for h in hits]


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_one_wave_when_the_walk_ranks_passages_dense_search_did_not_return(make_store, monkeypatch, mode) -> None:
    store = make_store(LexicalEmbeddings(), local_search=_mode(make_store), refresh_interval=0)  # the check: always due
    store.add_records(nano_dataset() + MORE + FILLER)
    remote = make_store(LexicalEmbeddings(), prefix=store.collection_prefix, local_search="off", graph_path=None)
    p = RetrievalParams(**PARAMS)
    recorder = Recorder(store, monkeypatch)
    await recorder.run(graph_pipeline(QUERIES[0], p, entity_extractor=None, reranker=None), mode)  # reads the passages
    beyond_dense = 0
    for query in QUERIES:
        docs = await recorder.run(graph_pipeline(query, p, entity_extractor=None, reranker=None), mode)
        (final,) = [r for r in recorder.requests if isinstance(r, Gather) and isinstance(r.effects[0], Fetch)]
        assert {type(e) for e in final.effects} == {Fetch, Unchanged, CheckGraph}
        assert recorder.calls and all(answering is final for _, answering in recorder.calls)  # one wave
        assert any(isinstance(r, SearchHeld) for r in recorder.requests)
        ids = [d.id for d in docs]
        beyond_dense += len(set(ids) - set(_dense(store, query, 3)))
        assert ids == [d.id for d in MilvusGraphRetriever(store=remote, **PARAMS).invoke(query)]  # Milvus' searches
        with monkeypatch.context() as m:  # the same store's usual path (searches with the stamp read, two waves)
            m.setattr(store, "search_held", lambda searches: None)
            want = MilvusGraphRetriever(store=store, **PARAMS).invoke(query)
        assert ids == [d.id for d in want]
        for a, b in zip(docs, want):  # the same Documents (similarities scored here: Milvus' within 1e-5)
            assert a.page_content == b.page_content and a.metadata.keys() == b.metadata.keys()
            for key, value in a.metadata.items():
                assert value == (
                    pytest.approx(b.metadata[key], abs=1e-5) if isinstance(value, float) else b.metadata[key]
                )
    assert beyond_dense > 0  # the walk ranked passages the dense search did not return: still one wave


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_passage_another_writer_deleted_is_never_returned(make_store, mode) -> None:
    if make_store.backend != "lite":
        # measured: on the server another client's delete is not yet seen by this one's reads, held or
        # not (the usual path with search_held disabled returns the row too): the searches' consistency
        pytest.skip("another client's delete is seen later by every read path on the server")
    reader = make_store(LexicalEmbeddings(), local_search=_mode(make_store), refresh_interval=3600)  # check not due
    reader.add_records(nano_dataset() + MORE + FILLER)
    writer = make_store(LexicalEmbeddings(), prefix=reader.collection_prefix, local_search="off", graph_path=None)
    retriever = MilvusGraphRetriever(store=reader, **PARAMS)

    def ask(query: str) -> list[str]:
        docs = retriever.invoke(query) if mode == "sync" else asyncio.run(retriever.ainvoke(query))
        return [d.id for d in docs]

    before = {query: ask(query) for query in QUERIES}  # the passages are held now, at this generation
    gone = before[QUERIES[0]][0]
    writer.delete_passages([gone])  # another store instance: the reader's graph and tables still hold it
    for query in QUERIES:
        assert gone not in ask(query)
    assert gone not in reader.graph.passages  # the moved counter made the refresh check due: reloaded at once


def test_passages_are_not_held_with_local_search_off(make_store) -> None:
    store = make_store(LexicalEmbeddings(), local_search="off")
    store.add_records(nano_dataset())
    assert store._search.passages is None
    assert store.search_held(()) is None


def test_auto_holds_no_more_passages_than_its_limit(make_store, monkeypatch) -> None:
    """Under ``"auto"`` a store of more passages than ``AUTO_MAX_PASSAGES`` is searched by Milvus (same results)."""
    from langchain_graphrag_milvus.milvus import local_passages

    if make_store.backend != "lite":
        pytest.skip('"auto" holds vectors on Milvus Lite only')
    monkeypatch.setattr(local_passages, "AUTO_MAX_PASSAGES", 3)
    store = make_store(LexicalEmbeddings())  # local_search="auto"
    store.add_records(nano_dataset() + MORE)
    assert store.counts()["passages"] > 3
    remote = make_store(LexicalEmbeddings(), prefix=store.collection_prefix, local_search="off", graph_path=None)
    for query in QUERIES:
        got = [d.id for d in MilvusGraphRetriever(store=store, **PARAMS).invoke(query)]
        assert got == [d.id for d in MilvusGraphRetriever(store=remote, **PARAMS).invoke(query)]
    assert store._search.passages is not None and store._search.passages._table is None  # nothing held


def test_the_memory_report_counts_the_held_passages(make_store) -> None:
    store = make_store(LexicalEmbeddings(), local_search=_mode(make_store))
    store.add_records(nano_dataset() + MORE)
    assert store.memory_report().items["local passages"] == 0  # nothing read yet
    MilvusGraphRetriever(store=store, **PARAMS).invoke(QUERIES[0])  # reads the passages
    table = store._search.passages._table
    assert table is not None
    held = store.memory_report().items["local passages"]
    assert held >= table.table.matrix.nbytes + table.table.keys.nbytes > 0
    off = make_store(LexicalEmbeddings(), prefix=store.collection_prefix, local_search="off", graph_path=None)
    MilvusGraphRetriever(store=off, **PARAMS).invoke(QUERIES[0])
    assert off.memory_report().items["local passages"] == 0
