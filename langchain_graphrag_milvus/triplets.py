"""Deprecated path: use :mod:`langchain_graphrag_milvus.ingest.triplets` (moved in 0.2)."""

import warnings

from langchain_graphrag_milvus.ingest.triplets import *  # noqa: F403
from langchain_graphrag_milvus.ingest.triplets import __all__  # noqa: F401

warnings.warn(
    "langchain_graphrag_milvus.triplets moved to "
    "langchain_graphrag_milvus.ingest.triplets; the old path will be removed",
    DeprecationWarning,
    stacklevel=2,
)
