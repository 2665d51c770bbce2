"""LangChain retrievers over a :class:`~langchain_graphrag_milvus.store.MilvusGraphStore`."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from abc import abstractmethod
from collections.abc import Generator, Sequence
from typing import Any, Literal, TypeVar

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.language_models import BaseChatModel
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from pydantic import BaseModel, Field, PrivateAttr, model_validator

from langchain_graphrag_milvus.milvus.expr import as_filter
from langchain_graphrag_milvus.milvus.filters import filter_errors
from langchain_graphrag_milvus.retrieval.effects import (
    Compute,
    Effect,
    Embed,
    EntityNames,
    Fetch,
    Gather,
    GetGraph,
    Invoke,
    LinkEntities,
    Notify,
    Search,
    ViewOf,
)
from langchain_graphrag_milvus.retrieval.graph_pipeline import graph_pipeline, naive_pipeline
from langchain_graphrag_milvus.retrieval.params import RetrievalParams
from langchain_graphrag_milvus.retrieval.query_entities import create_llm_entity_extractor
from langchain_graphrag_milvus.retrieval.rerank import create_llm_reranker
from langchain_graphrag_milvus.retrieval.timeouts import ainvoke_with_timeout, invoke_with_timeout
from langchain_graphrag_milvus.store import MilvusGraphStore
from langchain_graphrag_milvus.subgraph import Subgraph

logger = logging.getLogger("langchain_graphrag_milvus")

__all__ = ["MilvusGraphRetriever", "NaivePassageRetriever"]

_IGNORED_KWARGS = frozenset({"verbose"})
P = TypeVar("P")


class _StoreRetriever(BaseRetriever):
    """Executes pipeline effects against the store, blocking or with ``await``.

    Subclasses provide :meth:`_pipeline` (query and per-call kwargs → the effect
    generator); ``invoke`` and ``ainvoke`` run that same generator.
    """

    store: MilvusGraphStore

    @abstractmethod
    def _pipeline(self, query: str, kwargs: dict[str, Any]) -> Generator[Effect, Any, list[Document]]:
        """The retrieval for this query and these per-call settings, as an effect generator."""

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        return self._run(self._pipeline(query, kwargs), run_manager.get_child())

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        return await self._arun(self._pipeline(query, kwargs), run_manager.get_child())

    def as_tool(
        self,
        args_schema: type[BaseModel] | None = None,
        *,
        name: str | None = None,
        description: str | None = None,
        arg_types: dict[str, type] | None = None,
        filter_fields: Sequence[str] | None = None,
        max_k: int = 20,
    ) -> BaseTool:
        """This retriever as an agent tool with ``query``, ``k``, ``filter`` and ``entities``.

        See :func:`~langchain_graphrag_milvus.agent_tool.create_graph_retriever_tool`: the tool
        text shows each passage's source and the relations behind it. With
        ``args_schema`` or ``arg_types``, LangChain's generic ``Runnable.as_tool`` is used.

        Args:
            args_schema: A schema for LangChain's generic tool (rarely needed).
            name: Tool name (default ``"graph_search"``).
            description: Tool description (default: what the tool returns and accepts).
            arg_types: Argument types for LangChain's generic tool.
            filter_fields: Metadata fields the agent may filter on (default: any).
            max_k: Largest ``k`` accepted from the agent.
        """
        if args_schema is not None or arg_types is not None:
            return super().as_tool(args_schema, name=name, description=description, arg_types=arg_types)
        from langchain_graphrag_milvus.agent_tool import DEFAULT_TOOL_DESCRIPTION, create_graph_retriever_tool

        return create_graph_retriever_tool(
            self,
            name=name or "graph_search",
            description=description or DEFAULT_TOOL_DESCRIPTION,
            filter_fields=filter_fields,
            max_k=max_k,
        )

    def _field_params(self, cls: type[P]) -> P:
        """The per-call parameter dataclass filled from this retriever's fields."""
        values = {f.name: getattr(self, f.name) for f in dataclasses.fields(cls) if f.name != "entities"}  # type: ignore[arg-type]
        values["filter"] = as_filter(values.get("filter"))
        return cls(**values)

    def _call_params(self, defaults: P, kwargs: dict[str, Any]) -> P:
        """``defaults`` with the per-call overrides in ``kwargs`` (unknown names: ``TypeError``)."""
        allowed = {f.name for f in dataclasses.fields(defaults)}  # type: ignore[arg-type]
        unknown = set(kwargs) - allowed - _IGNORED_KWARGS
        if unknown:
            raise TypeError(
                f"unexpected retrieval argument(s): {', '.join(sorted(unknown))}; "
                f"accepted: {', '.join(sorted(allowed))}"
            )
        overrides = {k: v for k, v in kwargs.items() if k in allowed}
        if "filter" in overrides:
            overrides["filter"] = as_filter(overrides["filter"])
        if overrides.get("entities") is not None:
            if isinstance(overrides["entities"], str):
                raise TypeError("entities must be a list of names, not a string")
            overrides["entities"] = tuple(str(e) for e in overrides["entities"])
        return dataclasses.replace(defaults, **overrides)  # type: ignore[type-var]

    def _sync_effect(self, effect: Effect, callbacks: Any) -> Any:
        store = self.store
        if isinstance(effect, Invoke):
            return invoke_with_timeout(effect.runnable, effect.input, {"callbacks": callbacks}, effect.timeout)
        if isinstance(effect, Notify):
            logger.info("%s: %s", effect.name, effect.data.get("reason", effect.data))
            if callbacks is not None:
                callbacks.on_custom_event(effect.name, effect.data, run_id=callbacks.parent_run_id)
            return None
        if isinstance(effect, Embed):
            return store.embedding.embed_documents(list(effect.texts))
        if isinstance(effect, Search):
            return store.search(
                effect.kind,
                effect.vectors,
                effect.limit,
                filter_expr=effect.filter_expr,
                output_fields=effect.output_fields,
            )
        if isinstance(effect, Fetch):
            return store.fetch(effect.kind, effect.ids, effect.output_fields, filter_expr=effect.filter_expr)
        if isinstance(effect, Gather):
            return [self._sync_effect(e, callbacks) for e in effect.effects]
        if isinstance(effect, GetGraph):
            return store.graph
        if isinstance(effect, LinkEntities):
            with filter_errors(effect.filter_expr):
                return store.entity_linker(effect.filter_expr).find(effect.query)
        if isinstance(effect, EntityNames):
            names = store.entity_names()
            return {i: names.get(i, "") for i in effect.ids}
        if isinstance(effect, ViewOf):
            with filter_errors(effect.filter_expr):
                return store.graph_view(effect.filter_expr, effect.graph)
        if isinstance(effect, Compute):
            return effect.fn(*effect.args)
        raise TypeError(f"unknown effect {effect!r}")

    async def _async_effect(self, effect: Effect, callbacks: Any) -> Any:
        store = self.store
        if isinstance(effect, Invoke):
            return await ainvoke_with_timeout(effect.runnable, effect.input, {"callbacks": callbacks}, effect.timeout)
        if isinstance(effect, Notify):
            logger.info("%s: %s", effect.name, effect.data.get("reason", effect.data))
            if callbacks is not None:
                await callbacks.on_custom_event(effect.name, effect.data, run_id=callbacks.parent_run_id)
            return None
        if isinstance(effect, Embed):
            return await store.embedding.aembed_documents(list(effect.texts))
        if isinstance(effect, Search):
            return await store.asearch(
                effect.kind,
                effect.vectors,
                effect.limit,
                filter_expr=effect.filter_expr,
                output_fields=effect.output_fields,
            )
        if isinstance(effect, Fetch):
            return await store.afetch(effect.kind, effect.ids, effect.output_fields, filter_expr=effect.filter_expr)
        if isinstance(effect, Gather):
            return list(await asyncio.gather(*(self._async_effect(e, callbacks) for e in effect.effects)))
        if isinstance(effect, (GetGraph, LinkEntities, EntityNames, ViewOf, Compute)):
            # building the graph or the linker reads Milvus: keep the event loop free
            return await asyncio.to_thread(self._sync_effect, effect, callbacks)
        raise TypeError(f"unknown effect {effect!r}")

    def _run(self, pipeline: Generator[Effect, Any, list[Document]], callbacks: Any) -> list[Document]:
        value: Any = None
        error: BaseException | None = None
        while True:
            try:
                effect = pipeline.throw(error) if error is not None else pipeline.send(value)
            except StopIteration as stop:
                return stop.value  # type: ignore[no-any-return]
            try:
                value, error = self._sync_effect(effect, callbacks), None
            except Exception as exc:
                value, error = None, exc

    async def _arun(self, pipeline: Generator[Effect, Any, list[Document]], callbacks: Any) -> list[Document]:
        value: Any = None
        error: BaseException | None = None
        while True:
            try:
                effect = pipeline.throw(error) if error is not None else pipeline.send(value)
            except StopIteration as stop:
                return stop.value  # type: ignore[no-any-return]
            try:
                value, error = await self._async_effect(effect, callbacks), None
            except Exception as exc:
                value, error = None, exc


