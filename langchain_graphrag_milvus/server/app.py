"""The FastAPI app: REST routes over one warm :class:`ServerState`, the MCP endpoint and the browse page.

Routes (all JSON; errors ``{"error", "message"}``, see :mod:`.middleware`):

=======================  ==================================================================
``POST /query``          passages for a question (``mode`` graph, naive or paths)
``POST /explain``        the subgraph behind a graph answer, as JSON
``GET /explain``         the same as the self-contained HTML page (``?query=...&k=...``)
``POST /ask``            an answer with ``[n]`` citations (needs a chat model; else 503)
``POST /documents``      upsert JSON documents by source
``POST /files``          upload files (text, Markdown, PDF, HTML): split and upsert by file
``DELETE /documents``    delete every passage of these sources
``GET /stats``           row counts and graph size
``GET /health``          liveness (open without the token)
``GET /graph/...``       the browse page's reads (:mod:`.browse`)
``/mcp``                 MCP over streamable HTTP (:mod:`.mcp_tools`)
=======================  ==================================================================

Writes run one at a time (:class:`~.state.IngestGate`) in worker threads (the store's
``a...`` write methods), so queries are answered while an ingest runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI, File, Form, Request, UploadFile
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, StreamingResponse

from langchain_graphrag_milvus.errors import GraphRAGError
from langchain_graphrag_milvus.retrieval.defaults import PASSAGES_K
from langchain_graphrag_milvus.server import browse, uploads
from langchain_graphrag_milvus.server.middleware import (
    BodyLimitMiddleware,
    BodyTooLargeError,
    TokenMiddleware,
    error_body,
    error_status,
)
from langchain_graphrag_milvus.server.schemas import (
    AskRequest,
    DeleteRequest,
    DocumentsRequest,
    ExplainRequest,
    QueryRequest,
)
from langchain_graphrag_milvus.server.state import ChatModelNotConfiguredError, ServerState, document_json

if TYPE_CHECKING:
    from langchain_core.documents import Document

__all__ = ["create_app"]


async def _retrieve(state: ServerState, body: QueryRequest | AskRequest, query: str) -> list[Document]:
    state.check_query(query)
    k = state.check_k(body.k, body.mode)
    filter_value = state.scoped_filter(body.filter, body.tenant, body.all_tenants)
    retriever = state.retriever(body.mode, k, filter_value)
    entities = getattr(body, "entities", None)
    if entities is not None and body.mode == "graph":
        return await retriever.ainvoke(query, entities=entities)
    return await retriever.ainvoke(query)


def _report(report: Any) -> dict[str, Any]:
    data = asdict(report)
    return json.loads(json.dumps(data, default=str))  # type: ignore[no-any-return]


def _add_query_routes(app: FastAPI, state: ServerState) -> None:
    @app.post("/query", summary="Passages for a question, with source, page and the relations behind each")
    async def query(body: QueryRequest) -> dict[str, Any]:
        docs = await _retrieve(state, body, body.query)
        rows = [document_json(d, i) for i, d in enumerate(docs, 1)]
        return {"query": body.query, "mode": body.mode, "documents": rows}

    async def explain_graph(body: ExplainRequest) -> Any:
        from langchain_graphrag_milvus.retrieval.explain import query_subgraph_async

        state.check_query(body.query)
        scoped = state.scoped_filter(body.filter, body.tenant, body.all_tenants)
        retriever = state.retriever("graph", state.check_k(body.k), scoped)
        extra = {"entities": body.entities} if body.entities is not None else {}
        return await query_subgraph_async(
            retriever,  # type: ignore[arg-type]
            body.query,
            max_relations=body.max_relations,
            display_hops=body.display_hops,
            **extra,
        )

    @app.post("/explain", summary="The subgraph behind a graph answer (entities, relations hop by hop, passages)")
    async def explain(body: ExplainRequest) -> dict[str, Any]:
        return (await explain_graph(body)).to_json()  # type: ignore[no-any-return]

    @app.get("/explain", response_class=HTMLResponse, summary="The subgraph behind a graph answer as an HTML page")
    async def explain_page(
        query: str, k: int = PASSAGES_K, tenant: str | None = None, all_tenants: bool = False, max_relations: int = 30
    ) -> HTMLResponse:
        body = ExplainRequest(query=query, k=k, tenant=tenant, all_tenants=all_tenants, max_relations=max_relations)
        graph = await explain_graph(body)
        return HTMLResponse(graph.to_html())

    @app.post("/ask", summary="An answer with [n] citations mapped to source, page and relations")
    async def ask(body: AskRequest) -> Any:
        if state.llm is None:
            raise ChatModelNotConfiguredError(
                "no chat model is configured: start the server with OPENAI_API_KEY set (or --llm MODEL)"
            )
        from langchain_core.runnables import RunnableLambda

        from langchain_graphrag_milvus.answers import create_cited_answer_chain

        state.check_query(body.question)
        docs = await _retrieve(state, body, body.question)
        chain = create_cited_answer_chain(RunnableLambda(lambda _q: docs), state.llm)
        if not body.stream:
            return await chain.ainvoke(body.question)

        async def lines() -> AsyncIterator[bytes]:
            async for chunk in chain.astream(body.question):
                yield (json.dumps(dict(chunk), default=str) + "\n").encode("utf-8")

        return StreamingResponse(lines(), media_type="application/x-ndjson")


def _add_write_routes(app: FastAPI, state: ServerState) -> None:
    @app.post("/documents", summary="Upsert JSON documents by source (metadata.source, else the id)")
    async def post_documents(body: DocumentsRequest) -> dict[str, Any]:
        if len(body.documents) > state.limits.max_documents:
            raise ValueError(f"at most {state.limits.max_documents} documents per request")
        docs = uploads.json_documents(state, body)
        async with state.gate.slot():
            report = await state.store.aupsert_documents(docs, show_progress=False)
        return _report(report)

    @app.post("/files", summary="Upload files (text, Markdown, PDF, HTML): split and upsert by file name")
    async def post_files(
        files: list[UploadFile] = File(  # noqa: B008 - FastAPI's way of declaring an upload
            description="the files; each file's name (or `source`) is its source id"
        ),
        source: str | None = Form(default=None, description="source id of a single uploaded file"),
        tenant: str | None = Form(default=None),
    ) -> dict[str, Any]:
        if source is not None and len(files) != 1:
            raise ValueError("source names one file: upload one file with it")
        named = [(f.filename or "", await f.read()) for f in files]
        async with state.gate.slot():
            docs, skipped = await asyncio.to_thread(uploads.file_documents, state, named, source, tenant)
            report = await state.store.aupsert_documents(docs, show_progress=False) if docs else None
        done = _report(report) if report else None
        return {"files": len(named), "chunks": len(docs), "skipped": skipped, "report": done}

    @app.delete("/documents", summary="Delete every passage of these sources (and what only they supported)")
    async def delete_documents(body: DeleteRequest) -> dict[str, Any]:
        async with state.gate.slot():
            report = await state.store.adelete_documents(body.sources, tenant=body.tenant, all_tenants=body.all_tenants)
        return _report(report)


def _add_info_routes(app: FastAPI, state: ServerState) -> None:
    @app.get("/health", summary="Liveness (no token needed)")
    async def health() -> dict[str, Any]:
        return {"status": "ok", "ingest_running": state.gate.running, "ingests_waiting": state.gate.waiting}

    @app.get("/stats", summary="Row counts, graph size and the server's limits")
    async def stats() -> dict[str, Any]:
        store = state.store

        def read() -> dict[str, Any]:
            exists = store.exists()
            counts = store.counts() if exists else {"entities": 0, "relations": 0, "passages": 0}
            graph = store.graph if exists else None
            return {
                "prefix": store.collection_prefix,
                "exists": exists,
                **counts,
                "graph": None if graph is None else {
                    "entities": graph.n_entities, "relations": graph.n_relations, "passages_linked": graph.n_passages,
                },
                "partition_key": state.partition_key,
                "limits": asdict(state.limits),
                "chat_model": state.llm is not None,
            }  # fmt: skip

        return await asyncio.to_thread(read)


def _add_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg', '')}" for e in exc.errors()[:10]
        )
        return JSONResponse({"error": "ValidationError", "message": problems}, status_code=422)

    @app.exception_handler(BodyTooLargeError)
    async def too_large(request: Request, exc: BodyTooLargeError) -> JSONResponse:
        return JSONResponse({"error": "RequestTooLarge", "message": "the request body is too large"}, status_code=413)

    async def typed(request: Request, exc: Exception) -> JSONResponse:
        status = error_status(exc)
        headers = {"Retry-After": "5"} if status == 429 else None
        return JSONResponse(error_body(exc, status), status_code=status, headers=headers)

    # the caller's errors are answered where they are raised (the connection stays usable);
    # anything else reaches Starlette's last-resort handler, still as typed JSON (500)
    for cls in (GraphRAGError, ValueError, TypeError, LookupError, Exception):
        app.add_exception_handler(cls, typed)


def create_app(state: ServerState, *, token: str | None = None, mcp: bool = True, host: str = "127.0.0.1") -> FastAPI:
    """The ASGI app over a warm ``state``; with ``token``, every route but ``/health`` and the page needs it.

    Args:
        state: The store and limits.
        token: The API token (``Authorization: Bearer <token>``); None: open.
        mcp: Mount the MCP streamable HTTP endpoint at ``/mcp``.
        host: The interface served (on a loopback one, MCP's DNS-rebinding protection is on).

    Returns:
        The FastAPI app (run it with uvicorn; its lifespan closes the store).
    """
    mcp_server = None
    if mcp:
        from langchain_graphrag_milvus.server.mcp_tools import create_mcp_server

        mcp_server = create_mcp_server(state)
        mcp_app = mcp_server.streamable_http_app(
            streamable_http_path="/", stateless_http=True, json_response=True, host=host
        )

    @contextlib.asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        async with contextlib.AsyncExitStack() as stack:
            if mcp_server is not None:
                await stack.enter_async_context(mcp_server.session_manager.run())
            try:
                yield
            finally:
                await asyncio.to_thread(state.store.close)

    app = FastAPI(
        title="langchain-graphrag-milvus",
        description="Graph RAG on Milvus: query, explain, ask with citations, ingest, browse. MCP at /mcp.",
        lifespan=lifespan,
    )
    _add_query_routes(app, state)
    _add_write_routes(app, state)
    _add_info_routes(app, state)
    browse.add_routes(app, state)
    _add_error_handlers(app)
    if mcp_server is not None:
        app.mount("/mcp", mcp_app)
    app.add_middleware(TokenMiddleware, token=token)
    app.add_middleware(BodyLimitMiddleware, limit=state.limits.max_body_bytes)
    return app
