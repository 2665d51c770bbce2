"""The public API is locked, and the graph core stays free of LangChain and Milvus."""

from __future__ import annotations

import subprocess
import sys

import langchain_graphrag_milvus
import langchain_graphrag_milvus.graph


def test_public_api_is_locked() -> None:
    assert sorted(langchain_graphrag_milvus.__all__) == sorted(
        [
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
    )
    for name in langchain_graphrag_milvus.__all__:
        assert getattr(langchain_graphrag_milvus, name) is not None


def test_graph_api_is_locked() -> None:
    assert sorted(langchain_graphrag_milvus.graph.__all__) == sorted(
        [
            "GraphIndex",
            "GraphView",
            "RemovedItems",
            "Expansion",
            "KeyMap",
            "StringIdMap",
            "AggregatedIndex",
            "PathResult",
            "aggregated_index",
            "find_paths",
            "edge_relations",
            "prune_paths",
        ]
    )


def test_graph_core_imports_neither_langchain_nor_milvus() -> None:
    # a bare package module stands in for langchain_graphrag_milvus/__init__ (which imports LangChain)
    code = (
        "import sys, types\n"
        "pkg = types.ModuleType('langchain_graphrag_milvus')\n"
        "pkg.__path__ = ['langchain_graphrag_milvus']\n"
        "sys.modules['langchain_graphrag_milvus'] = pkg\n"
        "import langchain_graphrag_milvus.graph, langchain_graphrag_milvus.graph.reference\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('langchain_core', 'langchain', 'pymilvus',"
        " 'langchain_milvus'))\n"
        "print(bad)\n"
    )
    from pathlib import Path

    root = Path(langchain_graphrag_milvus.__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
