"""Ingestion into Milvus Lite: idempotence, normalisation, reports, bad input, rebuild."""

from __future__ import annotations

import numpy as np
import pytest
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding

from langchain_graphrag_milvus import (
    CollectionNotFoundError,
    EmbeddingDimensionError,
    ForeignCollectionError,
    MalformedRecordError,
    MalformedTripletError,
    MilvusGraphRetriever,
)
from langchain_graphrag_milvus.datasets import nano_dataset
from langchain_graphrag_milvus.milvus.fingerprint import PROBE_TEXT
from langchain_graphrag_milvus.text.names import entity_id

from ..conftest import DATA_DIR
from ..graph_checks import graph_signature


class SpyEmbedding(DeterministicFakeEmbedding):
    texts: list[str] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.texts.extend(texts)
        return super().embed_documents(texts)


def test_nano_ingest_twice_adds_nothing(make_store) -> None:
    emb = SpyEmbedding(size=16, texts=[])
    store = make_store(emb)
    first = store.add_records(nano_dataset())
    counts = store.counts()
    assert counts == {"entities": first.entities_added, "relations": 22, "passages": 4}
    assert first.passages_added == 4 and first.triplets_seen == 22 and first.triplets_skipped == 0
    # every unique text embedded once, in one pass (first, the fingerprint's probe: once per store object)
    assert emb.texts[0] == PROBE_TEXT
    assert len(emb.texts) == len(set(emb.texts)) == 1 + 4 + counts["entities"] + counts["relations"]
    emb.texts.clear()
    second = store.add_records(nano_dataset())
    assert store.counts() == counts
    assert second.passages_unchanged == 4 and second.entities_added == second.relations_added == 0
    assert emb.texts == [] and second.texts_embedded == 0


def test_entity_variants_are_one_node(make_store) -> None:
    store = make_store()
    store.add_records(nano_dataset())
    names = store.entity_names()
    euler = [n for n in names.values() if n.casefold() == "leonhard euler"]
    assert euler == ["Leonhard Euler"]  # "leonhard Euler" merged into the first display form
    graph = store.graph
    idx = graph.entities.lookup([int(entity_id("leonhard Euler"), 16)])[0]
    assert graph.entity_degree()[idx] == 3  # family, Basel, student of Johann


def test_relation_rows_carry_the_graph_and_rebuild_matches(make_store) -> None:
    store = make_store()
    store.add_records(nano_dataset()[:2])
    _ = store.graph  # loaded, so the next ingest updates it incrementally
    store.add_records(nano_dataset())
    incremental = graph_signature(store.graph)
    rebuilt = graph_signature(store.rebuild_graph())
    assert incremental == rebuilt and len(rebuilt) == 22
    assert store.fetch("relations", list(store.entity_names())[:3]) == {}  # entity ids are not relation ids
    # the relation text is the triplet as written (the seed's " ".join(triplet)), cleaned
    rel = store.client.query(
        store.collection_name("relations"),
        filter='text == "leonhard Euler was born in Basel"',
        output_fields=["subject_id", "object_id", "passage_ids", "predicate"],
    )[0]
    assert rel["subject_id"] == entity_id("Leonhard Euler") and rel["object_id"] == entity_id("Basel")
    assert rel["predicate"] == "was born in" and len(rel["passage_ids"]) == 1


def test_shared_relation_gains_passages_across_ingests(make_store) -> None:
    store = make_store()
    store.add_records(
        [{"id": "p1", "passage": "Basel is in Switzerland.", "triplets": [["Basel", "is in", "Switzerland"]]}]
    )
    _ = store.graph
    report = store.add_records(
        [{"id": "p2", "passage": "Basel, Switzerland.", "triplets": [["basel", "IS IN", "Switzerland"]]}]
    )
    assert report.relations_added == 0 and report.relations_linked == 1
    assert store.counts() == {"entities": 2, "relations": 1, "passages": 2}
    (row,) = store.iterate("relations", ("passage_ids",))
    assert sorted(row["passage_ids"]) == ["p1", "p2"]
    assert sorted(store.graph.passages.ids) == ["p1", "p2"]
    assert graph_signature(store.graph) == graph_signature(store.rebuild_graph())


def test_documents_keep_metadata_and_ids(make_store) -> None:
    store = make_store()
    docs = [
        Document(
            id="doc-1",
            page_content="Euler was born in Basel.",
            metadata={
                "source": "wiki",
                "year": 1707,
                "tags": ["math"],
                "triplets": [["Euler", "was born in", "Basel"]],
            },
        ),
        Document(page_content="No id here.", metadata={"triplets": [["Here", "has", "no id"]]}),
    ]
    report = store.add_documents(docs)
    assert report.passages_added == 2
    retriever = MilvusGraphRetriever(store=store, k=2)
    got = {d.id: d for d in retriever.invoke("Where was Euler born?")}
    assert "doc-1" in got
    meta = got["doc-1"].metadata
    assert meta["source"] == "wiki" and meta["year"] == 1707 and meta["tags"] == ["math"]
    assert "triplets" not in meta and "doc_hash" not in meta
    assert store.add_documents(docs).passages_unchanged == 2  # the id-less one got a stable id


