"""The server: one process keeping the embedding model, the store and the graph warm.

REST (FastAPI), MCP (the official SDK, stdio and streamable HTTP) and a browse page, started
with ``langchain-graphrag-milvus serve`` (the ``server`` extra). See :mod:`.app` for the
routes, :mod:`.state` for the limits and :mod:`.mcp_tools` for the tools.
"""

from __future__ import annotations

from langchain_graphrag_milvus.server.app import create_app
from langchain_graphrag_milvus.server.state import ServerLimits, ServerState

__all__ = ["create_app", "ServerLimits", "ServerState"]
