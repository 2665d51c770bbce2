"""Incremental upsert/delete by source document, crash-safe ingest, persisted index freshness."""

from __future__ import annotations

import json

import pytest
from langchain_core.documents import Document

from langchain_graphrag_milvus import MilvusGraphRetriever, StaleIndexError
from langchain_graphrag_milvus.milvus import writes as writes_module

from ..fakes import LexicalEmbeddings
from .test_ingest import graph_signature


def doc(pid: str, text: str, triplets: list[list[str]], **meta) -> Document:
    return Document(id=pid, page_content=text, metadata={"triplets": triplets, **meta})


V1 = [
    doc("d1", "Ada met Bob.", [["Ada", "met", "Bob"], ["Bob", "knows", "Cy"]]),
    doc("d2", "Bob knows Cy and Cy owns Dot.", [["Bob", "knows", "Cy"], ["Cy", "owns", "Dot"]]),
    doc("d3", "Eve sued Fay.", [["Eve", "sued", "Fay"]]),
]


def check(store, entities: int, relations: int, passages: int) -> None:
    assert store.counts() == {"entities": entities, "relations": relations, "passages": passages}
    incremental = graph_signature(store.graph)
    assert incremental == graph_signature(store.rebuild_graph())  # the graph followed without a rebuild
    g = store.graph
    assert (g.n_entities, g.n_relations) == (entities, relations)


def test_delete_and_upsert_keep_exact_counts(make_store) -> None:
    store = make_store(LexicalEmbeddings())
    store.add_documents(V1)
    _ = store.graph
    check(store, entities=6, relations=4, passages=3)

    report = store.delete_documents(["d3"])
    assert (report.passages_deleted, report.relations_deleted, report.entities_deleted) == (1, 1, 2)
    check(store, entities=4, relations=3, passages=2)

    # d1 drops "Bob knows Cy" (still stated by d2) and adds "Ada likes Gus"
    up = store.upsert_documents(
        [doc("d1", "Ada met Bob. Ada likes Gus.", [["Ada", "met", "Bob"], ["Ada", "likes", "Gus"]])]
    )
    assert up.ingested.passages_updated == 1 and up.ingested.relations_added == 1 and up.ingested.entities_added == 1
    check(store, entities=5, relations=4, passages=2)
    rows = store.client.query(
        store.collection_name("relations"),
        filter='text == "Bob knows Cy"',
        output_fields=["passage_ids"],
        consistency_level="Strong",
    )
    assert rows[0]["passage_ids"] == ["d2"]

    # d2 keeps only "Bob knows Cy": "Cy owns Dot" and Dot go away
    store.upsert_documents([doc("d2", "Bob knows Cy.", [["Bob", "knows", "Cy"]])])
    check(store, entities=4, relations=3, passages=2)

    report = store.delete_passages(["d1"])
    assert report.relations_deleted == 2 and report.entities_deleted == 2  # Ada, Gus (Bob stays, in d2)
    check(store, entities=2, relations=1, passages=1)
    assert store.delete_passages(["d1", "never-existed"]).passages_deleted == 0  # idempotent
    docs = MilvusGraphRetriever(store=store, k=3).invoke("Who does Bob know?")
    assert [d.id for d in docs] == ["d2"]


