"""Subgraph: what the retriever did for a query, the stored graph, and their exports."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pytest

from langchain_graphrag_milvus import MilvusGraphRetriever
from langchain_graphrag_milvus.datasets import NANO_QUESTION

from ..fakes import LexicalEmbeddings


# ---------------------------------------------------------------------- a real store
@pytest.fixture
def retriever(nano_store):
    return MilvusGraphRetriever(store=nano_store, k=2)


def _cosine(a, b) -> float:
    a, b = np.asarray(a), np.asarray(b)
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_explain_shows_what_the_retriever_did(retriever):
    docs = retriever.invoke(NANO_QUESTION)
    sub = retriever.explain(NANO_QUESTION)
    passages = [n for n in sub.nodes if n.kind == "passage"]
    assert [n.data["passage_id"] for n in passages] == [d.id for d in docs]
    assert [n.data["rank"] for n in passages] == [1, 2]
    assert [n.score for n in passages] == pytest.approx([d.metadata["_score"] for d in docs])
    assert [n.hop for n in passages] == [d.metadata["_hops"] for d in docs]

    ids = {n.id for n in sub.nodes}
    assert len(ids) == len(sub.nodes)
    assert all(e.source in ids and e.target in ids for e in sub.edges)
    led = {(e.source, e.target) for e in sub.edges if e.kind == "supports" and e.data["led_to"]}
    for doc in docs:  # every relation behind a passage is drawn, with the edge to it
        for rid in doc.metadata["_relation_ids"]:
            assert (f"relation:{rid}", f"passage:{doc.id}") in led

    assert sub.node("query_entity:Euler").kind == "query_entity"
    matches = [e for e in sub.edges if e.kind == "match"]
    assert matches and all(e.source == "query_entity:Euler" for e in matches)
    assert max(e.score for e in matches) == pytest.approx(1.0)  # the entity named "Euler" itself

    emb = LexicalEmbeddings()
    qvec = emb.embed_query(NANO_QUESTION)
    for n in sub.nodes:
        if n.kind == "relation":  # relation scores are similarities to the query
            assert n.score == pytest.approx(_cosine(qvec, emb.embed_query(n.label)), abs=1e-4)
    assert sub.settings["k"] == 2 and sub.settings["ranking"] == "ppr"
    assert sub.query == NANO_QUESTION


def test_explain_hops_tell_the_multi_hop_story(retriever):
    sub = retriever.explain(NANO_QUESTION)
    by_label = {n.label: n for n in sub.nodes if n.kind == "relation"}
    assert by_label["Leonhard Euler was a student of Johann Bernoulli"].hop == 0
    assert by_label["Daniel Bernoulli was the son of Johann Bernoulli"].hop == 1
    assert by_label["Daniel Bernoulli made major contributions to fluid dynamics"].hop == 2
    expands = {(e.source, e.target): e.data["via"] for e in sub.edges if e.kind == "expands"}
    student = by_label["Leonhard Euler was a student of Johann Bernoulli"].id
    son = by_label["Daniel Bernoulli was the son of Johann Bernoulli"].id
    assert expands[(student, son)] == "Johann Bernoulli"
    hop_of = {n.id: n.hop for n in sub.nodes if n.kind == "relation"}
    for rid, hop in hop_of.items():  # every relation past hop 0 hangs on one a hop closer
        if hop:
            assert any(t == rid and hop_of.get(s) == hop - 1 for s, t in expands), rid


def test_explain_caps_and_similarity_ranking(retriever):
    docs = retriever.invoke(NANO_QUESTION, ranking="similarity", hops=1)
    sub = retriever.explain(NANO_QUESTION, ranking="similarity", hops=1, max_relations=3)
    relations = [n for n in sub.nodes if n.kind == "relation"]
    required = {r for d in docs for r in d.metadata["_relation_ids"]}
    assert required <= {n.data["relation_id"] for n in relations}
    assert all(n.hop is not None and n.hop <= 1 for n in relations)  # the retriever's own 1-hop expansion
    assert sub.truncated
    assert sub.settings["ranking"] == "similarity" and sub.settings["max_relations"] == 3
    with pytest.raises(ValueError, match="max_relations"):
        retriever.explain(NANO_QUESTION, max_relations=0)
    with pytest.raises(TypeError, match="unexpected retrieval argument"):
        retriever.explain(NANO_QUESTION, kk=3)


async def test_aexplain_matches_explain(retriever):
    sync = retriever.explain(NANO_QUESTION)
    async_ = await retriever.aexplain(NANO_QUESTION)
    assert async_.to_json() == sync.to_json()


def test_export_graph_is_the_whole_store(nano_store):
    counts = nano_store.counts()
    sub = nano_store.export_graph()
    kinds = [n.kind for n in sub.nodes]
    assert kinds.count("relation") == counts["relations"]
    assert kinds.count("entity") == counts["entities"]
    assert kinds.count("passage") == counts["passages"]
    assert not sub.truncated and sub.query is None
    graph = sub.to_networkx()
    assert graph.number_of_nodes() == len(sub.nodes)
    son = next(n for n in sub.nodes if n.label == "Daniel Bernoulli was the son of Johann Bernoulli")
    neighbours = {graph.nodes[x]["label"] for x in nx.all_neighbors(graph, son.id)}
    assert {"Daniel Bernoulli", "Johann Bernoulli"} <= neighbours
    assert any(label.startswith("Daniel Bernoulli (1700") for label in neighbours)

    capped = nano_store.export_graph(limit=5)
    assert [n.kind for n in capped.nodes].count("relation") == 5 and capped.truncated
    with pytest.raises(ValueError, match="limit"):
        nano_store.export_graph(limit=0)


def test_export_graph_with_a_filter_keeps_only_that_part(nano_store):
    daniel = next(n for n in nano_store.export_graph().nodes if n.label.startswith("Daniel Bernoulli (1700"))
    pid = daniel.data["passage_id"]
    sub = nano_store.export_graph(filter={"pk": pid})
    assert [n.data["passage_id"] for n in sub.nodes if n.kind == "passage"] == [pid]
    relations = [n for n in sub.nodes if n.kind == "relation"]
    assert len(relations) == 6 and all(n.data["passage_ids"] == [pid] for n in relations)


def test_fetch_with_none_returns_every_field_but_the_vector(nano_store):
    rid = next(n.data["relation_id"] for n in nano_store.export_graph(limit=1).nodes if n.kind == "relation")
    rows = nano_store.fetch("relations", [rid], None)
    assert set(rows[rid]) == {"pk", "text", "subject_id", "object_id", "predicate", "passage_ids"}
    assert set(nano_store.fetch("relations", [rid], "text")[rid]) == {"pk", "text"}
    with pytest.raises(TypeError, match="list of ids"):
        nano_store.fetch("relations", rid, None)


def test_explain_under_a_filter_shows_only_that_part(retriever, nano_store):
    texts = {n.data["passage_id"]: n.label for n in nano_store.export_graph().nodes if n.kind == "passage"}
    allowed = [pid for pid, text in texts.items() if not text.startswith("Daniel")]
    sub = retriever.explain(NANO_QUESTION, filter={"pk": allowed})
    passages = [n.data["passage_id"] for n in sub.nodes if n.kind == "passage"]
    assert passages and set(passages) <= set(allowed)
    for n in sub.nodes:
        if n.kind == "relation":
            assert n.data["passage_ids"] and set(n.data["passage_ids"]) <= set(allowed)
            assert not n.label.startswith("Daniel")
