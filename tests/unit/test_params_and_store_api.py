"""Settings live in one place (retrieval/params.py) and the store is reached through a Protocol."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding
from pydantic import ValidationError

from langchain_graphrag_milvus import MilvusGraphRetriever, MilvusPathRetriever, NaivePassageRetriever
from langchain_graphrag_milvus.errors import InvalidFilterError
from langchain_graphrag_milvus.retrieval.params import NaiveParams, PathParams, RetrievalParams, call_params
from langchain_graphrag_milvus.retrieval.store_api import STORE_MEMBERS, check_store


class ReadsOnly:
    """An object with the reads retrieval needs; its graph property must never run during validation."""

    def __init__(self) -> None:
        self.embedding = DeterministicFakeEmbedding(size=8)

    @property
    def graph(self) -> Any:
        raise AssertionError("validating a store must not build its graph")

    def search(self, *a: Any, **k: Any) -> Any: ...
    async def asearch(self, *a: Any, **k: Any) -> Any: ...
    def fetch(self, *a: Any, **k: Any) -> Any: ...
    async def afetch(self, *a: Any, **k: Any) -> Any: ...
    def iterate(self, *a: Any, **k: Any) -> Any: ...
    def entity_names(self) -> Any: ...
    def graph_view(self, *a: Any, **k: Any) -> Any: ...
    def entity_linker(self, *a: Any, **k: Any) -> Any: ...


RETRIEVERS = [
    (MilvusGraphRetriever, RetrievalParams),
    (MilvusPathRetriever, PathParams),
    (NaivePassageRetriever, NaiveParams),
]


def test_a_store_is_checked_by_its_members_without_running_them() -> None:
    store = ReadsOnly()
    assert check_store(store) is store
    retriever = MilvusGraphRetriever(store=store, k=3)
    assert retriever.store is store
    with pytest.raises(ValidationError, match="store must be a MilvusGraphStore.*got str without embedding"):
        MilvusGraphRetriever(store="graph.db")
    lacking = type("Lacking", (), {n: None for n in STORE_MEMBERS if n != "entity_linker"})()
    with pytest.raises(TypeError, match="without entity_linker$"):
        check_store(lacking)


@pytest.mark.parametrize(("retriever_cls", "params_cls"), RETRIEVERS)
def test_retriever_fields_derive_from_the_params(retriever_cls: Any, params_cls: Any) -> None:
    fields = retriever_cls.model_fields
    for f in dataclasses.fields(params_cls):
        if f.name == "entities":
            continue  # per call only
        assert fields[f.name].default == f.default, f.name
        assert fields[f.name].description == f.metadata["description"], f.name
    # the retriever's defaults are the params' defaults, field for field
    built = retriever_cls(store=ReadsOnly())._defaults()
    assert built == params_cls()


def test_errors_at_construction_and_per_call_are_unchanged() -> None:
    store = ReadsOnly()
    with pytest.raises(ValidationError, match="greater than or equal to 1"):
        MilvusGraphRetriever(store=store, k=0)
    with pytest.raises(ValidationError, match="less than or equal to 3"):
        MilvusGraphRetriever(store=store, hops=4)
    with pytest.raises(ValidationError, match="less than or equal to 6"):
        MilvusPathRetriever(store=store, max_hops=7)
    with pytest.raises(ValidationError, match="max_neighbors must be a positive integer or None, got 0"):
        MilvusPathRetriever(store=store, max_neighbors=0)  # no pydantic bound: the params' rule, at construction
    MilvusGraphRetriever(store=store, max_neighbors=0)  # the graph retriever never bounded it
    defaults = RetrievalParams()
    for kwargs, message in [
        ({"k": 0}, "k must be a positive integer, got 0"),
        ({"k": True}, "k must be a positive integer, got True"),
        ({"hops": 4}, "hops must be 0, 1, 2 or 3, got 4"),
        ({"decay": 0}, r"decay must be in \(0, 1\], got 0"),
        ({"ppr_damping": 1.0}, r"ppr_damping must be in \[0, 1\), got 1.0"),
        ({"ppr_temperature": 0}, "ppr_temperature must be positive, got 0"),
        ({"ppr_chain": -1}, "ppr_chain must be a non-negative integer, got -1"),
        ({"ranking": "bm25"}, "ranking must be 'ppr' or 'similarity', got 'bm25'"),
        ({"rerank_timeout": 0}, "rerank_timeout must be a positive number of seconds or None, got 0"),
    ]:
        with pytest.raises(ValueError, match=f"^{message}$"):
            call_params(defaults, kwargs)
    path = PathParams()
    for kwargs, message in [
        ({"max_hops": 7}, "max_hops must be at most 6, got 7"),
        ({"max_entities": 9}, r"max_entities must be at most 8 \(28 pairs\), got 9"),
        ({"entity_min_score": 2}, r"entity_min_score must be in \[-1, 1\], got 2"),
        ({"sentences": "yes"}, "sentences must be True or False, got 'yes'"),
        ({"max_frontier": 0}, "max_frontier must be a positive integer or None, got 0"),
    ]:
        with pytest.raises(ValueError, match=f"^{message}$"):
            call_params(path, kwargs)
    with pytest.raises(TypeError, match="unexpected retrieval argument.*top_k"):
        call_params(defaults, {"top_k": 3})
    with pytest.raises(TypeError, match="entities must be a list of names"):
        call_params(defaults, {"entities": "Euler"})
    with pytest.raises(InvalidFilterError):
        call_params(defaults, {"filter": {"bad key": 1}})
    assert call_params(defaults, {"k": 2, "entities": ["a"], "verbose": True, "filter": {"t": "a"}}) == RetrievalParams(
        k=2, entities=("a",), filter='(t == "a")'
    )


def test_a_retriever_missing_a_setting_field_is_refused() -> None:
    with pytest.raises(TypeError, match="lacks the setting field"):

        class Partial(NaivePassageRetriever):
            _settings_class = RetrievalParams
