"""Writes that can be re-run: a failure at each Milvus write, then a re-run, equals a clean run.

For each write operation (delete by source, upsert by source, delete by id, merge, and the
re-index of ``index="auto"``), a clean run on a fresh store gives the expected rows and graph.
Then, for every Milvus write of that operation in turn (counted on a clean run; on the server,
where each case costs new collections, its first, middle and last write; four writes of the
re-index, spread over its index calls), a fresh store
runs it with that write failing -- before it reaches Milvus, or after it was applied and its
answer lost -- and the operation is run again, by the same store object or by a new one on the
same collections (a restarted application). The three collections must then equal the clean
run's row by row, and the graph in memory must equal the graph rebuilt from Milvus and the
clean run's graph. On Milvus Lite and on a real server.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.documents import Document

from langchain_graphrag_milvus import MilvusGraphStore
from langchain_graphrag_milvus.milvus import index_params

from ..fakes import LexicalEmbeddings
from ..faults import FailAt, InjectedFailure, diff, snapshot
from ..graph_checks import graph_signature

pytestmark = pytest.mark.slow

T = tuple[str, str, str]
CORPUS: dict[str, list[tuple[str, list[T]]]] = {
    "alpha.txt": [
        (
            "Ada Lovelace worked with Charles Babbage and wrote the Notes.",
            [("Ada Lovelace", "worked with", "Charles Babbage"), ("Ada Lovelace", "wrote", "Notes")],
        ),
        ("Charles Babbage designed the Analytical Engine.", [("Charles Babbage", "designed", "Analytical Engine")]),
    ],
    "beta.txt": [
        (
            "Ada Lovelace worked with Charles Babbage; Luigi Menabrea described the engine.",
            [("Ada Lovelace", "worked with", "Charles Babbage"), ("Luigi Menabrea", "described", "Analytical Engine")],
        ),
        ("Menabrea was an Italian general.", [("Menabrea", "was", "Italian general")]),
    ],
    "gamma.txt": [
        ("Babbage met Ada Lovelace in 1833.", [("Babbage", "met", "Ada Lovelace")]),
        ("The Analytical Engine inspired Alan Turing.", [("Analytical Engine", "inspired", "Alan Turing")]),
    ],
    "delta.txt": [
        (
            "Alan Turing worked at Bletchley Park; C. Babbage designed the Analytical Engine.",
            [("Alan Turing", "worked at", "Bletchley Park"), ("C. Babbage", "designed", "Analytical Engine")],
        ),
    ],
}
BETA_V2 = [
    (
        "Luigi Menabrea described the Analytical Engine in French.",
        [("Luigi Menabrea", "described", "Analytical Engine")],
    ),
    ("Menabrea later became prime minister.", [("Menabrea", "became", "prime minister")]),
]


def _docs(corpus: dict[str, list[tuple[str, list[T]]]]) -> list[Document]:
    return [
        Document(page_content=text, metadata={"source": source, "triplets": [list(t) for t in triplets]})
        for source, chunks in corpus.items()
        for text, triplets in chunks
    ]


def _some_passage(store: MilvusGraphStore) -> list[str]:
    rows = store.client.query(
        store.collection_name("passages"), filter='source_id == "gamma.txt"', output_fields=["pk"], limit=10
    )
    return sorted(str(r["pk"]) for r in rows)[:1]


OPERATIONS: dict[str, Callable[[MilvusGraphStore], Any]] = {
    "delete_documents": lambda s: s.delete_documents(["alpha.txt"]),
    "upsert_documents": lambda s: s.upsert_documents(_docs({"beta.txt": BETA_V2})),
    "delete_passages": lambda s: s.delete_passages(_some_passage(s)),
    "merge_entities": lambda s: s.merge_entities(["Babbage", "C. Babbage"], into="Charles Babbage"),
}


def _run_case(
    make: Callable[..., MilvusGraphStore],
    setup: Callable[[MilvusGraphStore], Any],
    operation: Callable[[MilvusGraphStore], Any],
    check: Callable[[MilvusGraphStore], None] = lambda s: None,
    *,
    sample: int = 0,
) -> int:
    """Every write of ``operation`` failing in turn, then a re-run: equal to a clean run. Returns the writes."""
    clean = make()
    setup(clean)
    counter = FailAt(clean)
    operation(clean)
    counter.detach()
    want, want_graph = snapshot(clean), graph_signature(clean.rebuild_graph())
    assert counter.writes >= 2, counter.calls
    points: Any = range(1, counter.writes + 1)
    if sample:  # on a server every case costs new collections (seconds): ``sample`` writes, evenly spread
        n = counter.writes
        points = sorted({1 + round(i * (n - 1) / max(1, sample - 1)) for i in range(sample)})
    for at in points:
        store = make()
        setup(store)
        fail = FailAt(store, at, after=at % 2 == 0)
        try:  # a failure in a path that tolerates it by design (a freshness check's load) is absorbed
            operation(store)
        except InjectedFailure:
            pass
        fail.detach()
        assert fail.writes >= at, f"write {at} was never reached"  # the failure did happen
        # every third case re-runs in a new store object (an application restarted after the crash)
        runner = store if at % 3 else make(prefix=store.collection_prefix)
        operation(runner)
        when = "after" if at % 2 == 0 else "before"
        where = f"failure at write {at} of {counter.writes} ({counter.calls[at - 1]}, {when})"
        assert diff(snapshot(runner), want) == "", where
        assert graph_signature(runner.graph) == want_graph, where
        assert graph_signature(runner.rebuild_graph()) == want_graph, where
        check(runner)
    return counter.writes


@pytest.mark.parametrize("name", sorted(OPERATIONS))
def test_a_failed_write_rerun_equals_a_clean_run(make_store, name: str) -> None:
    def make(prefix: str | None = None) -> MilvusGraphStore:
        return make_store(LexicalEmbeddings(32), prefix=prefix, consistency_level="Strong")

    setup = lambda s: s.add_documents(_docs(CORPUS))  # noqa: E731
    writes = _run_case(make, setup, OPERATIONS[name], sample=3 if make_store.backend == "server" else 0)
    assert writes >= 2


def test_a_failed_delete_leaves_the_source_findable(make_store) -> None:
    """The old bug: passage rows deleted first, so a re-run found no passage of the source and stopped."""
    store = make_store(LexicalEmbeddings(32), consistency_level="Strong")
    store.add_documents(_docs(CORPUS))
    fail = FailAt(store, 1, after=True)  # the first write of the delete is applied, then fails
    with pytest.raises(InjectedFailure):
        store.delete_documents(["alpha.txt"])
    fail.detach()
    rows = store.client.query(
        store.collection_name("passages"), filter='source_id == "alpha.txt"', output_fields=["pk"], limit=10
    )
    assert len(rows) == 2  # still findable by source
    report = store.delete_documents(["alpha.txt"])
    assert report.passages_deleted == 2
    fresh = make_store(LexicalEmbeddings(32), prefix=store.collection_prefix)
    texts = {d.page_content for d in fresh.as_path_retriever().invoke("Ada Lovelace Notes")}
    assert not any("Notes" in t for t in texts)


def _by_text() -> Any:
    """An extractor that gives each corpus text its triplets (and a changed text one triplet)."""
    from langchain_core.runnables import RunnableLambda

    known = {text: [list(t) for t in triplets] for chunks in CORPUS.values() for text, triplets in chunks}
    known.update({text: [list(t) for t in triplets] for text, triplets in BETA_V2})
    return RunnableLambda(lambda text: known[text]).with_config(run_name="corpus-triplets")


def _id_docs(source: str, chunks: list[tuple[str, list[T]]], version: int) -> list[Document]:
    return [
        Document(id=f"{source}-{i}", page_content=text, metadata={"source": source, "version": version})
        for i, (text, _) in enumerate(chunks)
    ]


def test_a_failed_metadata_update_rerun_equals_a_clean_run(make_store) -> None:
    """An upsert re-stamping passages whose text is unchanged (stored vector, links kept) and replacing one."""

    def make(prefix: str | None = None) -> MilvusGraphStore:
        return make_store(LexicalEmbeddings(32), prefix=prefix, consistency_level="Strong", extractor=_by_text())

    def setup(store: MilvusGraphStore) -> None:
        store.add_documents([d for source, chunks in CORPUS.items() for d in _id_docs(source, chunks, 1)])

    beta = [CORPUS["beta.txt"][0], BETA_V2[1]]  # the first text unchanged (new metadata), the second new

    restamped: list[int] = []

    def operation(store: MilvusGraphStore) -> None:
        restamped.append(-1)  # (a run that fails records no count)
        restamped[-1] = store.upsert_documents(_id_docs("beta.txt", beta, 2)).ingested.passages_metadata_updated

    writes = _run_case(make, setup, operation, sample=3 if make_store.backend == "server" else 0)
    assert writes >= 2 and restamped[0] == 1  # the clean run re-stamped the unchanged text


@pytest.mark.server
def test_a_failed_reindex_rerun_switches_and_serves(make_store, monkeypatch: pytest.MonkeyPatch) -> None:
    """``index="auto"`` switching FLAT to HNSW: a failure at each index call, then a re-run of the ingest."""
    if make_store.backend != "server":
        pytest.skip("the index switch runs on a Milvus server only")
    monkeypatch.setattr(index_params, "HNSW_THRESHOLD", 6)
    docs = _docs(CORPUS)

    def make(prefix: str | None = None) -> MilvusGraphStore:
        return make_store(LexicalEmbeddings(32), prefix=prefix, consistency_level="Strong", index="auto")

    def check(store: MilvusGraphStore) -> None:
        store._connection.forget_index_types()
        types = {kind: store._connection.index_type(kind) for kind in ("entities", "relations", "passages")}
        assert set(types.values()) == {"HNSW"}, types
        assert store.as_naive_retriever(k=2).invoke("Alan Turing")

    first, rest = (lambda s: s.add_documents(docs[:2])), (lambda s: s.add_documents(docs[2:]))
    writes = _run_case(make, first, rest, check, sample=4)
    assert writes >= 8  # the inserts, then release, drop, create, load for two collections


@pytest.mark.parametrize("at", [3])  # the second collection's index (writes: index, load per collection)
def test_a_lost_answer_of_an_index_creation_still_loads_the_collection(make_store, at: int) -> None:
    """A new collection's index built and its answer lost: the collection is loaded all the same.

    The creation treats the lost answer as another writer's simultaneous creation and goes on; the
    collection must still be loaded before the first write reads it. Found by the long model test on
    the server: the load failed with Milvus' "collection not loaded" instead of completing.
    """

    def make(prefix: str | None = None) -> MilvusGraphStore:
        return make_store(LexicalEmbeddings(32), prefix=prefix, consistency_level="Strong")

    clean = make()
    clean.add_documents(_docs(CORPUS))
    want, want_graph = snapshot(clean), graph_signature(clean.rebuild_graph())
    store = make()
    fail = FailAt(store, at, after=True)
    try:
        store.add_documents(_docs(CORPUS))  # a lost answer of a creation looks like a racing creator's: absorbed
    except InjectedFailure:
        pass
    finally:
        fail.detach()
    assert fail.calls[at - 1] == "create_index", fail.calls
    store.add_documents(_docs(CORPUS))  # the same store object: it must not assume the collections are loaded
    assert diff(snapshot(store), want) == ""
    assert graph_signature(store.graph) == want_graph
