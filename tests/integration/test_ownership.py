"""The store deletes, renames or overwrites only what it created (Lite and server).

- ``graph_path``: a folder of the user's files, a file, or a path holding or inside the
  Milvus Lite database is refused at construction (and at save), nothing written.
- Identity: a saved index of another store with the same prefix (or a copy of one, with
  valid checksums) is rebuilt with a warning, or refused with ``on_stale="error"``.
- ``drop()`` refuses, dropping nothing, when any collection under its names is not ours.
- ``close()`` leaves Milvus Lite's server running while a ``langchain_milvus.Milvus`` store
  of the process still uses it.
"""

from __future__ import annotations

import logging
import os
import shutil
import uuid
from pathlib import Path

import pytest
from langchain_core.documents import Document
from langchain_milvus import Milvus

from langchain_graphrag_milvus import ExistingCollectionGraphStore, MilvusGraphStore
from langchain_graphrag_milvus.errors import ForeignCollectionError, GraphPathError, StaleIndexError
from langchain_graphrag_milvus.graph import persist
from langchain_graphrag_milvus.milvus.connection import STORE_ID_KEY

from ..fakes import LexicalEmbeddings

LOGGER = "langchain_graphrag_milvus"


def records(who: str) -> list[dict]:
    """Two passages, three entities, two relations: the same shape for every customer."""
    a, b, c = {"a": ("Alice Archer", "Bob Baker", "Carol Cole"), "b": ("Dave Dunn", "Erin Eckert", "Frank Fox")}[who]
    return [
        {"passage": f"{a} hired {b}.", "triplets": [[a, "hired", b]]},
        {"passage": f"{b} met {c}.", "triplets": [[b, "met", c]]},
    ]


def names(store: MilvusGraphStore) -> set[str]:
    return set(store.entity_names().values())


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# ------------------------------------------------------------------ graph_path
def test_a_folder_of_the_users_files_is_refused_before_anything_is_written(make_store, tmp_path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "report.txt").write_text("the team's report", encoding="utf-8")
    (docs / "old.npy").write_bytes(b"\x93NUMPY")
    prefix = f"o{uuid.uuid4().hex[:8]}"
    before = snapshot(tmp_path)
    with pytest.raises(GraphPathError, match=r"docs.*report\.txt"):
        make_store(LexicalEmbeddings(), prefix=prefix, graph_path=docs)
    with pytest.raises(GraphPathError, match="is a file"):
        make_store(LexicalEmbeddings(), prefix=prefix, graph_path=docs / "report.txt")
    assert snapshot(tmp_path) == before
    assert sorted(p.name for p in docs.iterdir()) == ["old.npy", "report.txt"]
    probe = make_store(LexicalEmbeddings(), prefix=prefix)
    assert not probe.exists()  # no collection created either


def test_files_added_to_graph_path_later_are_kept_and_the_save_skipped(make_store, tmp_path, caplog) -> None:
    graph_path = tmp_path / "index"
    store = make_store(LexicalEmbeddings(), graph_path=graph_path)
    store.add_records(records("a"))
    persist.verify(graph_path)
    (graph_path / "notes.txt").write_text("mine", encoding="utf-8")
    before = snapshot(graph_path)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        store.add_records([{"passage": "Gina Gray met Alice.", "triplets": [["Gina Gray", "met", "Alice Archer"]]}])
    assert "cannot save the graph index" in caplog.text and "notes.txt" in caplog.text
    assert snapshot(graph_path) == before  # the save refused before writing: nothing deleted, renamed or added
    assert not (tmp_path / "index.old").exists() and not (tmp_path / "index.tmp").exists()
    assert "Gina Gray" in names(store)  # the write itself is in Milvus and in the graph
    with pytest.raises(GraphPathError, match="notes.txt"):  # a new store is refused at construction
        make_store(LexicalEmbeddings(), prefix=store.collection_prefix, graph_path=graph_path)


