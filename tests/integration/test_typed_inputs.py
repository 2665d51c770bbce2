"""Inputs that got raw errors or wrong results (issue 23), against a store on Lite and the server.

One bad JSONL line costs only that line; one NaN vector costs only the documents that need
it; a merge into a 70,000-character name writes nothing; NFC/NFD text and ``1``/``1.0``
metadata make one passage; two stores with different lambda extractors sharing one cache
file keep their own triplets.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.runnables import RunnableLambda

from langchain_graphrag_milvus.errors import InvalidEmbeddingError, MalformedRecordError

from ..fakes import LexicalEmbeddings


class PoisonEmbeddings(LexicalEmbeddings):
    """Lexical vectors, but NaN for any text containing POISON."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        vectors = super().embed_documents(texts)
        return [[math.nan] * len(v) if "POISON" in t else v for t, v in zip(texts, vectors)]


def _texts(store: Any, kind: str) -> list[str]:
    rows = store.client.query(
        store.collection_name(kind), filter='pk != ""', output_fields=["text"], limit=1000, consistency_level="Strong"
    )
    return sorted(str(r["text"]) for r in rows)


def test_add_jsonl_skips_and_names_bad_lines(make_store: Any, tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    lines = [
        b'{"id": "ok1", "text": "Euler was born in Basel.", "triplets": [["Euler", "born in", "Basel"]]}',
        b'{"id": "bad", "text": "caf\xe9"}',
        b"[" * 100_000 + b"]" * 100_000,
        b'{"id": ' + b"9" * 5_000 + b', "text": "big id"}',
        b'{"id": "empty", "text": ""}',
        b'{"id": "ok2", "text": "Bernoulli taught Euler.", "triplets": [["Bernoulli", "taught", "Euler"]]}',
    ]
    path.write_bytes(b"\n".join(lines) + b"\n")
    store = make_store(LexicalEmbeddings(32))
    report = store.add_jsonl(path)
    assert report.passages_added == 2 and report.records_skipped == 4
    named = {p.record_id for p in report.problems}
    assert {"line 2", "line 3", "line 4", "line 5"} <= named, named
    assert _texts(store, "passages") == ["Bernoulli taught Euler.", "Euler was born in Basel."]
    strict_store = make_store(LexicalEmbeddings(32))
    with pytest.raises(MalformedRecordError, match=r"records.jsonl:2: not valid UTF-8"):
        strict_store.add_jsonl(path, strict=True)
    path.write_bytes(lines[0] + b"\n" + lines[4] + b"\n")
    with pytest.raises(MalformedRecordError, match=r"records.jsonl:2: .*empty"):
        strict_store.add_jsonl(path, strict=True)


def test_one_nan_vector_skips_only_its_documents(make_store: Any) -> None:
    store = make_store(PoisonEmbeddings(32))
    docs = [
        Document(
            id="good", page_content="Euler was born in Basel.", metadata={"triplets": [["Euler", "born in", "Basel"]]}
        ),
        Document(id="bad-text", page_content="A POISON passage."),
        Document(
            id="bad-entity",
            page_content="Jakob met someone.",
            metadata={"triplets": [["Jakob", "met", "POISON Person"]]},
        ),
        Document(
            id="good2",
            page_content="Bernoulli taught Euler.",
            metadata={"triplets": [["Bernoulli", "taught", "Euler"]]},
        ),
    ]
    with pytest.raises(InvalidEmbeddingError, match="bad-text"):
        store.add_documents(docs, strict=True)
    assert not store.exists() or _texts(store, "passages") == []
    report = store.add_documents(docs)
    assert report.passages_added == 2 and report.records_skipped == 2, report
    assert {p.record_id for p in report.problems} == {"bad-text", "bad-entity"}
    assert _texts(store, "passages") == ["Bernoulli taught Euler.", "Euler was born in Basel."]
    assert "POISON Person" not in _texts(store, "entities") and "Jakob" not in _texts(store, "entities")


def test_merge_into_a_huge_name_writes_nothing(make_store: Any) -> None:
    store = make_store(LexicalEmbeddings(32))
    store.add_documents(
        [
            Document(
                id="p", page_content="Euler was born in Basel.", metadata={"triplets": [["Euler", "born in", "Basel"]]}
            )
        ]
    )
    before = (_texts(store, "entities"), _texts(store, "relations"), store.counts())
    with pytest.raises(MalformedRecordError, match="into: entity name"):
        store.merge_entities(["Euler"], into="E" * 70_000)
    assert (_texts(store, "entities"), _texts(store, "relations"), store.counts()) == before


def test_nfc_nfd_and_one_vs_one_point_zero_make_one_passage(make_store: Any) -> None:
    store = make_store(LexicalEmbeddings(32))
    first = store.add_documents([Document(page_content="Caf\u00e9 Z\u00fcrich opened.", metadata={"page": 1})])
    again = store.add_documents([Document(page_content="Cafe\u0301 Zu\u0308rich opened.", metadata={"page": 1.0})])
    assert first.passages_added == 1 and again.passages_added == 0 and again.passages_unchanged == 1
    assert store.counts()["passages"] == 1
    other = store.add_documents([Document(page_content="Caf\u00e9 Z\u00fcrich opened.", metadata={"page": 2})])
    assert other.passages_added == 1 and store.counts()["passages"] == 2


def test_stores_with_different_lambdas_sharing_a_cache_keep_their_triplets(make_store: Any, tmp_path: Path) -> None:
    cache = tmp_path / "shared_cache.sqlite"
    text = "Ada Lovelace worked with Charles Babbage."
    store_a = make_store(
        LexicalEmbeddings(32),
        extraction_cache=cache,
        extractor=RunnableLambda(lambda t: {"triplets": [["Ada Lovelace", "worked with", "Charles Babbage"]]}),
    )
    store_b = make_store(
        LexicalEmbeddings(32),
        extraction_cache=cache,
        extractor=RunnableLambda(lambda t: {"triplets": [["Babbage", "designed", "Analytical Engine"]]}),
    )
    store_a.add_documents([Document(id="p", page_content=text)])
    store_b.add_documents([Document(id="p", page_content=text)])
    assert _texts(store_a, "relations") == ["Ada Lovelace worked with Charles Babbage"]
    assert _texts(store_b, "relations") == ["Babbage designed Analytical Engine"]
