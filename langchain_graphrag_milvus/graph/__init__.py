"""The sparse graph core: numpy and scipy only, no LangChain and no Milvus imports."""

from langchain_graphrag_milvus.graph.ids import KeyMap, StringIdMap
from langchain_graphrag_milvus.graph.index import Expansion, GraphIndex, GraphView, RemovedItems

__all__ = ["GraphIndex", "GraphView", "RemovedItems", "Expansion", "KeyMap", "StringIdMap"]
