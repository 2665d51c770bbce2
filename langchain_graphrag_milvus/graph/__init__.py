"""The sparse graph core: numpy and scipy only, no LangChain and no Milvus imports."""

from langchain_graphrag_milvus.graph.ids import KeyMap, StringIdMap
from langchain_graphrag_milvus.graph.index import Expansion, GraphIndex, GraphView, RemovedItems
from langchain_graphrag_milvus.graph.paths import (
    AggregatedIndex,
    PathResult,
    aggregated_index,
    edge_relations,
    find_paths,
    prune_paths,
)

__all__ = [
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
