"""Hostile values in ids, entity names and metadata can neither break a query nor widen it."""

from __future__ import annotations

import pytest
from langchain_core.documents import Document

from langchain_graphrag_milvus import MilvusGraphRetriever

from ..fakes import LexicalEmbeddings

HOSTILE = [
    'x" or pk != "',
    "x' or pk != '",
    'quo"te',
    "back\\slash",
    "trailing\\",
    "new\nline",
    "tab\tid",
    "Ünïcødé 東京",
    'a") or (1 == 1',
    "nul-ish \u0001 control",
]


@pytest.fixture(scope="module")
def hostile_store(module_stores):
    store = module_stores(LexicalEmbeddings())
    docs = [
        Document(
            id=value,
            page_content=f"Passage {i} about the entity {value} and Basel.",
            metadata={
                "tenant": value,
                "n": i,
                "triplets": [[f"Entity {value}", "is near", "Basel"], ['O\'Brien "The Boss"\nSmith', "visited", value]],
            },
        )
        for i, value in enumerate(HOSTILE)
    ] + [
        Document(
            id="plain",
            page_content="A plain passage about Basel.",
            metadata={"tenant": "plain", "n": 99, "triplets": [["Plain", "is in", "Basel"]]},
        )
    ]
    report = store.add_documents(docs)
    assert report.passages_added == len(HOSTILE) + 1 and report.records_skipped == 0
    return store


def test_fetch_by_hostile_ids_returns_exactly_those_rows(hostile_store) -> None:
    for value in HOSTILE:
        rows = hostile_store.fetch("passages", [value], ("text",))
        assert list(rows) == [value]
    rows = hostile_store.fetch("passages", HOSTILE[:3] + ["does-not-exist"], ("text",))
    assert set(rows) == set(HOSTILE[:3])
    assert hostile_store.fetch("passages", ['nothing" or pk != "'], ("text",)) == {}


@pytest.mark.parametrize("value", HOSTILE)
async def test_dict_filter_with_hostile_values_matches_only_itself(hostile_store, retrieve, value) -> None:
    for retriever in (
        MilvusGraphRetriever(store=hostile_store, k=5, filter={"tenant": value}),
        hostile_store.as_naive_retriever(k=5, filter={"tenant": value}),
    ):
        docs = await retrieve(retriever, "Which entity is near Basel?")
        assert [d.id for d in docs] == [value]
        assert docs[0].metadata["tenant"] == value


async def test_injection_attempts_do_not_widen_results(hostile_store, retrieve) -> None:
    for attack in ('nobody" or tenant != "', "nobody' or tenant != '", 'x") or (tenant != "'):
        retriever = MilvusGraphRetriever(store=hostile_store, k=5, filter={"tenant": attack})
        docs = await retrieve(retriever, "Basel")
        assert all(d.metadata["tenant"] == attack for d in docs)  # i.e. only an exact match, if any
    assert [
        d.id
        for d in await retrieve(
            MilvusGraphRetriever(store=hostile_store, k=5), "Basel", filter={"tenant": ["plain", 'x" or pk != "']}
        )
    ] != []


def test_hostile_entity_names_survive_ingest_and_rebuild(hostile_store) -> None:
    names = set(hostile_store.entity_names().values())
    assert 'O\'Brien "The Boss" Smith' in names  # whitespace collapsed, quotes kept
    assert any("東京" in n for n in names)
    graph = hostile_store.rebuild_graph()
    assert graph.n_passages == len(HOSTILE) + 1
    assert set(graph.passages.ids) == set(HOSTILE) | {"plain"}
