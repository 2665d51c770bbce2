"""LangChain retrievers over a graph store: thin shells around the pipelines of :mod:`.retrieval`.

Each retriever holds its settings as pydantic fields derived from :mod:`.retrieval.params`
(the single home of every default and rule), builds the per-call settings, and runs the
sans-IO pipeline with the executors of :mod:`.retrieval.executors` — blocking for
``invoke``, awaited for ``ainvoke``. The store is anything with the reads of
:class:`~langchain_graphrag_milvus.retrieval.store_api.RetrievalStore` (a
:class:`~langchain_graphrag_milvus.store.MilvusGraphStore`).
"""

from __future__ import annotations

import threading
import warnings
import weakref
from abc import abstractmethod
from collections.abc import Sequence
from functools import partial
from typing import Annotated, Any, ClassVar, Literal

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.language_models import BaseChatModel
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from pydantic import BaseModel, Field, PlainValidator, PrivateAttr, model_validator

from langchain_graphrag_milvus.errors import NoRelationsWarning
from langchain_graphrag_milvus.retrieval.defaults import TOOL_MAX_K
from langchain_graphrag_milvus.retrieval.documents import no_graph
from langchain_graphrag_milvus.retrieval.effects import Steps
from langchain_graphrag_milvus.retrieval.executors import run_async, run_sync
from langchain_graphrag_milvus.retrieval.graph_pipeline import graph_pipeline, naive_pipeline
from langchain_graphrag_milvus.retrieval.params import (
    NaiveParams,
    RetrievalParams,
    call_params,
    params_from_fields,
    retriever_field,
    setting_names,
)
from langchain_graphrag_milvus.retrieval.query_entities import create_llm_entity_extractor
from langchain_graphrag_milvus.retrieval.rankings import (
    FLAT_SETTINGS,
    Ranking,
    ranking_for_call,
    resolve_ranking,
    valid_ranking,
)
from langchain_graphrag_milvus.retrieval.rerank import create_llm_reranker
from langchain_graphrag_milvus.retrieval.store_api import RetrievalStore, check_store
from langchain_graphrag_milvus.subgraph import Subgraph

__all__ = ["MilvusGraphRetriever", "NaivePassageRetriever"]


def _valid_store(value: Any) -> RetrievalStore:
    try:
        return check_store(value)
    except TypeError as exc:  # pydantic reports ValueErrors as a ValidationError on the field
        raise ValueError(str(exc)) from None


#: The ``store`` field: any object with the reads retrieval needs (checked without running them).
StoreField = Annotated[RetrievalStore, PlainValidator(_valid_store)]


#: The ``ranking`` field: a ranking's name or a :class:`~.retrieval.rankings.Ranking` value.
RankingField = Annotated[Any, PlainValidator(valid_ranking)]

_warned_stores: weakref.WeakSet[Any] = weakref.WeakSet()
_warned_ids: set[int] = set()  # stores that cannot be weakly referenced
_warned_lock = threading.Lock()


def warn_if_no_graph(store: Any, docs: Sequence[Document]) -> None:
    """Warn once per store when ``docs`` were ranked by similarity only: the store has no relations.

    The warning is a :class:`~langchain_graphrag_milvus.errors.NoRelationsWarning`, once per
    store object, not per query or per retriever (a server builds a retriever per request):
    the first such retrieval warns, the others only mark their Documents (``_ranked_by``)
    and log the ``graphrag_no_graph`` event at INFO.
    """
    if not any(no_graph(d.metadata.get("_ranked_by")) for d in docs):
        return
    with _warned_lock:
        try:
            if store in _warned_stores:
                return
            _warned_stores.add(store)
        except TypeError:
            if id(store) in _warned_ids:
                return
            _warned_ids.add(id(store))
    warnings.warn(
        f"{store!r} has passages but no relations (or none in the filter's part): the graph retriever "
        "ranks by similarity only, like the naive retriever. Build the graph: ingest with an extractor "
        "(MilvusGraphStore(..., extractor='offline') or an LLM extractor), give triplets, or on the command "
        "line run ingest with --extractor offline.",
        NoRelationsWarning,
        stacklevel=4,
    )


