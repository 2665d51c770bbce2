from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding, Embeddings

from langchain_graphrag_milvus import MilvusGraphStore
from langchain_graphrag_milvus.datasets import nano_dataset

from .fakes import LexicalEmbeddings

DATA_DIR = Path(__file__).resolve().parents[2] / "shared" / "data" / "musique100"


@pytest.fixture
def make_store(tmp_path: Path) -> Iterator[Callable[..., MilvusGraphStore]]:
    """Factory of stores on a fresh Milvus Lite database in a temporary directory."""
    made: list[MilvusGraphStore] = []

    def factory(
        embedding: Embeddings | None = None, *, prefix: str | None = None, uri: str | None = None, **kwargs
    ) -> MilvusGraphStore:
        store = MilvusGraphStore(
            embedding or DeterministicFakeEmbedding(size=16),
            uri=uri or str(tmp_path / "milvus.db"),
            collection_prefix=prefix or f"t{uuid.uuid4().hex[:8]}",
            **kwargs,
        )
        made.append(store)
        return store

    yield factory
    for store in made:
        store.close()


@pytest.fixture(scope="module")
def nano_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MilvusGraphStore]:
    """The seed's nano dataset ingested once per module with lexical fake embeddings."""
    store = MilvusGraphStore(
        LexicalEmbeddings(), uri=str(tmp_path_factory.mktemp("nano") / "milvus.db"), collection_prefix="nano"
    )
    store.add_records(nano_dataset())
    yield store
    store.close()


@pytest.fixture(params=["sync", "async"])
def retrieve(request: pytest.FixtureRequest) -> Callable:
    """Runs a retriever through invoke or ainvoke: each test using it runs both ways."""
    mode = request.param

    async def run(retriever, query: str, **kwargs):
        if mode == "sync":
            return retriever.invoke(query, **kwargs)
        return await retriever.ainvoke(query, **kwargs)

    run.mode = mode  # type: ignore[attr-defined]
    return run
