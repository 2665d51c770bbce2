"""Fewer round trips (issue 16, item 3): no vector for exact names, no fetch of rows in hand, overlapped searches.

The graph pipeline is driven by an answerer that serves any request from tables (not a
fixed script), so the same retrieval can run with and without a saving and the Documents
compared; the sync executor's concurrent ``Gather`` is checked with a store whose searches
wait for each other (they can only all finish if they run at the same time).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from langchain_graphrag_milvus.graph import GraphIndex
from langchain_graphrag_milvus.milvus.reads import Hit
from langchain_graphrag_milvus.retrieval.effects import (
    CheckGraph,
    Effect,
    Embed,
    Fetch,
    Gather,
    GetGraph,
    LinkEntities,
    Search,
    SearchHeld,
    Steps,
    ViewOf,
    search_all,
)
from langchain_graphrag_milvus.retrieval.executors import run_sync
from langchain_graphrag_milvus.retrieval.graph_pipeline import graph_pipeline, passage_rows
from langchain_graphrag_milvus.retrieval.params import RetrievalParams
from langchain_graphrag_milvus.text.names import entity_id

from .scripted import Step, run_script
from .test_pipelines_scripted import (
    ALL_RELATIONS,
    PASSAGE_HITS,
    QUERY,
    build_graph,
    passage_row,
    relation_hit,
)

ENTITY_NAMES = sorted({n for t in ALL_RELATIONS for n in (t[0], t[2])})


class Answerer:
    """Answers every request of a graph retrieval from tables; records the requests."""

    def __init__(self, graph: GraphIndex, names: list[str], view: Any = None) -> None:
        self.graph, self.names, self.view = graph, names, view
        self.requests: list[Effect] = []
        self.vector_of: dict[tuple[float, ...], str] = {}

    def answer(self, effect: Any) -> Any:
        if isinstance(effect, SearchHeld):  # nothing held in the client: the searches go to "Milvus"
            return None
        self.requests.append(effect)
        if isinstance(effect, LinkEntities):
            return self.names
        if isinstance(effect, GetGraph):
            return self.graph
        if isinstance(effect, ViewOf):
            return self.view
        if isinstance(effect, Embed):  # a distinct vector per text, remembered to answer entity searches
            out = [[float(len(self.vector_of) + i), 1.0] for i in range(len(effect.texts))]
            self.vector_of.update({tuple(v): t for v, t in zip(out, effect.texts)})
            return out
        if isinstance(effect, Gather):
            return [[self.search(e, v) for v in e.vectors] if isinstance(e, Search) else self.answer(e)
                    for e in effect.effects]  # fmt: skip
        if isinstance(effect, CheckGraph):
            return False
        if isinstance(effect, Search):
            return [self.search(effect, v) for v in effect.vectors]
        if isinstance(effect, Fetch):
            return {i: passage_row(i) for i in effect.ids if self.view is None or i in self.view.passage_ids}
        raise AssertionError(f"unexpected {effect!r}")

    def search(self, s: Search, vector: tuple[float, ...]) -> list[Hit]:
        if s.kind == "entities":  # the name's own entity is not always the best hit: an unrelated one first
            text = self.vector_of[vector]
            ranked = sorted(ENTITY_NAMES, key=lambda n: (n.split()[-1] not in text, n))
            return [Hit(entity_id(n), 0.9 - 0.1 * i, {}) for i, n in enumerate(ranked)][: s.limit]
        if s.kind == "relations":
            hits = [relation_hit(t, 0.9 - 0.05 * i) for i, t in enumerate(ALL_RELATIONS)]
            return [h for h in hits if h.id in (s.filter_expr or h.id)][: s.limit]
        allowed = [h for h in PASSAGE_HITS if self.view is None or h.id in self.view.passage_ids]
        return allowed[: s.limit]


def run(pipeline: Steps[Any], answerer: Answerer) -> Any:
    value: object = None
    while True:
        try:
            effect = pipeline.send(value)
        except StopIteration as stop:
            return stop.value
        value = answerer.answer(effect)


def entity_searches(requests: list[Effect]) -> list[Search]:
    flat = [e for r in requests for e in (r.effects if isinstance(r, Gather) else (r,))]
    return [e for e in flat if isinstance(e, Search) and e.kind == "entities"]


@pytest.mark.parametrize(
    "names",
    [["Leonhard Euler"], ["Leonhard Euler", "Euler's teacher"], ["Nobody", "Daniel Bernoulli"], []],
)
@pytest.mark.parametrize("tenant", [False, True])
def test_exact_names_are_not_embedded_and_documents_stay_the_same(names: list[str], tenant: bool) -> None:
    graph = build_graph()
    view = graph.view([int(i) for i in graph.passages.find(["p_euler", "p_daniel", "p_jakob"])]) if tenant else None
    p = RetrievalParams(k=3, filter="tenant == 'a'" if tenant else None)
    saving = Answerer(graph, names, view)
    docs = run(graph_pipeline(QUERY, p, entity_extractor=None, reranker=None), saving)
    full = Answerer(graph, names, view)  # a trace asks for every name's hits: the former requests
    trace: dict[str, Any] = {}
    want = run(graph_pipeline(QUERY, p, entity_extractor=None, reranker=None, trace=trace), full)
    assert docs == want and docs
    exact = {"Leonhard Euler", "Daniel Bernoulli"}
    # the query is embedded while the linker runs; with a name to embed, again with it (the same call as before)
    embeds = [r.texts for r in saving.requests if isinstance(r, Embed)]
    assert embeds[0] == (QUERY,) and embeds[-1] == (QUERY, *(n for n in names if n not in exact))
    assert len(embeds) == (2 if set(names) - exact else 1)
    searched = entity_searches(saving.requests)
    assert len(searched) == (1 if set(names) - exact else 0)
    assert len(entity_searches(full.requests)) == (1 if names else 0)
    assert [len(h) for h in trace["entity_hits"]] == [3] * len(names)


def test_a_name_outside_the_tenant_view_is_searched_inside_it() -> None:
    graph = build_graph()
    view = graph.view([int(i) for i in graph.passages.find(["p_euler", "p_apollo"])])  # no Daniel in the view
    p = RetrievalParams(k=2, filter="tenant == 'a'")
    answerer = Answerer(graph, ["Daniel Bernoulli"], view)
    run(graph_pipeline(QUERY, p, entity_extractor=None, reranker=None), answerer)
    embedded = [r for r in answerer.requests if isinstance(r, Embed)][-1].texts
    assert embedded == (QUERY, "Daniel Bernoulli") and len(entity_searches(answerer.requests)) >= 1


def test_similarity_ranking_still_searches_every_name() -> None:
    graph = build_graph()
    answerer = Answerer(graph, ["Leonhard Euler"])
    p = RetrievalParams(k=2, ranking="similarity")
    run(graph_pipeline(QUERY, p, entity_extractor=None, reranker=None), answerer)
    assert next(r for r in answerer.requests if isinstance(r, Embed)).texts == (QUERY, "Leonhard Euler")
    assert len(entity_searches(answerer.requests)) == 1


def test_rows_in_hand_are_not_fetched_again() -> None:
    hits = [Hit("a", 0.9, {"text": "A", "source": "a.txt"}), Hit("b", 0.8, {"text": "B"})]
    rows, requests = run_script(passage_rows(["b", "a"], hits, "x == 1"), [])  # everything in hand: no request
    assert requests == [] and rows == {"b": ({"text": "B"}, 0.8), "a": ({"text": "A", "source": "a.txt"}, 0.9)}
    rows, requests = run_script(
        passage_rows(["c", "a", "c", "d"], hits, "x == 1"),
        [Step(Fetch, {"c": {"pk": "c", "text": "C"}}, lambda f: f.ids == ("c", "d") and f.filter_expr == "x == 1")],
    )
    assert rows == {"a": ({"text": "A", "source": "a.txt"}, 0.9), "c": ({"pk": "c", "text": "C"}, None)}  # d: outside


def test_rows_not_in_hand_come_scored_from_one_restricted_search() -> None:
    hits = [Hit("a", 0.9, {"text": "A"})]
    restricted = Step(
        Search,
        [[Hit("c", 0.4, {"text": "C"})]],
        lambda s: s.limit == 2 and s.filter_expr == '(x == 1) and (pk in ["c", "d"])',
    )
    rows, requests = run_script(
        passage_rows(["c", "a", "d"], hits, "x == 1", (1.0, 0.0)),
        [restricted, Step(Fetch, {}, lambda f: f.ids == ("d",))],  # d not returned: fetched (here: filtered out)
    )
    assert rows == {"a": ({"text": "A"}, 0.9), "c": ({"text": "C"}, 0.4)}
    # a collection that refuses the restricted search (its key is not ``pk``): the rows are fetched, unscored
    rows, _ = run_script(
        passage_rows(["c"], [], None, (1.0, 0.0)),
        [Step(Search, raises=ValueError("field pk not found")), Step(Fetch, {"c": {"text": "C"}})],
    )
    assert rows == {"c": ({"text": "C"}, None)}


class WaitingStore:
    """Searches that wait until ``n`` of them run at once (they finish only if run concurrently)."""

    def __init__(self, n: int, fail: Sequence[str] = ()) -> None:
        self.embedding = DeterministicFakeEmbedding(size=2)
        self.barrier = threading.Barrier(n, timeout=30)
        self.fail = fail
        self.threads: set[str] = set()

    def search(self, kind: str, vectors: Sequence[Any], limit: int, **kw: Any) -> list[list[Hit]]:
        self.threads.add(threading.current_thread().name)
        self.barrier.wait()  # raises BrokenBarrierError if the searches ran one after another
        if kind in self.fail:
            raise {"entities": ConnectionError, "relations": TimeoutError}.get(kind, ValueError)(kind)
        return [[Hit(f"{kind}-{i}", 1.0, {}) for i in range(limit)] for _ in vectors]

    def fetch(self, kind: str, ids: Sequence[str], fields: Any, **kw: Any) -> dict[str, dict[str, Any]]:
        self.barrier.wait()
        return {i: {"text": i} for i in ids}


def three_searches() -> Steps[list[list[list[Hit]]]]:
    out = yield from search_all(
        [Search("entities", ((0.0,),), 1), Search("relations", ((0.0,),), 2), Search("passages", ((0.0,),), 3)]
    )
    return out


def test_the_sync_executor_answers_a_gather_of_searches_concurrently() -> None:
    store = WaitingStore(3)
    answers = run_sync(three_searches(), store)  # type: ignore[arg-type]
    ids = [[h.id for h in a[0]] for a in answers]
    assert ids == [["entities-0"], ["relations-0", "relations-1"], ["passages-0", "passages-1", "passages-2"]]
    assert len(store.threads) == 3


@pytest.mark.parametrize(
    ("fail", "raised"),
    [
        (["relations", "passages"], TimeoutError),
        (["passages"], ValueError),
        (["entities", "relations"], ConnectionError),
    ],
)
def test_gather_failures_come_back_typed_and_in_order(fail: list[str], raised: type[Exception]) -> None:
    def pipeline() -> Steps[str]:
        try:
            yield from three_searches()
        except Exception as exc:  # the pipeline sees the first failure in the searches' order
            return f"{type(exc).__name__}: {exc}"
        return "no error"

    store = WaitingStore(3, fail)
    assert run_sync(pipeline(), store) == f"{raised.__name__}: {fail[0]}"  # type: ignore[arg-type]


class WaitingLinker:
    def __init__(self, barrier: threading.Barrier) -> None:
        self.barrier = barrier

    def find(self, query: str) -> list[str]:
        self.barrier.wait()  # raises BrokenBarrierError if the embedding waited for the linker
        return ["Leonhard Euler"]


class WaitingEmbedding(DeterministicFakeEmbedding):
    barrier: Any = None

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.barrier.wait()
        return super().embed_documents(texts)


@pytest.mark.parametrize("run_async_too", [False, True])
async def test_the_linker_and_the_query_embedding_run_at_the_same_time(run_async_too: bool) -> None:
    from langchain_graphrag_milvus.retrieval.executors import run_async
    from langchain_graphrag_milvus.retrieval.graph_pipeline import names_and_query_vector

    barrier = threading.Barrier(2, timeout=30)
    store = WaitingStore(1)
    store.embedding = WaitingEmbedding(size=2, barrier=barrier)
    store.entity_linker = lambda filter_expr=None: WaitingLinker(barrier)  # type: ignore[attr-defined]
    steps = names_and_query_vector("Who taught Euler?", RetrievalParams(k=2), None)
    if run_async_too:
        names, vectors = await run_async(steps, store)  # type: ignore[arg-type]
    else:
        names, vectors = run_sync(steps, store)  # type: ignore[arg-type]
    assert names == ["Leonhard Euler"] and vectors == DeterministicFakeEmbedding(size=2).embed_documents(
        ["Who taught Euler?"]
    )
    # given names, or a trace (overlap=False): the names first, nothing embedded here
    given = names_and_query_vector("q", RetrievalParams(k=2, entities=("A",)), None)
    assert run_sync(given, store) == (["A"], None)  # type: ignore[arg-type]
