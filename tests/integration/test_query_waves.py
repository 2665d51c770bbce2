"""The freshness check goes out with a query's searches (issue 25, item 1): no round trip of its own.

A store checks at most every ``refresh_interval`` seconds whether another writer changed the
data (one ``describe_collection``). That read used to run before anything else when it was
due, a round trip of its own; now the graph pipeline sends it in the same ``Gather`` as its
searches, and searches again only if it found a change. These tests drive the real pipeline
with the real executors' answer functions on a real store (Milvus Lite and the server) and
record, for every read of the generation counter, which request was being answered.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

import pytest

from langchain_graphrag_milvus.datasets import nano_dataset
from langchain_graphrag_milvus.retrieval.effects import CheckGraph, Gather, GetGraph, Search
from langchain_graphrag_milvus.retrieval.executors import answer_async, answer_sync
from langchain_graphrag_milvus.retrieval.graph_pipeline import graph_pipeline
from langchain_graphrag_milvus.retrieval.params import RetrievalParams

from ..fakes import LexicalEmbeddings

QUERY = "Who taught Zeta Quokka?"
ZETA = {
    "id": "zeta",
    "passage": "Zeta Quokka was a pupil of Johann Bernoulli.",
    "triplets": [["Zeta Quokka", "was a pupil of", "Johann Bernoulli"]],
}


class Recorder:
    """Runs a pipeline like ``run_sync`` / ``run_async``; notes the request answered at each generation read."""

    def __init__(self, store: Any) -> None:
        self.store, self.answering, self.requests = store, None, []
        self.reads: list[Any] = []
        #: The reads of the counter by a local search (it confirms its held rows with it, while it scores).
        self.local_reads: list[Any] = []
        connection = store._connection
        read, stamp = connection.generation, connection.stamp

        def generation() -> int:
            self.reads.append(self.answering)
            return read()

        def stamped() -> tuple[str | None, int]:  # the refresh check reads the store id with the generation
            by_local = sys._getframe(1).f_code.co_filename.endswith("local_search.py")
            (self.local_reads if by_local else self.reads).append(self.answering)
            return stamp()

        connection.generation, connection.stamp = generation, stamped

    async def run(self, pipeline: Any, mode: str) -> Any:
        value: object = None
        while True:
            try:
                effect = pipeline.send(value)
            except StopIteration as stop:
                return stop.value
            self.answering = effect
            self.requests.append(effect)
            if mode == "sync":
                value = answer_sync(effect, self.store)
            else:
                value = await answer_async(effect, self.store)


def search_gathers(requests: list[Any]) -> list[Gather]:
    """The Gathers of searches (not the one of the linker and the query's embedding, which reads no row)."""
    return [r for r in requests if isinstance(r, Gather) and any(isinstance(e, Search) for e in r.effects)]


def milvus_requests(requests: list[Any]) -> list[str]:
    """The requests that read Milvus (searches, fetches and the Gathers of them), by type."""
    gathers = search_gathers(requests)
    return [type(r).__name__ for r in requests if r in gathers or isinstance(r, Search) or type(r).__name__ == "Fetch"]


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_the_check_goes_out_with_the_searches_and_a_change_is_searched_again(make_store, mode) -> None:
    writer = make_store(LexicalEmbeddings())
    writer.add_records(nano_dataset())
    # every search by Milvus (vectors held in the client: the check goes with the rows' read, test_held_query.py)
    reader = make_store(LexicalEmbeddings(), prefix=writer.collection_prefix, refresh_interval=0, local_search="off")
    p = RetrievalParams(k=3)
    reader.graph  # noqa: B018  (built: what follows is a query on a warm store)
    recorder = Recorder(reader)

    docs = await recorder.run(graph_pipeline(QUERY, p, entity_extractor=None, reranker=None), mode)
    assert "zeta" not in [d.id for d in docs]
    (gather,) = search_gathers(recorder.requests)
    assert recorder.reads == [gather]  # checked once, with the searches, not before them
    assert all(r is gather for r in recorder.local_reads)  # a local search's counter read: in the same wave
    assert isinstance(gather.effects[-1], CheckGraph) and all(isinstance(e, Search) for e in gather.effects[:-1])
    assert [r.defer_check for r in recorder.requests if isinstance(r, GetGraph)] == [True]

    writer.add_records([ZETA])  # another store instance writes: the reader's check finds it
    recorder.requests, recorder.reads = [], []
    docs = await recorder.run(graph_pipeline(QUERY, p, entity_extractor=None, reranker=None), mode)
    gathers = search_gathers(recorder.requests)
    # the check (and the reload it started) ran with the first searches; the second pass does not check again
    assert recorder.reads and all(r is gathers[0] for r in recorder.reads)
    assert "zeta" in [d.id for d in docs] and "zeta" in reader.graph.passages
    assert len(gathers) == 2 and not any(isinstance(e, CheckGraph) for e in gathers[1].effects)
    assert [r.defer_check for r in recorder.requests if isinstance(r, GetGraph)] == [True, True]


def test_a_filtered_query_checks_with_its_searches_too(make_store) -> None:
    store = make_store(LexicalEmbeddings(), refresh_interval=0)
    store.add_records(nano_dataset())
    store.graph  # noqa: B018
    recorder = Recorder(store)
    p = RetrievalParams(k=2, filter='source_id != "nobody"')
    asyncio.run(recorder.run(graph_pipeline(QUERY, p, entity_extractor=None, reranker=None), "sync"))
    # the tenant's linker and view take the graph as it is; the check goes with the searches
    assert [type(r).__name__ for r in recorder.reads] == ["Gather"]
    assert {type(r).__name__ for r in recorder.local_reads} <= {"Gather"}
    assert milvus_requests(recorder.requests)[0] == "Gather"
