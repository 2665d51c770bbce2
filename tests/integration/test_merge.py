"""merge_entities: relations rewritten in Milvus, graph index updated in place, re-runnable after a crash."""

from __future__ import annotations

import pytest

from langchain_graphrag_milvus import MilvusGraphRetriever
from langchain_graphrag_milvus.text.names import entity_id, relation_id

from ..fakes import LexicalEmbeddings

RECORDS = [
    {"id": "p1", "text": "Euler was born in Basel.", "triplets": [["Euler", "was born in", "Basel"]]},
    {
        "id": "p2",
        "text": "Leonhard Euler studied with Johann Bernoulli.",
        "triplets": [["Leonhard Euler", "was a student of", "Johann Bernoulli"]],
    },
    {
        "id": "p3",
        "text": 'Euler, "the master of us all", was a student of Johann Bernoulli.',
        "triplets": [["Euler", "was a student of", "Johann Bernoulli"], ["Laplace", "called", "Euler"]],
    },
]


def _state(store) -> tuple[dict[str, str], dict[str, tuple[str, str, str, list[str]]]]:
    """Entity and relation rows as Milvus holds them."""
    entities = {r["pk"]: r["text"] for r in store.iterate("entities", ("text",))}
    relations = {
        r["pk"]: (r["text"], r["subject_id"], r["object_id"], sorted(r["passage_ids"]))
        for r in store.iterate("relations", ("text", "subject_id", "object_id", "passage_ids"))
    }
    return entities, relations


def _graph(graph) -> set[tuple[int, int, int, tuple[str, ...]]]:
    out = set()
    for r in range(graph.n_relations):
        passages = tuple(sorted(graph.passages.ids[p] for p in graph.rel_pas.row(r).tolist()))
        subject = int(graph.entities.keys[graph.rel_subject[r]])
        obj = int(graph.entities.keys[graph.rel_object[r]])
        out.add((int(graph.relations.keys[r]), subject, obj, passages))
    return out


def test_merge_rewrites_relations_and_the_graph(make_store) -> None:
    store = make_store(LexicalEmbeddings(), consistency_level="Strong")
    store.add_records(RECORDS)
    before = store.graph
    assert before.n_entities == 5  # Euler and Leonhard Euler are two nodes
    report = store.merge_entities(["euler "], into="Leonhard Euler")
    assert (report.entities_merged, report.relations_rewritten, report.relations_joined) == (1, 3, 1)

    entities, relations = _state(store)
    assert "Euler" not in entities.values() and entities[entity_id("Leonhard Euler")] == "Leonhard Euler"
    student = relations[relation_id("Leonhard Euler", "was a student of", "Johann Bernoulli")]
    assert student[0] == "Leonhard Euler was a student of Johann Bernoulli" and student[3] == ["p2", "p3"]
    assert relations[relation_id("Leonhard Euler", "was born in", "Basel")][3] == ["p1"]
    assert relations[relation_id("Laplace", "called", "Leonhard Euler")][2] == entity_id("Leonhard Euler")
    assert len(relations) == 3 and relations.keys().isdisjoint({relation_id("Euler", "was born in", "Basel")})

    in_place = _graph(store.graph)
    assert store.graph.n_entities == 4
    assert in_place == _graph(store.rebuild_graph())  # the in-place update equals a rebuild from Milvus
    assert "Euler" not in store.entity_names().values()
    docs = MilvusGraphRetriever(store=store, k=3).invoke("Where was he born?", entities=["Leonhard Euler"])
    assert {d.id for d in docs} == {"p1", "p2", "p3"}  # all three passages now hang off one node

    again = store.merge_entities(["Euler"], into="Leonhard Euler")
    assert again.entities_merged == 0 and _state(store) == (entities, relations)


def test_merge_is_rerunnable_after_a_crash(make_store, monkeypatch) -> None:
    clean = make_store(LexicalEmbeddings(), consistency_level="Strong")
    clean.add_records(RECORDS)
    clean.merge_entities(["Euler"], into='Leonhard "the master" Euler')
    expected = _state(clean)

    store = make_store(LexicalEmbeddings(), consistency_level="Strong")
    store.add_records(RECORDS)
    import langchain_graphrag_milvus.ingest.merge as merge

    real = merge.delete_rows
    calls = []

    def crash_on_entities(store_, kind, ids):
        calls.append(kind)
        if kind == "entities":
            raise RuntimeError("crash")
        real(store_, kind, ids)

    monkeypatch.setattr(merge, "delete_rows", crash_on_entities)
    with pytest.raises(RuntimeError):
        store.merge_entities(["Euler"], into='Leonhard "the master" Euler')
    assert calls == ["relations", "entities"]
    monkeypatch.setattr(merge, "delete_rows", real)
    fresh = make_store(LexicalEmbeddings(), prefix=store.collection_prefix, consistency_level="Strong")
    report = fresh.merge_entities(["Euler"], into='Leonhard "the master" Euler')  # a new process re-runs it
    assert report.entities_merged == 1 and report.relations_rewritten == 0
    assert _state(fresh) == expected
    assert _graph(fresh.graph) == _graph(clean.graph)


def test_merge_rejects_bad_names(make_store) -> None:
    store = make_store(LexicalEmbeddings())
    store.add_records(RECORDS)
    with pytest.raises(ValueError):
        store.merge_entities(["Euler"], into="  ")
    with pytest.raises(TypeError):
        store.merge_entities("Euler", into="Leonhard Euler")  # type: ignore[arg-type]
    assert store.merge_entities(["Nobody"], into="Leonhard Euler").entities_merged == 0
