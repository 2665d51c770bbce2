"""aadd_documents, aupsert_documents, adelete_documents, amerge_entities: the same results as the sync
writes, on Lite and a server, and queries answered on the event loop while an async ingest runs."""

from __future__ import annotations

import asyncio

from langchain_core.documents import Document

from langchain_graphrag_milvus import MilvusGraphRetriever

from ..fakes import LexicalEmbeddings


def _docs(tag: str = "") -> list[Document]:
    return [
        Document(f"Euler was a student of Johann Bernoulli.{tag}", metadata={"source": "euler.md",
                 "triplets": [["Euler", "was a student of", "Johann Bernoulli"]]}),
        Document(f"Johann Bernoulli was the father of Daniel Bernoulli.{tag}", metadata={"source": "bern.md",
                 "triplets": [["Johann Bernoulli", "was the father of", "Daniel Bernoulli"]]}),
        Document("Leonhard Euler lived in Basel.", metadata={"source": "basel.md",
                 "triplets": [["Leonhard Euler", "lived in", "Basel"]]}),
    ]  # fmt: skip


def _state(store) -> tuple[dict, list[str]]:
    return store.counts(), sorted(store.entity_names().values())


async def test_async_writes_match_the_sync_ones(make_store):
    sync_store = make_store(LexicalEmbeddings())
    async_store = make_store(LexicalEmbeddings())

    a = sync_store.add_documents(_docs())
    b = await async_store.aadd_documents(_docs())
    assert (a.passages_added, a.relations_added) == (b.passages_added, b.relations_added) == (3, 3)

    a = sync_store.upsert_documents(_docs(" Changed."))
    b = await async_store.aupsert_documents(_docs(" Changed."))
    assert a.ingested.passages_added == b.ingested.passages_added == 2
    assert a.deleted.passages_deleted == b.deleted.passages_deleted == 2

    a = sync_store.merge_entities(["Euler"], into="Leonhard Euler")
    b = await async_store.amerge_entities(["Euler"], into="Leonhard Euler")
    assert str(a) == str(b)
    assert _state(sync_store) == _state(async_store)
    assert "Euler" not in _state(async_store)[1]

    a = sync_store.delete_documents(["bern.md"])
    b = await async_store.adelete_documents(["bern.md"])
    assert a == b and b.passages_deleted == 1
    assert _state(sync_store) == _state(async_store)


async def test_queries_are_answered_while_an_async_ingest_runs(make_store):
    store = make_store(LexicalEmbeddings())
    store.add_documents(_docs())
    retriever = MilvusGraphRetriever(store=store, k=2)
    many = [
        Document(f"Passage {i} says Person {i} met Person {i + 1}.", metadata={"source": f"s{i}.md",
                 "triplets": [[f"Person {i}", "met", f"Person {i + 1}"]]})
        for i in range(300)
    ]  # fmt: skip
    ingest = asyncio.create_task(store.aadd_documents(many))
    answered = 0
    while not ingest.done():
        docs = await retriever.ainvoke("Who taught Euler?")
        assert docs
        answered += 1
    report = await ingest
    assert report.passages_added == 300 and answered >= 1