@pytest.mark.parametrize("where", ["parent", "inside", "itself"])
def test_graph_path_may_not_hold_or_sit_in_the_lite_database(tmp_path, where) -> None:
    data = tmp_path / "data"
    data.mkdir()
    uri = str(data / "graph.db")
    first = MilvusGraphStore(LexicalEmbeddings(), uri=uri, collection_prefix="lite")
    first.add_records(records("a"))
    first.close()
    before = snapshot(tmp_path)
    bad = {"parent": data, "inside": data / "graph.db" / "index", "itself": data / "graph.db"}[where]
    with pytest.raises(GraphPathError, match="Milvus Lite database"):
        MilvusGraphStore(LexicalEmbeddings(), uri=uri, collection_prefix="lite", graph_path=bad)
    assert snapshot(tmp_path) == before
    again = MilvusGraphStore(LexicalEmbeddings(), uri=uri, collection_prefix="lite", graph_path=data / "index")
    try:
        assert names(again) == {"Alice Archer", "Bob Baker", "Carol Cole"}  # the database was never moved
    finally:
        again.close()


# ------------------------------------------------------------------ identity
def test_an_index_saved_by_a_namesake_store_is_rebuilt_or_refused(make_store, tmp_path, caplog) -> None:
    graph_path = tmp_path / "index"
    prefix = f"id{uuid.uuid4().hex[:8]}"
    a = make_store(LexicalEmbeddings(), prefix=prefix, graph_path=graph_path)
    a.add_records(records("a"))
    assert names(a) == {"Alice Archer", "Bob Baker", "Carol Cole"}
    saved_id = persist.read_manifest(graph_path)["fingerprint"]["store_id"]
    kept = tmp_path / "kept-index"  # drop() removes a's saved index: a copy of it is put back in its place
    shutil.copytree(graph_path, kept)
    a.drop()  # the same prefix now holds customer b's store: same shape, same generation, same counts
    assert not graph_path.exists()
    shutil.copytree(kept, graph_path)
    b = make_store(LexicalEmbeddings(), prefix=prefix)
    b.add_records(records("b"))
    saved = persist.read_manifest(graph_path)["fingerprint"]
    current = b._graph_cache.fingerprint()
    assert current["store_id"] != saved_id  # only the store id tells the two apart:
    assert {k: v for k, v in current.items() if k != "store_id"} == {k: v for k, v in saved.items() if k != "store_id"}
    strict = make_store(LexicalEmbeddings(), prefix=prefix, graph_path=graph_path, on_stale="error")
    with pytest.raises(StaleIndexError, match="another store"):
        strict.entity_names()
    reader = make_store(LexicalEmbeddings(), prefix=prefix, graph_path=graph_path)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        assert names(reader) == {"Dave Dunn", "Erin Eckert", "Frank Fox"}
    assert "saved by another store" in caplog.text
    assert persist.read_manifest(graph_path)["fingerprint"]["store_id"] != saved_id  # rewritten as b's


def test_two_lite_stores_with_one_prefix_never_answer_with_each_others_names(tmp_path, caplog) -> None:
    shared = tmp_path / "shared-index"
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    uris = {who: str(tmp_path / who / "milvus.db") for who in "ab"}
    for who in "ab":  # b saves last: the index under the shared path is b's
        store = MilvusGraphStore(LexicalEmbeddings(), uri=uris[who], collection_prefix="customer", graph_path=shared)
        store.add_records(records(who))
        store.close()
    copy = tmp_path / "copied-index"  # a copy of b's index (valid checksums) handed to a
    shutil.copytree(shared, copy)
    for path in (shared, copy):
        a = MilvusGraphStore(LexicalEmbeddings(), uri=uris["a"], collection_prefix="customer", graph_path=path)
        try:
            with caplog.at_level(logging.WARNING, logger=LOGGER):
                assert names(a) == {"Alice Archer", "Bob Baker", "Carol Cole"}
            assert "saved by another store" in caplog.text
            caplog.clear()
        finally:
            a.close()


