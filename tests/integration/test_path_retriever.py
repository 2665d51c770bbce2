"""MilvusPathRetriever on Milvus (Lite and server), sync and async: paths as pseudo-documents."""

from __future__ import annotations

import logging
import uuid

import pytest
from langchain_core.language_models import FakeListChatModel
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import create_retriever_tool

from langchain_graphrag_milvus import MilvusGraphStore, MilvusPathRetriever, create_llm_entity_extractor
from langchain_graphrag_milvus.path_retriever import NoPathEvents

from ..conftest import backend_uri, close_store
from ..fakes import FailingChatModel, LexicalEmbeddings
from .test_tenants import documents as tenant_documents

EULER_DANIEL = "How is Leonhard Euler related to Daniel Bernoulli?"


def passage_of(store: MilvusGraphStore, needle: str) -> str:
    rows = store.client.query(
        store.collection_name("passages"), filter="pk != ''", output_fields=["pk", "text"], limit=100
    )
    (pid,) = [r["pk"] for r in rows if needle in r["text"]]
    return str(pid)


async def no_path(retrieve, retriever, query: str, **kwargs) -> dict:
    """Runs a retrieval that finds no path: no Document, one event saying why."""
    events = NoPathEvents()
    docs = await retrieve(retriever, query, config={"callbacks": [events]}, **kwargs)
    assert docs == [] and len(events.events) == 1, (docs, events.events)
    return events.last


async def test_euler_to_daniel_through_johann(nano_store, retrieve) -> None:
    docs = await retrieve(MilvusPathRetriever(store=nano_store), EULER_DANIEL)
    assert len(docs) == 1
    (doc,) = docs
    meta = doc.metadata
    assert meta["_path_found"] is True and meta["_ranked_by"] == "path"
    assert meta["_pair"] == ["Leonhard Euler", "Daniel Bernoulli"]
    assert meta["_path"] == ["Leonhard Euler", "Johann Bernoulli", "Daniel Bernoulli"]
    assert meta["_hops"] == 2 and len(meta["_path_entity_ids"]) == 3
    assert meta["_relations"] == [
        "Leonhard Euler was a student of Johann Bernoulli",
        "Daniel Bernoulli was the son of Johann Bernoulli",
    ]
    assert meta["_passage_ids"] == [
        passage_of(nano_store, "Leonhard Euler (1707"),
        passage_of(nano_store, "Daniel Bernoulli (1700"),
    ]
    assert meta["_paths_between_pair"] == 1 and meta["_truncated"] is False
    assert doc.page_content.splitlines() == [
        "Leonhard Euler → Johann Bernoulli → Daniel Bernoulli",
        "- Leonhard Euler was a student of Johann Bernoulli",
        "- Daniel Bernoulli was the son of Johann Bernoulli",
    ]
    assert doc.id and doc.id.startswith("path:")


async def test_supporting_sentences_come_from_the_passages(nano_store, retrieve) -> None:
    (doc,) = await retrieve(MilvusPathRetriever(store=nano_store, sentences=True), EULER_DANIEL)
    euler, daniel = doc.metadata["_passage_ids"]
    assert doc.page_content.splitlines() == [
        "Leonhard Euler → Johann Bernoulli → Daniel Bernoulli",
        "- Leonhard Euler was a student of Johann Bernoulli",
        f"  [{euler}] Euler was born in Basel and was a student of Johann Bernoulli, who recognized his "
        "exceptional talent and mentored him in mathematics.",
        "- Daniel Bernoulli was the son of Johann Bernoulli",
        f"  [{daniel}] Daniel Bernoulli (1700–1782): The son of Johann Bernoulli, Daniel made major "
        "contributions to fluid dynamics, probability, and statistics.",
    ]


