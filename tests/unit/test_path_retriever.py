"""MilvusPathRetriever without Milvus: a missing path is an event, not a blank document."""

from __future__ import annotations


def test_no_path_is_an_event_not_a_blank_document() -> None:
    from langchain_graphrag_milvus.retrieval.path_pipeline import NO_PATH_EVENT, no_path_event

    event = no_path_event("why", ["A"])
    assert event.name == NO_PATH_EVENT and event.data == {"reason": "why", "entities": ["A"], "pairs": []}
