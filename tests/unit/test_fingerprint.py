"""The embedding fingerprint's encoding and comparison (no Milvus: the stores' checks are integration tests)."""

from __future__ import annotations

import base64

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.embeddings import DeterministicFakeEmbedding

from langchain_graphrag_milvus.errors import EmbeddingDimensionError, EmbeddingMismatchError, GraphRAGError
from langchain_graphrag_milvus.milvus.fingerprint import (
    PROBE_TEXT,
    TOLERANCE,
    decode,
    describe_model,
    encode,
    similarity,
)

from ..fakes import LexicalEmbeddings


def test_a_probe_vector_round_trips_compactly() -> None:
    vector = np.array(LexicalEmbeddings(384).embed_documents([PROBE_TEXT])[0])
    text = encode(vector)
    assert len(base64.b64decode(text)) == 384 * 2  # float16
    back = decode(text)
    assert back is not None and back.shape == (384,)
    assert similarity(back, vector) > 1 - 1e-6


def test_tiny_noise_passes_and_another_model_does_not() -> None:
    rng = np.random.default_rng(7)
    vector = rng.normal(size=384)
    vector /= np.linalg.norm(vector)
    recorded = decode(encode(vector))
    assert recorded is not None
    assert similarity(recorded, vector + rng.normal(scale=1e-6, size=384)) >= TOLERANCE  # another runtime
    assert similarity(recorded, vector * 3.0) >= TOLERANCE  # another scale (IP stores keep it): same direction
    rotated = np.roll(vector, 7)  # the same numbers in other places: another space
    assert similarity(recorded, rotated) < 0.5
    assert similarity(recorded, vector[:383]) == -1.0  # dimensions differ


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=1, max_size=64))
def test_encode_decode_keeps_the_direction(values: list[float]) -> None:
    vector = np.array(values)
    if not np.linalg.norm(vector) > 1e-3:
        with pytest.raises(ValueError):
            encode(np.zeros(len(values)))
        return
    back = decode(encode(vector))
    assert back is not None
    assert similarity(back, vector) > 0.999


@settings(max_examples=100, deadline=None)
@given(st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=!é", max_size=80))
def test_decode_of_any_text_is_a_unit_vector_or_none(text: str) -> None:
    back = decode(text)
    assert back is None or abs(float(np.linalg.norm(back)) - 1.0) < 1e-6


def test_unusable_vectors_have_no_fingerprint() -> None:
    for bad in ([], [0.0, 0.0], [float("nan"), 1.0], [float("inf")], [[1.0, 2.0]], ["a", "b"]):
        with pytest.raises(ValueError):
            encode(bad)
    assert decode(base64.b64encode(b"\x00\x00\x00\x00").decode()) is None  # zero vector
    assert decode("not base64 !") is None
    assert decode(base64.b64encode(b"\x01").decode()) is None  # odd byte count


def test_model_descriptions() -> None:
    class Named(LexicalEmbeddings):
        model = "text-embedding-3-small"

    assert describe_model(LexicalEmbeddings()) == "LexicalEmbeddings"
    assert describe_model(Named()) == "Named(text-embedding-3-small)"
    assert describe_model(DeterministicFakeEmbedding(size=4)) == "DeterministicFakeEmbedding"


def test_the_error_types() -> None:
    assert issubclass(EmbeddingMismatchError, GraphRAGError) and issubclass(EmbeddingMismatchError, ValueError)
    assert issubclass(EmbeddingDimensionError, EmbeddingMismatchError)  # a dimension is one way to differ
