"""Red-team checks of the entity and relation searches answered from vectors held in the client.

Each test tries to make a local answer differ from Milvus' own (FLAT) search on the same data,
or to make the tables hold rows Milvus does not (a leak) or lack rows it does (a loss): other
instances and processes writing, failed writes, drops, damaged saved files, other metrics.
"""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings

from langchain_graphrag_milvus import EmbeddingMismatchError, MilvusGraphRetriever, MilvusGraphStore
from langchain_graphrag_milvus.datasets import nano_dataset
from langchain_graphrag_milvus.graph.ids import key_to_id

from ..fakes import LexicalEmbeddings
from .test_local_search import MORE, QUERIES, _milvus, _mode, assert_same_as_milvus


def milvus_keys(store: MilvusGraphStore, kind: str) -> set[str]:
    return {r["pk"] for r in store.iterate(kind, ("pk",))}


def assert_tables_hold_milvus(store: MilvusGraphStore) -> None:
    """Every table in step holds exactly the rows Milvus holds (no leak, no loss)."""
    cache = store._graph_cache
    for kind in ("entities", "relations"):
        table = cache.vector_table(kind)
        if table is None:
            continue
        assert {key_to_id(int(k)) for k in table.keys} == milvus_keys(store, kind), kind


class Scaled(Embeddings):
    """Lexical vectors scaled by a per-text factor (not unit length: IP differs from COSINE)."""

    def __init__(self, size: int = 256) -> None:
        self.inner = LexicalEmbeddings(size)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        out = []
        for t, v in zip(texts, self.inner.embed_documents(texts)):
            f = 0.5 + (sum(map(ord, t)) % 7) / 2
            out.append([x * f for x in v])
        return out

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


class Failing(Embeddings):
    """Lexical embeddings that raise on the ``fail_at``-th call."""

    def __init__(self, fail_at: int) -> None:
        self.inner = LexicalEmbeddings()
        self.calls = 0
        self.fail_at = fail_at

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.calls += 1
        if self.calls == self.fail_at:
            raise RuntimeError("embedding service down")
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        return self.inner.embed_query(text)


def test_another_instance_drops_and_recreates_the_prefix(make_store) -> None:
    mode = _mode(make_store)
    reader = make_store(LexicalEmbeddings(), local_search=mode, refresh_interval=0)
    reader.add_records(nano_dataset())
    assert_same_as_milvus(reader)
    writer = make_store(LexicalEmbeddings(), prefix=reader.collection_prefix, local_search="off", graph_path=None)
    writer.drop()
    again = make_store(LexicalEmbeddings(), prefix=reader.collection_prefix, local_search="off", graph_path=None)
    again.add_records(MORE)
    reader.refresh()
    assert_same_as_milvus(reader)
    assert_tables_hold_milvus(reader)


def test_drop_then_recreate_with_another_dimension(make_store) -> None:
    mode = _mode(make_store)
    store = make_store(LexicalEmbeddings(256), local_search=mode)
    store.add_records(nano_dataset())
    assert_same_as_milvus(store)
    prefix = store.collection_prefix
    store.drop()
    store.close()
    other = make_store(LexicalEmbeddings(64), prefix=prefix, local_search=mode)
    other.add_records(MORE)
    assert_same_as_milvus(other)
    assert_tables_hold_milvus(other)


def test_ip_metric(make_store) -> None:
    ip = {"metric_type": "IP", "index_type": "FLAT", "params": {}}
    store = make_store(Scaled(), local_search=_mode(make_store), index_params=ip)
    store.add_records(nano_dataset())
    assert store._graph_cache.local is not None and not store._graph_cache.local.cosine
    assert_same_as_milvus(store)
    store.add_records(MORE)
    assert_same_as_milvus(store)
    assert_tables_hold_milvus(store)


def test_a_write_that_fails_midway(make_store) -> None:
    store = make_store(Failing(fail_at=10**9), local_search=_mode(make_store), batch_size=2)
    store.add_records(nano_dataset())
    assert_same_as_milvus(store)
    emb = store.embedding
    emb.calls, emb.fail_at = 0, 2
    with pytest.raises(Exception, match="embedding service down"):  # noqa: B017
        store.add_records(
            MORE
            + [
                {"id": f"x{i}", "passage": f"Quokka{i} met Lynx{i}.", "triplets": [[f"Quokka{i}", "met", f"Lynx{i}"]]}
                for i in range(6)
            ]
        )
    emb.fail_at = 10**9
    assert_same_as_milvus(store)
    assert_tables_hold_milvus(store)


