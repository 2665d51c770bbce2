"""The retrievers as agent tools: the public path of :mod:`langchain_graphrag_milvus.retrieval.tool`.

``create_graph_retriever_tool`` (and ``retriever.as_tool(...)``) accept ``query``, ``k``, a
metadata ``filter`` and ``entities``; see the implementation module for what the tool shows
and how the agent's filter is escaped and narrowed.
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