async def test_hop_limit_and_no_path_reason(nano_store, retrieve) -> None:
    # Basel – Leonhard Euler – Johann – Jakob – the Bernoulli theorem – the law of large numbers: 5 hops
    retriever = MilvusPathRetriever(store=nano_store)
    entities = ["Basel", "the law of large numbers"]
    (found,) = await retrieve(retriever, "How is Basel related to the law of large numbers?", entities=entities)
    assert found.metadata["_hops"] == 5
    assert found.metadata["_path"][1:4] == ["Leonhard Euler", "Johann Bernoulli", "Jakob Bernoulli"]
    none = await no_path(retrieve, retriever, "?", entities=entities, max_hops=2)
    assert none["reason"] == "no path found (Basel – the law of large numbers: no path within 2 hops per side)"
    assert none["entities"] == entities
    assert none["pairs"] == [
        {
            "pair": entities,
            "hops": None,
            "paths": 0,
            "visited": none["pairs"][0]["visited"],
            "truncated": False,
            "reason": "no path within 2 hops per side",
        }
    ]


async def test_fewer_than_two_entities(nano_store, retrieve) -> None:
    retriever = MilvusPathRetriever(store=nano_store)
    event = await no_path(retrieve, retriever, "Who was Daniel Bernoulli?")
    assert event["reason"] == "need two entities in the graph; found 1 (Daniel Bernoulli)"
    event = await no_path(retrieve, retriever, "?", entities=["Daniel Bernoulli", "Zebra Quartz"])
    assert event["reason"] == "need two entities in the graph; found 1 (Daniel Bernoulli); not found: Zebra Quartz"
    event = await no_path(retrieve, retriever, "nothing here")
    assert event["reason"] == "need two entities in the graph; found 0"


async def test_names_resolve_by_variant_then_by_vector(nano_store, retrieve) -> None:
    retriever = MilvusPathRetriever(store=nano_store)
    # a case/quote variant is the same entity id; word order differs only in the vector
    (doc,) = await retrieve(retriever, "?", entities=["LEONHARD EULER", "Bernoulli, Daniel"])
    assert doc.metadata["_path"] == ["Leonhard Euler", "Johann Bernoulli", "Daniel Bernoulli"]
    assert doc.metadata["_pair"] == ["LEONHARD EULER", "Bernoulli, Daniel"]
    # a name that is no entity matches its nearest entity vector only above entity_min_score
    emb = LexicalEmbeddings()
    a, b = emb.embed_documents(["Daniel B. Bernoulli", "Daniel Bernoulli"])
    cosine = sum(x * y for x, y in zip(a, b))
    assert 0.8 < cosine < 0.9
    (doc,) = await retrieve(retriever, "?", entities=["Leonhard Euler", "Daniel B. Bernoulli"], entity_min_score=0.8)
    assert doc.metadata["_path"][-1] == "Daniel Bernoulli"
    event = await no_path(
        retrieve, retriever, "?", entities=["Leonhard Euler", "Daniel B. Bernoulli"], entity_min_score=0.9
    )
    assert event["reason"] == (
        "need two entities in the graph; found 1 (Leonhard Euler); not found: Daniel B. Bernoulli"
    )


async def test_three_entities_pairs_take_turns_up_to_k(nano_store, retrieve) -> None:
    query = "How are Jakob Bernoulli, Leonhard Euler and Daniel Bernoulli related?"
    retriever = MilvusPathRetriever(store=nano_store, k=3)
    docs = await retrieve(retriever, query)
    assert [d.metadata["_pair"] for d in docs] == [
        ["Jakob Bernoulli", "Leonhard Euler"],
        ["Jakob Bernoulli", "Daniel Bernoulli"],
        ["Leonhard Euler", "Daniel Bernoulli"],
    ]
    assert all(d.metadata["_hops"] == 2 and d.metadata["_path"][1] == "Johann Bernoulli" for d in docs)
    assert len({d.id for d in docs}) == 3
    assert len(await retrieve(retriever, query, k=1)) == 1
    assert len(await retrieve(retriever, query, max_entities=2)) == 1


async def test_llm_entities_and_a_failing_llm(nano_store, retrieve, caplog) -> None:
    llm = FakeListChatModel(responses=['{"entities": ["Jakob Bernoulli", "Daniel Bernoulli"]}'] * 2)
    retriever = MilvusPathRetriever(store=nano_store, entity_extractor=create_llm_entity_extractor(llm))
    (doc,) = await retrieve(retriever, "How were the brothers' sons and nephews related?")
    assert doc.metadata["_pair"] == ["Jakob Bernoulli", "Daniel Bernoulli"]
    with caplog.at_level(logging.WARNING, logger="langchain_graphrag_milvus"):
        (doc,) = await retrieve(MilvusPathRetriever(store=nano_store, llm=FailingChatModel()), EULER_DANIEL)
    assert doc.metadata["_path"][1] == "Johann Bernoulli" and "offline linker" in caplog.text


