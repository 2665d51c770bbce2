"""Tenant filters restrict the graph itself, not only the passages returned (both backends).

Two tenants share entity names (the same person and city). Under tenant A, no passage,
relation or passage id of tenant B may reach the caller or the reranker: at 1 and 2 hops,
with both rankings, with and without a reranker, sync and async, with a string filter,
a dict filter and a partition key.
"""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.runnables import RunnableLambda

from langchain_graphrag_milvus import MilvusGraphRetriever, MilvusGraphStore

from ..conftest import backend_uri, close_store
from ..fakes import LexicalEmbeddings

A_DOCS = [
    (
        "a1",
        "Alice Smith lives in Springfield and works at Acme Corp.",
        [["Alice Smith", "lives in", "Springfield"], ["Alice Smith", "works at", "Acme Corp"]],
    ),
    (
        "a2",
        "Acme Corp is headquartered in Springfield and makes rockets.",
        [["Acme Corp", "headquartered in", "Springfield"], ["Acme Corp", "makes", "rockets"]],
    ),
]
B_DOCS = [
    (
        "b1",
        "Alice Smith was born in Springfield and founded Globex.",
        [
            ["Alice Smith", "was born in", "Springfield"],
            ["Alice Smith", "founded", "Globex"],
            ["Alice Smith", "lives in", "Springfield"],
        ],
    ),  # shared with tenant A
    (
        "b2",
        "Globex sells secret widgets from Springfield.",
        [["Globex", "sells", "secret widgets"], ["Globex", "located in", "Springfield"]],
    ),
]
B_ONLY_RELATIONS = {
    "Alice Smith was born in Springfield",
    "Alice Smith founded Globex",
    "Globex sells secret widgets",
    "Globex located in Springfield",
}
QUERIES = [
    "Where was Alice Smith born?",
    "What does Globex sell?",
    "Who founded Globex in Springfield?",
    "Where does Alice Smith work?",
]


def documents() -> list[Document]:
    return [
        Document(id=pid, page_content=text, metadata={"tenant": tenant, "triplets": triplets})
        for tenant, docs in (("a", A_DOCS), ("b", B_DOCS))
        for pid, text, triplets in docs
    ]


TENANT_STORES = [
    pytest.param((backend, kind), id=f"{backend}-{kind}", marks=[pytest.mark.server] if backend == "server" else [])
    for backend in ("lite", "server")
    for kind in ("expression", "partition_key")
]


@pytest.fixture(scope="module", params=TENANT_STORES)
def tenant_store(request, tmp_path_factory):
    """Both tenants ingested once per module, backend and kind of tenancy (tests only read)."""
    backend, kind = request.param
    uri = backend_uri(request, backend, tmp_path_factory.mktemp("tenants"))
    kwargs = {"partition_key_field": "tenant"} if kind == "partition_key" else {}
    store = MilvusGraphStore(LexicalEmbeddings(), uri=uri, collection_prefix=f"ten{uuid.uuid4().hex[:8]}", **kwargs)
    report = store.add_documents(documents())
    assert report.passages_added == 4
    yield store
    close_store(store, backend)


def recorder() -> tuple[RunnableLambda, list[dict[str, Any]]]:
    seen: list[dict[str, Any]] = []

    def rerank(payload: dict[str, Any]) -> list[int]:
        seen.append(payload)
        return list(range(len(payload["relations"])))  # choose everything, in order

    return RunnableLambda(rerank), seen


@pytest.mark.parametrize("ranking,hops", [("ppr", 1), ("similarity", 1), ("similarity", 2)])
@pytest.mark.parametrize("with_reranker", [False, True])
@pytest.mark.parametrize("filter_form", ["string", "dict"])
async def test_tenant_a_never_sees_tenant_b(tenant_store, retrieve, ranking, hops, with_reranker, filter_form) -> None:
    reranker, seen = recorder()
    filt = 'tenant == "a"' if filter_form == "string" else {"tenant": "a"}
    retriever = MilvusGraphRetriever(
        store=tenant_store,
        k=4,
        ranking=ranking,
        hops=hops,
        filter=filt,
        reranker=reranker if with_reranker else None,
        entity_extractor=RunnableLambda(lambda q: ["Alice Smith", "Globex", "Springfield"]),
    )
    for query in QUERIES:
        docs = await retrieve(retriever, query)
        assert docs and {d.id for d in docs} <= {"a1", "a2"}, query
        assert all(d.metadata["tenant"] == "a" for d in docs)
        for d in docs:
            assert not B_ONLY_RELATIONS & set(d.metadata.get("_relations", []))
    if with_reranker:
        assert seen, "the reranker was called"
        for payload in seen:
            assert not B_ONLY_RELATIONS & set(payload["relations"])
            for cand in payload["candidates"]:
                assert set(cand["passage_ids"]) <= {"a1", "a2"}  # the shared relation hides b1


async def test_tenant_b_sees_its_own_graph(tenant_store, retrieve) -> None:
    retriever = MilvusGraphRetriever(store=tenant_store, k=2, filter={"tenant": "b"})
    docs = await retrieve(retriever, "What does Globex sell?")
    assert {d.id for d in docs} <= {"b1", "b2"} and "b2" in {d.id for d in docs}
    # per call, the filter can change; a filter nobody matches returns nothing
    assert await retrieve(retriever, "What does Globex sell?", filter={"tenant": "nobody"}) == []
    unfiltered = await retrieve(retriever, "What does Globex sell?", filter=None, k=4)
    assert {d.id for d in unfiltered} == {"a1", "a2", "b1", "b2"}


async def test_naive_retriever_filters_too(tenant_store, retrieve) -> None:
    naive = tenant_store.as_naive_retriever(k=4, filter={"tenant": "a"})
    assert {d.id for d in await retrieve(naive, "Globex")} == {"a1", "a2"}


def test_graph_view_masks(make_store) -> None:
    tenant_store = make_store(LexicalEmbeddings())
    tenant_store.add_documents(documents())
    view = tenant_store.graph_view('tenant == "a"')
    graph = tenant_store.graph
    assert view.passage_ids == frozenset({"a1", "a2"})
    assert int(view.relations.sum()) == 4  # a1's two (one shared with b1) and a2's two
    assert int(view.entities.sum()) == 4  # Alice Smith, Springfield, Acme Corp, rockets
    assert tenant_store.graph_view('tenant == "a"') is view  # cached until the graph changes
    tenant_store.add_documents(
        [
            Document(
                id="a3",
                page_content="Acme Corp makes anvils.",
                metadata={"tenant": "a", "triplets": [["Acme Corp", "makes", "anvils"]]},
            )
        ]
    )
    assert tenant_store.graph is not graph
    assert "a3" in tenant_store.graph_view('tenant == "a"').passage_ids


def test_partition_key_is_required_on_every_record(make_store) -> None:
    store = make_store(LexicalEmbeddings(), partition_key_field="tenant")
    report = store.add_documents(
        [
            Document(id="ok", page_content="x", metadata={"tenant": "a", "triplets": [["X", "is", "Y"]]}),
            Document(id="missing", page_content="y", metadata={"triplets": [["Y", "is", "Z"]]}),
        ]
    )
    assert report.passages_added == 1 and report.records_skipped == 1
    assert "partition key field 'tenant'" in str(report.problems[0])
    other = make_store(LexicalEmbeddings(), prefix=store.collection_prefix, partition_key_field="region")
    with pytest.raises(Exception, match="partition key 'tenant', not 'region'"):
        other.add_documents([Document(id="r", page_content="z", metadata={"region": "eu"})])
