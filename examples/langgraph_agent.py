"""The graph retriever as a tool of a LangGraph agent (langchain.agents.create_agent).

    .venv/bin/python examples/langgraph_agent.py

With OPENAI_API_KEY set, gpt-4o decides when to call the tool and writes the answer.
Without it there is no LLM: a scripted stand-in model (clearly labelled in the output)
calls the tool once (question, k=3, a source filter, a starting entity) and returns what
the tool found, so the agent loop, the tool call and the retrieval all run for real, but
nothing is reasoned.
"""

from __future__ import annotations

import uuid
from typing import Any

from _common import DB_URI, banner, chat_model, embeddings
from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from langchain_graphrag_milvus import MilvusGraphRetriever, MilvusGraphStore
from langchain_graphrag_milvus.datasets import NANO_QUESTION, nano_dataset


class ScriptedToolCaller(BaseChatModel):
    """NOT an LLM: calls the first bound tool (question, k, filter, entities), then echoes its result."""

    tool_name: str = "graph_search"

    @property
    def _llm_type(self) -> str:
        return "scripted-tool-caller"

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedToolCaller:
        return self

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any):
        if isinstance(messages[-1], ToolMessage):
            text = "[no LLM: tool output passed through]\n" + str(messages[-1].content)
            return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text))])
        # what a model could ask for: more passages, only some sources, a starting entity
        args = {
            "query": str(messages[-1].content),
            "k": 3,
            "filter": {"source": ["euler", "daniel", "johann"]},
            "entities": ["Leonhard Euler"],
        }
        call = {"name": self.tool_name, "args": args, "id": f"call_{uuid.uuid4().hex[:8]}"}
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content="", tool_calls=[call]))])


def main() -> None:
    banner()
    embedding, name = embeddings()
    store = MilvusGraphStore(embedding, uri=DB_URI, collection_prefix=f"agent_{name}")
    sources = ["jakob", "johann", "daniel", "euler"]  # metadata the agent can filter on
    store.add_records(
        [
            {"id": f"nano-{i}", "text": r["passage"], "triplets": r["triplets"], "metadata": {"source": sources[i]}}
            for i, r in enumerate(nano_dataset())
        ]
    )
    llm = chat_model()

    retriever = MilvusGraphRetriever(store=store, llm=llm, k=2)
    tool = retriever.as_tool(  # arguments: query, k, filter, entities
        name="graph_search",
        description="Search the knowledge graph of the Bernoulli family and Euler; returns supporting passages "
        "with their source and the relations that led to them.",
    )
    agent = create_agent(
        llm if llm is not None else ScriptedToolCaller(),
        tools=[tool],
        system_prompt="Answer questions about mathematicians. Use graph_search to find evidence first.",
    )
    if llm is None:
        print("Agent model: ScriptedToolCaller (a stand-in, not an LLM).\n")
    result = agent.invoke({"messages": [{"role": "user", "content": NANO_QUESTION}]})
    for message in result["messages"]:
        kind = type(message).__name__
        content = message.content if isinstance(message.content, str) else str(message.content)
        calls = getattr(message, "tool_calls", None)
        shown = f"  tool_calls={[(c['name'], c['args']) for c in calls]}" if calls else ""
        print(f"[{kind}] {content[:900]}{shown}")
    store.close()


if __name__ == "__main__":
    main()
