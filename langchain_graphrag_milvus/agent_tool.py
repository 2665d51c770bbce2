"""The retrievers as agent tools: ``query``, ``k``, a metadata ``filter`` and ``entities``.

``create_retriever_tool`` from LangChain exposes only ``query`` and joins the passage
texts; an agent can then neither ask for more passages, restrict them to a source or a
year, nor name the entities it is after, and it never sees *why* a passage was chosen.
The tool made here accepts those arguments and shows, for each passage, where it comes
from and the relations that led to it. It returns the Documents as the tool message's
``artifact`` too.

Example:
    .. code-block:: python

        from langchain.agents import create_agent

        tool = retriever.as_tool(name="graph_search", description="Facts about mathematicians")
        agent = create_agent(llm, tools=[tool])

The agent's ``filter`` is a ``{field: value}`` dict (a list value means "one of"): field
names must be identifiers (and, with ``filter_fields``, one of those), values are escaped
by :mod:`langchain_graphrag_milvus.milvus.expr`, and the result is combined with ``and`` with the
retriever's own filter, so an agent can narrow a tenant's view but never widen it.
"""

from __future__ import annotations

from langchain_graphrag_milvus.retrieval.tool import (
    DEFAULT_TOOL_DESCRIPTION,
    FilterValue,
    GraphSearchInput,
    PassageSearchInput,
    create_graph_retriever_tool,
    format_documents,
)

__all__ = [
    "create_graph_retriever_tool",
    "format_documents",
    "DEFAULT_TOOL_DESCRIPTION",
    "GraphSearchInput",
    "PassageSearchInput",
    "FilterValue",
]
