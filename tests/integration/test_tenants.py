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


# ------------------------------------------------------------------ per-tenant rows (partitioned stores)
# Two tenants state the same facts in their own spelling; b also merges and deletes.
SPELLED_A = [
    Document(
        id="a1",
        page_content="Alice Smith lives in Springfield and works at Acme Corp.",
        metadata={"tenant": "a", "triplets": [["Alice Smith", "lives in", "Springfield"],
                                              ["Alice Smith", "works at", "Acme Corp"]]},
    ),
    Document(
        id="a2",
        page_content="Acme Corp hired Bob in Springfield.",
        metadata={"tenant": "a", "triplets": [["Acme Corp", "hired", "Bob"],
                                              ["Acme Corp", "headquartered in", "Springfield"]]},
    ),
]  # fmt: skip
SPELLED_B = [
    Document(
        id="b1",
        page_content="ACME CORP hired BOB.",
        metadata={"tenant": "b", "triplets": [["ACME CORP", "hired", "BOB"]]},
    ),
    Document(
        id="b2",
        page_content="alice smith lives in springfield and founded Globex.",
        metadata={"tenant": "b", "triplets": [["alice smith", "lives in", "springfield"],
                                              ["alice smith", "founded", "Globex"]]},
    ),
    Document(
        id="b3",
        page_content="Globex sells widgets to Acme Corp.",
        metadata={"tenant": "b", "triplets": [["Globex", "sells widgets to", "ACME CORP"]]},
    ),
]  # fmt: skip
SPELLED_QUERIES = [
    "Who did Acme Corp hire?",
    "Where does Alice Smith live?",
    "How is Alice Smith related to Bob?",
    "What does Globex sell to Acme Corp?",
]
A_VIEW = {"tenant": "a"}


def _view_names(store: MilvusGraphStore, tenant: str) -> tuple[list[str], list[str]]:
    """Entity names and relation texts inside a tenant's view, sorted."""
    view = store.graph_view(f'tenant == "{tenant}"')
    graph, names = store.graph, store.entity_names()
    from langchain_graphrag_milvus.graph.ids import key_to_id

    entities = sorted(names[key_to_id(int(k))] for k in graph.entities.keys[view.entities])
    rel_ids = [key_to_id(int(k)) for k in graph.relations.keys[view.relations]]
    relations = sorted(str(r["text"]) for r in store.fetch("relations", rel_ids, ("text",)).values())
    return entities, relations


def _plain(docs: list[Document]) -> list[tuple[str, dict[str, Any]]]:
    """What a caller gets; scores to 6 significant digits (float32 sums differ in order between graphs)."""
    return [
        (d.page_content, {k: float(f"{v:.6g}") if k in ("_score", "_raw_score") else v for k, v in d.metadata.items()})
        for d in docs
    ]


async def _tenant_a_sees(store: MilvusGraphStore, retrieve) -> list[Any]:
    """Everything tenant a gets back: names, relations, graph and path retrievals, reranker inputs."""
    from langchain_graphrag_milvus import MilvusPathRetriever
    from langchain_graphrag_milvus.path_retriever import NoPathEvents

    out: list[Any] = [_view_names(store, "a")]
    for ranking, hops in (("ppr", 1), ("similarity", 1), ("similarity", 2)):
        reranker, seen = recorder()
        graph = MilvusGraphRetriever(store=store, k=3, ranking=ranking, hops=hops, filter=A_VIEW, reranker=reranker)
        plain = MilvusGraphRetriever(store=store, k=3, ranking=ranking, hops=hops, filter=A_VIEW)
        for query in SPELLED_QUERIES:
            out += [_plain(await retrieve(graph, query)), _plain(await retrieve(plain, query))]
        out.append(seen)
    for entities in (None, ["Alice Smith", "Bob"], ["alice smith", "BOB"], ["Globex", "Bob"]):
        events = NoPathEvents()
        paths = MilvusPathRetriever(store=store, filter=A_VIEW, sentences=True, entity_min_score=0.3)
        kwargs = {"entities": entities} if entities else {}
        docs = await retrieve(paths, "How is Alice Smith related to Bob?", config={"callbacks": [events]}, **kwargs)
        out.append((_plain(docs), events.events))
    return out


