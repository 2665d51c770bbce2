"""The retriever as an agent tool: k, filter and entities from the model; sources and relations in the text."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from langchain_graphrag_milvus import MilvusGraphRetriever
from langchain_graphrag_milvus.agent_tool import create_graph_retriever_tool
from langchain_graphrag_milvus.datasets import NANO_QUESTION, nano_dataset
from langchain_graphrag_milvus.errors import InvalidFilterError

from ..fakes import LexicalEmbeddings

SOURCES = ["jakob.txt", "johann.txt", "daniel.txt", "euler.txt"]


class ScriptedToolCaller(BaseChatModel):
    """NOT an LLM: issues one scripted tool call, then echoes the tool's answer."""

    tool_args: dict[str, Any]
    tool_name: str = "graph_search"

    @property
    def _llm_type(self) -> str:
        return "scripted-tool-caller"

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedToolCaller:
        return self

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any):
        if isinstance(messages[-1], ToolMessage):
            return ChatResult(generations=[ChatGeneration(message=AIMessage(content=str(messages[-1].content)))])
        call = {"name": self.tool_name, "args": self.tool_args, "id": f"call_{uuid.uuid4().hex[:8]}"}
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content="", tool_calls=[call]))])


def _records() -> list[dict[str, Any]]:
    return [
        {"id": f"p{i}", "text": r["passage"], "triplets": r["triplets"], "metadata": {"source": SOURCES[i]}}
        for i, r in enumerate(nano_dataset())
    ]


@pytest.fixture
def store(make_store):
    store = make_store(LexicalEmbeddings())
    store.add_records(_records())
    return store


def test_agent_calls_the_tool_with_k_filter_and_entities(store) -> None:
    retriever = MilvusGraphRetriever(store=store, k=2)
    tool = retriever.as_tool(name="graph_search", description="Facts about the Bernoulli family and Euler.")
    assert set(tool.args) == {"query", "k", "filter", "entities"}
    args = {
        "query": NANO_QUESTION,
        "k": 3,
        "filter": {"source": ["daniel.txt", "euler.txt", "johann.txt"]},
        "entities": ["Leonhard Euler"],
    }
    agent = create_agent(ScriptedToolCaller(tool_args=args), tools=[tool])
    result = agent.invoke({"messages": [{"role": "user", "content": NANO_QUESTION}]})
    tool_messages = [m for m in result["messages"] if isinstance(m, ToolMessage)]
    assert len(tool_messages) == 1
    text = str(tool_messages[0].content)
    docs = tool_messages[0].artifact
    assert len(docs) == 3  # k from the model, not the retriever's 2
    assert {d.metadata["source"] for d in docs} <= {"daniel.txt", "euler.txt", "johann.txt"}
    assert "jakob.txt" not in text
    for i, doc in enumerate(docs, 1):
        assert f"[{i}] source: {doc.metadata['source']}" in text
    assert "relations: " in text
    shown = [r for d in docs for r in d.metadata["_relations"]]
    assert shown and all(r in text for r in shown)  # the relations behind each passage are in the text


async def test_tool_async_and_filter_values_are_data(store) -> None:
    tool = MilvusGraphRetriever(store=store, k=4).as_tool()
    text, docs = await tool.coroutine(query=NANO_QUESTION, filter={"source": 'x" or source != "'})  # type: ignore[misc]
    assert docs == [] and text == "No passages found."  # escaped: the value cannot widen the filter
    text, docs = await tool.coroutine(query=NANO_QUESTION, filter={"source": "euler.txt"}, k=50)  # type: ignore[misc]
    assert [d.metadata["source"] for d in docs] == ["euler.txt"]
    with pytest.raises(InvalidFilterError):
        tool.func(query="x", filter={"source or 1": "a"})  # type: ignore[misc]
    with pytest.raises(InvalidFilterError):
        tool.func(query="x", filter={"_passage_id": "p1"})  # type: ignore[misc]


def test_agent_filter_narrows_but_never_widens_the_retrievers_filter(store) -> None:
    tenant = MilvusGraphRetriever(store=store, k=4, filter={"source": ["euler.txt", "daniel.txt"]})
    tool = create_graph_retriever_tool(tenant, filter_fields=["source"], max_k=2)
    _, docs = tool.func(query=NANO_QUESTION, filter={"source": "jakob.txt"})  # type: ignore[misc]
    assert docs == []
    _, docs = tool.func(query=NANO_QUESTION, k=10)  # type: ignore[misc]
    assert len(docs) == 2 and {d.metadata["source"] for d in docs} <= {"euler.txt", "daniel.txt"}
    with pytest.raises(InvalidFilterError, match="allowed fields: source"):
        tool.func(query=NANO_QUESTION, filter={"year": 1700})  # type: ignore[misc]


def test_naive_retriever_tool_has_no_entities(store) -> None:
    tool = store.as_naive_retriever(k=2).as_tool(name="passages")
    assert set(tool.args) == {"query", "k", "filter"}
    text, docs = tool.func(query="Daniel Bernoulli fluid mechanics", k=1)  # type: ignore[misc]
    assert len(docs) == 1 and text.startswith(f"[1] source: {docs[0].metadata['source']}")