async def test_bad_arguments(nano_store, retrieve) -> None:
    retriever = MilvusPathRetriever(store=nano_store)
    with pytest.raises(TypeError, match="unexpected retrieval argument.*hops_max"):
        await retrieve(retriever, EULER_DANIEL, hops_max=2)
    with pytest.raises(TypeError, match="list of names"):
        await retrieve(retriever, EULER_DANIEL, entities="Leonhard Euler")
    with pytest.raises(ValueError, match="max_paths"):
        await retrieve(retriever, EULER_DANIEL, max_paths=0)
    with pytest.raises(ValueError, match="max_neighbors"):
        await retrieve(retriever, EULER_DANIEL, max_neighbors=0)
    with pytest.raises(Exception, match="less than or equal to 6"):
        MilvusPathRetriever(store=nano_store, max_hops=7)
    with pytest.raises(TypeError, match="query must be a string"):
        retriever.invoke(["not", "a", "string"])  # type: ignore[arg-type]


async def test_in_an_lcel_chain_and_as_a_tool(nano_store) -> None:
    retriever = nano_store.as_path_retriever(sentences=True)
    chain = retriever | RunnableLambda(lambda docs: "\n\n".join(d.page_content for d in docs))
    text = chain.invoke(EULER_DANIEL)
    assert text.startswith("Leonhard Euler → Johann Bernoulli → Daniel Bernoulli\n")
    tool = create_retriever_tool(retriever, "entity_paths", "How two entities are connected")
    assert "Leonhard Euler → Johann Bernoulli → Daniel Bernoulli" in await tool.ainvoke({"query": EULER_DANIEL})


# ------------------------------------------------------------------ ordering by similarity
ORDER_RECORDS = [
    {
        "passage": "Anna Berg taught at the Music School.",
        "triplets": [["Anna Berg", "taught music at", "Music School"]],
    },
    {
        "passage": "Otto Lind studied music at the Music School.",
        "triplets": [["Otto Lind", "studied music at", "Music School"]],
    },
    {"passage": "Anna Berg paid taxes at the Tax Office.", "triplets": [["Anna Berg", "paid taxes at", "Tax Office"]]},
    {
        "passage": "Otto Lind filed forms at the Tax Office.",
        "triplets": [["Otto Lind", "filed forms at", "Tax Office"]],
    },
    {"passage": "Anna Berg rode the Green Tram.", "triplets": [["Anna Berg", "rode", "Green Tram"]]},
    {"passage": "Otto Lind rode the Green Tram.", "triplets": [["Otto Lind", "rode", "Green Tram"]]},
]


@pytest.fixture(scope="module")
def order_store(module_stores) -> MilvusGraphStore:
    store = module_stores(LexicalEmbeddings())
    store.add_records(ORDER_RECORDS)
    return store


async def test_paths_ordered_and_pruned_by_similarity_to_the_query(order_store, retrieve) -> None:
    retriever = MilvusPathRetriever(store=order_store)
    docs = await retrieve(retriever, "How are Anna Berg and Otto Lind connected through music lessons?")
    assert [d.metadata["_path"][1] for d in docs][0] == "Music School"
    assert len(docs) == 3 and all(d.metadata["_paths_between_pair"] == 3 for d in docs)
    assert docs[0].metadata["_score"] > docs[1].metadata["_score"] >= docs[2].metadata["_score"]
    docs = await retrieve(retriever, "How are Anna Berg and Otto Lind connected through taxes and forms?")
    assert docs[0].metadata["_path"][1] == "Tax Office"
    # pruning to one path (all three cover the same number of entities): the most similar survives
    (doc,) = await retrieve(retriever, "How are Anna Berg and Otto Lind connected through taxes?", max_paths=1)
    assert doc.metadata["_path"] == ["Anna Berg", "Tax Office", "Otto Lind"]


