"""A graph store over a collection made with langchain_milvus.Milvus.from_documents (Lite and server)."""

from __future__ import annotations

import uuid

import pytest
from langchain_core.documents import Document
from langchain_core.runnables import RunnableLambda
from langchain_milvus import Milvus

from langchain_graphrag_milvus import ExistingCollectionGraphStore, MilvusGraphRetriever, MilvusGraphStore
from langchain_graphrag_milvus.datasets import NANO_QUESTION, nano_dataset
from langchain_graphrag_milvus.errors import CollectionNotFoundError, GraphRAGError

from ..conftest import backend_uri
from ..fakes import LexicalEmbeddings

SOURCES = ["jakob.txt", "johann.txt", "daniel.txt", "euler.txt"]


@pytest.fixture
def team(request, backend, tmp_path):
    """A collection as a team makes it: Milvus.from_documents, auto ids, metadata as fields."""
    uri = backend_uri(request, backend, tmp_path)
    name = f"docs_{uuid.uuid4().hex[:8]}"
    embedding = LexicalEmbeddings()
    docs = [
        Document(page_content=r["passage"], metadata={"source": SOURCES[i], "year": 1700 + i})
        for i, r in enumerate(nano_dataset())
    ]
    vs = Milvus.from_documents(
        docs, embedding, collection_name=name, connection_args={"uri": uri}, consistency_level="Strong"
    )
    made: list[MilvusGraphStore] = []

    def open_store(**kwargs):
        store = ExistingCollectionGraphStore(embedding, collection_name=name, uri=uri, **kwargs)
        made.append(store)
        return store

    yield vs, open_store, {d.page_content: d.metadata["source"] for d in docs}
    for store in made:
        store.drop()
    vs.client.drop_collection(name)  # before close(): closing the last store stops Milvus Lite's server
    for store in made:
        store.close()


def _triplets_by_pk(vs: Milvus) -> dict[str, list[list[str]]]:
    rows = vs.client.query(vs.collection_name, filter="", output_fields=["pk", "text"], limit=100)
    by_text = {r["passage"]: r["triplets"] for r in nano_dataset()}
    return {str(r["pk"]): by_text[r["text"]] for r in rows}


async def test_existing_collection_with_given_triplets(team, retrieve) -> None:
    vs, open_store, source_of = team
    store = open_store(consistency_level="Strong")
    with pytest.raises(CollectionNotFoundError, match="index_passages"):
        MilvusGraphRetriever(store=store).invoke("x")
    report = store.index_passages(triplets=_triplets_by_pk(vs))
    assert report.passages_seen == 4 and report.passages_with_triplets == 4 and report.relations_added > 10
    assert store.client.has_collection(f"{vs.collection_name}_graph_relations")
    assert store.counts()["passages"] == 4

    graph = MilvusGraphRetriever(store=store, k=2)
    for retriever in (graph, store.as_naive_retriever(k=2)):
        result = await retrieve(retriever, NANO_QUESTION)
        assert len(result) == 2
        for doc in result:
            assert source_of[doc.page_content] == doc.metadata["source"]  # metadata fields read back
            assert isinstance(doc.metadata["year"], int)
            assert not {"id", "pk", "text", "vector"} & set(doc.metadata)  # only the team's metadata (+ ours)
    graph_docs = graph.invoke(NANO_QUESTION)
    # the same ranking as a store that owns its passages (same triplets, same embeddings)
    reference = MilvusGraphStore(
        LexicalEmbeddings(), uri=store.uri, collection_prefix=f"ref{uuid.uuid4().hex[:8]}", consistency_level="Strong"
    )
    try:
        reference.add_records(
            [{"id": source_of[r["passage"]], "text": r["passage"], "triplets": r["triplets"]} for r in nano_dataset()]
        )
        expected = MilvusGraphRetriever(store=reference, k=2).invoke(NANO_QUESTION)
        assert [d.metadata["source"] for d in graph_docs] == [d.id for d in expected]
        assert [d.metadata["_score"] for d in graph_docs] == pytest.approx([d.metadata["_score"] for d in expected])
    finally:
        reference.drop()
    assert graph_docs[0].metadata["_relations"]
    paths = store.as_path_retriever(sentences=True).invoke("How is Leonhard Euler related to Daniel Bernoulli?")
    assert paths[0].metadata["_path_found"] and "Johann Bernoulli" in paths[0].page_content
    filtered = graph.invoke(NANO_QUESTION, filter={"source": "daniel.txt"})
    assert [d.metadata["source"] for d in filtered] == ["daniel.txt"]

    again = store.index_passages(triplets=_triplets_by_pk(vs))  # idempotent
    assert (again.entities_added, again.relations_added, again.relations_linked, again.texts_embedded) == (0, 0, 0, 0)
    with pytest.raises(GraphRAGError, match="index_passages"):
        store.add_documents([Document(page_content="x")])


