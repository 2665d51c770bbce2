"""The cited answer chain with LangChain's fake chat models: citations, streaming, sync and async."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from langchain_core.documents import Document
from langchain_core.language_models.fake_chat_models import FakeListChatModel, GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.runnables import RunnableLambda

from langchain_graphrag_milvus import create_cited_answer_chain
from langchain_graphrag_milvus.answers import NO_PASSAGES_ANSWER, citations_of, format_passages

DOCS = [
    Document(
        "Euler was a student of Johann Bernoulli.",
        id="p1",
        metadata={
            "source": "euler.pdf",
            "page": 3,
            "_passage_id": "p1",
            "_relations": ["Euler was a student of Johann Bernoulli"],
        },
    ),
    Document("Johann Bernoulli was the father of Daniel.", id="p2", metadata={"source": "bernoulli.md"}),
]


def retriever(docs=DOCS):
    seen = []

    def run(question: str) -> list[Document]:
        seen.append(question)
        return list(docs)

    r = RunnableLambda(run)
    r.seen = seen  # type: ignore[attr-defined]
    return r


def generic(text: str) -> GenericFakeChatModel:
    return GenericFakeChatModel(messages=iter([AIMessage(text)]))


@pytest.fixture(params=["sync", "async"])
def run_chain(request):
    async def run(chain, question):
        if request.param == "sync":
            return chain.invoke(question)
        return await chain.ainvoke(question)

    return run


async def test_citations_map_to_source_page_and_relations(run_chain):
    chain = create_cited_answer_chain(retriever(), generic("Daniel's father [2] taught Euler [1][2]. See [7]."))
    out = await run_chain(chain, {"question": "Who taught Euler?"})
    assert out["answer"] == "Daniel's father [2] taught Euler [1][2]. See [7]."
    assert [c["n"] for c in out["citations"]] == [2, 1]
    first = out["citations"][1]
    assert (first["source"], first["page"], first["passage_id"]) == ("euler.pdf", 3, "p1")
    assert first["relations"] == ["Euler was a student of Johann Bernoulli"]
    assert out["unknown_citations"] == [7]
    assert [p["n"] for p in out["passages"]] == [1, 2]


def test_stream_yields_the_answer_in_pieces_then_the_citations():
    chain = create_cited_answer_chain(retriever(), generic("Johann Bernoulli taught him [1]."))
    chunks = list(chain.stream("Who taught Euler?"))
    answers = [c["answer"] for c in chunks if "answer" in c]
    assert len(answers) > 1 and "".join(answers) == "Johann Bernoulli taught him [1]."
    assert set(chunks[-1]) == {"passages", "citations", "unknown_citations"}
    assert chunks[-1]["citations"][0]["source"] == "euler.pdf"


async def test_astream_matches_stream():
    chain = create_cited_answer_chain(retriever(), FakeListChatModel(responses=["A [1] and [2]."]))
    chunks = [c async for c in chain.astream("q")]
    assert "".join(c.get("answer", "") for c in chunks) == "A [1] and [2]."
    assert [c["n"] for c in chunks[-1]["citations"]] == [1, 2]


def test_the_model_sees_numbered_passages_with_source_and_page():
    text = format_passages(DOCS)
    assert text.startswith("[1] (euler.pdf, page 4) Euler was")
    assert "\n\n[2] (bernoulli.md) Johann" in text


def test_no_passages_no_model_call():
    model = FakeListChatModel(responses=["should not be used"])
    out = create_cited_answer_chain(retriever([]), model).invoke("q")
    assert out["answer"] == NO_PASSAGES_ANSWER and out["citations"] == [] and model.i == 0


@pytest.mark.parametrize("bad", [3, {"q": "x"}, "   "])
def test_bad_questions_are_refused(bad):
    chain = create_cited_answer_chain(retriever(), FakeListChatModel(responses=["x"]))
    with pytest.raises((TypeError, ValueError)):
        chain.invoke(bad)


@given(st.text(max_size=200))
def test_citations_of_never_invents_a_passage(answer):
    passages = [{"n": 1}, {"n": 2}]
    cited, unknown = citations_of(answer, passages)
    assert all(p in passages for p in cited) and len(cited) == len({p["n"] for p in cited})
    assert not set(unknown) & {1, 2}
