"""The retrieval and explain as MCP tools (the official ``mcp`` SDK), for agents outside LangChain.

Tools: ``search`` (passages with source, page and relations; mode graph, naive or paths),
``explain`` (the subgraph behind a graph answer as JSON) and ``stats``. The same
:class:`~.state.ServerState` serves them over stdio (``serve --mcp stdio``) and over
streamable HTTP at ``/mcp`` of the REST app. Tool errors come back as MCP tool errors
carrying the typed error's name and message.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Awaitable, Callable
from typing import Any, Literal, TypeVar

from langchain_graphrag_milvus.errors import GraphRAGError
from langchain_graphrag_milvus.retrieval.defaults import PASSAGES_K
from langchain_graphrag_milvus.server.state import ServerState, document_json

__all__ = ["create_mcp_server"]

F = TypeVar("F", bound=Callable[..., Awaitable[Any]])

INSTRUCTIONS = (
    "Graph RAG over a Milvus store. Call `search` with a question to get passages with their source, page and "
    "the relations (subject, predicate, object) that led to each; cite the sources. Call `explain` to see the "
    "entities and relations behind an answer."
)


def _sdk() -> tuple[Any, type[Exception]]:
    """The SDK's server class and its ``ToolError`` (``MCPServer`` in mcp 2, ``FastMCP`` in mcp 1)."""
    try:  # mcp >= 2
        from mcp.server.mcpserver import MCPServer
        from mcp.server.mcpserver.exceptions import ToolError

        return MCPServer, ToolError
    except ImportError:  # mcp 1.x
        from mcp.server.fastmcp import FastMCP  # type: ignore[attr-defined,unused-ignore]
        from mcp.server.fastmcp.exceptions import ToolError as FastToolError

        return FastMCP, FastToolError


def _typed_errors(tool_error: type[Exception]) -> Callable[[F], F]:
    """Report the caller's mistakes (typed errors, bad values) as tool errors naming type and message."""

    def decorate(fn: F) -> F:
        @functools.wraps(fn)
        async def call(*args: Any, **kwargs: Any) -> Any:
            try:
                return await fn(*args, **kwargs)
            except (GraphRAGError, ValueError, TypeError, LookupError) as exc:
                message = str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc)
                raise tool_error(f"{type(exc).__name__}: {message}") from exc

        return call  # type: ignore[return-value]

    return decorate


def create_mcp_server(state: ServerState) -> Any:
    """An MCP server (``MCPServer``, FastMCP in mcp 1.x) with the ``search``, ``explain`` and ``stats`` tools."""
    server_class, tool_error = _sdk()
    server = server_class("langchain-graphrag-milvus", instructions=INSTRUCTIONS)
    typed = _typed_errors(tool_error)

    @server.tool()  # type: ignore[untyped-decorator,unused-ignore]
    @typed
    async def search(
        query: str,
        k: int | None = None,
        mode: Literal["graph", "naive", "paths"] = "graph",
        filter: dict[str, str | int | float | bool] | None = None,
        entities: list[str] | None = None,
        tenant: str | None = None,
    ) -> dict[str, Any]:
        """Passages answering `query`, each with source, page, score and the relations behind it.

        Args:
            query: The question.
            k: How many passages (or paths) to return (default: the mode's retriever's own).
            mode: graph (multi-hop, default), naive (vector search) or paths (between the query's entities).
            filter: Metadata filter {"field": value}.
            entities: Graph mode: the entities the question is about, if known.
            tenant: The tenant, on a store partitioned by tenant.
        """
        state.check_query(query)
        retriever = state.retriever(mode, state.check_k(k, mode), state.scoped_filter(filter, tenant))
        extra = {"entities": entities} if entities is not None and mode == "graph" else {}
        docs = await retriever.ainvoke(query, **extra)  # type: ignore[arg-type]
        return {"query": query, "mode": mode, "documents": [document_json(d, i) for i, d in enumerate(docs, 1)]}

    @server.tool()  # type: ignore[untyped-decorator,unused-ignore]
    @typed
    async def explain(
        query: str, k: int = PASSAGES_K, max_relations: int = 30, tenant: str | None = None
    ) -> dict[str, Any]:
        """The subgraph behind the graph retriever's answer: query entities, relations hop by hop, passages.

        Args:
            query: The question.
            k: Passages of the answer.
            max_relations: Relations shown besides those behind the passages.
            tenant: The tenant, on a store partitioned by tenant.
        """
        from langchain_graphrag_milvus.retrieval.explain import query_subgraph_async

        state.check_query(query)
        retriever = state.retriever("graph", state.check_k(k), state.scoped_filter(None, tenant))
        graph = await query_subgraph_async(retriever, query, max_relations=max_relations)  # type: ignore[arg-type]
        return graph.to_json()

    @server.tool()  # type: ignore[untyped-decorator,unused-ignore]
    @typed
    async def stats() -> dict[str, Any]:
        """Rows of entities, relations and passages in the store."""
        exists = await asyncio.to_thread(state.store.exists)
        counts = await asyncio.to_thread(state.store.counts) if exists else {}
        return {"prefix": state.store.collection_prefix, "exists": exists, **counts}

    return server
