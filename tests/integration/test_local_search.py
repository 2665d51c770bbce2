"""Entity and relation searches answered from vectors held in the client (issue 25, item 2).

Milvus Lite scans every row of a collection for each search; a store holds its entity and
relation vectors in step with its graph and scores them itself. These tests check, on Lite
(the default ``local_search="auto"``) and on the server (``"on"``), that such a search
returns what Milvus' own search returns, through writes, deletes, another writer's change, a
saved index and a store saved before vectors were; and that it reads Milvus only for what it lacks.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from langchain_graphrag_milvus import MilvusGraphRetriever, MilvusGraphStore
from langchain_graphrag_milvus.datasets import nano_dataset
from langchain_graphrag_milvus.graph import persist
from langchain_graphrag_milvus.graph.ids import key_to_id
from langchain_graphrag_milvus.milvus import expr
from langchain_graphrag_milvus.milvus.reads import MilvusReads

from ..fakes import LexicalEmbeddings

QUERIES = [
    "Who taught Euler?",
    "Daniel Bernoulli fluid dynamics",
    "Which mathematician was a pupil of Johann Bernoulli?",
]
FIELDS = ("text", "passage_ids", "predicate")
MORE = [
    {"id": "zeta", "passage": "Zeta Quokka was a pupil of Johann Bernoulli.",
     "triplets": [["Zeta Quokka", "was a pupil of", "Johann Bernoulli"], ["Zeta Quokka", "wrote", "Hydra Notes"]]},
    {"id": "omega", "passage": "Omega Lynx studied fluid dynamics with Daniel Bernoulli.",
     "triplets": [["Omega Lynx", "studied with", "Daniel Bernoulli"]]},
]  # fmt: skip


class Spy:
    """Counts the store's Milvus searches and vector reads, per kind."""

    def __init__(self, store: MilvusGraphStore, monkeypatch: pytest.MonkeyPatch) -> None:
        self.searches: list[str] = []
        self.vector_reads: list[tuple[str, int]] = []
        reads, cache = store._reads, store._graph_cache
        search, asearch, read_vectors = reads.search, reads.asearch, cache._read_vectors

        def spy_search(kind: str, *args: Any, **kwargs: Any) -> Any:
            self.searches.append(kind)
            return search(kind, *args, **kwargs)

        async def spy_asearch(kind: str, *args: Any, **kwargs: Any) -> Any:
            self.searches.append(kind)
            return await asearch(kind, *args, **kwargs)

        def spy_read_vectors(kind: str, missing: Any, scan: bool, scanned: list[str]) -> Any:
            table = read_vectors(kind, missing, scan, scanned)
            self.vector_reads.append((kind, -1 if kind in scanned else len(missing)))
            return table

        monkeypatch.setattr(reads, "search", spy_search)
        monkeypatch.setattr(reads, "asearch", spy_asearch)
        monkeypatch.setattr(cache, "_read_vectors", spy_read_vectors)


def _mode(make_store: Any) -> str:
    return "auto" if make_store.backend == "lite" else "on"


def _milvus(store: MilvusGraphStore) -> MilvusReads:
    """Milvus' own searches, past the store's tables (the reference)."""
    return MilvusReads(store._connection, store.search_params, store._reads.layout)


def assert_same_as_milvus(store: MilvusGraphStore, mode: str = "sync") -> None:
    vectors = store.embedding.embed_documents(QUERIES)
    reference = _milvus(store)
    for kind, fields, limit in (("relations", FIELDS, 6), ("entities", ("pk",), 4)):
        if mode == "sync":
            got = store.search(kind, vectors, limit, output_fields=fields)
        else:
            got = asyncio.run(store.asearch(kind, vectors, limit, output_fields=fields))
        want = reference.search(kind, vectors, limit, output_fields=fields)
        assert_same_hits(got, want)


