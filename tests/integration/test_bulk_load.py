"""A first load into empty collections: no existence reads, the graph kept in memory, same rows as the checked path."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import pytest
from langchain_core.documents import Document

from langchain_graphrag_milvus.ingest import load as load_module
from langchain_graphrag_milvus.text.names import relation_id

from ..fakes import LexicalEmbeddings
from ..graph_checks import graph_signature

FIELDS = {
    "passages": ("text", "vector", "doc_hash", "source_id"),
    "entities": ("text", "vector", "synonym_ids"),
    "relations": ("text", "vector", "subject_id", "object_id", "predicate", "passage_ids"),
}


def docs() -> list[Document]:
    """Five passages in chunks of two: "Ada met Bob" is stated in the first and third chunks."""
    triplets = [
        [["Ada", "met", "Bob"], ["Bob", "knows", "Cy"]],
        [["Cy", "lives in", "Paris"]],
        [["Dee", "met", "Ada"]],
        [["ada", "met", "Bob"], ["Eve", "knows", "Dee"]],  # the first relation again, another spelling
        [["Paris", "is in", "France"]],
    ]
    return [
        Document(id=f"d{i}", page_content=f"Passage {i}.", metadata={"triplets": t}) for i, t in enumerate(triplets)
    ]


def dump(store: Any) -> dict[str, dict[str, dict[str, Any]]]:
    def norm(v: Any) -> Any:
        return [round(float(x), 5) for x in v] if isinstance(v, list) and v and isinstance(v[0], float) else v

    out = {}
    for kind, fields in FIELDS.items():
        rows = store._reads.fetch(kind, [r["pk"] for r in store.iterate(kind, ("pk",))], fields)
        out[kind] = {
            pk: {f: norm(list(v) if not isinstance(v, str) else v) for f, v in row.items()} for pk, row in rows.items()
        }
    return out


def same_arrays(a: Any, b: Any) -> bool:
    """The two indexes hold the same arrays (order included), not only the same relations."""
    pairs = [(a.entities.keys, b.entities.keys), (a.relations.keys, b.relations.keys)]
    pairs += [(a.rel_subject, b.rel_subject), (a.rel_object, b.rel_object)]
    for name in ("ent_rel", "rel_pas", "pas_rel", "synonyms"):
        pairs += [
            (getattr(a, name).indptr, getattr(b, name).indptr),
            (getattr(a, name).indices, getattr(b, name).indices),
        ]
    return list(a.passages.ids) == list(b.passages.ids) and all(np.array_equal(x, y) for x, y in pairs)


def checked(store: Any) -> Any:
    """Make ``store`` ingest on today's checked path (every chunk asks Milvus what exists)."""
    context = store._ingest_context
    store._writes._context = lambda: dataclasses.replace(context(), bulk_load=False)
    return store


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(load_module, "BATCH_PASSAGES", 2)


def spy_fetches(store: Any, monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, list[str]]]:
    fetched: list[tuple[str, list[str]]] = []
    real = store._reads.fetch

    def spy(kind: str, ids: Any, *args: Any, **kwargs: Any) -> Any:
        ids = list(ids)
        fetched.append((kind, ids))
        return real(kind, ids, *args, **kwargs)

    monkeypatch.setattr(store._reads, "fetch", spy)
    return fetched


def test_first_load_reads_only_relations_stated_again(make_store, monkeypatch) -> None:
    store = make_store(LexicalEmbeddings())
    fetched = spy_fetches(store, monkeypatch)
    report = store.add_documents(docs())
    assert report.bulk_load and report.passages_added == 5 and report.relations_linked == 1
    assert fetched == [("relations", [relation_id("Ada", "met", "Bob")])]  # the one stated again, nothing else