def test_upsert_with_a_splitter_removes_chunks_that_disappeared(make_store) -> None:
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    from langchain_graphrag_milvus.ingest.triplets import create_llm_triplet_extractor

    from ..fakes import ScriptedExtractionModel

    answer = json.dumps({"named_entities": ["Ada"], "triples": [["Ada", "wrote", "notes"]]})
    llm = ScriptedExtractionModel(script={"Ada": answer, "Bob": answer.replace("Ada", "Bob")})
    store = make_store(LexicalEmbeddings(), extractor=create_llm_triplet_extractor(llm))
    splitter = RecursiveCharacterTextSplitter(chunk_size=40, chunk_overlap=0)
    long_text = "Ada wrote many notes. " * 6
    report = store.add_documents([Document(id="book", page_content=long_text)], splitter=splitter)
    chunks = store.counts()["passages"]
    assert chunks > 2 and report.extraction_calls >= 1
    ids = [
        r["pk"]
        for r in store.client.query(
            store.collection_name("passages"),
            filter='source_id == "book"',
            output_fields=["pk"],
            consistency_level="Strong",
        )
    ]
    assert sorted(ids) == [f"book#{i:04d}" for i in range(chunks)]
    up = store.upsert_documents([Document(id="book", page_content="Bob wrote notes.")], splitter=splitter)
    assert up.deleted.passages_deleted == chunks - 1 and store.counts()["passages"] == 1
    assert store.graph.n_passages == 1
    with pytest.raises(Exception, match="cannot be split"):
        store.add_documents([doc("x", "text", [["a", "b", "c"]])], splitter=splitter)


STEPS = ["embed", "write:entities", "write:relations", "write:passages", "delete"]


@pytest.mark.parametrize("step", STEPS)
def test_a_crash_at_any_step_is_completed_by_rerunning(make_store, monkeypatch, step) -> None:
    clean = make_store(LexicalEmbeddings())
    clean.add_documents(V1)
    clean.upsert_documents([doc("d1", "Ada met Bob again.", [["Ada", "met", "Bob"], ["Ada", "met", "Hal"]])])
    expected_counts, expected_graph = clean.counts(), graph_signature(clean.rebuild_graph())

    store = make_store(LexicalEmbeddings())
    store.add_documents(V1[2:])  # collections exist; the crash hits a later ingest
    kind = step.split(":")[-1]

    def crash(*args, **kwargs):
        raise RuntimeError(f"simulated crash at {step}")

    with monkeypatch.context() as patch:
        if step == "embed":
            patch.setattr(store.embedding, "embed_documents", crash)
        elif step == "delete":  # the unlink of what the changed d1 no longer states
            import langchain_graphrag_milvus.ingest.batch as batch_module
            import langchain_graphrag_milvus.ingest.updates as lifecycle_module

            for module in (writes_module, batch_module, lifecycle_module):
                patch.setattr(module, "apply_graph_change", crash)
        else:
            original = writes_module.write_rows

            def failing(store_, kind_, rows, existing):
                if kind_ == kind and rows:
                    raise RuntimeError(f"simulated crash at {step}")
                return original(store_, kind_, rows, existing)

            import langchain_graphrag_milvus.ingest.batch as batch_module

            patch.setattr(batch_module, "write_rows", failing)
        with pytest.raises(RuntimeError, match="simulated crash"):
            store.add_documents(V1)
            store.upsert_documents([doc("d1", "Ada met Bob again.", [["Ada", "met", "Bob"], ["Ada", "met", "Hal"]])])
    # a new process would rebuild the graph from Milvus: so must we
    store.rebuild_graph()
    store.add_documents(V1)
    store.upsert_documents([doc("d1", "Ada met Bob again.", [["Ada", "met", "Bob"], ["Ada", "met", "Hal"]])])
    assert store.counts() == expected_counts
    assert graph_signature(store.rebuild_graph()) == expected_graph
    ids = [r["pk"] for kind_ in ("entities", "relations", "passages") for r in store.iterate(kind_, ())]
    assert len(ids) == len(set(ids))  # no duplicates


