"""The I/O requests the retrieval pipeline yields (see :mod:`langchain_graphrag_milvus.retrieval.graph_pipeline`).

The retriever's executors answer each one: blocking calls for ``invoke``, ``await`` for
``ainvoke``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from langchain_core.runnables import Runnable

from langchain_graphrag_milvus.milvus.schema import Kind

__all__ = [
    "Invoke",
    "Embed",
    "Search",
    "Fetch",
    "Gather",
    "GetGraph",
    "LinkEntities",
    "ViewOf",
    "EntityNames",
    "Compute",
    "Notify",
    "Effect",
]


@dataclass(frozen=True)
class Invoke:
    """Run a runnable (with the retriever's child callbacks).

    With ``timeout`` (seconds), a call that has not answered by then raises
    ``TimeoutError`` into the pipeline (see :mod:`~langchain_graphrag_milvus.retrieval.timeouts`).
    """

    runnable: Runnable[Any, Any]
    input: Any
    timeout: float | None = None


@dataclass(frozen=True)
class Embed:
    """Embed texts in one call."""

    texts: tuple[str, ...]


@dataclass(frozen=True)
class Search:
    """One batched vector search."""

    kind: Kind
    vectors: tuple[tuple[float, ...], ...]
    limit: int
    filter_expr: str | None = None
    output_fields: tuple[str, ...] = ("pk",)


@dataclass(frozen=True)
class Fetch:
    """Rows by primary key."""

    kind: Kind
    ids: tuple[str, ...]
    output_fields: tuple[str, ...]
    filter_expr: str | None = None


@dataclass(frozen=True)
class Gather:
    """Several effects; the async executor runs them concurrently."""

    effects: tuple[Any, ...]


@dataclass(frozen=True)
class GetGraph:
    """The store's graph index (built from Milvus on first use)."""


@dataclass(frozen=True)
class LinkEntities:
    """Known entity names found in the query by the store's offline linker.

    With ``filter_expr``, only names of entities inside that filter's view of the graph
    are known (a tenant never links, or learns of, another tenant's names).
    """

    query: str
    filter_expr: str | None = None


@dataclass(frozen=True)
class ViewOf:
    """The part of the graph whose passages pass a filter (:meth:`MilvusGraphStore.graph_view`).

    ``graph``: the index the view must describe (the one the pipeline got from
    :class:`GetGraph`), so a refresh in between never mixes two graphs.
    """

    filter_expr: str
    graph: Any = None


@dataclass(frozen=True)
class EntityNames:
    """Display names of entities, by id."""

    ids: tuple[str, ...]


@dataclass(frozen=True)
class Compute:
    """CPU-heavy work (e.g. building an index).

    Called directly by ``invoke``; in a worker thread by ``ainvoke``, so the event loop
    stays free.
    """

    fn: Callable[..., Any]
    args: tuple[Any, ...] = ()


@dataclass(frozen=True)
class Notify:
    """Tell the caller something about this run without failing it (e.g. why nothing was found).

    The executors log it (INFO, logger ``langchain_graphrag_milvus``) and dispatch it as a
    LangChain custom event ``name`` with ``data`` on the retriever's run, so callback
    handlers and ``astream_events`` see it. Answered with ``None``.
    """

    name: str
    data: dict[str, Any]


Effect = Notify | Invoke | Embed | Search | Fetch | Gather | GetGraph | LinkEntities | EntityNames | ViewOf | Compute
