"""Integrity of the write paths (issue 12, part A): escaping, identity, vectors, typed errors.

Every store-backed test runs on Milvus Lite and on the real server (``make_store``);
retrieval checks run sync and async (``retrieve``).
"""

from __future__ import annotations

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from langchain_graphrag_milvus import MilvusGraphStore
from langchain_graphrag_milvus.errors import (
    EmbeddingDimensionError,
    InvalidEmbeddingError,
    InvalidFilterError,
)
from langchain_graphrag_milvus.ingest.identity import check_id

HOSTILE_IDS = [
    "x'] or pk != '' or pk in ['z",
    'x"] or pk != "" or pk in ["z',
    "O'Brien report",
    "back\\slash\\",
    '\\"',
    "new\nline\r\ttab",
    "é日本🎉 [brackets] (parens) and or not",
    "e" * 512,
]


BAD_IDS = ["e" * 513, "é" * 257, "lone \ud800 surrogate", "", "   ", 1.5, ["x"]]


def test_check_id_accepts_any_valid_unicode_up_to_the_limit() -> None:
    for value in [*HOSTILE_IDS, "é" * 256, "\x00nul", 42]:
        assert check_id(value, "t") == str(value)


FAULTS = [
    ("NAN", InvalidEmbeddingError),
    ("INF", InvalidEmbeddingError),
    ("HUGE", InvalidEmbeddingError),
    ("ZERO", InvalidEmbeddingError),
    ("RAGGED", EmbeddingDimensionError),
]


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
