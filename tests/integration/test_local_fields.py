"""A local search reads nothing back: the hits' fields are held beside the vectors (issue 25, item 1).

A relation or entity search answered from the client's tables used to read every hit from
Milvus by key after its scoring (a second round trip per query, after the first wave). The
tables now hold the relations' ``text``, ``predicate`` and ``passage_ids``, in step with the
graph, and the search reads only the generation counter, while it scores. These tests check,
on Milvus Lite and on the server, that a query makes no read of relations or entities by key,
that the held fields stay equal to Milvus' when another writer adds or removes a relation's
passages, that a row another writer deleted is still never a hit (the counter moved: the hits
are read back), and that a new process maps the saved fields.
"""

from __future__ import annotations

import asyncio
import functools
from pathlib import Path
from typing import Any

import pytest
from pymilvus import AsyncMilvusClient, MilvusClient

from langchain_graphrag_milvus import MilvusGraphRetriever, MilvusGraphStore
from langchain_graphrag_milvus.datasets import nano_dataset
from langchain_graphrag_milvus.graph import persist

from ..fakes import LexicalEmbeddings
from .test_local_search import FIELDS, MORE, QUERIES, _milvus, _mode, assert_same_as_milvus, assert_same_hits

ZETA_TEXT = "Zeta Quokka was a pupil of Johann Bernoulli"
ZETA_AGAIN = {
    "id": "zeta2",
    "passage": "Zeta Quokka, again, was a pupil of Johann Bernoulli.",
    "triplets": [["Zeta Quokka", "was a pupil of", "Johann Bernoulli"]],
}


class ClientCalls:
    """Records ``(method, collection)`` of every read of the Milvus clients (sync and async), in order."""

    METHODS = ("search", "query", "get", "describe_collection")

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.calls: list[tuple[str, str]] = []
        for owner in (MilvusClient, AsyncMilvusClient):
            for name in self.METHODS:
                method = getattr(owner, name, None)
                if method is not None:
                    monkeypatch.setattr(owner, name, self._wrap(method, name))

    def _wrap(self, method: Any, name: str) -> Any:
        calls = self.calls
        if asyncio.iscoroutinefunction(method):

            @functools.wraps(method)
            async def arecord(client: Any, *args: Any, **kwargs: Any) -> Any:
                calls.append((name, str(kwargs.get("collection_name") or (args[0] if args else ""))))
                return await method(client, *args, **kwargs)

            return arecord

        @functools.wraps(method)
        def record(client: Any, *args: Any, **kwargs: Any) -> Any:
            calls.append((name, str(kwargs.get("collection_name") or (args[0] if args else ""))))
            return method(client, *args, **kwargs)

        return record

    def on(self, store: MilvusGraphStore, *kinds: str) -> list[str]:
        """The methods called on these collections of ``store``."""
        names = {store._connection.collection_name(k): k for k in kinds}  # type: ignore[arg-type]
        return [m for m, c in self.calls if c in names]


class Fetches:
    """Counts the store's reads of rows by key (the read back of hits), per kind."""

    def __init__(self, store: MilvusGraphStore, monkeypatch: pytest.MonkeyPatch) -> None:
        self.kinds: list[str] = []
        reads = store._reads
        fetch, afetch = reads.fetch, reads.afetch

        def spy(kind: str, *args: Any, **kwargs: Any) -> Any:
            self.kinds.append(kind)
            return fetch(kind, *args, **kwargs)

        async def aspy(kind: str, *args: Any, **kwargs: Any) -> Any:
            self.kinds.append(kind)
            return await afetch(kind, *args, **kwargs)

        monkeypatch.setattr(reads, "fetch", spy)
        monkeypatch.setattr(reads, "afetch", aspy)


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("scope", ["all", "entities"])
def test_a_query_reads_no_relation_or_entity_back(make_store, monkeypatch, mode, scope) -> None:
    """The relation and entity searches of a query make no Milvus read but the generation counter."""
    store = make_store(LexicalEmbeddings(), local_search=_mode(make_store))
    store.add_records(nano_dataset() + MORE)
    remote = make_store(LexicalEmbeddings(), prefix=store.collection_prefix, local_search="off", graph_path=None)
    local = MilvusGraphRetriever(store=store, k=3, relation_scope=scope)
    local.invoke(QUERIES[0])  # warm: the tables are in step
    for query in [*QUERIES, "Zeta Quokka and Omega Lynx"]:
        calls = ClientCalls(monkeypatch)
        got = local.invoke(query) if mode == "sync" else asyncio.run(local.ainvoke(query))
        assert set(calls.on(store, "relations", "entities")) <= {"describe_collection"}, query
        assert "describe_collection" in calls.on(store, "relations")  # the counter, read with the searches
        monkeypatch.undo()
        want = MilvusGraphRetriever(store=remote, k=3, relation_scope=scope).invoke(query)
        assert [(d.id, d.page_content) for d in got] == [(d.id, d.page_content) for d in want]


