"""With the real local model (all-MiniLM-L6-v2): its embeddings (the store-backed half is in integration)."""

from __future__ import annotations

import math

import pytest

from langchain_graphrag_milvus.embeddings import local_embeddings_available

pytestmark = [
    pytest.mark.model,
    pytest.mark.skipif(not local_embeddings_available(), reason="needs the 'local' extra (make test installs it)"),
]


def test_minilm_embeddings(minilm) -> None:
    a, b, c = minilm.embed_documents(["Leonhard Euler", "Euler, the mathematician", "fluid dynamics"])
    assert len(a) == 384 and abs(math.sqrt(sum(x * x for x in a)) - 1) < 1e-4
    dot = lambda u, v: sum(x * y for x, y in zip(u, v))  # noqa: E731
    assert dot(a, b) > dot(a, c)
    assert minilm.embed_query("Leonhard Euler") == pytest.approx(a, abs=1e-5)
    assert minilm.embed_documents([]) == []
