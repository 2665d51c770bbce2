"""Integrity of the write paths (issue 12, part A) without Milvus: id checks and typed errors raised
before any connection. The store-backed half is in ``tests/integration/test_integrity_writes.py``.
"""

from __future__ import annotations

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from langchain_graphrag_milvus import MilvusGraphStore
from langchain_graphrag_milvus.errors import (
    InvalidFilterError,
)
from langchain_graphrag_milvus.ingest.identity import check_id

from ..cases import HOSTILE_IDS


def test_check_id_accepts_any_valid_unicode_up_to_the_limit() -> None:
    for value in [*HOSTILE_IDS, "é" * 256, "\x00nul", 42]:
        assert check_id(value, "t") == str(value)


@pytest.mark.parametrize("embedding", [None, "text-embedding-3-small", DeterministicFakeEmbedding])
def test_the_store_refuses_what_is_not_an_embeddings(embedding) -> None:
    with pytest.raises(TypeError, match="Embeddings"):
        MilvusGraphStore(embedding, uri="./never-created.db")  # type: ignore[arg-type]


def test_filter_values_that_are_not_valid_unicode_are_a_typed_error() -> None:
    from langchain_graphrag_milvus.milvus.expr import as_filter, in_list

    with pytest.raises(InvalidFilterError, match="Unicode"):
        as_filter({"tenant": "a\ud800"})
    with pytest.raises(InvalidFilterError):
        in_list("pk", ["ok", "\udfff"])
    assert in_list("pk", ["\x00", "\u2028", 'q"\\']) == 'pk in ["\x00", "\u2028", "q\\"\\\\"]'
