"""The retrievers as agent tools: ``query``, ``k``, a metadata ``filter`` and ``entities``.

The public name is :mod:`langchain_graphrag_milvus.agent_tool` (which re-exports this
module); the implementation lives here, below the retrievers, so that their ``as_tool``
can build the tool without importing a module above them.

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

import dataclasses
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from langchain_core.documents import Document
from langchain_core.tools import StructuredTool
from pydantic import BaseModel, Field

from langchain_graphrag_milvus.errors import InvalidFilterError
from langchain_graphrag_milvus.milvus import expr
from langchain_graphrag_milvus.retrieval.defaults import TOOL_MAX_K
from langchain_graphrag_milvus.retrieval.documents import no_graph, source_label
from langchain_graphrag_milvus.retrieval.events import NoPathEvents

if TYPE_CHECKING:
    from langchain_core.retrievers import BaseRetriever

__all__ = [
    "create_graph_retriever_tool",
    "format_documents",
    "DEFAULT_TOOL_DESCRIPTION",
    "GraphSearchInput",
    "PassageSearchInput",
]

DEFAULT_TOOL_DESCRIPTION = (
    "Search the knowledge graph and its passages. Returns passages with their source and the "
    "relations (subject predicate object) that led to each. Optional: k (how many passages), "
    'filter (metadata field -> value, e.g. {"source": "report.pdf"}), entities (names to start from).'
)
FilterValue = str | int | float | bool | list[str | int | float | bool]


class GraphSearchInput(BaseModel):
    """Arguments of the graph search tool."""

    query: str = Field(description="what to search for, as a question or keywords")
    k: int | None = Field(default=None, ge=1, description="number of passages to return")
    filter: dict[str, FilterValue] | None = Field(
        default=None, description="metadata field -> value (a list means one of) that passages must match"
    )
    entities: list[str] | None = Field(default=None, description="entity names to start the graph search from")


class PassageSearchInput(BaseModel):
    """Arguments of the naive passage search tool (no entities)."""

    query: str = Field(description="what to search for, as a question or keywords")
    k: int | None = Field(default=None, ge=1, description="number of passages to return")
    filter: dict[str, FilterValue] | None = Field(
        default=None, description="metadata field -> value (a list means one of) that passages must match"
    )


def format_documents(docs: Sequence[Document], *, max_chars: int | None = 1500, reason: str | None = None) -> str:
    """The tool text: per passage its source and page, score, the relations behind it and its text.

    Args:
        docs: Documents from a graph, path or naive retriever of this package.
        max_chars: Longest passage text shown (``None``: whole texts).
        reason: Why nothing was found (the path retriever's no-path reason), shown when
            ``docs`` is empty.
    """
    if not docs:
        return f"No passages found: {reason}." if reason else "No passages found."
    blocks = []
    if any(no_graph(d.metadata.get("_ranked_by")) for d in docs):
        blocks.append("Note: no relations here (store or filter); these passages are ranked by similarity only.")
    for i, doc in enumerate(docs, 1):
        meta = doc.metadata
        head = f"[{i}] source: {source_label(meta)}"
        if meta.get("_passage_id") is not None and str(meta.get("_passage_id")) not in head:
            head += f" (passage {meta['_passage_id']})"
        if isinstance(meta.get("_score"), (int, float)):
            head += f", score {meta['_score']:.3f}"
        if isinstance(meta.get("_similarity"), (int, float)) and meta.get("_similarity") != meta.get("_score"):
            head += f", similarity {meta['_similarity']:.3f}"
        lines = [head]
        if meta.get("_sources"):
            lines.append("passages from: " + "; ".join(str(x) for x in dict.fromkeys(meta["_sources"])))
        relations = list(meta.get("_relations") or [])
        if relations:
            lines.append("relations: " + "; ".join(str(r) for r in relations))
        text = doc.page_content
        if max_chars is not None and len(text) > max_chars:
            text = text[:max_chars].rstrip() + " …"
        lines.append(text)
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def _agent_filter(value: Mapping[str, Any] | None, allowed: frozenset[str] | None, base: Any) -> str | None:
    """The retriever's own filter ``and`` the agent's (validated, escaped) conditions."""
    own = expr.as_filter(base)
    if not value:
        return own
    for key in value:
        expr.field_name(key)
        if key.startswith("_"):
            raise InvalidFilterError(f"cannot filter on the internal field {key!r}")
        if allowed is not None and key not in allowed:
            raise InvalidFilterError(f"cannot filter on {key!r}; allowed fields: {', '.join(sorted(allowed))}")
    return expr.and_all(own, expr.eq_filter(value))


def _accepts_entities(retriever: BaseRetriever) -> bool:
    """Whether the retriever takes ``entities=`` per call (graph and path yes, naive no).

    Read from the retriever's settings class (:mod:`~langchain_graphrag_milvus.retrieval.params`);
    a retriever from elsewhere is offered ``entities`` as before.
    """
    settings = getattr(type(retriever), "_settings_class", None)
    if settings is None or not dataclasses.is_dataclass(settings):
        return True
    return any(f.name == "entities" for f in dataclasses.fields(settings))


def create_graph_retriever_tool(
    retriever: BaseRetriever,
    *,
    name: str = "graph_search",
    description: str = DEFAULT_TOOL_DESCRIPTION,
    filter_fields: Sequence[str] | None = None,
    max_k: int = TOOL_MAX_K,
    max_chars: int | None = 1500,
) -> StructuredTool:
    """A tool over a graph, path or naive retriever of this package.

    Args:
        retriever: A ``MilvusGraphRetriever``, ``MilvusPathRetriever`` or
            ``NaivePassageRetriever`` (``entities`` is offered only by the first two).
        name: The tool name the model calls.
        description: What the model is told the tool does.
        filter_fields: Metadata fields the agent may filter on (default: any
            identifier not starting with ``_``).
        max_k: Largest ``k`` accepted from the agent (larger asks are capped).
        max_chars: Longest passage text shown per passage.

    Returns:
        A ``StructuredTool`` with ``response_format="content_and_artifact"``: the text
        for the model and the Documents as artifact. A bad filter raises
        :class:`~langchain_graphrag_milvus.errors.InvalidFilterError` (shown to the
        model as the tool's error by agents that handle tool errors).
    """
    if max_k < 1:
        raise ValueError("max_k must be positive")
    allowed = frozenset(expr.field_name(f) for f in filter_fields) if filter_fields is not None else None
    with_entities = _accepts_entities(retriever)
    schema: type[BaseModel] = GraphSearchInput if with_entities else PassageSearchInput

    def kwargs_of(k: int | None, filter: Mapping[str, Any] | None, entities: Sequence[str] | None) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if k is not None:
            out["k"] = min(int(k), max_k)
        combined = _agent_filter(filter, allowed, getattr(retriever, "filter", None))
        if combined is not None:
            out["filter"] = combined
        if entities:
            out["entities"] = [str(e) for e in entities]
        return out

    def with_events(callbacks: Any) -> tuple[NoPathEvents, Any]:
        """The tool run's callbacks (its trace) plus a collector of why a path retriever found nothing."""
        events = NoPathEvents()
        if callbacks is None:
            return events, [events]
        callbacks = callbacks.copy()
        callbacks.add_handler(events, inherit=True)
        return events, callbacks

    def run(
        query: str,
        k: int | None = None,
        filter: dict[str, Any] | None = None,
        entities: list[str] | None = None,
        callbacks: Any = None,
    ) -> tuple[str, list[Document]]:
        events, handlers = with_events(callbacks)
        docs = retriever.invoke(query, config={"callbacks": handlers}, **kwargs_of(k, filter, entities))
        return format_documents(docs, max_chars=max_chars, reason=events.reason()), docs

    async def arun(
        query: str,
        k: int | None = None,
        filter: dict[str, Any] | None = None,
        entities: list[str] | None = None,
        callbacks: Any = None,
    ) -> tuple[str, list[Document]]:
        events, handlers = with_events(callbacks)
        docs = await retriever.ainvoke(query, config={"callbacks": handlers}, **kwargs_of(k, filter, entities))
        return format_documents(docs, max_chars=max_chars, reason=events.reason()), docs

    response_format: Literal["content_and_artifact"] = "content_and_artifact"
    return StructuredTool.from_function(
        func=run,
        coroutine=arun,
        name=name,
        description=description,
        args_schema=schema,
        response_format=response_format,
    )