def assert_same_hits(got: list[list[Any]], want: list[list[Any]]) -> None:
    """The same hits with the same fields and scores; rows of equal score may come in another order."""
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert [round(h.score, 5) for h in g] == [round(h.score, 5) for h in w]
        for score in {round(h.score, 5) for h in g}:
            tied_g = {h.id: dict(h.fields) for h in g if round(h.score, 5) == score}
            tied_w = {h.id: dict(h.fields) for h in w if round(h.score, 5) == score}
            if score > round(g[-1].score, 5):  # above the cut: the very same rows
                assert tied_g == tied_w
            else:  # at the cut Milvus picks any of the rows with this score
                assert len(tied_g) == len(tied_w)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_searches_match_milvus_through_writes_and_deletes(make_store, monkeypatch, mode) -> None:
    store = make_store(LexicalEmbeddings(), local_search=_mode(make_store))
    store.add_records(nano_dataset())
    spy = Spy(store, monkeypatch)
    assert_same_as_milvus(store, mode)
    assert spy.searches == [] and spy.vector_reads == []  # the written rows were offered: nothing read
    store.add_records(MORE)
    assert_same_as_milvus(store, mode)
    store.delete_passages(["zeta"])
    assert_same_as_milvus(store, mode)
    names = set(store.entity_names().values())
    assert "Zeta Quokka" not in names and "Omega Lynx" in names
    hits = store.search("entities", store.embedding.embed_documents(["Zeta Quokka"]), 50)
    assert all(store.entity_names().get(h.id) for h in hits[0])  # no deleted entity comes back
    assert spy.searches == [] and spy.vector_reads == []


def test_filtered_searches_and_passages_go_to_milvus(make_store, monkeypatch) -> None:
    store = make_store(LexicalEmbeddings(), local_search=_mode(make_store))
    store.add_records(nano_dataset())
    spy = Spy(store, monkeypatch)
    vector = store.embedding.embed_documents(["Euler"])
    store.search("passages", vector, 2)
    store.search("relations", vector, 2, filter_expr='predicate != ""')
    assert spy.searches == ["passages", "relations"]


def test_off_searches_milvus(make_store, monkeypatch) -> None:
    store = make_store(LexicalEmbeddings(), local_search="off")
    store.add_records(nano_dataset())
    spy = Spy(store, monkeypatch)
    MilvusGraphRetriever(store=store, k=2).invoke(QUERIES[0])
    assert "relations" in spy.searches
    assert store.memory_report().items["local vectors"] == 0


def test_another_writers_rows_are_read_by_key(make_store, monkeypatch) -> None:
    reader = make_store(LexicalEmbeddings(), local_search=_mode(make_store), refresh_interval=0)
    writer = make_store(LexicalEmbeddings(), prefix=reader.collection_prefix, local_search="off", graph_path=None)
    reader.add_records(nano_dataset())
    assert_same_as_milvus(reader)
    writer.add_records(MORE)
    reader.refresh()
    spy = Spy(reader, monkeypatch)
    assert_same_as_milvus(reader)
    assert spy.searches == []
    read = dict(spy.vector_reads)
    assert read == {"relations": 3, "entities": 3}  # only the other writer's new rows (Zeta, Hydra, Omega)


def test_a_new_process_maps_the_saved_vectors(tmp_path: Path, monkeypatch) -> None:
    uri = str(tmp_path / "m.db")
    first = MilvusGraphStore(LexicalEmbeddings(), uri=uri, collection_prefix="saved")
    first.add_records(nano_dataset())
    first.close()
    files = persist.read_manifest(tmp_path / "m.db.graphs" / "saved")["files"]
    assert {"extra_vectors_relations.npy", "extra_vectors_entities_keys.npy"} <= set(files)
    again = MilvusGraphStore(LexicalEmbeddings(), uri=uri, collection_prefix="saved")
    try:
        spy = Spy(again, monkeypatch)
        assert_same_as_milvus(again)
        assert spy.searches == [] and spy.vector_reads == []
        report = again.memory_report()
        assert report.items["local vectors"] < 4096 and report.mapped > 0  # mapped, not copied
    finally:
        again.close()


def test_a_store_saved_before_vectors_reads_them_once(tmp_path: Path, monkeypatch) -> None:
    uri = str(tmp_path / "m.db")
    first = MilvusGraphStore(LexicalEmbeddings(), uri=uri, collection_prefix="old", local_search="off")
    first.add_records(nano_dataset())
    first.close()
    # an index as an older version saved it: no vectors
    assert not any("vectors" in f for f in persist.read_manifest(tmp_path / "m.db.graphs" / "old")["files"])
    monkeypatch.setattr("langchain_graphrag_milvus.milvus.graph_vectors.FETCH_MAX", 0)  # as if it were large
    second = MilvusGraphStore(LexicalEmbeddings(), uri=uri, collection_prefix="old")
    spy = Spy(second, monkeypatch)
    assert_same_as_milvus(second)
    assert sorted(spy.vector_reads) == [("entities", -1), ("relations", -1)]  # one scan of each
    second.close()
    third = MilvusGraphStore(LexicalEmbeddings(), uri=uri, collection_prefix="old")
    try:
        spy = Spy(third, monkeypatch)
        assert_same_as_milvus(third)
        assert spy.vector_reads == []  # saved by the second store
    finally:
        third.close()


