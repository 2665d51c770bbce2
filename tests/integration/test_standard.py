"""LangChain's standard retriever suite (langchain-tests, pinned), on Milvus Lite and a server."""

from __future__ import annotations

import tempfile
import uuid
from typing import Any

import pytest
from langchain_tests.integration_tests import RetrieversIntegrationTests

from langchain_graphrag_milvus import MilvusGraphRetriever, MilvusGraphStore, MilvusPathRetriever, NaivePassageRetriever
from langchain_graphrag_milvus.datasets import NANO_QUESTION, nano_dataset

from ..fakes import LexicalEmbeddings, SelectingChatModel

_STORES: dict[str, MilvusGraphStore] = {}
_URIS: dict[str, str] = {}


def shared_store(backend: str) -> MilvusGraphStore:
    if backend not in _STORES:
        uri = _URIS.get(backend) or f"{tempfile.mkdtemp()}/standard.db"
        store = MilvusGraphStore(LexicalEmbeddings(), uri=uri, collection_prefix=f"standard{uuid.uuid4().hex[:8]}")
        store.add_records(nano_dataset())
        _STORES[backend] = store
    return _STORES[backend]


@pytest.fixture(scope="module", autouse=True)
def _cleanup():
    yield
    for backend, store in _STORES.items():
        if backend == "server":
            store.drop()
        store.close()
    _STORES.clear()


class _Base(RetrieversIntegrationTests):
    backend = "lite"

    @pytest.fixture(autouse=True)
    def _backend(self, request: pytest.FixtureRequest) -> None:
        if self.backend == "server":
            _URIS["server"] = request.getfixturevalue("milvus_server")

    @property
    def retriever_query_example(self) -> str:
        return NANO_QUESTION


class TestGraphRetrieverStandard(_Base):
    @property
    def retriever_constructor(self) -> type[MilvusGraphRetriever]:
        return MilvusGraphRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {
            "store": shared_store(self.backend),
            "k": 2,
            "llm": SelectingChatModel(select=["Daniel Bernoulli was the son of"]),
        }


class TestGraphRetrieverNoLLMStandard(TestGraphRetrieverStandard):
    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"store": shared_store(self.backend), "k": 2}


class TestNaiveRetrieverStandard(_Base):
    @property
    def retriever_constructor(self) -> type[NaivePassageRetriever]:
        return NaivePassageRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"store": shared_store(self.backend), "k": 2}


class TestPathRetrieverStandard(_Base):
    """Three entities, three connected pairs: ``k`` caps the paths returned."""

    @property
    def retriever_constructor(self) -> type[MilvusPathRetriever]:
        return MilvusPathRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"store": shared_store(self.backend), "k": 2}

    @property
    def retriever_query_example(self) -> str:
        return "How are Jakob Bernoulli, Leonhard Euler and Daniel Bernoulli related?"


@pytest.mark.server
class TestPathRetrieverStandardServer(TestPathRetrieverStandard):
    backend = "server"


@pytest.mark.server
class TestGraphRetrieverStandardServer(TestGraphRetrieverStandard):
    backend = "server"


@pytest.mark.server
class TestGraphRetrieverNoLLMStandardServer(TestGraphRetrieverNoLLMStandard):
    backend = "server"


@pytest.mark.server
class TestNaiveRetrieverStandardServer(TestNaiveRetrieverStandard):
    backend = "server"
