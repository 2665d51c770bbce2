"""LangChain's standard retriever suite (langchain-tests, pinned), on Milvus Lite."""

from __future__ import annotations

import tempfile
from functools import cached_property
from typing import Any

from langchain_tests.integration_tests import RetrieversIntegrationTests

from langchain_graphrag_milvus import MilvusGraphRetriever, MilvusGraphStore, NaivePassageRetriever
from langchain_graphrag_milvus.datasets import NANO_QUESTION, nano_dataset

from .fakes import LexicalEmbeddings, SelectingChatModel

_STORE: MilvusGraphStore | None = None


def shared_store() -> MilvusGraphStore:
    global _STORE
    if _STORE is None:
        _STORE = MilvusGraphStore(
            LexicalEmbeddings(), uri=f"{tempfile.mkdtemp()}/standard.db", collection_prefix="standard"
        )
        _STORE.add_records(nano_dataset())
    return _STORE


class TestGraphRetrieverStandard(RetrieversIntegrationTests):
    @property
    def retriever_constructor(self) -> type[MilvusGraphRetriever]:
        return MilvusGraphRetriever

    @cached_property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {
            "store": shared_store(),
            "k": 2,
            "llm": SelectingChatModel(select=["Daniel Bernoulli was the son of Johann Bernoulli"]),
        }

    @property
    def retriever_query_example(self) -> str:
        return NANO_QUESTION


class TestGraphRetrieverNoLLMStandard(TestGraphRetrieverStandard):
    @cached_property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"store": shared_store(), "k": 2}


class TestNaiveRetrieverStandard(RetrieversIntegrationTests):
    @property
    def retriever_constructor(self) -> type[NaivePassageRetriever]:
        return NaivePassageRetriever

    @cached_property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"store": shared_store(), "k": 2}

    @property
    def retriever_query_example(self) -> str:
        return NANO_QUESTION