def test_merge_delete_upsert_between_queries(make_store) -> None:
    store = make_store(LexicalEmbeddings(), local_search=_mode(make_store))
    store.add_records(nano_dataset() + MORE)
    assert_same_as_milvus(store)
    store.merge_entities(["Zeta Quokka"], into="Omega Lynx")
    assert_same_as_milvus(store)
    assert_tables_hold_milvus(store)
    store.delete_passages(["omega"])
    assert_same_as_milvus(store)
    store.upsert_documents(
        [
            Document(
                id="zeta",
                page_content="Zeta Quokka taught Omega Lynx geometry.",
                metadata={"triplets": [["Zeta Quokka", "taught", "Omega Lynx"]]},
            )
        ]
    )
    assert_same_as_milvus(store)
    assert_tables_hold_milvus(store)


def test_damaged_saved_vectors_are_not_used(tmp_path: Path) -> None:
    uri = str(tmp_path / "m.db")
    first = MilvusGraphStore(LexicalEmbeddings(), uri=uri, collection_prefix="dmg")
    first.add_records(nano_dataset())
    first.close()
    folder = tmp_path / "m.db.graphs" / "dmg"
    f = folder / "extra_vectors_relations.npy"
    arr = np.load(f)
    arr[:, :] = arr[::-1]  # rows swapped: same size, same keys
    np.save(f, arr)
    again = MilvusGraphStore(LexicalEmbeddings(), uri=uri, collection_prefix="dmg")
    try:
        assert_same_as_milvus(again)
    finally:
        again.close()


def test_many_rows_offered_past_max_rows(make_store) -> None:
    store = make_store(LexicalEmbeddings(), local_search=_mode(make_store))
    store._graph_cache.local.max_rows = 5
    store.add_records(nano_dataset())
    assert_same_as_milvus(store)
    store._graph_cache.local.max_rows = 10**6
    store.add_records(MORE)
    assert_same_as_milvus(store)
    assert_tables_hold_milvus(store)


def test_no_graph_path_many_missing(make_store, monkeypatch) -> None:
    monkeypatch.setattr("langchain_graphrag_milvus.milvus.graph_vectors.FETCH_MAX", 1)
    reader = make_store(LexicalEmbeddings(), local_search=_mode(make_store), graph_path=None, refresh_interval=0)
    writer = make_store(LexicalEmbeddings(), prefix=reader.collection_prefix, local_search="off", graph_path=None)
    writer.add_records(nano_dataset())
    assert_same_as_milvus(reader)
    writer.add_records(MORE)
    reader.refresh()
    assert_same_as_milvus(reader)


def test_writes_from_two_threads_while_another_queries(make_store) -> None:
    store = make_store(LexicalEmbeddings(), local_search=_mode(make_store))
    store.add_records(nano_dataset())
    errors: list[BaseException] = []
    stop = threading.Event()

    def write(tag: str) -> None:
        try:
            for i in range(4):
                store.add_records(
                    [
                        {
                            "id": f"{tag}{i}",
                            "passage": f"{tag} Person{i} met {tag} Friend{i}.",
                            "triplets": [[f"{tag} Person{i}", "met", f"{tag} Friend{i}"]],
                        }
                    ]
                )
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    def query() -> None:
        vec = store.embedding.embed_documents(QUERIES)
        try:
            while not stop.is_set():
                for kind in ("relations", "entities"):
                    for per in store.search(kind, vec, 50, output_fields=("pk", "text")):
                        assert len({h.id for h in per}) == len(per)
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    q = threading.Thread(target=query)
    writers = [threading.Thread(target=write, args=(t,)) for t in ("Alpha", "Beta")]
    q.start()
    for w in writers:
        w.start()
    for w in writers:
        w.join()
    stop.set()
    q.join()
    assert not errors, errors
    assert_same_as_milvus(store)
    assert_tables_hold_milvus(store)


class Rotated(Embeddings):
    """Another model of the same dimension: lexical vectors with their components shifted."""

    def __init__(self, size: int = 256) -> None:
        self.inner = LexicalEmbeddings(size)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [v[7:] + v[:7] for v in self.inner.embed_documents(texts)]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


