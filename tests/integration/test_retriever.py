"""MilvusGraphRetriever on Milvus Lite with fake models: the seed example, fallbacks, k, traces."""

from __future__ import annotations

import json
import logging
from typing import Any
from uuid import UUID

import pytest
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from langchain_core.runnables import RunnableLambda

from langchain_graphrag_milvus import MilvusGraphRetriever, NaivePassageRetriever
from langchain_graphrag_milvus.datasets import NANO_QUESTION, nano_dataset

from ..fakes import FailingChatModel, SelectingChatModel

# the seed LLM's reasoning: Euler's teacher was Johann Bernoulli, his son is Daniel, who
# made contributions to fluid dynamics: relations about Euler and Johann, then Daniel's
SEED_CHOICE = [
    r"Euler.*Johann|Johann.*Euler",
    r"Daniel Bernoulli was the son of",
    r"Daniel Bernoulli made major contributions",
]
EULER = nano_dataset()[3]["passage"]
DANIEL = nano_dataset()[2]["passage"]


def seed_retriever(store, llm, **kwargs) -> MilvusGraphRetriever:
    return MilvusGraphRetriever(store=store, llm=llm, entity_extractor=store.entity_linker().as_runnable(), **kwargs)


@pytest.mark.parametrize("ranking", ["ppr", "similarity"])
async def test_seed_example_returns_euler_and_daniel_as_top_two(nano_store, retrieve, ranking) -> None:
    llm = SelectingChatModel(select=SEED_CHOICE)
    docs = await retrieve(seed_retriever(nano_store, llm, k=2, ranking=ranking), NANO_QUESTION)
    assert [d.page_content for d in docs] == [EULER, DANIEL]
    assert all(d.metadata["_ranked_by"] == "llm" for d in docs)
    assert any("Euler" in r and "Johann" in r for r in docs[0].metadata["_relations"])
    assert docs[1].metadata["_relations"][0].startswith("Daniel Bernoulli")
    for doc in docs:
        assert doc.id == doc.metadata["_passage_id"]
        assert isinstance(doc.metadata["_score"], float) and doc.metadata["_hops"] in (0, 1, 2)
        assert len(doc.metadata["_relations"]) == len(doc.metadata["_relation_ids"])
    # the prompt is the seed's: the one-shot example, then the numbered candidates
    prompt = llm.prompts[-1]
    assert prompt.startswith("Question:\nWhat contribution did the son of Euler's teacher make?")
    assert "[1] " in prompt


async def test_naive_retriever_misses_daniel(nano_store, retrieve) -> None:
    docs = await retrieve(nano_store.as_naive_retriever(k=2), NANO_QUESTION)
    assert len(docs) == 2 and DANIEL not in [d.page_content for d in docs]
    assert all(d.metadata["_ranked_by"] == "passage_similarity" for d in docs)
    assert isinstance(nano_store.as_naive_retriever(), NaivePassageRetriever)


@pytest.mark.parametrize(
    "answer",
    [
        "this is not JSON at all",
        '{"thought_process": "none", "useful_relationships": []}',
        '{"thought_process": "invented", "useful_relationships": ["[999] Euler invented the telephone"]}',
        '{"unexpected": true}',
        "",
    ],
    ids=["invalid-json", "empty-list", "ids-not-in-pool", "missing-key", "empty-answer"],
)
async def test_bad_rerank_answers_fall_back_to_the_no_llm_order(nano_store, retrieve, caplog, answer) -> None:
    llm = FakeListChatModel(responses=[answer] * 4)
    baseline = await retrieve(MilvusGraphRetriever(store=nano_store, k=3), NANO_QUESTION)
    with caplog.at_level(logging.WARNING, logger="langchain_graphrag_milvus"):
        docs = await retrieve(seed_retriever(nano_store, llm, k=3), NANO_QUESTION)
    assert [d.id for d in docs] == [d.id for d in baseline]
    assert all(d.metadata["_ranked_by"] != "llm" for d in docs)
    assert "using the retriever's own order" in caplog.text


async def test_failing_llm_never_raises(nano_store, retrieve, caplog) -> None:
    with caplog.at_level(logging.WARNING, logger="langchain_graphrag_milvus"):
        docs = await retrieve(MilvusGraphRetriever(store=nano_store, llm=FailingChatModel(), k=2), NANO_QUESTION)
    assert len(docs) == 2
    assert "entity extraction failed" in caplog.text and "reranker failed" in caplog.text


async def test_ids_outside_the_pool_are_dropped(nano_store, retrieve) -> None:
    picked = {"useful_relationships": ["[999] made up", "[0] zero is not a position", "[2] x", "[2] again"]}
    reranker = RunnableLambda(lambda _: [998, -1, 1, 1, "x"])
    llm = FakeListChatModel(responses=[json.dumps(picked)] * 2)
    for kwargs in ({"llm": llm, "entity_extractor": nano_store.entity_linker().as_runnable()}, {"reranker": reranker}):
        docs = await retrieve(MilvusGraphRetriever(store=nano_store, k=1, **kwargs), NANO_QUESTION)
        assert len(docs) == 1 and docs[0].metadata["_ranked_by"] == "llm"