@pytest.mark.parametrize("synonyms", [None, -1.0])
def test_bulk_load_writes_what_the_checked_path_writes(make_store, monkeypatch, synonyms) -> None:
    bulk = make_store(LexicalEmbeddings(), synonym_threshold=synonyms)
    today = checked(make_store(LexicalEmbeddings(), synonym_threshold=synonyms))
    rebuilds: list[int] = []
    real = bulk._graph_cache._read_graph
    monkeypatch.setattr(bulk._graph_cache, "_read_graph", lambda: (rebuilds.append(1), real())[1])
    bulk_report, today_report = bulk.add_documents(docs()), today.add_documents(docs())
    assert bulk_report.bulk_load and not today_report.bulk_load
    assert dataclasses.replace(bulk_report, seconds=0, bulk_load=False) == dataclasses.replace(today_report, seconds=0)
    assert dump(bulk) == dump(today)
    kept = graph_signature(bulk.graph)  # the graph built during the load, no rebuild
    names = bulk._graph_cache.entity_names()
    assert not rebuilds and names == today._graph_cache.entity_names()
    assert list(names) == sorted(names)  # in id order, as a rebuild reads them (linker ties alike)
    kept_graph = bulk.graph
    assert kept == graph_signature(bulk.rebuild_graph()) == graph_signature(today.graph)
    assert same_arrays(kept_graph, bulk.graph)  # array for array what a rebuild gives (ranking ties alike)
    assert bulk.graph.n_relations == 6
    assert (bulk.graph.synonyms.indices.size > 0) == (synonyms is not None)


def test_duplicate_ids_and_second_load_keep_todays_behaviour(make_store) -> None:
    bulk, today = make_store(LexicalEmbeddings()), checked(make_store(LexicalEmbeddings()))
    again = Document(id="d0", page_content="Another text.", metadata={"triplets": [["Zed", "met", "Ada"]]})
    items = [*docs()[:3], again, *docs()[3:]]  # d0 twice, in different chunks: the first is kept
    bulk_report, today_report = bulk.add_documents(items), today.add_documents(items)
    assert bulk_report.records_skipped == today_report.records_skipped == 1
    assert bulk_report.problems == today_report.problems
    assert dump(bulk) == dump(today)
    second = bulk.add_documents([*docs(), Document(id="d9", page_content="New.", metadata={"triplets": []})])
    assert not second.bulk_load and second.passages_unchanged == 5 and second.passages_added == 1
    assert graph_signature(bulk.graph) == graph_signature(bulk.rebuild_graph())


def test_empty_existing_collections_are_a_first_load(make_store) -> None:
    store = make_store(LexicalEmbeddings())
    store.add_documents(docs()[:1])
    store.delete_passages(["d0"])
    assert not any(store.counts().values())
    report = store.add_documents(docs())
    assert report.bulk_load and report.passages_added == 5
    assert graph_signature(store.graph) == graph_signature(store.rebuild_graph())


def test_crash_mid_load_then_rerun_equals_a_clean_run(make_store, monkeypatch) -> None:
    crashed, clean = make_store(LexicalEmbeddings()), make_store(LexicalEmbeddings())
    client = crashed._connection.client
    real_insert, calls = client.insert, []

    def failing_insert(name: str, rows: Any, **kwargs: Any) -> Any:
        calls.append(name)
        if name.endswith("_passages") and calls.count(name) == 2:  # the second chunk's commit marker
            raise ConnectionError("injected: the server went away")
        return real_insert(name, rows, **kwargs)

    monkeypatch.setattr(client, "insert", failing_insert)
    with pytest.raises(ConnectionError):
        crashed.add_documents(docs())
    assert crashed._graph_cache.loaded is None  # forgotten: the next use rebuilds from Milvus
    monkeypatch.setattr(client, "insert", real_insert)
    rerun = crashed.add_documents(docs())
    assert not rerun.bulk_load and rerun.passages_unchanged == 2 and rerun.passages_added == 3
    clean.add_documents(docs())
    assert dump(crashed) == dump(clean)
    assert graph_signature(crashed.graph) == graph_signature(clean.graph) == graph_signature(crashed.rebuild_graph())


def test_bulk_load_saves_the_graph_at_its_end(make_store, tmp_path, monkeypatch) -> None:
    path = tmp_path / "graph"
    store = make_store(LexicalEmbeddings(), graph_path=path)
    store.add_documents(docs())
    assert path.exists()
    reopened = make_store(LexicalEmbeddings(), prefix=store.collection_prefix, graph_path=path)
    monkeypatch.setattr(reopened._graph_cache, "_read_graph", lambda: pytest.fail("rebuilt instead of loading"))
    assert graph_signature(reopened.graph) == graph_signature(store.graph)
