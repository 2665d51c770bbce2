"""A compound question's sub-questions seed the walk (issue 24: questions people ask about their docs).

"…, and what is the python way to bundle an application into one runnable archive?" asks for a
file the rest of the question does not lead to: the whole question's vector ranks the Node.js
passages first. With ``ppr_clause_seeds`` (the default) each sub-question's passage hits share the
walk's passage seeds, so the passage that answers the second part comes back; without, it does not.
Real stores (Lite and the server), the real pipeline, sync and async.
"""

from __future__ import annotations

import asyncio

import pytest

from langchain_graphrag_milvus import MilvusGraphRetriever
from langchain_graphrag_milvus.retrieval.effects import Embed, Gather, Search, SearchHeld
from langchain_graphrag_milvus.retrieval.graph_pipeline import graph_pipeline
from langchain_graphrag_milvus.retrieval.params import RetrievalParams

from ..fakes import LexicalEmbeddings
from .test_held_query import Recorder

QUESTION = (
    "how do i ship a node.js script as a single executable file for my users, and what is the python way "
    "to bundle an application into one runnable archive?"
)
WORDS = ["alpha", "beta", "gamma", "delta", "epsilon"]
NODE = [
    {"id": f"node{i}", "passage": f"Ship a Node.js script to users as a single executable file: {WORDS[i]} notes.",
     "triplets": [["Node.js", "ships", f"single executable {WORDS[i]}"], ["single executable", "is", "file"]]}
    for i in range(5)
]  # fmt: skip
ZIPAPP = {
    "id": "zipapp",
    "passage": "The zipapp module: bundle a Python application into one runnable archive.",
    "triplets": [["zipapp", "bundles", "Python application"], ["zipapp", "makes", "runnable archive"]],
}
PARAMS = dict(k=3)


def _ids(store, mode: str, **settings) -> list[str]:
    retriever = MilvusGraphRetriever(store=store, **PARAMS, **settings)
    docs = retriever.invoke(QUESTION) if mode == "sync" else asyncio.run(retriever.ainvoke(QUESTION))
    return [d.id for d in docs]


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_the_sub_questions_passage_comes_back(make_store, mode) -> None:
    store = make_store(LexicalEmbeddings())
    store.add_records([*NODE, ZIPAPP])
    naive = [d.id for d in store.as_naive_retriever(k=3).invoke(QUESTION)]
    assert "zipapp" not in naive  # the whole question's vector: Node.js passages only
    assert "zipapp" not in _ids(store, mode, ppr_clause_seeds=False)
    assert "zipapp" in _ids(store, mode)  # the default: the second part's passage is found


def test_the_parts_are_embedded_beside_the_question_and_searched_in_one_passage_search(make_store, monkeypatch) -> None:
    store = make_store(LexicalEmbeddings(), local_search="auto" if make_store.backend == "lite" else "on")
    store.add_records([*NODE, ZIPAPP])
    recorder = Recorder(store, monkeypatch)
    p = RetrievalParams(**PARAMS)
    docs = asyncio.run(recorder.run(graph_pipeline(QUESTION, p, entity_extractor=None, reranker=None), "sync"))
    assert "zipapp" in [d.id for d in docs]
    flat = [e for r in recorder.requests for e in (r.effects if isinstance(r, Gather) else (r,))]
    (gather,) = [r for r in recorder.requests if isinstance(r, Gather) and any(isinstance(e, Embed) for e in r.effects)]
    question, parts = [e for e in gather.effects if isinstance(e, Embed)]  # side by side, with the linker
    assert question.texts == (QUESTION,) and len(parts.texts) == 2
    assert [e for e in flat if isinstance(e, Embed)] == [question, parts]  # embedded once
    searches = [s for r in recorder.requests if isinstance(r, SearchHeld) for s in r.searches]
    searches = searches or [r for r in flat if isinstance(r, Search)]
    (passages,) = [s for s in searches if s.kind == "passages"]
    assert len(passages.vectors) == 3  # one search, a vector for the question and each part


def test_a_part_that_refers_back_is_embedded_after_the_first_part(make_store, monkeypatch) -> None:
    question = (
        "how do i ship a node.js script as a single executable file for my users, and what is the python way "
        "to bundle it into one runnable archive?"
    )
    store = make_store(LexicalEmbeddings(), local_search="auto" if make_store.backend == "lite" else "on")
    store.add_records([*NODE, ZIPAPP])
    recorder = Recorder(store, monkeypatch)
    asyncio.run(
        recorder.run(graph_pipeline(question, RetrievalParams(**PARAMS), entity_extractor=None, reranker=None), "sync")
    )
    (gather,) = [r for r in recorder.requests if isinstance(r, Gather) and any(isinstance(e, Embed) for e in r.effects)]
    _, parts = [e for e in gather.effects if isinstance(e, Embed)]
    first = "how do i ship a node.js script as a single executable file for my users"
    assert parts.texts == (first, f"{first} what is the python way to bundle it into one runnable archive?")