async def test_llm_entity_extractor_and_fallback(nano_store, retrieve, caplog) -> None:
    seen: list[Any] = []

    def rerank(payload: dict) -> list[int]:
        seen.append(payload)
        return [0]

    extractor_llm = FakeListChatModel(responses=['```json\n{"entities": ["Euler", "Euler", " "]}\n```'] * 2)
    from langchain_graphrag_milvus import create_llm_entity_extractor

    extractor = create_llm_entity_extractor(extractor_llm)
    assert extractor.invoke(NANO_QUESTION) == ["Euler"]
    docs = await retrieve(
        MilvusGraphRetriever(store=nano_store, entity_extractor=extractor, reranker=RunnableLambda(rerank), k=2),
        NANO_QUESTION,
    )
    assert len(docs) == 2 and seen and seen[0]["select"] == 3
    broken = FakeListChatModel(responses=["no json here"] * 2)
    with caplog.at_level(logging.WARNING, logger="langchain_graphrag_milvus"):
        docs = await retrieve(
            MilvusGraphRetriever(store=nano_store, entity_extractor=create_llm_entity_extractor(broken), k=2),
            NANO_QUESTION,
        )
    assert len(docs) == 2 and "offline linker" in caplog.text


async def test_k_in_constructor_and_per_call(nano_store, retrieve) -> None:
    retriever = MilvusGraphRetriever(store=nano_store, k=3)
    assert len(await retrieve(retriever, NANO_QUESTION)) == 3
    for k in (1, 2, 4):
        docs = await retrieve(retriever, NANO_QUESTION, k=k)
        assert len(docs) == k and len({d.id for d in docs}) == k
    # more than the store holds: everything, once
    assert len(await retrieve(retriever, NANO_QUESTION, k=10)) == 4


async def test_per_call_overrides_and_bad_arguments(nano_store, retrieve) -> None:
    retriever = MilvusGraphRetriever(store=nano_store, k=2)
    docs = await retrieve(
        retriever, NANO_QUESTION, hops=2, entity_top_k=1, relation_top_k=1, max_candidates=5, entities=["Euler"]
    )
    assert len(docs) == 2
    with pytest.raises(TypeError, match="unexpected retrieval argument.*top_k"):
        await retrieve(retriever, NANO_QUESTION, top_k=3)
    with pytest.raises(ValueError, match="k must be a positive integer"):
        await retrieve(retriever, NANO_QUESTION, k=0)
    with pytest.raises(ValueError, match="hops"):
        await retrieve(retriever, NANO_QUESTION, hops=7)
    with pytest.raises(Exception, match="greater than or equal to 1"):
        MilvusGraphRetriever(store=nano_store, k=0)


async def test_sync_and_async_agree(nano_store) -> None:
    retriever = seed_retriever(nano_store, SelectingChatModel(select=SEED_CHOICE), k=4)
    sync_docs = retriever.invoke(NANO_QUESTION)
    async_docs = await retriever.ainvoke(NANO_QUESTION)
    assert [(d.id, d.metadata) for d in sync_docs] == [(d.id, d.metadata) for d in async_docs]
    assert len(retriever.batch([NANO_QUESTION, "Who was Jakob Bernoulli?"])) == 2
    assert len(await retriever.abatch([NANO_QUESTION, "Who was Jakob Bernoulli?"])) == 2


class Recorder(BaseCallbackHandler):
    def __init__(self) -> None:
        self.events: list[tuple[str, UUID | None]] = []
        self.retriever_run: UUID | None = None

    def on_retriever_start(self, serialized, query, *, run_id, parent_run_id=None, **kwargs) -> None:
        self.retriever_run = run_id

    def on_chat_model_start(self, serialized, messages, *, run_id, parent_run_id=None, **kwargs) -> None:
        self.events.append(("chat_model", parent_run_id))

    def on_chain_start(self, serialized, inputs, *, run_id, parent_run_id=None, **kwargs) -> None:
        name = kwargs.get("name") or ""
        self.events.append((name, parent_run_id))


async def test_llm_calls_show_in_traces_under_the_retriever(nano_store, retrieve) -> None:
    recorder = Recorder()
    llm = SelectingChatModel(select=SEED_CHOICE)
    retriever = MilvusGraphRetriever(store=nano_store, llm=llm, k=2)
    if retrieve.mode == "sync":
        retriever.invoke(NANO_QUESTION, config={"callbacks": [recorder]})
    else:
        await retriever.ainvoke(NANO_QUESTION, config={"callbacks": [recorder]})
    top_level = {name for name, parent in recorder.events if parent == recorder.retriever_run}
    assert {"graph_query_entities", "graph_rerank"} <= top_level
    assert sum(1 for name, _ in recorder.events if name == "chat_model") == 2
