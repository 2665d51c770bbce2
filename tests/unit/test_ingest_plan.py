"""The pure plan of an ingest chunk (:mod:`langchain_graphrag_milvus.ingest.plan`): no Milvus."""

from __future__ import annotations

import numpy as np
import pytest

from langchain_graphrag_milvus.errors import InvalidIdError
from langchain_graphrag_milvus.graph.ids import id_to_key
from langchain_graphrag_milvus.ingest.plan import (
    classify,
    links_by_passage,
    plan_writes,
    relation_rows,
    similar_pairs,
    triplet_rows,
)
from langchain_graphrag_milvus.ingest.records import PassageRecord
from langchain_graphrag_milvus.ingest.report import IngestReport
from langchain_graphrag_milvus.milvus.graph_cache import GraphDelta
from langchain_graphrag_milvus.milvus.schema import MAX_PASSAGES_PER_RELATION
from langchain_graphrag_milvus.text.names import entity_id, relation_id


def _record(pid: str, text: str, triplets: list[tuple[str, str, str]], **metadata: str) -> PassageRecord:
    return PassageRecord(id=pid, text=text, metadata=dict(metadata), triplets=triplets)


def test_triplets_become_entities_and_relations_merged_by_normalised_name() -> None:
    entities, relations = triplet_rows(
        [("p1", [("Euler", "studied under", "Bernoulli")]), ("p2", [("euler", "studied under", "BERNOULLI")])]
    )
    assert entities == {entity_id("Euler"): "Euler", entity_id("Bernoulli"): "Bernoulli"}  # first spelling wins
    (rid,) = relations
    assert rid == relation_id("Euler", "studied under", "Bernoulli")
    assert relations[rid].passage_ids == ["p1", "p2"]
    assert links_by_passage(relations) == {"p1": {rid}, "p2": {rid}}


def test_classify_sorts_new_changed_unchanged_and_refuses_another_tenants_id() -> None:
    new, same, changed = (_record(p, f"text {p}", [], tenant="a") for p in ("new", "same", "changed"))
    stored = {
        "same": {"doc_hash": same.content_hash, "tenant": "a"},
        "changed": {"doc_hash": "old", "tenant": "a"},
    }
    report = IngestReport()
    out = classify([new, same, changed], dict(stored), "tenant", report, strict=False)
    assert [r.id for r in out.to_write] == ["new", "changed"] and [r.id for r in out.changed] == ["changed"]
    assert (report.passages_added, report.passages_updated, report.passages_unchanged) == (1, 1, 1)

    foreign = {"new": {"doc_hash": "x", "tenant": "b"}}
    report = IngestReport()
    out = classify([new], dict(foreign), "tenant", report, strict=False)
    assert out.to_write == [] and report.records_skipped == 1 and "belongs to tenant 'b'" in report.problems[0].reason
    with pytest.raises(InvalidIdError):
        classify([new], dict(foreign), "tenant", IngestReport(), strict=True)


def test_plan_writes_links_stored_relations_once_and_counts_links_beyond_the_cap() -> None:
    entities, relations = triplet_rows([("p2", [("A", "r", "B"), ("A", "s", "C")])])
    rid_r, rid_s = relation_id("A", "r", "B"), relation_id("A", "s", "C")
    full = [f"q{i}" for i in range(MAX_PASSAGES_PER_RELATION)]
    stored = {
        rid_r: {"pk": rid_r, "text": "A r B", "vector": [1.0], "subject_id": entity_id("A"),
                "object_id": entity_id("B"), "predicate": "r", "passage_ids": ["p1"]},
        rid_s: {"pk": rid_s, "passage_ids": full},
    }  # fmt: skip
    plan = plan_writes(entities, relations, {entity_id("A"): {}}, stored)
    assert plan.new_entities == {entity_id("B"): "B", entity_id("C"): "C"}
    assert plan.new_relations == {} and plan.dropped == 1  # s is full: p2 is not linked
    assert list(plan.linked) == [rid_r] and plan.linked[rid_r][1] == ["p1", "p2"]
    report = IngestReport()
    (row,) = relation_rows(plan, {}, report)
    assert row == {**stored[rid_r], "passage_ids": ["p1", "p2"]}  # the stored row as fetched, relinked
    delta = GraphDelta.from_relation_rows([row], new_entities=plan.new_entities, synonyms={})
    assert list(delta.relation_keys) == [id_to_key(rid_r)] and delta.synonym_pairs == ([], [])


def test_similar_pairs_are_symmetric_and_skip_self_pairs() -> None:
    matrix = np.array([[1.0, 0.0], [0.99, 0.1], [0.0, 1.0]], dtype=np.float32)
    pairs = {(a, b) for a, b, _ in similar_pairs(["x", "y", "z"], matrix, 0.9, block=2)}
    assert pairs == {("x", "y"), ("y", "x")}