async def test_a_tenant_sees_its_own_rows_whatever_the_others_do(make_store, retrieve) -> None:
    both = make_store(LexicalEmbeddings(), partition_key_field="tenant")
    both.add_documents(SPELLED_B)  # b's spelling first: shared rows would keep it
    both.add_documents(SPELLED_A)
    a_only = make_store(LexicalEmbeddings(), partition_key_field="tenant")
    a_only.add_documents(SPELLED_A)

    def fresh(store: MilvusGraphStore) -> MilvusGraphStore:
        # a fresh reader: equal scores are ordered by graph position, which follows a writer's own history
        # (so does a saved index): the reader rebuilds the graph from Milvus
        return make_store(
            LexicalEmbeddings(), prefix=store.collection_prefix, partition_key_field="tenant", graph_path=None
        )

    expected = await _tenant_a_sees(fresh(a_only), retrieve)
    entities, relations = expected[0]
    assert entities == ["Acme Corp", "Alice Smith", "Bob", "Springfield"]
    assert "Acme Corp hired Bob" in relations and "ACME CORP hired BOB" not in relations
    path = expected[-3][0]  # Alice Smith to Bob, through tenant a's own Acme Corp
    assert path and path[0][1]["_path"] == ["Alice Smith", "Acme Corp", "Bob"]
    assert await _tenant_a_sees(fresh(both), retrieve) == expected
    assert _view_names(both, "a") == expected[0]  # the writer's own graph holds the same
    # b's own spelling, in b's rows
    assert "ACME CORP hired BOB" in _view_names(both, "b")[1]

    # b merges and deletes: nothing of a's changes
    report = both.merge_entities(["alice smith"], into="A. Smith", tenant="b")
    assert report.entities_merged == 1 and report.relations_rewritten == 2
    assert both.delete_documents(["b1"], tenant="b").passages_deleted == 1
    assert "A. Smith" in _view_names(both, "b")[0] and "BOB" not in _view_names(both, "b")[0]
    assert await _tenant_a_sees(fresh(both), retrieve) == expected

    # a merges in both stores alike: still equal, and b's names stay b's
    b_before = _view_names(both, "b")
    for store in (both, a_only):
        assert store.merge_entities(["Bob"], into="Robert", tenant="a").entities_merged == 1
    after = await _tenant_a_sees(fresh(a_only), retrieve)
    assert "Robert" in after[0][0] and "Bob" not in after[0][0]
    assert await _tenant_a_sees(fresh(both), retrieve) == after
    assert _view_names(both, "b") == b_before


def test_merge_is_scoped_by_tenant(make_store) -> None:
    store = make_store(LexicalEmbeddings(), partition_key_field="tenant")
    store.add_documents(SPELLED_A + SPELLED_B)
    with pytest.raises(ValueError, match="tenant=<value>.*all_tenants=True"):
        store.merge_entities(["Bob"], into="Robert")
    with pytest.raises(ValueError, match="not both"):
        store.merge_entities(["Bob"], into="Robert", tenant="a", all_tenants=True)
    assert store.merge_entities(["Bob"], into="Robert", tenant="nobody").entities_merged == 0
    b_names = _view_names(store, "b")
    assert store.merge_entities(["bob"], into="Robert", tenant="a").entities_merged == 1
    assert "Robert" in _view_names(store, "a")[0] and "Acme Corp hired Robert" in _view_names(store, "a")[1]
    assert _view_names(store, "b") == b_names and "BOB" in b_names[0]

    report = store.merge_entities(["Acme Corp"], into="Acme Inc", all_tenants=True)
    assert report.entities_merged == 2  # a's and b's own rows
    a_names, a_rels = _view_names(store, "a")
    b_names, b_rels = _view_names(store, "b")
    assert "Acme Inc" in a_names and "Acme Inc" in b_names
    assert "Acme Inc hired Robert" in a_rels and "Acme Inc hired BOB" in b_rels
    assert "Globex sells widgets to Acme Inc" in b_rels
    assert len(store.entity_names()) == len(set(store.entity_names())) == len(a_names) + len(b_names)

    plain = make_store(LexicalEmbeddings())
    plain.add_documents(SPELLED_A)
    with pytest.raises(ValueError, match="no tenants"):
        plain.merge_entities(["Bob"], into="Robert", tenant="a")
    assert plain.merge_entities(["Bob"], into="Robert").entities_merged == 1