def test_saved_index_is_used_when_fresh_and_rebuilt_or_refused_when_stale(make_store, tmp_path, monkeypatch) -> None:
    path = tmp_path / "graph-index"
    writer = make_store(LexicalEmbeddings(), graph_path=path)
    writer.add_documents(V1)
    expected = graph_signature(writer.graph)
    manifest = json.loads((path / "manifest.json").read_text())
    assert manifest["fingerprint"]["relations"] == 4 and manifest["fingerprint"]["generation"] >= 1

    reader = make_store(LexicalEmbeddings(), prefix=writer.collection_prefix, graph_path=path)
    with monkeypatch.context() as patch:
        patch.setattr(reader._reads, "iterate", lambda *a, **k: (_ for _ in ()).throw(AssertionError("read Milvus")))
        assert graph_signature(reader.graph) == expected  # loaded from disk, not from Milvus

    # another writer (without the saved index) changes the data: the file is now stale
    other = make_store(LexicalEmbeddings(), prefix=writer.collection_prefix)
    other.add_documents([doc("d4", "Ivy met Jo.", [["Ivy", "met", "Jo"]])])
    strict = make_store(LexicalEmbeddings(), prefix=writer.collection_prefix, graph_path=path, on_stale="error")
    with pytest.raises(StaleIndexError, match="on_stale='rebuild'"):
        _ = strict.graph
    fresh = make_store(LexicalEmbeddings(), prefix=writer.collection_prefix, graph_path=path)
    assert fresh.graph.n_relations == 5  # rebuilt from Milvus and saved again
    again = make_store(LexicalEmbeddings(), prefix=writer.collection_prefix, graph_path=path, on_stale="error")
    assert again.graph.n_relations == 5


def test_a_crash_inside_a_delete_is_completed_by_rerunning(make_store, monkeypatch) -> None:
    import langchain_graphrag_milvus.ingest.updates as lifecycle_module

    store = make_store(LexicalEmbeddings())
    store.add_documents(V1)
    with monkeypatch.context() as patch:
        patch.setattr(lifecycle_module, "apply_graph_change", lambda *a, **k: (_ for _ in ()).throw(RuntimeError("x")))
        with pytest.raises(RuntimeError):
            store.delete_documents(["d1", "d3"])
    assert store.counts()["passages"] == 3  # the passage rows go last: the sources are still findable
    store.rebuild_graph()  # what a new process would see: relations still name d1 and d3
    assert {"d1", "d3"} <= set(store.graph.passages.ids)
    store.delete_documents(["d1", "d3"])  # the same call, re-run, finds the sources and completes
    check(store, entities=3, relations=2, passages=1)


class SynonymEmbeddings(LexicalEmbeddings):
    """Lexical vectors, except that the given aliases embed exactly like their canonical name."""

    ALIASES = {"NYC": "New York City", "Big Apple": "New York City"}

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return super().embed_documents([self.ALIASES.get(t, t) for t in texts])


def test_synonym_links_let_expansion_cross_aliases(make_store) -> None:
    store = make_store(SynonymEmbeddings(), synonym_threshold=0.95)
    store.add_documents([doc("p1", "New York City has five boroughs.", [["New York City", "has", "five boroughs"]])])
    store.add_documents(
        [
            doc("p2", "NYC hosts the marathon.", [["NYC", "hosts", "the marathon"]]),
            doc("p3", "The Big Apple never sleeps.", [["Big Apple", "never", "sleeps"]]),
        ]
    )
    graph = store.graph
    names = {v: k for k, v in store.entity_names().items()}
    nyc = graph.entities.lookup([int(names["NYC"], 16)])
    e = graph.expand(entity_seeds=nyc, hops=0, max_neighbors=None)
    texts = {r["pk"]: r["text"] for r in store.iterate("relations", ("text",))}
    reached = {texts[format(int(k), "016x")] for k in graph.relations.keys[e.relations].tolist()}
    assert reached == {"New York City has five boroughs", "NYC hosts the marathon", "Big Apple never sleeps"}
    rows = {r["text"]: r["synonym_ids"] for r in store.iterate("entities", ("text", "synonym_ids"))}
    assert sorted(rows["NYC"]) == sorted([names["New York City"], names["Big Apple"]])
    assert graph_signature(store.rebuild_graph()) == graph_signature(graph)  # synonyms come back from Milvus
    rebuilt = store.graph
    e2 = rebuilt.expand(entity_seeds=rebuilt.entities.lookup([int(names["NYC"], 16)]), hops=0, max_neighbors=None)
    assert e2.relations.size == 3
    # deleting the canonical passage removes its entity; the alias link goes with it
    store.delete_documents(["p1"])
    after = store.graph
    assert after.synonyms.indices.size == 2  # NYC <-> Big Apple remain, both ways
