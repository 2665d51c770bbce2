"""Graph RAG on Milvus for LangChain.

Triplets (subject, predicate, object) become entity and relation collections in Milvus;
a query's entities and the query itself are searched there, expanded on a sparse graph,
reranked, and the passages behind the chosen relations come back as Documents.

Example:
    .. code-block:: python

        from langchain_graphrag_milvus import MilvusGraphRetriever, MilvusGraphStore
        from langchain_graphrag_milvus.datasets import nano_dataset

        store = MilvusGraphStore(embeddings, uri="./graph.db")
        store.add_records(nano_dataset())
        retriever = MilvusGraphRetriever(store=store, k=2)
        retriever.invoke("What contribution did the son of Euler's teacher make?")
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langchain_graphrag_milvus.agent_tool import create_graph_retriever_tool
    from langchain_graphrag_milvus.answers import create_cited_answer_chain
    from langchain_graphrag_milvus.errors import (
        CollectionNotFoundError,
        CorruptIndexError,
        EmbeddingDimensionError,
        ForeignCollectionError,
        GraphPathError,
        GraphRAGError,
        InvalidEmbeddingError,
        InvalidFilterError,
        InvalidIdError,
        LitePathError,
        MalformedRecordError,
        MalformedTripletError,
        StaleIndexError,
        StoreConnectionError,
        UnknownIdError,
    )
    from langchain_graphrag_milvus.existing_store import ExistingCollectionGraphStore
    from langchain_graphrag_milvus.graph import Expansion, GraphIndex
    from langchain_graphrag_milvus.ingest.load import IngestReport
    from langchain_graphrag_milvus.ingest.offline import (
        OfflineExtractorUnavailableError,
        create_offline_triplet_extractor,
    )
    from langchain_graphrag_milvus.ingest.records import PassageRecord, Problem, Triplet
    from langchain_graphrag_milvus.path_retriever import MilvusPathRetriever, NoPathEvents
    from langchain_graphrag_milvus.retrieval.query_entities import EntityLinker, create_llm_entity_extractor
    from langchain_graphrag_milvus.retrieval.rerank import create_llm_reranker
    from langchain_graphrag_milvus.retrievers import MilvusGraphRetriever, NaivePassageRetriever
    from langchain_graphrag_milvus.store import Hit, MilvusGraphStore
    from langchain_graphrag_milvus.subgraph import Subgraph

# Public names are imported on first use (PEP 562), so ``import langchain_graphrag_milvus``
# and the CLI's ``--help`` do not pay for LangChain, pymilvus or numpy up front.
# A new public name goes in ``__all__``, in ``_LAZY`` and in the TYPE_CHECKING imports above.
_LAZY: dict[str, str] = {
    "CollectionNotFoundError": "errors",
    "EmbeddingDimensionError": "errors",
    "GraphRAGError": "errors",
    "GraphPathError": "errors",
    "ForeignCollectionError": "errors",
    "InvalidFilterError": "errors",
    "MalformedRecordError": "errors",
    "MalformedTripletError": "errors",
    "StaleIndexError": "errors",
    "StoreConnectionError": "errors",
    "UnknownIdError": "errors",
    "EntityLinker": "retrieval.query_entities",
    "create_llm_entity_extractor": "retrieval.query_entities",
    "Expansion": "graph",
    "GraphIndex": "graph",
    "IngestReport": "ingest.load",
    "MilvusPathRetriever": "path_retriever",
    "PassageRecord": "ingest.records",
    "Problem": "ingest.records",
    "Triplet": "ingest.records",
    "create_llm_reranker": "retrieval.rerank",
    "MilvusGraphRetriever": "retrievers",
    "NaivePassageRetriever": "retrievers",
    "Hit": "milvus.reads",
    "MilvusGraphStore": "store",
    "InvalidIdError": "errors",
    "InvalidEmbeddingError": "errors",
    "LitePathError": "errors",
    "CorruptIndexError": "errors",
    "OfflineExtractorUnavailableError": "ingest.offline",
    "create_offline_triplet_extractor": "ingest.offline",
    "Subgraph": "subgraph",
    "create_graph_retriever_tool": "agent_tool",
    "ExistingCollectionGraphStore": "existing_store",
    "NoPathEvents": "path_retriever",
    "create_cited_answer_chain": "answers",
}


def __getattr__(name: str) -> Any:
    """Import a public name on first use."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)  # import-check: targets in _LAZY
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """Public and already imported names."""
    return sorted(set(globals()) | set(_LAZY))


__version__ = "0.1.0"

__all__ = [
    "MilvusGraphRetriever",
    "NaivePassageRetriever",
    "MilvusPathRetriever",
    "MilvusGraphStore",
    "GraphIndex",
    "Expansion",
    "IngestReport",
    "PassageRecord",
    "Problem",
    "Triplet",
    "Hit",
    "EntityLinker",
    "create_llm_entity_extractor",
    "create_llm_reranker",
    "GraphRAGError",
    "MalformedRecordError",
    "MalformedTripletError",
    "CollectionNotFoundError",
    "EmbeddingDimensionError",
    "UnknownIdError",
    "InvalidFilterError",
    "StoreConnectionError",
    "StaleIndexError",
    "InvalidIdError",
    "InvalidEmbeddingError",
    "LitePathError",
    "CorruptIndexError",
    "GraphPathError",
    "ForeignCollectionError",
    "OfflineExtractorUnavailableError",
    "create_offline_triplet_extractor",
    "Subgraph",
    "create_graph_retriever_tool",
    "ExistingCollectionGraphStore",
    "NoPathEvents",
    "create_cited_answer_chain",
    "__version__",
]