def test_collections_without_a_store_id_get_one_on_first_use(make_store, tmp_path) -> None:
    store = make_store(LexicalEmbeddings())
    store.add_records(records("a"))
    name = store.collection_name("relations")
    # as an older version left it (the 2.3 server cannot drop a property: an empty value counts as none)
    store.client.alter_collection_properties(name, properties={STORE_ID_KEY: ""})
    assert not (store.client.describe_collection(name).get("properties") or {}).get(STORE_ID_KEY)
    reopened = make_store(LexicalEmbeddings(), prefix=store.collection_prefix, graph_path=tmp_path / "index")
    assert names(reopened) == {"Alice Archer", "Bob Baker", "Carol Cole"}
    assigned = store.client.describe_collection(name)["properties"][STORE_ID_KEY]
    assert len(assigned) == 32 and persist.read_manifest(tmp_path / "index")["fingerprint"]["store_id"] == assigned


# ------------------------------------------------------------------ drop
def test_drop_refuses_a_teams_collection_and_drops_nothing(make_store) -> None:
    probe = make_store(LexicalEmbeddings())
    prefix = probe.collection_prefix
    team = Milvus.from_documents(
        [Document("The team's own passage.", metadata={"source": "team.txt"})],
        LexicalEmbeddings(),
        collection_name=f"{prefix}_passages",
        connection_args={"uri": make_store.uri},
        consistency_level="Strong",
    )
    store = make_store(LexicalEmbeddings(), prefix=prefix)
    with pytest.raises(ForeignCollectionError, match=f"{prefix}_passages.*not created by") as refused:
        store.add_records(records("a"))
    assert "older version" not in str(refused.value)
    assert not store.client.has_collection(f"{prefix}_entities")  # checked before any was created
    ours = make_store(LexicalEmbeddings(), prefix=prefix)  # our own graph collections beside the team's
    ours._connection._create_missing(("entities", "relations"), 256, None)
    with pytest.raises(ForeignCollectionError, match=f"{prefix}_passages"):
        ours.drop()
    for kind in ("entities", "relations", "passages"):  # nothing dropped
        assert ours.client.has_collection(f"{prefix}_{kind}"), kind
    assert [d.page_content for d in team.similarity_search("team passage", k=1)] == ["The team's own passage."]
    team.client.drop_collection(f"{prefix}_passages")  # the team's own clean-up
    ours.drop()  # now only ours: dropped
    assert not any(ours.client.has_collection(f"{prefix}_{k}") for k in ("entities", "relations"))


# ------------------------------------------------------------------ close
@pytest.mark.parametrize("order", ["team first", "store first"])
def test_close_keeps_the_lite_server_of_a_langchain_milvus_store(tmp_path, order) -> None:
    uri = str(tmp_path / "team.db")
    embedding = LexicalEmbeddings()
    store = None
    if order == "store first":
        store = MilvusGraphStore(embedding, uri=uri, collection_prefix="graph")
        store.add_records(records("a"))
    team = Milvus.from_documents(
        [Document("Alice Archer met Bob Baker.")], embedding, collection_name="team_docs", connection_args={"uri": uri}
    )
    graph = ExistingCollectionGraphStore(embedding, collection_name="team_docs", uri=uri)
    graph.index_passages(triplets={})
    graph.close()
    if store is not None:
        store.close()
    assert [d.page_content for d in team.similarity_search("Alice", k=1)] == ["Alice Archer met Bob Baker."]
    team.add_documents([Document("Carol Cole met Dave Dunn.")])
    assert team.client.query("team_docs", filter="", output_fields=["text"], limit=10)
    team.client.close()


def test_close_stops_the_server_it_started_when_nothing_else_uses_it(tmp_path) -> None:
    from milvus_lite.server_manager import server_manager_instance

    uri = str(tmp_path / "alone.db")
    store = MilvusGraphStore(LexicalEmbeddings(), uri=uri, collection_prefix="graph")
    store.add_records(records("a"))
    store.passage_store  # noqa: B018  (its langchain_milvus.Milvus is the store's own client)
    assert os.path.abspath(uri) in server_manager_instance._servers
    store.close()
    assert os.path.abspath(uri) not in server_manager_instance._servers  # the data directory is free again
