"""What retrieval needs from a store, as a :class:`typing.Protocol` (retrieval never imports the store).

:class:`RetrievalStore` lists the reads the executors and the subgraph builder make:
vector searches and fetches (sync and async), a scan, the graph index and its filtered
views, the offline entity linker and entity names, and the embedding model. The
:class:`~langchain_graphrag_milvus.store.MilvusGraphStore` facade provides all of them;
so does any object with the same members (a test double, another backend).

:func:`check_store` is the retrievers' validation of their ``store`` field. It looks the
members up statically (``inspect.getattr_static``), so checking a store never runs a
property such as ``graph`` (which would read Milvus); the retrievers' pydantic ``store``
field uses it as its validator.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from langchain_core.embeddings import Embeddings

from langchain_graphrag_milvus.milvus.schema import Kind

if TYPE_CHECKING:
    from langchain_graphrag_milvus.graph import GraphIndex, GraphView
    from langchain_graphrag_milvus.milvus.reads import Hit
    from langchain_graphrag_milvus.retrieval.query_entities import EntityLinker

__all__ = ["RetrievalStore", "check_store", "STORE_MEMBERS"]


class RetrievalStore(Protocol):
    """The store as retrieval sees it (reads, graph and views, embeddings).

    Not ``runtime_checkable`` on purpose: ``isinstance`` would evaluate the ``graph``
    property (a Milvus read) on Python 3.11; :func:`check_store` checks statically.
    """

    embedding: Embeddings

    @property
    def graph(self) -> GraphIndex:
        """The graph index (built from Milvus on first use)."""

    def search(
        self,
        kind: Kind,
        vectors: Sequence[Sequence[float]],
        limit: int,
        *,
        filter_expr: str | None = None,
        output_fields: Sequence[str] = ...,
        within: Sequence[str] | None = None,
    ) -> list[list[Hit]]:
        """Per vector, the ``limit`` most similar rows of ``kind``, most similar first.

        ``within``: the primary keys ``filter_expr`` selects, when it selects exactly those.
        """

    async def asearch(
        self,
        kind: Kind,
        vectors: Sequence[Sequence[float]],
        limit: int,
        *,
        filter_expr: str | None = None,
        output_fields: Sequence[str] = ...,
        within: Sequence[str] | None = None,
    ) -> list[list[Hit]]:
        """Async :meth:`search`."""

    def fetch(
        self,
        kind: Kind,
        ids: Sequence[str],
        output_fields: Sequence[str],
        *,
        filter_expr: str | None = None,
    ) -> dict[str, dict[str, Any]]:
        """Rows of ``kind`` by primary key (absent ids, or ids outside the filter, left out)."""

    async def afetch(
        self,
        kind: Kind,
        ids: Sequence[str],
        output_fields: Sequence[str],
        *,
        filter_expr: str | None = None,
    ) -> dict[str, dict[str, Any]]:
        """Async :meth:`fetch`."""

    def iterate(self, kind: Kind, output_fields: Sequence[str]) -> Iterator[dict[str, Any]]:
        """Every row of ``kind`` (the stored-graph picture scans the relations)."""

    def entity_names(self) -> Mapping[str, str]:
        """Display name of every entity, by id."""

    def graph_view(self, filter_expr: str, graph: GraphIndex | None = None) -> GraphView:
        """The part of ``graph`` (default: the current one) whose passages pass ``filter_expr``."""

    def entity_linker(self, filter_expr: str | None = None) -> EntityLinker:
        """The offline linker over the entity names (inside the filter's view, if given)."""


#: The members :func:`check_store` requires.
STORE_MEMBERS = (
    "embedding",
    "graph",
    "search",
    "asearch",
    "fetch",
    "afetch",
    "iterate",
    "entity_names",
    "graph_view",
    "entity_linker",
)


def check_store(value: Any) -> RetrievalStore:
    """``value`` if it has every member of :class:`RetrievalStore`, else a ``TypeError`` naming what lacks.

    Instance attributes (``embedding``) are looked up in the instance's ``__dict__``; the
    others statically on its class, so no property runs.

    Raises:
        TypeError: ``value`` is not a store (e.g. a string or a raw ``MilvusClient``).
    """
    missing = [name for name in STORE_MEMBERS if not _has_static(value, name)]
    if missing:
        raise TypeError(
            f"store must be a MilvusGraphStore (or an object with the same reads), got {type(value).__name__} "
            f"without {', '.join(missing)}"
        )
    return value  # type: ignore[no-any-return]


def _has_static(value: Any, name: str) -> bool:
    try:
        inspect.getattr_static(value, name)
    except AttributeError:
        return False
    return True
