"""``supplement=``: spaCy's title links added to given and extracted triplets, on Lite and a server.

The real spaCy parser and the real store; the LLM extractor is a ``RunnableLambda`` (no
OpenAI here). Skipped without the ``offline`` extra for the named supplement.
"""

from __future__ import annotations

import pytest
from langchain_core.runnables import RunnableLambda

from langchain_graphrag_milvus import MilvusGraphRetriever
from langchain_graphrag_milvus.datasets import NANO_QUESTION, nano_dataset
from langchain_graphrag_milvus.ingest.records import Triplet
from langchain_graphrag_milvus.ingest.supplement import merge_supplement
from langchain_graphrag_milvus.text.names import entity_key

from ..fakes import LexicalEmbeddings


def _records() -> list[dict]:
    return [
        {"id": f"nano-{i}", "title": r["passage"].split(" (")[0], "text": r["passage"], "triplets": r["triplets"]}
        for i, r in enumerate(nano_dataset())
    ]


def _relations(store) -> set[tuple[str, str, str]]:
    names = store.entity_names()
    rows = store.iterate("relations", output_fields=("subject_id", "predicate", "object_id"))
    return {(names[r["subject_id"]], r["predicate"], names[r["object_id"]]) for r in rows}


def test_offline_links_added_to_given_triplets(make_store, tmp_path) -> None:
    pytest.importorskip("spacy", reason="the offline extra is not installed")
    plain = make_store(LexicalEmbeddings())
    plain.add_records(_records())
    store = make_store(LexicalEmbeddings(), supplement="offline_links", extraction_cache=tmp_path / "t.sqlite")
    report = store.add_records(_records())
    given, linked = _relations(plain), _relations(store)
    added = linked - given
    assert report.triplets_supplemented == len(added) > 0 and given < linked
    assert all(p == "mentions" for _, p, _ in added)
    pairs = {frozenset((entity_key(s), entity_key(o))) for s, _, o in given}
    assert all(frozenset((entity_key(s), entity_key(o))) not in pairs for s, _, o in added)  # only new connections
    assert ("Johann Bernoulli", "mentions", "Leibniz") in added  # given: only "Leibniz's ideas"
    again = store.add_records(_records())
    assert again.passages_unchanged == 4 and again.relations_added == 0 and again.triplets_supplemented == 0
    docs = MilvusGraphRetriever(store=store, k=2).invoke(NANO_QUESTION)
    assert len(docs) == 2


def test_supplement_after_an_extractor_and_a_failing_supplement_is_retried(make_store, tmp_path) -> None:
    llm = RunnableLambda(lambda text: {"triplets": [["Euler", "was born in", "Basel"]], "usage": {}})
    calls: list[str] = []

    def links(text: str) -> list[list[str]]:
        calls.append(text)
        if "Basel" in text and len(calls) == 1:
            raise RuntimeError("parser down")
        return [["Euler", "mentions", "Basel"], ["Euler", "mentions", "Riehen"]]

    store = make_store(LexicalEmbeddings(), extractor=llm, supplement=RunnableLambda(links))
    docs = [{"id": "e", "passage": "Euler was born in Basel and grew up in Riehen."}]
    first = store.add_records(docs)
    assert first.extraction_failures == 1 and first.triplets_supplemented == 0
    assert _relations(store) == {("Euler", "was born in", "Basel")}  # the passage is written with its own triplets
    second = store.add_records(docs)  # the failed supplement is retried (the passage was marked for it)
    assert second.passages_updated == 1 and second.triplets_supplemented == 1
    assert _relations(store) == {("Euler", "was born in", "Basel"), ("Euler", "mentions", "Riehen")}
    own = [Triplet("Euler", "was born in", "Basel")]
    assert merge_supplement(own, [Triplet("Euler", "mentions", "Basel")]) == own
