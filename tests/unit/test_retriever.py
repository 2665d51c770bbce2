"""The retrievers without Milvus: their public docstrings show usage (the store-backed half is in integration)."""

from __future__ import annotations

from langchain_graphrag_milvus import MilvusGraphRetriever, NaivePassageRetriever


def test_public_api_docstrings_show_usage() -> None:
    from langchain_graphrag_milvus import MilvusPathRetriever

    for obj in (MilvusGraphRetriever, NaivePassageRetriever, MilvusPathRetriever):
        assert "invoke(" in (obj.__doc__ or "")