def test_retrieval_is_unchanged(make_store) -> None:
    local = make_store(LexicalEmbeddings(), local_search=_mode(make_store))
    local.add_records(nano_dataset() + MORE)
    remote = make_store(LexicalEmbeddings(), prefix=local.collection_prefix, local_search="off", graph_path=None)
    for query in QUERIES:
        a = MilvusGraphRetriever(store=local, k=3).invoke(query)
        b = MilvusGraphRetriever(store=remote, k=3).invoke(query)
        assert [(d.id, d.page_content) for d in a] == [(d.id, d.page_content) for d in b]


def test_a_search_within_given_keys_is_scored_here(make_store, monkeypatch) -> None:
    store = make_store(LexicalEmbeddings(), local_search=_mode(make_store))
    store.add_records(nano_dataset() + MORE)
    ids = [key_to_id(k) for k in store.graph.relations.keys.tolist()][::2]
    vectors = store.embedding.embed_documents(QUERIES)
    spy = Spy(store, monkeypatch)
    where = expr.in_list("pk", ids)
    got = store.search("relations", vectors, 4, filter_expr=where, output_fields=FIELDS, within=ids)
    want = _milvus(store).search("relations", vectors, 4, filter_expr=where, output_fields=FIELDS)
    assert_same_hits(got, want)
    assert all(h.id in ids for g in got for h in g)
    assert spy.searches == []
    assert store.search("relations", vectors, 4, filter_expr='pk in ["nope"]', within=["nope"]) == [[], [], []]
    assert spy.searches == ["relations"]  # a key the table does not hold: Milvus answers


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_the_entity_scoped_relation_search_is_scored_here(make_store, monkeypatch, mode) -> None:
    local = make_store(LexicalEmbeddings(), local_search=_mode(make_store))
    local.add_records(nano_dataset() + MORE)
    remote = make_store(LexicalEmbeddings(), prefix=local.collection_prefix, local_search="off", graph_path=None)
    spy = Spy(local, monkeypatch)
    for query in QUERIES:
        a = MilvusGraphRetriever(store=local, k=3, relation_scope="entities")
        b = MilvusGraphRetriever(store=remote, k=3, relation_scope="entities")
        got = a.invoke(query) if mode == "sync" else asyncio.run(a.ainvoke(query))
        assert [d.id for d in got] == [d.id for d in b.invoke(query)]
    assert "relations" not in spy.searches and "entities" not in spy.searches


def test_on_without_a_graph_path_says_so_once_and_does_not_check_per_query(
    make_store: Any, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """More rows to read than a check reads by key, and no graph_path to keep a scan in: Milvus answers.

    Measured on a server at 20k passages: the failed check was not remembered, every query ran it
    again (0.5 s a query, 20x naive) and said so only at debug level.
    """
    import logging

    from langchain_graphrag_milvus.milvus import graph_vectors

    writer = make_store(LexicalEmbeddings(), local_search="off", graph_path=None)
    writer.add_records(nano_dataset())
    monkeypatch.setattr(graph_vectors, "FETCH_MAX", 2)  # nano's rows stand for a large store's
    reader = make_store(LexicalEmbeddings(), prefix=writer.collection_prefix, local_search="on", graph_path=None)
    cache = reader._graph_cache
    read_vectors, attempts = cache._read_vectors, list[str]()

    def counted(kind: str, *args: Any) -> Any:
        attempts.append(kind)
        return read_vectors(kind, *args)

    monkeypatch.setattr(cache, "_read_vectors", counted)
    with caplog.at_level(logging.WARNING, logger="langchain_graphrag_milvus"):
        for _ in range(3):
            assert_same_as_milvus(reader)
    said = [r.getMessage() for r in caplog.records if "not held in the client" in r.getMessage()]
    assert sorted(attempts) == ["entities", "relations"]  # one check per kind, not one per query
    assert len(said) == 2 and all("graph_path=" in m for m in said)
    reader.add_records(MORE)  # the graph changed: checked again (the write's rows are offered), and not said again
    assert_same_as_milvus(reader)
    assert len([r for r in caplog.records if "not held in the client" in r.getMessage()]) == 2