def test_another_writers_new_and_removed_links_are_read_again(make_store, monkeypatch) -> None:
    """Another writer adds a passage to a relation, then deletes one: the held passage ids follow Milvus'."""
    reader = make_store(LexicalEmbeddings(), local_search=_mode(make_store), refresh_interval=None)
    reader.add_records(nano_dataset() + MORE)
    assert_same_as_milvus(reader)
    writer = make_store(LexicalEmbeddings(), prefix=reader.collection_prefix, local_search="off", graph_path=None)
    vectors = reader.embedding.embed_documents([ZETA_TEXT, *QUERIES])
    for change in (lambda: writer.add_records([ZETA_AGAIN]), lambda: writer.delete_passages(["zeta"])):
        change()
        reader.refresh()
        got = reader.search("relations", vectors, 6, output_fields=FIELDS)
        want = _milvus(reader).search("relations", vectors, 6, output_fields=FIELDS)
        assert_same_hits(got, want)
        assert got[0][0].fields["text"] == ZETA_TEXT
        assert sorted(got[0][0].fields["passage_ids"]) == sorted(want[0][0].fields["passage_ids"])
        fetches = Fetches(reader, monkeypatch)
        assert_same_as_milvus(reader)
        assert fetches.kinds == []  # in step again: answered from the held fields
    assert got[0][0].fields["passage_ids"] == ["zeta2"]


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_a_moved_counter_reads_the_hits_back(make_store, monkeypatch, mode) -> None:
    """Unchanged data: no read back. Another writer's delete (no refresh yet): read back, the row is no hit."""
    reader = make_store(LexicalEmbeddings(), local_search=_mode(make_store), refresh_interval=None)
    reader.add_records(nano_dataset() + MORE)
    vectors = reader.embedding.embed_documents([ZETA_TEXT, "Omega Lynx studied with Daniel Bernoulli"])

    def search(kind: str, fields: tuple[str, ...]) -> Any:
        if mode == "sync":
            return reader.search(kind, vectors, 50, output_fields=fields)
        return asyncio.run(reader.asearch(kind, vectors, 50, output_fields=fields))

    search("relations", FIELDS)  # warm
    fetches = Fetches(reader, monkeypatch)
    before = {h.id for per in search("relations", FIELDS) for h in per}
    assert fetches.kinds == []
    writer = make_store(LexicalEmbeddings(), prefix=reader.collection_prefix, local_search="off", graph_path=None)
    writer.delete_passages(["zeta", "omega"])
    for kind, fields in (("relations", FIELDS), ("relations", ("pk",)), ("entities", ("pk",))):
        alive = {r["pk"] for r in reader.iterate(kind, ("pk",))}
        got = search(kind, fields)
        assert {h.id for per in got for h in per} <= alive, kind
        assert got == [[h for h in per if h.id in alive] for per in _milvus_like(reader, kind, vectors, fields)]
    assert fetches.kinds and set(fetches.kinds) <= {"relations", "entities"}
    assert before - {h.id for per in search("relations", FIELDS) for h in per}  # the deleted relations are gone


def _milvus_like(store: MilvusGraphStore, kind: str, vectors: Any, fields: tuple[str, ...]) -> Any:
    """What the store's stale table scores, read back (the reference for a moved counter)."""
    table = store._graph_cache.vector_table(kind)  # type: ignore[arg-type]
    assert table is not None
    found = store._graph_cache.local.hits(kind, table, vectors, 50)  # type: ignore[union-attr, arg-type]
    local = store._search
    names = local._fields(kind, fields)  # type: ignore[arg-type]
    ids = [i for per in found for i, _ in per]
    return local._hits(kind, found, names, _milvus(store).fetch(kind, ids, names or ("pk",)))  # type: ignore[arg-type]


def test_a_new_process_maps_the_saved_fields(tmp_path: Path, monkeypatch) -> None:
    uri = str(tmp_path / "m.db")
    first = MilvusGraphStore(LexicalEmbeddings(), uri=uri, collection_prefix="saved")
    first.add_records(nano_dataset() + MORE)
    first.close()
    files = set(persist.read_manifest(tmp_path / "m.db.graphs" / "saved")["files"])
    assert {"extra_vectors_relations_fields_blob.npy", "extra_vectors_relations_links.npy"} <= files
    again = MilvusGraphStore(LexicalEmbeddings(), uri=uri, collection_prefix="saved")
    try:
        fetches = Fetches(again, monkeypatch)
        assert_same_as_milvus(again)
        assert fetches.kinds == []
        table = again._graph_cache.vector_table("relations")
        assert table is not None and table.fields is not None
        assert not table.fields.blob.flags.owndata  # memory-mapped, not copied
    finally:
        again.close()