# ------------------------------------------------------------------ tenants
@pytest.fixture(scope="module", params=["lite", pytest.param("server", marks=pytest.mark.server)])
def tenant_store(request, tmp_path_factory):
    uri = backend_uri(request, request.param, tmp_path_factory.mktemp("path-tenants"))
    store = MilvusGraphStore(LexicalEmbeddings(), uri=uri, collection_prefix=f"pten{uuid.uuid4().hex[:8]}")
    store.add_documents(tenant_documents())
    yield store
    close_store(store, request.param)


async def test_a_tenant_filter_restricts_the_paths(tenant_store, retrieve) -> None:
    retriever = MilvusPathRetriever(store=tenant_store, relations_per_edge=5, sentences=True)
    pair = ["Alice Smith", "Springfield"]
    (everyone,) = await retrieve(retriever, "?", entities=pair)
    assert set(everyone.metadata["_relations"]) == {
        "Alice Smith lives in Springfield",
        "Alice Smith was born in Springfield",
    }
    assert set(everyone.metadata["_passage_ids"]) == {"a1", "b1"}
    (a,) = await retrieve(retriever, "?", entities=pair, filter={"tenant": "a"})
    assert a.metadata["_relations"] == ["Alice Smith lives in Springfield"]
    assert a.metadata["_passage_ids"] == ["a1"] and "[b1]" not in a.page_content
    (b,) = await retrieve(retriever, "?", entities=pair, filter='tenant == "b"')
    assert set(b.metadata["_relations"]) == {"Alice Smith lives in Springfield", "Alice Smith was born in Springfield"}
    assert b.metadata["_passage_ids"] == ["b1"]
    # Globex exists only in tenant b's passages
    none = await no_path(retrieve, retriever, "?", entities=["Alice Smith", "Globex"], filter={"tenant": "a"})
    assert none["reason"] == (
        "need two entities in the filtered part of the graph; found 1 (Alice Smith); not found: Globex"
    )
    (direct,) = await retrieve(retriever, "?", entities=["Alice Smith", "Globex"], filter={"tenant": "b"})
    assert direct.metadata["_relations"] == ["Alice Smith founded Globex"] and direct.metadata["_hops"] == 1
    # rockets are tenant a's: Alice → Acme Corp → rockets, never through tenant b
    (rockets,) = await retrieve(retriever, "?", entities=["Alice Smith", "rockets"], filter={"tenant": "a"})
    assert rockets.metadata["_path"] == ["Alice Smith", "Acme Corp", "rockets"]
    assert set(rockets.metadata["_passage_ids"]) <= {"a1", "a2"}


async def test_relations_scored_in_chunks_give_the_same_documents(nano_store, retrieve, monkeypatch) -> None:
    from langchain_graphrag_milvus.retrieval import path_pipeline

    query = "How are Jakob Bernoulli, Leonhard Euler and Daniel Bernoulli related?"
    retriever = MilvusPathRetriever(store=nano_store, sentences=True, relations_per_edge=3)
    whole = await retrieve(retriever, query)
    monkeypatch.setattr(path_pipeline, "_SEARCH_CHUNK", 1)  # one filtered search per relation
    chunked = await retrieve(retriever, query)
    assert [(d.page_content, d.metadata) for d in chunked] == [(d.page_content, d.metadata) for d in whole]


async def test_names_resolve_independently_under_a_filter(tenant_store, retrieve) -> None:
    # "Globex" is an entity of tenant b only; "Acme Crp" is no entity: it must get its own
    # nearest-vector match (Acme Corp), not be shifted onto Globex's
    retriever = MilvusPathRetriever(store=tenant_store, entity_min_score=0.45)
    names = ["Globex", "Acme Crp", "Alice Smith"]
    (doc,) = await retrieve(retriever, "?", entities=names, filter={"tenant": "a"})
    assert doc.metadata["_pair"] == ["Acme Crp", "Alice Smith"]
    assert doc.metadata["_path"] == ["Acme Corp", "Alice Smith"]
    assert doc.metadata["_relations"] == ["Alice Smith works at Acme Corp"]
    none = await no_path(retrieve, retriever, "?", entities=["Globex", "Acme Crp"], filter={"tenant": "a"})
    assert none["reason"] == (
        "need two entities in the filtered part of the graph; found 1 (Acme Crp); not found: Globex"
    )
