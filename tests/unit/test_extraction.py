"""Triplet extraction from raw passages with a (fake) chat model: parsing, cache, retries, report."""

from __future__ import annotations

import pytest
from langchain_core.exceptions import OutputParserException
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from langchain_graphrag_milvus.ingest.triplets import create_llm_triplet_extractor, parse_extraction

from ..cases import FENCED, GOOD, TRUNCATED


def test_parse_extraction_is_tolerant() -> None:
    assert parse_extraction(GOOD) == [["Ada Lovelace", "was born in", "London"]]
    assert parse_extraction(FENCED) == [["Babbage", "designed", "the Analytical Engine"]]
    assert parse_extraction(TRUNCATED)[0] == ["Byron", "was the father of", "Ada Lovelace"]
    assert parse_extraction('[["x", "y", "z"]]') == [["x", "y", "z"]]
    with pytest.raises(OutputParserException):
        parse_extraction("I cannot help with that.")


def test_structured_output_is_used_when_the_model_supports_it() -> None:
    from langchain_core.runnables import RunnableLambda

    from langchain_graphrag_milvus.ingest.triplets import TripletExtraction

    class StructuredModel(FakeListChatModel):
        def with_structured_output(self, schema, *, include_raw=False, **kwargs):
            assert schema is TripletExtraction and include_raw
            parsed = TripletExtraction(named_entities=["A"], triples=[["A", "is", "B"]])
            return RunnableLambda(lambda _: {"raw": None, "parsed": parsed, "parsing_error": None})

    extractor = create_llm_triplet_extractor(StructuredModel(responses=["unused"]))
    assert extractor.invoke("A is B.")["triplets"] == [["A", "is", "B"]]