def test_a_key_written_again_by_another_model(make_store) -> None:
    """Another store (another model, same dimension) would delete a passage and add it again: same keys, new vectors.

    A key's vector never changes while the model stays the same (the tables held in the client rely
    on it), so the other model is refused before it writes anything (the embedding fingerprint).
    """
    reader = make_store(LexicalEmbeddings(), local_search=_mode(make_store), refresh_interval=0)
    reader.add_records(nano_dataset() + MORE)
    assert_same_as_milvus(reader)

    def state() -> tuple:
        return reader.counts(), reader.generation(), milvus_keys(reader, "relations"), milvus_keys(reader, "entities")

    before = state()
    writer = make_store(Rotated(), prefix=reader.collection_prefix, local_search="off", graph_path=None)
    with pytest.raises(EmbeddingMismatchError, match="^embedding: .*built with LexicalEmbeddings.*is Rotated"):
        writer.delete_passages(["zeta", "omega"])
    with pytest.raises(EmbeddingMismatchError):
        writer.add_records(MORE)
    reader.refresh()
    assert state() == before  # nothing written
    assert_same_as_milvus(reader)
    assert_tables_hold_milvus(reader)


def test_the_subject_object_scope_is_scored_here_as_milvus_does(make_store, monkeypatch) -> None:
    monkeypatch.setattr("langchain_graphrag_milvus.retrieval.graph_pipeline.PK_SCOPE_MAX", 0)
    local = make_store(LexicalEmbeddings(), local_search=_mode(make_store))
    local.add_records(nano_dataset() + MORE)
    remote = make_store(LexicalEmbeddings(), prefix=local.collection_prefix, local_search="off", graph_path=None)
    for query in QUERIES:
        a = MilvusGraphRetriever(store=local, k=3, relation_scope="entities").invoke(query)
        b = MilvusGraphRetriever(store=remote, k=3, relation_scope="entities").invoke(query)
        assert [(d.id, d.metadata.get("score")) for d in a] == [(d.id, d.metadata.get("score")) for d in b]


def test_tenants(make_store) -> None:
    store = make_store(LexicalEmbeddings(), local_search=_mode(make_store), partition_key_field="tenant")
    docs = [
        Document(
            id=r.get("id", f"n{i}") + f"-{t}",
            page_content=r["passage"],
            metadata={"triplets": r["triplets"], "tenant": t},
        )
        for i, r in enumerate(nano_dataset() + MORE)
        for t in ("a", "b")
    ]
    store.add_documents(docs)
    assert_same_as_milvus(store)
    store.delete_passages(["zeta-a"], tenant="a")
    assert_same_as_milvus(store)
    store.merge_entities(["Omega Lynx"], into="Zeta Quokka", tenant="b")
    assert_same_as_milvus(store)
    assert_tables_hold_milvus(store)
    remote = make_store(
        LexicalEmbeddings(),
        prefix=store.collection_prefix,
        local_search="off",
        graph_path=None,
        partition_key_field="tenant",
    )
    for q in QUERIES:
        for t in ("a", "b"):
            a = MilvusGraphRetriever(store=store, k=3).invoke(q, filter={"tenant": t})
            b = MilvusGraphRetriever(store=remote, k=3).invoke(q, filter={"tenant": t})
            assert [d.id for d in a] == [d.id for d in b]
            assert all(d.metadata["tenant"] == t for d in a)


def test_existing_collection_store(request, backend, tmp_path) -> None:
    import uuid

    from langchain_core.runnables import RunnableLambda
    from langchain_milvus import Milvus

    from langchain_graphrag_milvus import ExistingCollectionGraphStore

    from ..conftest import backend_uri

    uri = backend_uri(request, backend, tmp_path)
    name = f"docs_{uuid.uuid4().hex[:8]}"
    docs = [Document(page_content=r["passage"], metadata={"source": f"s{i}"}) for i, r in enumerate(nano_dataset())]
    vs = Milvus.from_documents(
        docs, LexicalEmbeddings(), collection_name=name, connection_args={"uri": uri}, consistency_level="Strong"
    )
    by_text = {r["passage"]: r["triplets"] for r in nano_dataset() + MORE}
    extractor = RunnableLambda(lambda text: {"triplets": by_text.get(text, [])})
    mode = "auto" if backend == "lite" else "on"
    store = ExistingCollectionGraphStore(
        LexicalEmbeddings(), collection_name=name, uri=uri, extractor=extractor, local_search=mode
    )
    try:
        store.index_passages()
        assert store._graph_cache.local is not None
        assert_same_as_milvus(store)
        vs.add_documents([Document(page_content=MORE[0]["passage"], metadata={"source": "m"})])
        vs.client.delete(name, filter='source == "s0"')
        store.index_passages()
        assert_same_as_milvus(store)
        assert_tables_hold_milvus(store)
    finally:
        store.drop()
        vs.client.drop_collection(name)
        store.close()


