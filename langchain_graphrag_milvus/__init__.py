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

import importlib

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (mypy and grimp read the block below)

# The one list of public names: the imports below. Type checkers and the import linters read them
# as written; at run time each name is imported on first use (PEP 562, ``__getattr__`` below), so
# ``import langchain_graphrag_milvus`` and the CLI's ``--help`` do not pay for LangChain, pymilvus or
# numpy up front (about 0.04 s instead of 4 s). ``_exports()`` reads this block from the source:
# one ``from <module> import (<Name> as <Name>, ...)`` statement per module, nothing else in it.
# isort: off
if TYPE_CHECKING:
    from langchain_graphrag_milvus.agent_tool import (
        create_graph_retriever_tool as create_graph_retriever_tool,
    )
    from langchain_graphrag_milvus.answers import (
        create_cited_answer_chain as create_cited_answer_chain,
    )
    from langchain_graphrag_milvus.errors import (
        BackendFeatureError as BackendFeatureError,
        CollectionNotFoundError as CollectionNotFoundError,
        CorruptIndexError as CorruptIndexError,
        EmbeddingDimensionError as EmbeddingDimensionError,
        EmbeddingMismatchError as EmbeddingMismatchError,
        ForeignCollectionError as ForeignCollectionError,
        GraphPathError as GraphPathError,
        GraphRAGError as GraphRAGError,
        InvalidEmbeddingError as InvalidEmbeddingError,
        InvalidFilterError as InvalidFilterError,
        InvalidIdError as InvalidIdError,
        LitePathError as LitePathError,
        MalformedRecordError as MalformedRecordError,
        MalformedTripletError as MalformedTripletError,
        StaleIndexError as StaleIndexError,
        StoreConnectionError as StoreConnectionError,
        UnknownIdError as UnknownIdError,
    )
    from langchain_graphrag_milvus.existing_store import (
        ExistingCollectionGraphStore as ExistingCollectionGraphStore,
    )
    from langchain_graphrag_milvus.graph import (
        Expansion as Expansion,
        GraphIndex as GraphIndex,
    )
    from langchain_graphrag_milvus.ingest.load import (
        IngestReport as IngestReport,
    )
    from langchain_graphrag_milvus.ingest.offline import (
        create_offline_triplet_extractor as create_offline_triplet_extractor,
        OfflineExtractorUnavailableError as OfflineExtractorUnavailableError,
    )
    from langchain_graphrag_milvus.ingest.records import (
        PassageRecord as PassageRecord,
        Problem as Problem,
        Triplet as Triplet,
    )
    from langchain_graphrag_milvus.milvus.reads import (
        Hit as Hit,
    )
    from langchain_graphrag_milvus.path_retriever import (
        MilvusPathRetriever as MilvusPathRetriever,
        NoPathEvents as NoPathEvents,
    )
    from langchain_graphrag_milvus.retrieval.query_entities import (
        create_llm_entity_extractor as create_llm_entity_extractor,
        EntityLinker as EntityLinker,
    )
    from langchain_graphrag_milvus.retrieval.rankings import (
        PageRankWalk as PageRankWalk,
        Ranking as Ranking,
        SimilarityExpansion as SimilarityExpansion,
    )
    from langchain_graphrag_milvus.retrieval.rerank import (
        create_llm_reranker as create_llm_reranker,
    )
    from langchain_graphrag_milvus.retrievers import (
        MilvusGraphRetriever as MilvusGraphRetriever,
        NaivePassageRetriever as NaivePassageRetriever,
    )
    from langchain_graphrag_milvus.store import (
        MilvusGraphStore as MilvusGraphStore,
    )
    from langchain_graphrag_milvus.subgraph import (
        Subgraph as Subgraph,
    )
# isort: on


def _exports() -> dict[str, str]:
    """``{public name: module}``, read from the ``if TYPE_CHECKING:`` block of this file."""
    with open(__file__, encoding="utf-8") as source:
        block = source.read().split("\nif TYPE_CHECKING:\n", 1)[1].splitlines()
    table: dict[str, str] = {}
    module = ""
    for line in block:
        if not line.startswith("    "):
            break  # the end of the block
        words = line.replace("(", " ").replace(")", " ").replace(",", " ").split()
        if words[:1] == ["from"]:
            module, words = words[1], words[3:]
        for name in words[::3]:  # "Name as Name" (an explicit re-export for type checkers)
            table[name] = module
    return table


_EXPORTS = _exports()
__version__ = "0.1.0"
__all__ = [*_EXPORTS, "__version__"]


def __getattr__(name: str) -> object:
    """Import a public name on first use."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    # import-check: the targets are the TYPE_CHECKING imports above (grimp and lint-imports see them)
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """Public and already imported names."""
    return sorted(set(globals()) | set(_EXPORTS))