def test_malformed_input_is_counted_or_refused(make_store) -> None:
    store = make_store()
    records = [
        {"id": "good", "passage": "A b c.", "triplets": [["A", "b", "C"], ["A", "b"], ["A", "", "C"], ["A", 1, "C"]]},
        {"id": "no-text", "triplets": [["X", "y", "Z"]]},
        {"id": "good", "passage": "Duplicate id.", "triplets": []},
    ]
    report = store.add_records(records)
    assert (report.passages_added, report.records_skipped) == (1, 2)
    assert (report.triplets_seen, report.triplets_skipped) == (4, 3)
    reasons = [str(p) for p in report.problems]
    assert any("'good', triplet 1: wrong arity" in r for r in reasons)
    assert any("no-text" in r and "text is missing" in r for r in reasons)
    assert any("duplicate passage id" in r for r in reasons)
    assert store.counts()["relations"] == 1

    strict_store = make_store()
    with pytest.raises(MalformedTripletError, match="record 'good', triplet 1"):
        strict_store.add_records(records, strict=True)
    assert not strict_store.exists()  # strict validates everything before writing anything
    with pytest.raises(MalformedRecordError, match="no-text"):
        strict_store.add_records(records[1:], strict=True)


def test_progress_bar_only_when_asked_or_on_a_terminal(make_store, capsys) -> None:
    store = make_store()
    store.add_records(nano_dataset())
    assert capsys.readouterr().err == ""  # pytest's stderr is not a terminal
    store.add_records(nano_dataset(), show_progress=True)
    assert "Ingesting" in capsys.readouterr().err


def test_reading_before_ingesting_is_a_clear_error(make_store) -> None:
    store = make_store()
    with pytest.raises(CollectionNotFoundError, match="ingest data first"):
        MilvusGraphRetriever(store=store).invoke("anything")
    with pytest.raises(CollectionNotFoundError):
        store.as_naive_retriever().invoke("anything")


def test_embedding_dimension_mismatch(make_store, tmp_path) -> None:
    store = make_store(DeterministicFakeEmbedding(size=16), prefix="dims")
    store.add_records(nano_dataset()[:1])
    other = make_store(DeterministicFakeEmbedding(size=32), prefix="dims")
    with pytest.raises(EmbeddingDimensionError, match="16-dimensional.*gives 32"):
        other.add_records(nano_dataset()[1:2])


def test_foreign_collection_with_same_name_is_refused(make_store) -> None:
    store = make_store(prefix="foreign")
    store.client.create_collection("foreign_entities", dimension=16)
    with pytest.raises(ForeignCollectionError, match="not created by langchain-graphrag-milvus"):
        store.add_records(nano_dataset()[:1])
    with pytest.raises(ForeignCollectionError, match="foreign_entities"):
        store.drop()  # nor dropped
    assert store.client.has_collection("foreign_entities")
    store.client.drop_collection("foreign_entities")  # its owner's clean-up


def test_bad_constructor_arguments(make_store) -> None:
    with pytest.raises(ValueError, match="metric_type"):
        make_store(index_params={"index_type": "FLAT", "metric_type": "L2"})
    with pytest.raises(Exception, match="field name"):
        make_store(prefix="bad prefix; drop")


@pytest.mark.slow
def test_musique_jsonl_loads_and_counts_malformed(make_store) -> None:
    store = make_store(DeterministicFakeEmbedding(size=8))
    report = store.add_jsonl(DATA_DIR / "passages.jsonl")
    assert report.passages_added == 1890
    assert report.triplets_seen == 17_419 and report.triplets_skipped == 185
    assert store.counts()["passages"] == 1890
    graph = store.graph
    assert graph.n_relations == store.counts()["relations"]
    assert np.all(np.diff(graph.ent_rel.indptr) >= 0)


class CallSpy(DeterministicFakeEmbedding):
    calls: list[list[str]] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        return super().embed_documents(texts)


def test_texts_go_to_the_model_longest_first_each_once(make_store) -> None:
    """Length-bucketed calls: the batch's unique texts sorted by length across its calls, no text twice."""
    emb = CallSpy(size=16, calls=[])
    store = make_store(emb, batch_size=8)
    report = store.add_records(nano_dataset())
    calls = [c for c in emb.calls if c != [PROBE_TEXT]]
    texts = [t for c in calls for t in c]
    counts = store.counts()
    assert len(texts) == len(set(texts)) == report.texts_embedded == 4 + counts["entities"] + counts["relations"]
    assert [len(t) for t in texts] == sorted((len(t) for t in texts), reverse=True)
    assert all(len(c) <= 8 for c in calls) and len(calls) == -(-len(texts) // 8)
    passages = {r["text"] for r in store.reads.iterate("passages", ("text",))}
    assert set(texts[:4]) == passages  # the passages share no call with the short names and relation texts