def test_degenerate_query_vectors(make_store) -> None:
    store = make_store(LexicalEmbeddings(), local_search=_mode(make_store))
    store.add_records(nano_dataset())
    zero = [[0.0] * 256]
    for kind in ("relations", "entities"):
        local_error = milvus_error = None
        got = want = None
        try:
            got = store.search(kind, zero, 5, output_fields=("pk",))
        except Exception as exc:  # noqa: BLE001
            local_error = type(exc)
        try:
            want = _milvus(store).search(kind, zero, 5, output_fields=("pk",))
        except Exception as exc:  # noqa: BLE001
            milvus_error = type(exc)
        assert local_error == milvus_error, (got, want)
        if got is not None:
            assert [[round(h.score, 5) for h in g] for g in got] == [[round(h.score, 5) for h in w] for w in want]


@pytest.mark.parametrize("created", ["IP", "COSINE"])
def test_a_store_opened_with_another_metric_than_its_index(make_store, created) -> None:
    """Collections made with one metric, opened again without (or with another) ``index_params``."""
    first = {"metric_type": created, "index_type": "FLAT", "params": {}}
    other = {"metric_type": "COSINE" if created == "IP" else "IP", "index_type": "FLAT", "params": {}}
    store = make_store(Scaled(), local_search=_mode(make_store), index_params=first)
    store.add_records(nano_dataset())
    prefix = store.collection_prefix
    store.close()
    again = make_store(Scaled(), prefix=prefix, local_search=_mode(make_store), index_params=other)
    vectors = again.embedding.embed_documents(QUERIES)
    for kind in ("relations", "entities"):
        got = want = local_error = milvus_error = None
        try:
            got = again.search(kind, vectors, 4, output_fields=("pk",))
        except Exception as exc:  # noqa: BLE001
            local_error = type(exc)
        try:
            want = _milvus(again).search(kind, vectors, 4, output_fields=("pk",))
        except Exception as exc:  # noqa: BLE001
            milvus_error = type(exc)
        assert local_error == milvus_error
        if want is not None:
            assert [[round(h.score, 5) for h in g] for g in got] == [[round(h.score, 5) for h in w] for w in want]


@pytest.mark.parametrize("fields", [("pk",), ("pk", "text")])
def test_rows_another_writer_deleted_do_not_come_back(make_store, fields) -> None:
    """Before the reader's next refresh check its graph is stale; a deleted row is still never a hit."""
    reader = make_store(LexicalEmbeddings(), local_search=_mode(make_store), refresh_interval=None)
    reader.add_records(nano_dataset() + MORE)
    assert_same_as_milvus(reader)
    writer = make_store(LexicalEmbeddings(), prefix=reader.collection_prefix, local_search="off", graph_path=None)
    writer.delete_passages(["zeta", "omega"])
    vectors = reader.embedding.embed_documents(["Zeta Quokka", "Omega Lynx Hydra Notes"])
    for kind in ("entities", "relations"):
        alive = milvus_keys(reader, kind)
        for per in reader.search(kind, vectors, 100, output_fields=fields):
            assert {h.id for h in per} <= alive, kind


def test_an_index_saved_by_a_store_opened_with_another_metric(tmp_path: Path) -> None:
    """Two stores on one Lite database share the saved index; one was opened with ``metric_type="IP"``."""
    uri = str(tmp_path / "m.db")
    reader = MilvusGraphStore(Scaled(), uri=uri, collection_prefix="mix", refresh_interval=0)
    ip = {"metric_type": "IP", "index_type": "FLAT", "params": {}}
    writer = MilvusGraphStore(Scaled(), uri=uri, collection_prefix="mix", index_params=ip)
    try:
        reader.add_records(nano_dataset())
        assert_same_as_milvus(reader)
        writer.add_records(MORE)
        reader.refresh()
        assert_same_as_milvus(reader)
    finally:
        writer.close()
        reader.close()


