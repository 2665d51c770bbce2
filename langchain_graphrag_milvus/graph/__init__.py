"""The sparse graph core: numpy and scipy only, no LangChain and no Milvus imports."""

from langchain_graphrag_milvus.graph.ids import KeyMap, StringIdMap
from langchain_graphrag_milvus.graph.index import Expansion, GraphIndex, GraphView

__all__ = ["GraphIndex", "GraphView", "Expansion", "KeyMap", "StringIdMap"]