class NaivePassageRetriever(_StoreRetriever):
    """Plain top-``k`` vector search over the graph store's passages.

    The baseline the graph retriever is compared with and can be swapped for: same
    passages, same embeddings, same ``Document`` format (``id`` is the passage id;
    metadata holds the user's metadata plus ``_passage_id`` and ``_score``).

    Example:
        .. code-block:: python

            naive = store.as_naive_retriever(k=2)
            docs = naive.invoke("What contribution did the son of Euler's teacher make?")
    """

    k: int = Field(default=4, ge=1)
    filter: str | dict[str, Any] | None = None

    def _pipeline(self, query: str, kwargs: dict[str, Any]) -> Generator[Effect, Any, list[Document]]:
        if not isinstance(query, str):
            raise TypeError(f"query must be a string, got {type(query).__name__}")
        unknown = set(kwargs) - {"k", "filter"} - _IGNORED_KWARGS
        if unknown:
            raise TypeError(f"unexpected retrieval argument(s): {', '.join(sorted(unknown))}")
        k = kwargs.get("k", self.k)
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f"k must be a positive integer, got {k!r}")
        return naive_pipeline(query, k, as_filter(kwargs.get("filter", self.filter)))


class MilvusGraphRetriever(_StoreRetriever):
    r"""Graph RAG retriever: entity and relation search in Milvus, graph expansion, rerank.

    The method of the Milvus "Graph RAG with Milvus" tutorial as a LangChain retriever:
    the query's entities and the query itself are searched in the entity and relation
    collections; the hits are expanded on the sparse graph by ``hops``; the candidate
    relations (at most ``max_candidates``, ordered by similarity to the query) go to a
    reranker (an LLM with the tutorial's one-shot chain-of-thought prompt when ``llm`` is
    given); the passages behind the chosen relations are returned as Documents.

    Setup:
        .. code-block:: bash

            pip install langchain-graphrag-milvus
            export OPENAI_API_KEY=...   # optional: without it, no LLM step runs

    Instantiate:
        .. code-block:: python

            from langchain_openai import ChatOpenAI, OpenAIEmbeddings
            from langchain_graphrag_milvus import MilvusGraphRetriever, MilvusGraphStore
            from langchain_graphrag_milvus.datasets import nano_dataset

            store = MilvusGraphStore(OpenAIEmbeddings(model="text-embedding-3-small"),
                                     uri="./graph.db")
            store.add_records(nano_dataset())
            retriever = MilvusGraphRetriever(store=store, llm=ChatOpenAI(model="gpt-4o"), k=2)

    Usage:
        .. code-block:: python

            docs = retriever.invoke("What contribution did the son of Euler's teacher make?")
            for doc in docs:
                print(doc.metadata["_relations"], doc.page_content[:60])
            retriever.invoke("...", k=3, hops=2)      # per-call overrides

    Use within a chain:
        .. code-block:: python

            from langchain_core.output_parsers import StrOutputParser
            from langchain_core.prompts import ChatPromptTemplate
            from langchain_core.runnables import RunnablePassthrough

            prompt = ChatPromptTemplate.from_template("Context:\n{context}\n\nQuestion: {question}")
            chain = (
                {"context": retriever | (lambda ds: "\n\n".join(d.page_content for d in ds)),
                 "question": RunnablePassthrough()}
                | prompt | ChatOpenAI() | StrOutputParser()
            )

    Async:
        .. code-block:: python

            docs = await retriever.ainvoke("What contribution did the son of Euler's teacher make?")

    Each Document has ``id`` = passage id and metadata: the passage's own metadata plus
    ``_passage_id``, ``_score`` (similarity of the best relation, or of the passage),
    ``_ranked_by`` (``"llm"``, ``"graph"`` or ``"passage_similarity"``), ``_relations`` and
    ``_relation_ids`` (the relations that led to it) and ``_hops``.

    When the graph yields fewer than ``k`` passages, the rest come from a passage
    similarity search, so exactly ``k`` Documents are returned when the store has them.
    """

    k: int = Field(default=4, ge=1, description="Number of passages returned.")
    llm: BaseChatModel | None = Field(
        default=None, description="Chat model for the default entity extractor and reranker."
    )
    entity_extractor: Runnable[str, list[str]] | None = Field(
        default=None, description="Runnable query → entity names; default: LLM if `llm`, else offline linker."
    )
    reranker: Runnable[dict[str, Any], list[int]] | None = Field(
        default=None, description="Runnable {question, relations, select} → positions; default: LLM if `llm`."
    )
    ranking: Literal["ppr", "similarity"] = Field(
        default="ppr",
        description="'ppr': chained PageRank walks over the graph (no LLM; the best measured); "
        "'similarity': the seed's expansion ordered by similarity to the query.",
    )
    entity_top_k: int = Field(default=3, ge=1, description="Entity hits per query entity.")
    relation_top_k: int = Field(default=3, ge=1, description="Relation hits for the query ('similarity').")
    hops: int = Field(default=1, ge=0, le=3, description="Expansion depth on the graph ('similarity'; seed: 1).")
    max_neighbors: int | None = Field(default=100, description="Relations taken per entity per hop.")
    max_frontier: int | None = Field(default=None, description="Entities expanded per hop (default: pool size).")
    decay: float = Field(default=0.8, gt=0, le=1, description="Graph score factor per hop ('similarity').")
    ppr_relation_seeds: int = Field(default=50, ge=1, description="Most similar relations seeding PageRank.")
    ppr_passage_seeds: int = Field(default=3, ge=1, description="Most similar passages seeding PageRank.")
    ppr_damping: float = Field(default=0.85, ge=0, lt=1, description="PageRank damping (follow-an-edge probability).")
    ppr_temperature: float = Field(default=0.02, gt=0, description="Softmax temperature of the similarity seeds.")
    ppr_chain: int = Field(
        default=1, ge=0, description="Picks after which a new walk continues from the picked passages' entities."
    )
    max_candidates: int = Field(default=50, ge=1, description="Candidate relations shown to the reranker.")
    rerank_select: int = Field(default=3, ge=1, description="Relations the LLM is asked to select.")
    rerank_timeout: float | None = Field(
        default=None,
        description="Seconds the reranker may take; then the no-LLM order is used (warning logged). None: no limit.",
    )
    extractor_timeout: float | None = Field(
        default=None,
        description="Seconds the entity extractor may take; then the offline linker is used. None: no limit.",
    )
    filter: str | dict[str, Any] | None = Field(
        default=None,
        description="Restricts passages *and the graph*: a Milvus expression over passage metadata "
        "(tenant == 'a') or a {field: value} dict (values escaped).",
    )

    _extractor: Runnable[str, list[str]] | None = PrivateAttr(default=None)
    _reranker: Runnable[dict[str, Any], list[int]] | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _resolve(self) -> MilvusGraphRetriever:
        self._defaults()  # validates the combination once, at construction
        self._extractor = self.entity_extractor or (
            create_llm_entity_extractor(self.llm) if self.llm is not None else None
        )
        self._reranker = self.reranker or (create_llm_reranker(self.llm) if self.llm is not None else None)
        return self

    def _defaults(self) -> RetrievalParams:
        return self._field_params(RetrievalParams)

    def _pipeline(
        self, query: str, kwargs: dict[str, Any], trace: dict[str, Any] | None = None
    ) -> Generator[Effect, Any, list[Document]]:
        params = self._call_params(self._defaults(), kwargs)
        return graph_pipeline(query, params, entity_extractor=self._extractor, reranker=self._reranker, trace=trace)

    def explain(self, query: str, **kwargs: Any) -> Subgraph:
        """The subgraph behind this query's answer: entities, relations hop by hop, passages, scores.

        Runs the retrieval once (same settings and per-call overrides as ``invoke``) and
        records what it did; see :func:`~langchain_graphrag_milvus.retrieval.explain.query_subgraph`
        for the extra arguments (``max_relations``, ``display_hops``).

        Example:
            .. code-block:: python

                sub = retriever.explain("What contribution did the son of Euler's teacher make?")
                open("answer.html", "w").write(sub.to_html())
                sub.write_graphml("answer.graphml")
        """
        from langchain_graphrag_milvus.retrieval.explain import query_subgraph

        return query_subgraph(self, query, **kwargs)

    async def aexplain(self, query: str, **kwargs: Any) -> Subgraph:
        """Async :meth:`explain` (the retrieval runs on the async path)."""
        from langchain_graphrag_milvus.retrieval.explain import query_subgraph_async

        return await query_subgraph_async(self, query, **kwargs)

    def _traced(self, query: str, kwargs: dict[str, Any]) -> tuple[list[Document], dict[str, Any]]:
        """Run the retrieval, returning its Documents and the pipeline's trace."""
        trace: dict[str, Any] = {}
        return self._run(self._pipeline(query, kwargs, trace), None), trace

    async def _atraced(self, query: str, kwargs: dict[str, Any]) -> tuple[list[Document], dict[str, Any]]:
        trace: dict[str, Any] = {}
        return await self._arun(self._pipeline(query, kwargs, trace), None), trace