class _StoreRetriever(BaseRetriever):
    """Runs a pipeline against the store, blocking (``invoke``) or with ``await`` (``ainvoke``).

    Subclasses name their settings class (``_settings_class``), declare one field per
    setting with :func:`~langchain_graphrag_milvus.retrieval.params.retriever_field`, and
    provide :meth:`_pipeline` (query and per-call kwargs → the pipeline generator).
    """

    store: StoreField
    _settings_class: ClassVar[type[Any]]

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        """Refuse a retriever whose fields miss a setting (the fields cannot drift from the params)."""
        super().__pydantic_init_subclass__(**kwargs)
        missing = setting_names(cls._settings_class) - set(cls.model_fields)
        if missing:
            raise TypeError(f"{cls.__name__} lacks the setting field(s) {', '.join(sorted(missing))}")

    def _defaults(self) -> Any:
        """The settings object filled from this retriever's fields (validates them)."""
        return params_from_fields(self._settings_class, self)

    @abstractmethod
    def _pipeline(self, query: str, kwargs: dict[str, Any]) -> Steps[list[Document]]:
        """The retrieval for this query and these per-call settings, as an effect generator."""

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        docs = run_sync(self._pipeline(query, kwargs), self.store, run_manager.get_child())
        warn_if_no_graph(self.store, docs)
        return docs

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        docs = await run_async(self._pipeline(query, kwargs), self.store, run_manager.get_child())
        warn_if_no_graph(self.store, docs)
        return docs

    def as_tool(
        self,
        args_schema: type[BaseModel] | None = None,
        *,
        name: str | None = None,
        description: str | None = None,
        arg_types: dict[str, type] | None = None,
        filter_fields: Sequence[str] | None = None,
        max_k: int = TOOL_MAX_K,
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
        from langchain_graphrag_milvus.retrieval.tool import DEFAULT_TOOL_DESCRIPTION, create_graph_retriever_tool

        return create_graph_retriever_tool(
            self,
            name=name or "graph_search",
            description=description or DEFAULT_TOOL_DESCRIPTION,
            filter_fields=filter_fields,
            max_k=max_k,
        )


class NaivePassageRetriever(_StoreRetriever):
    """Plain top-``k`` vector search over the graph store's passages.

    The baseline the graph retriever is compared with and can be swapped for: same
    passages, same embeddings, same ``Document`` format (``id`` is the passage id;
    metadata holds the user's metadata plus ``_passage_id``, ``_score`` and ``_similarity``:
    both the passage's similarity to the query; ``_ranked_by`` is ``"passage_similarity"``).
    ``min_score`` drops passages less similar than it (default: off).

    Example:
        .. code-block:: python

            naive = store.as_naive_retriever(k=2)
            docs = naive.invoke("What contribution did the son of Euler's teacher make?")
    """

    _settings_class = NaiveParams

    k: int = retriever_field(NaiveParams, "k")
    filter: str | dict[str, Any] | None = retriever_field(NaiveParams, "filter")
    min_score: float | None = retriever_field(NaiveParams, "min_score")

    def _pipeline(self, query: str, kwargs: dict[str, Any]) -> Steps[list[Document]]:
        if not isinstance(query, str):
            raise TypeError(f"query must be a string, got {type(query).__name__}")
        p = call_params(self._defaults(), kwargs)
        return naive_pipeline(query, p.k, p.filter, p.min_score)


_setting = partial(retriever_field, RetrievalParams)


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
    ``_passage_id``, ``_score`` (``1 / rank``: 1.0, 0.5, 0.333..., always in the returned
    order), ``_raw_score`` (the ranker's own value: PageRank mass, or the similarity of the
    relation or passage that ranked it), ``_similarity`` (the passage's similarity to the
    query, comparable across passages and with the naive retriever), ``_ranked_by``
    (``"llm"``, ``"graph"``, ``"passage_similarity"``, or
    ``"passage_similarity (no graph: the store has no relations)"``, or ``"... (no graph: no
    relations in the filter's part of the store)"``), ``_relations`` and
    ``_relation_ids`` (the relations that led to it) and ``_hops``. See
    :mod:`~langchain_graphrag_milvus.retrieval.documents`.

    When the graph yields fewer than ``k`` passages, the rest come from a passage
    similarity search, so exactly ``k`` Documents are returned when the store has them —
    unless ``min_score`` is set: then passages less similar to the query than it are left
    out, whatever ranked them (default: off; similarity scales differ between embedding
    models, so no value is safe for all). A store without relations makes the graph
    retriever a similarity search: it says so in ``_ranked_by`` and warns once per store
    (:class:`~langchain_graphrag_milvus.errors.NoRelationsWarning`).
    """

    _settings_class = RetrievalParams

    k: int = _setting("k")
    llm: BaseChatModel | None = Field(
        default=None, description="Chat model for the default entity extractor and reranker."
    )
    entity_extractor: Runnable[str, list[str]] | None = Field(
        default=None, description="Runnable query → entity names; default: LLM if `llm`, else offline linker."
    )
    reranker: Runnable[dict[str, Any], list[int]] | None = Field(
        default=None, description="Runnable {question, relations, select} → positions; default: LLM if `llm`."
    )
    ranking: RankingField = _setting("ranking")
    entity_top_k: int = _setting("entity_top_k")
    relation_top_k: int = _setting("relation_top_k")
    hops: int = _setting("hops")
    max_neighbors: int | None = _setting("max_neighbors")
    max_frontier: int | None = _setting("max_frontier")
    decay: float = _setting("decay")
    ppr_relation_seeds: int = _setting("ppr_relation_seeds")
    relation_scope: Literal["auto", "all", "entities"] = _setting("relation_scope")
    ppr_passage_seeds: int = _setting("ppr_passage_seeds")
    ppr_damping: float = _setting("ppr_damping")
    ppr_temperature: float = _setting("ppr_temperature")
    ppr_chain: int = _setting("ppr_chain")
    ppr_clause_seeds: bool = _setting("ppr_clause_seeds")
    ppr_pair_step: bool = _setting("ppr_pair_step")
    keep_dense: int = _setting("keep_dense")
    keep_dense_slack: int = _setting("keep_dense_slack")
    fuse_dense: float = _setting("fuse_dense")
    fuse_dense_c: float = _setting("fuse_dense_c")
    fuse_dense_unlinked: float = _setting("fuse_dense_unlinked")
    max_candidates: int = _setting("max_candidates")
    rerank_select: int = _setting("rerank_select")
    rerank_timeout: float | None = _setting("rerank_timeout")
    extractor_timeout: float | None = _setting("extractor_timeout")
    filter: str | dict[str, Any] | None = _setting("filter")
    min_score: float | None = _setting("min_score")

    _extractor: Runnable[str, list[str]] | None = PrivateAttr(default=None)
    _reranker: Runnable[dict[str, Any], list[int]] | None = PrivateAttr(default=None)

    @model_validator(mode="before")
    @classmethod
    def _ranking_value(cls, data: Any) -> Any:
        """A ranking value with the flat settings given beside it applied; the flat fields mirror it."""
        if isinstance(data, dict) and isinstance(data.get("ranking"), Ranking):
            value = resolve_ranking(data["ranking"], {n: v for n, v in data.items() if n in FLAT_SETTINGS})
            data = {**data, "ranking": value, **value.flat_settings()}
        return data

    @model_validator(mode="after")
    def _resolve(self) -> MilvusGraphRetriever:
        self._defaults()  # validates the combination once, at construction
        self._extractor = self.entity_extractor or (
            create_llm_entity_extractor(self.llm) if self.llm is not None else None
        )
        self._reranker = self.reranker or (create_llm_reranker(self.llm) if self.llm is not None else None)
        return self

    def _pipeline(
        self, query: str, kwargs: dict[str, Any], trace: dict[str, Any] | None = None
    ) -> Steps[list[Document]]:
        params = self._call_params(kwargs)
        return graph_pipeline(query, params, entity_extractor=self._extractor, reranker=self._reranker, trace=trace)

    def _call_params(self, kwargs: dict[str, Any]) -> RetrievalParams:
        """This call's settings: the fields, the per-call kwargs, ``ranking=`` as :func:`ranking_for_call` says."""
        defaults = self._defaults()
        if kwargs.get("ranking") is not None:
            own = {name: getattr(self, name) for name in FLAT_SETTINGS}
            kwargs = {**kwargs, "ranking": ranking_for_call(defaults.ranking, kwargs["ranking"], own)}
        return call_params(defaults, kwargs)  # type: ignore[no-any-return]

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
        return run_sync(self._pipeline(query, kwargs, trace), self.store), trace

    async def _atraced(self, query: str, kwargs: dict[str, Any]) -> tuple[list[Document], dict[str, Any]]:
        trace: dict[str, Any] = {}
        return await run_async(self._pipeline(query, kwargs, trace), self.store), trace