def test_existing_collection_with_an_extractor_follows_changes(team) -> None:
    vs, open_store, _ = team
    calls: list[str] = []
    by_text = {r["passage"]: r["triplets"] for r in nano_dataset()}

    def extract(text: str) -> dict:
        calls.append(text)
        return {"triplets": by_text.get(text, [["Leonhard Euler", "wrote", "Letters to a German Princess"]])}

    store = open_store(extractor=RunnableLambda(extract), consistency_level="Strong")
    first = store.index_passages()
    assert first.extraction_calls == 4 and first.passages_with_triplets == 4
    # the team adds a passage and deletes one with its own langchain-milvus store
    vs.add_documents(
        [
            Document(
                page_content="Euler wrote the Letters to a German Princess.",
                metadata={"source": "letters.txt", "year": 1768},
            )
        ]
    )
    jakob = vs.client.query(vs.collection_name, filter='source == "jakob.txt"', output_fields=["pk"])
    vs.client.delete(vs.collection_name, filter='source == "jakob.txt"')
    second = store.index_passages()
    assert second.extraction_calls == 1 and second.extraction_cached == 3  # only the new passage
    assert second.passages_removed == 1 and second.passages_seen == 4
    graph = store.graph
    assert str(jakob[0]["pk"]) not in graph.passages.ids
    assert "Jakob Bernoulli" not in store.entity_names().values()  # only the deleted passage named him
    docs = MilvusGraphRetriever(store=store, k=4).invoke("What did Euler write?", entities=["Leonhard Euler"])
    sources = {d.metadata["source"] for d in docs}
    assert "letters.txt" in sources and "jakob.txt" not in sources
    reopened = ExistingCollectionGraphStore(LexicalEmbeddings(), collection_name=vs.collection_name, uri=store.uri)
    try:  # a new process rebuilds the same graph from the relation collection
        assert sorted(reopened.graph.passages.ids) == sorted(graph.passages.ids)
    finally:
        reopened.close()


def test_the_deprecated_classmethod_warns_and_builds_the_same_store(tmp_path) -> None:
    uri = str(tmp_path / "team.db")
    vs = Milvus.from_documents(
        [Document(page_content="Euler was born in Basel.")],
        LexicalEmbeddings(),
        collection_name="team_docs",
        connection_args={"uri": uri},
    )
    with pytest.warns(DeprecationWarning, match="ExistingCollectionGraphStore"):
        store = MilvusGraphStore.from_existing_collection(
            LexicalEmbeddings(), collection_name=vs.collection_name, uri=uri
        )
    try:
        assert isinstance(store, ExistingCollectionGraphStore)
        assert store.passage_collection == "team_docs"
    finally:
        store.close()


def test_existing_collection_gets_the_supplement_and_a_failing_one_unlinks_nothing(team) -> None:
    """``supplement=`` on an existing collection (issue 26, item 2); a failed supplement leaves stored links alone."""
    vs, open_store, _ = team
    down = {"now": False}

    def links(text: str) -> dict:
        if down["now"]:
            raise RuntimeError("supplement down")
        return {"triplets": [["Leonhard Euler", "is mentioned with", "Zeta Quokka"]] if "Euler" in text else []}

    store = open_store(supplement=RunnableLambda(links), consistency_level="Strong")
    first = store.index_passages(triplets=_triplets_by_pk(vs))
    with_euler = sum("Euler" in r["passage"] for r in nano_dataset())
    assert first.triplets_supplemented == with_euler > 0 and "triplets supplemented" in str(first)
    assert "Zeta Quokka" in store.entity_names().values()
    relations = store.counts()["relations"]

    down["now"] = True  # a new store (an empty extraction cache) whose supplement fails on every passage
    again = open_store(supplement=RunnableLambda(links), consistency_level="Strong")
    second = again.index_passages(triplets=_triplets_by_pk(vs))
    assert second.extraction_failures == 4 and second.triplets_supplemented == 0
    assert second.links_removed == 0 and again.counts()["relations"] == relations  # nothing unlinked
    assert "Zeta Quokka" in again.entity_names().values()
    down["now"] = False
    third = again.index_passages(triplets=_triplets_by_pk(vs))  # retried: the same graph, nothing new
    assert third.extraction_failures == 0 and third.relations_added == 0 and third.links_removed == 0
