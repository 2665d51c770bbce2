"""The comparisons two benchmark scripts make between checkouts (issue 25): what they call "the same".

``profile_query_lite.py --compare`` counts Documents equal in id, text and every metadata value (a digest);
``bench_push_rounds.py --compare`` counts the walk fields that differ (arrays by value and dtype).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from langchain_core.documents import Document

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from bench_push_rounds import differing  # noqa: E402
from profile_query_lite import digest  # noqa: E402


def test_the_document_digest_sees_text_metadata_and_the_last_bit_of_a_score() -> None:
    doc = Document(id="p1", page_content="Euler taught.", metadata={"_raw_score": 0.1, "via": ["a"], "year": 1707})
    same = Document(id="p1", page_content="Euler taught.", metadata={"year": 1707, "via": ["a"], "_raw_score": 0.1})
    assert digest(doc) == digest(same)  # key order does not matter
    nudged = np.nextafter(0.1, 1.0)
    for other in (
        Document(id="p2", page_content=doc.page_content, metadata=doc.metadata),
        Document(id="p1", page_content="Euler taught!", metadata=doc.metadata),
        Document(id="p1", page_content=doc.page_content, metadata={**doc.metadata, "via": ["b"]}),
        Document(id="p1", page_content=doc.page_content, metadata={**doc.metadata, "_raw_score": float(nudged)}),
    ):
        assert digest(other) != digest(doc)


def test_walk_fields_differ_by_value_dtype_or_count() -> None:
    walk = (np.array([1, 2], np.int64), np.array([0.5, 0.25]), 1e-7, 3, True)
    assert differing([walk, walk], [walk, walk]) == 0
    assert differing([walk], [(np.array([1, 2], np.int32), *walk[1:])]) == 1
    assert differing([walk], [(walk[0], np.array([0.5, np.nextafter(0.25, 1.0)]), *walk[2:])]) == 1
    assert differing([walk], [(*walk[:2], 2e-7, 4, True)]) == 2
    assert differing([walk, walk], [walk]) == 1
