"""MilvusPathRetriever: how the query's entities are connected, as linearised paths."""

from __future__ import annotations

from functools import partial
from typing import Any, cast

from langchain_core.documents import Document
from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import Runnable, RunnableConfig
from pydantic import Field, PrivateAttr, model_validator

from langchain_graphrag_milvus.retrieval.effects import Steps
from langchain_graphrag_milvus.retrieval.events import NoPathEvents
from langchain_graphrag_milvus.retrieval.params import PathParams, call_params, retriever_field
from langchain_graphrag_milvus.retrieval.path_pipeline import path_pipeline
from langchain_graphrag_milvus.retrieval.query_entities import create_llm_entity_extractor
from langchain_graphrag_milvus.retrievers import _StoreRetriever

__all__ = ["MilvusPathRetriever", "NoPathEvents"]


_setting = partial(retriever_field, PathParams)


class MilvusPathRetriever(_StoreRetriever):
    r"""Paths between the entities a query names, as pseudo-documents ("how is X related to Y?").

    The method of Elastic's "Navigating graphs for RAG" on the store's graph: for each
    pair of the query's entities, all shortest paths (a direct relation first, else a
    bidirectional search of at most ``max_hops`` per side and ``max_neighbors`` per
    node over the aggregated relation index); at most ``max_paths`` per pair kept by
    entity-diversity pruning; each kept path linearised as readable text — the entity
    chain, then the relations along it (at most ``relations_per_edge`` per edge, the most
    similar to the query by a filtered kNN search in Milvus), and with
    ``sentences=True`` the supporting sentence of each relation's source passage.

    Instantiate:
        .. code-block:: python

            from langchain_graphrag_milvus import MilvusGraphStore, MilvusPathRetriever
            from langchain_graphrag_milvus.datasets import nano_dataset

            store = MilvusGraphStore(embeddings, uri="./graph.db")
            store.add_records(nano_dataset())
            paths = MilvusPathRetriever(store=store, sentences=True)

    Usage:
        .. code-block:: python

            docs = paths.invoke("How is Leonhard Euler related to Daniel Bernoulli?")
            print(docs[0].page_content)
            # Leonhard Euler → Johann Bernoulli → Daniel Bernoulli
            # - Leonhard Euler was a student of Johann Bernoulli
            #   [...] Euler was born in Basel and was a student of Johann Bernoulli, ...
            # - Daniel Bernoulli was the son of Johann Bernoulli
            #   [...] The son of Johann Bernoulli, Daniel made major contributions to ...
            docs[0].metadata["_path"], docs[0].metadata["_hops"], docs[0].metadata["_passage_ids"]
            paths.invoke("...", entities=["Jakob Bernoulli", "Leonhard Euler"], max_hops=2)  # per call

    In a chain, next to the passage retriever:
        .. code-block:: python

            context = {"passages": graph_retriever, "paths": paths} | RunnableLambda(format_context)

    Entities come from ``entity_extractor`` (default: an LLM extractor if ``llm`` is
    given), else from the store's offline linker; or per call via ``entities=[...]``.
    A name matches an entity exactly (case- and variant-insensitive) or, failing that,
    its nearest entity vector if the similarity is at least ``entity_min_score``.

    Each Document's metadata: ``_path_found`` (True), ``_pair`` (the two query entities),
    ``_path`` (entity names along the path), ``_path_entity_ids``, ``_hops``,
    ``_score`` (``1 / rank``, in the returned order), ``_raw_score`` (mean over edges of the
    best relation's similarity to the query), ``_relations``/``_relation_ids`` (shown
    relations, in path order), ``_passage_ids``, ``_sources`` (with ``sentences``: where
    the quoted passages come from, ``"file, page N"``), ``_paths_between_pair`` (shortest
    paths found before pruning) and ``_truncated`` (a cap was hit). Pairs take turns —
    each pair's most similar path first, then the second ones — up to ``k`` Documents.

    When fewer than two entities are found, or no pair is connected within the caps, the
    result is an empty list: a chain gets no context rather than a blank one. The reason
    (e.g. ``"no path found (A – B: no path within 3 hops per side)"``), the entities used
    and per-pair details go to the logger ``langchain_graphrag_milvus`` (INFO) and to the
    run's callbacks as the custom event ``"graphrag_no_path"`` (also in
    ``astream_events``); :meth:`invoke_with_reason` returns it, and :class:`NoPathEvents`
    collects the events:

    .. code-block:: python

        events = NoPathEvents()
        docs = paths.invoke("How is Basel related to rockets?", config={"callbacks": [events]})
        if not docs:
            print(events.last["reason"])

    ``filter`` restricts the graph like :class:`MilvusGraphRetriever`'s: only relations
    supported by passages that pass it are searched, shown or cited.
    """

    _settings_class = PathParams

    k: int = _setting("k")
    max_paths: int = _setting("max_paths")
    max_hops: int = _setting("max_hops")
    max_neighbors: int | None = _setting("max_neighbors")
    max_frontier: int | None = _setting("max_frontier")
    max_entities: int = _setting("max_entities")
    relations_per_edge: int = _setting("relations_per_edge")
    sentences: bool = _setting("sentences")
    sentences_per_relation: int = _setting("sentences_per_relation")
    entity_min_score: float = _setting("entity_min_score")
    llm: BaseChatModel | None = Field(default=None, description="Chat model for the default entity extractor.")
    entity_extractor: Runnable[str, list[str]] | None = Field(
        default=None, description="Runnable query → entity names; default: LLM if `llm`, else offline linker."
    )
    filter: str | dict[str, Any] | None = _setting("filter")
    extractor_timeout: float | None = _setting("extractor_timeout")

    _extractor: Runnable[str, list[str]] | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _resolve(self) -> MilvusPathRetriever:
        self._defaults()  # validate once, at construction
        self._extractor = self.entity_extractor or (
            create_llm_entity_extractor(self.llm) if self.llm is not None else None
        )
        return self

    def _pipeline(self, query: str, kwargs: dict[str, Any]) -> Steps[list[Document]]:
        params = call_params(self._defaults(), kwargs)
        return path_pipeline(query, params, entity_extractor=self._extractor)

    def invoke_with_reason(
        self, query: str, config: RunnableConfig | None = None, **kwargs: Any
    ) -> tuple[list[Document], str | None]:
        """``invoke``, and why no path was returned (``None`` when there are paths).

        The reason is the ``"graphrag_no_path"`` event's (e.g. ``"need two entities in the graph;
        found 1 (Basel)"`` or ``"no path found (A – B: no path within 3 hops per side)"``).

        Example:
            .. code-block:: python

                docs, reason = paths.invoke_with_reason("How is Basel related to rockets?")
                if not docs:
                    print(reason)
        """
        events = NoPathEvents()
        run_config: dict[str, Any] = dict(config or {})
        callbacks = run_config.get("callbacks")
        if callbacks is None:
            run_config["callbacks"] = [events]
        elif isinstance(callbacks, list):
            run_config["callbacks"] = [*callbacks, events]
        else:  # a callback manager
            callbacks = callbacks.copy()
            callbacks.add_handler(events, inherit=True)
            run_config["callbacks"] = callbacks
        docs = self.invoke(query, config=cast("RunnableConfig", run_config), **kwargs)
        return docs, None if docs else (events.reason() or "no path found")