def test_a_store_of_an_earlier_version_keeps_shared_rows(make_store, monkeypatch, caplog) -> None:
    import logging

    from langchain_graphrag_milvus.milvus import connection as connection_module
    from langchain_graphrag_milvus.milvus.schema import create_collection
    from langchain_graphrag_milvus.text.names import entity_id

    def as_before(*args: Any, properties: Any = None, **kwargs: Any) -> None:
        create_collection(*args, **kwargs)  # the earlier version set no property

    with monkeypatch.context() as patch:
        patch.setattr(connection_module, "create_collection", as_before)
        old = make_store(LexicalEmbeddings(), partition_key_field="tenant")
        old._connection.ensure_collections(LexicalEmbeddings().size)  # as the earlier version created them
        old.add_documents(SPELLED_A + SPELLED_B)
    reopened = make_store(LexicalEmbeddings(), prefix=old.collection_prefix, partition_key_field="tenant")
    with caplog.at_level(logging.WARNING, logger="langchain_graphrag_milvus"):
        names = reopened.entity_names()
        assert not reopened._connection.tenant_rows()
    assert "created by an earlier version" in caplog.text and "new collection_prefix" in caplog.text
    assert names[entity_id("Bob")] == "Bob"  # one shared row, the first spelling
    retriever = MilvusGraphRetriever(store=reopened, k=2, filter=A_VIEW)
    assert {d.id for d in retriever.invoke("Who did Acme Corp hire?")} <= {"a1", "a2"}
    with pytest.raises(ValueError, match="earlier version.*all_tenants=True"):
        reopened.merge_entities(["Bob"], into="Robert", tenant="a")
    assert reopened.merge_entities(["Bob"], into="Robert", all_tenants=True).entities_merged == 1
    reopened.add_documents([Document(id="a3", page_content="Robert likes tea.",
                                     metadata={"tenant": "a", "triplets": [["Robert", "likes", "tea"]]})])  # fmt: skip
    assert reopened.entity_names()[entity_id("tea")] == "tea"  # still shared ids


def test_a_new_partitioned_store_keeps_rows_per_tenant(make_store) -> None:
    from langchain_graphrag_milvus.text.names import entity_id

    store = make_store(LexicalEmbeddings(), partition_key_field="tenant")
    store.add_documents(SPELLED_A + SPELLED_B)
    names = store.entity_names()
    assert names[entity_id("Bob", "a")] == "Bob" and names[entity_id("bob", "b")] == "BOB"
    assert entity_id("Bob") not in names
    reopened = make_store(LexicalEmbeddings(), prefix=store.collection_prefix, partition_key_field="tenant")
    assert reopened._connection.tenant_rows()
    retriever = MilvusGraphRetriever(store=reopened, k=2, ranking="ppr", filter=A_VIEW)
    calls = len(store.embedding.calls)
    retriever.invoke("Who did Acme Corp hire?", entities=["acme corp", "BOB"])
    # both names are tenant a's entities exactly: only the query is embedded (no vector lookup), then the
    # fingerprint's probe before this store object's first search
    assert reopened.embedding.calls == [1, 1] and len(store.embedding.calls) == calls


def test_synonyms_stay_inside_a_tenant(make_store) -> None:
    from langchain_graphrag_milvus.graph.ids import key_to_id
    from langchain_graphrag_milvus.text.names import entity_id

    store = make_store(LexicalEmbeddings(), partition_key_field="tenant", synonym_threshold=0.8)
    store.add_documents([
        Document(id="a1", page_content="Acme Corp hired Bob.",
                 metadata={"tenant": "a", "triplets": [["Acme Corp", "hired", "Bob"]]}),
        Document(id="a2", page_content="Acme Corp Inc makes rockets.",
                 metadata={"tenant": "a", "triplets": [["Acme Corp Inc", "makes", "rockets"]]}),
    ])  # fmt: skip
    store.add_documents([
        Document(id="b1", page_content="ACME CORP hired BOB.",
                 metadata={"tenant": "b", "triplets": [["ACME CORP", "hired", "BOB"]]}),
    ])  # fmt: skip
    graph = store.graph
    owner = {entity_id(n, t): t for t, names in (("a", ["Acme Corp", "Acme Corp Inc", "Bob", "rockets"]),
                                                 ("b", ["ACME CORP", "BOB"])) for n in names}  # fmt: skip
    pairs = [
        (key_to_id(int(graph.entities.keys[e])), key_to_id(int(graph.entities.keys[s])))
        for e in range(graph.n_entities)
        for s in graph.synonyms.row(e).tolist()
    ]
    assert (entity_id("Acme Corp Inc", "a"), entity_id("Acme Corp", "a")) in pairs  # a's own synonyms are kept
    assert all(owner[x] == owner[y] for x, y in pairs), pairs
