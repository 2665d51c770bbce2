"""Request bodies of the REST API (pydantic; FastAPI documents them in ``/docs``)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from langchain_graphrag_milvus.retrieval.defaults import PASSAGES_K, PATHS_K

__all__ = ["QueryRequest", "ExplainRequest", "DocumentIn", "DocumentsRequest", "DeleteRequest", "AskRequest"]

FilterValue = str | int | float | bool
#: ``k`` of a request with a ``mode``: unset, the mode's retriever's own (``retrieval/defaults.py``).
K_DESCRIPTION = (
    f"passages (or paths) to return; at most the server's max_k; default: the mode's "
    f"({PASSAGES_K} passages, {PATHS_K} paths)"
)


class _Scoped(BaseModel):
    model_config = ConfigDict(extra="forbid")

    filter: dict[str, FilterValue] | None = Field(
        default=None, description='metadata filter {"field": value}; values are escaped (no raw expressions)'
    )
    tenant: str | None = Field(default=None, description="the tenant, on a store with a partition key")
    all_tenants: bool = Field(default=False, description="on a partitioned store: search every tenant")


class QueryRequest(_Scoped):
    """``POST /query``."""

    query: str = Field(description="the question")
    mode: Literal["graph", "naive", "paths"] = "graph"
    k: int | None = Field(default=None, description=K_DESCRIPTION)
    entities: list[str] | None = Field(default=None, description="graph mode: the query's entities, if known")


class ExplainRequest(_Scoped):
    """``POST /explain``: the subgraph behind a graph-mode answer."""

    query: str
    k: int = Field(default=PASSAGES_K, description="passages of the answer; at most the server's max_k")
    entities: list[str] | None = None
    max_relations: int = Field(default=30, ge=1, le=200)
    display_hops: int = Field(default=2, ge=0, le=3)


class AskRequest(_Scoped):
    """``POST /ask``: an answer with ``[n]`` citations."""

    question: str
    mode: Literal["graph", "naive", "paths"] = "graph"
    k: int | None = Field(default=None, description=K_DESCRIPTION)
    stream: bool = Field(default=False, description="answer as newline-delimited JSON chunks")


class DocumentIn(BaseModel):
    """One document: text, metadata (``source`` names its source), optional id and triplets."""

    model_config = ConfigDict(extra="forbid")

    text: str
    id: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    triplets: list[list[str]] | None = Field(default=None, description="[[subject, predicate, object], ...]")


class DocumentsRequest(BaseModel):
    """``POST /documents``: upsert by source (a source's passages become exactly these)."""

    model_config = ConfigDict(extra="forbid")

    documents: list[DocumentIn]
    tenant: str | None = None


class DeleteRequest(BaseModel):
    """``DELETE /documents``: every passage of these sources."""

    model_config = ConfigDict(extra="forbid")

    sources: list[str] = Field(min_length=1)
    tenant: str | None = None
    all_tenants: bool = False
