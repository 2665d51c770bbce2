"""Deprecated path: use :mod:`langchain_graphrag_milvus.ingest.offline` (moved in 0.2)."""

import warnings

from langchain_graphrag_milvus.ingest.offline import *  # noqa: F403
from langchain_graphrag_milvus.ingest.offline import __all__  # noqa: F401

warnings.warn(
    "langchain_graphrag_milvus.offline_extraction moved to "
    "langchain_graphrag_milvus.ingest.offline; the old path will be removed",
    DeprecationWarning,
    stacklevel=2,
)