def test_a_first_load_that_fails_midway(make_store, monkeypatch) -> None:
    monkeypatch.setattr("langchain_graphrag_milvus.ingest.load.BATCH_PASSAGES", 2)
    store = make_store(Failing(fail_at=20), local_search=_mode(make_store), batch_size=2)
    with pytest.raises(Exception, match="embedding service down"):  # noqa: B017
        store.add_records(nano_dataset() + MORE)
    assert store.counts()["relations"] > 0  # half written
    store.embedding.fail_at = 10**9
    assert_same_as_milvus(store)
    assert_tables_hold_milvus(store)
    store.add_records(nano_dataset() + MORE)
    assert_same_as_milvus(store)
    assert_tables_hold_milvus(store)


WRITER_PROCESS = """
import json, sys
from langchain_graphrag_milvus import MilvusGraphStore
from tests.fakes import LexicalEmbeddings
from tests.integration.test_local_search import MORE

store = MilvusGraphStore(LexicalEmbeddings(), uri=sys.argv[1], collection_prefix=sys.argv[2], graph_path=sys.argv[3],
                         local_search="on")
store.search("relations", store.embedding.embed_documents(["Euler"]), 3)  # its tables in step, saved with its writes
store.add_records(MORE)
store.delete_passages([sys.argv[4]])
store.close()
"""


def test_another_process_writes_with_the_same_graph_path(make_store, tmp_path) -> None:
    import os
    import subprocess
    import sys

    if make_store.backend != "server":
        pytest.skip("one Milvus Lite directory is locked to one process")
    root = Path(__file__).resolve().parents[2]
    graph_path = tmp_path / "graph"
    reader = make_store(LexicalEmbeddings(), local_search="on", graph_path=graph_path, refresh_interval=0)
    records = nano_dataset()
    for i, r in enumerate(records):
        r["id"] = f"n{i}"
    reader.add_records(records)
    assert_same_as_milvus(reader)
    env = {**os.environ, "PYTHONPATH": str(root)}
    args = [make_store.uri, reader.collection_prefix, str(graph_path), "n1"]
    subprocess.run([sys.executable, "-c", WRITER_PROCESS, *args], check=True, cwd=root, env=env, timeout=300)
    reader.refresh()
    assert_same_as_milvus(reader)
    assert_tables_hold_milvus(reader)
    again = make_store(LexicalEmbeddings(), prefix=reader.collection_prefix, local_search="on", graph_path=graph_path)
    assert_same_as_milvus(again)
    assert_tables_hold_milvus(again)


@pytest.mark.parametrize("model", ["rotated", "smaller"])
def test_another_instance_recreates_the_prefix_with_another_model(make_store, model) -> None:
    """The same texts (same keys) embedded by another model: the reader must not keep the old vectors."""
    reader = make_store(LexicalEmbeddings(), local_search=_mode(make_store), refresh_interval=0)
    reader.add_records(nano_dataset())
    assert_same_as_milvus(reader)
    reader.embedding = Rotated() if model == "rotated" else LexicalEmbeddings(64)  # (its queries: the new model)
    writer = make_store(LexicalEmbeddings(), prefix=reader.collection_prefix, local_search="off", graph_path=None)
    writer.drop()
    again = make_store(reader.embedding, prefix=reader.collection_prefix, local_search="off", graph_path=None)
    again.add_records(nano_dataset())
    reader.refresh()
    assert_same_as_milvus(reader)
    assert reader._graph_cache.vector_table("relations") is not None  # answered here, not by Milvus every time


def test_within_ids_that_are_not_stored_keys(make_store) -> None:
    """Ids Milvus' ``pk in [...]`` does not match (other case, ``0x``, ``_``, spaces) are no key of the table."""
    from langchain_graphrag_milvus.milvus import expr

    store = make_store(LexicalEmbeddings(), local_search=_mode(make_store))
    store.add_records(nano_dataset())
    real = key_to_id(int(store.graph.relations.keys[0]))
    vectors = store.embedding.embed_documents(QUERIES[:1])
    for fake in (real.upper(), "0x" + real, real[:8] + "_" + real[8:], f" {real} "):
        if fake == real:
            continue
        got = store.search("relations", vectors, 3, filter_expr=expr.in_list("pk", [fake]), within=[fake])
        want = _milvus(store).search("relations", vectors, 3, filter_expr=expr.in_list("pk", [fake]))
        assert [[h.id for h in g] for g in got] == [[h.id for h in w] for w in want] == [[]], fake
