"""Integrity of the write paths (issue 12, part A): escaping, identity, vectors, typed errors.

Every store-backed test runs on Milvus Lite and on the real server (``make_store``);
retrieval checks run sync and async (``retrieve``).
"""

from __future__ import annotations

import math

import pytest
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding, Embeddings

from langchain_graphrag_milvus import MilvusGraphRetriever, MilvusGraphStore, MilvusPathRetriever
from langchain_graphrag_milvus.errors import (
    EmbeddingDimensionError,
    InvalidEmbeddingError,
    InvalidFilterError,
    InvalidIdError,
    MalformedRecordError,
)
from langchain_graphrag_milvus.ingest.identity import chunk_source, default_passage_id

from ..cases import HOSTILE_IDS
from ..fakes import LexicalEmbeddings


def doc(pid: str | None, text: str, triplets: list[list[str]] | None = None, **meta) -> Document:
    metadata = dict(meta)
    if triplets is not None:
        metadata["triplets"] = triplets
    return Document(id=pid, page_content=text, metadata=metadata)


def stored(store: MilvusGraphStore, kind: str = "passages", fields: tuple[str, ...] = ()) -> dict[str, dict]:
    """Every row of a collection by pk (read with Strong consistency, chunked by known count)."""
    rows = store.client.query(
        store.collection_name(kind),
        filter='pk != ""',
        output_fields=["pk", *fields],
        limit=16_384,
        consistency_level="Strong",
    )
    return {r["pk"]: r for r in rows}


# ---------------------------------------------------------------------- 1. escaping
@pytest.mark.parametrize("partitioned", [False, True], ids=["plain", "partition_key"])
def test_hostile_ids_are_stored_fetched_updated_and_deleted_alone(make_store, partitioned) -> None:
    kwargs = {"partition_key_field": "tenant"} if partitioned else {}
    store = make_store(LexicalEmbeddings(), **kwargs)
    docs = [
        doc(pid, f"Passage {i} says Ada met Bob{i}.", [["Ada", "met", f"Bob{i}"]], tenant="a")
        for i, pid in enumerate(HOSTILE_IDS)
    ]
    docs.append(doc("bystander", "Cy owns Dot.", [["Cy", "owns", "Dot"]], tenant="b"))
    report = store.add_documents(docs, strict=True)
    assert report.passages_added == len(docs)
    assert set(stored(store)) == {*HOSTILE_IDS, "bystander"}
    assert set(store.fetch("passages", HOSTILE_IDS)) == set(HOSTILE_IDS)

    # an update of each hostile id replaces exactly that row (delete + insert on a partition-key store)
    changed = [doc(d.id, d.page_content + " Again.", d.metadata["triplets"], tenant="a") for d in docs[:-1]]
    assert store.upsert_documents(changed, strict=True).ingested.passages_updated == len(HOSTILE_IDS)
    rows = stored(store, fields=("text",))
    assert len(rows) == len(docs) and all(rows[p]["text"].endswith("Again.") for p in HOSTILE_IDS)

    # deleting the quote-injection id deletes that passage only
    report = store.delete_passages([HOSTILE_IDS[0]])
    assert report.passages_deleted == 1
    assert set(stored(store)) == {*HOSTILE_IDS[1:], "bystander"}
    store.delete_documents(HOSTILE_IDS[1:3], **({"tenant": "a"} if partitioned else {}))  # sources are per tenant
    assert set(stored(store)) == {*HOSTILE_IDS[3:], "bystander"}
    assert store.graph.n_passages == len(HOSTILE_IDS) - 3 + 1


BAD_IDS = ["e" * 513, "é" * 257, "lone \ud800 surrogate", "", "   ", 1.5, ["x"]]


def test_ids_milvus_cannot_hold_are_refused_before_anything_is_written(make_store) -> None:
    store = make_store()
    good = doc("good", "Cy owns Dot.", [["Cy", "owns", "Dot"]])

    def bad(value):
        document = Document(id="placeholder", page_content="Ada met Bob.", metadata={"triplets": []})
        document.id = value  # Document validates ids loosely; the store must not
        return document

    for value in BAD_IDS:  # strict: validated before anything is created
        with pytest.raises(InvalidIdError):
            store.add_documents([good, bad(value)], strict=True)
        with pytest.raises(InvalidIdError):
            store.add_records([{"id": value, "passage": "x", "triplets": []}], strict=True)
        assert not store.exists(), value
    report = store.add_documents([good, *(bad(v) for v in BAD_IDS)])  # not strict: skipped and counted
    assert report.records_skipped == len(BAD_IDS) and set(stored(store)) == {"good"}
    for value in BAD_IDS:
        with pytest.raises(InvalidIdError):
            store.delete_passages(["good", value])
        with pytest.raises(InvalidIdError):
            store.delete_documents(["good", value])
    assert set(stored(store)) == {"good"}  # the refused calls deleted nothing
    with pytest.raises(InvalidIdError, match="None"):
        store.add_records([{"id": None, "passage": "x", "triplets": []}], strict=True)


def test_over_long_partition_key_and_source_are_refused(make_store) -> None:
    store = make_store(partition_key_field="tenant")
    with pytest.raises(Exception, match="partition key"):
        store.add_documents([doc("a", "text", [], tenant="t" * 513)], strict=True)
    with pytest.raises(InvalidIdError):
        store.add_documents([doc(None, "text", [], source="s" * 513, tenant="a")], strict=True)
    assert not store.exists()


# ---------------------------------------------------------------------- 2. identity
@pytest.mark.parametrize("partitioned", [False, True], ids=["plain", "partition_key"])
async def test_same_text_from_two_tenants_is_two_passages(make_store, retrieve, partitioned) -> None:
    kwargs = {"partition_key_field": "tenant"} if partitioned else {}
    store = make_store(LexicalEmbeddings(), **kwargs)
    text = "Ada Lovelace wrote the first program."
    triplets = [["Ada Lovelace", "wrote", "the first program"]]
    store.add_documents([doc(None, text, triplets, tenant="a")])
    report = store.add_documents([doc(None, text, triplets, tenant="b")])
    assert report.passages_added == 1 and report.passages_updated == 0
    rows = stored(store, fields=("tenant",))
    assert sorted(r["tenant"] for r in rows.values()) == ["a", "b"]
    assert set(rows) == {default_passage_id(text, {"tenant": t}) for t in "ab"}
    for tenant in "ab":
        for retriever in (store.as_naive_retriever(k=3), MilvusGraphRetriever(store=store, k=3)):
            docs = await retrieve(retriever, "Who wrote the first program?", filter={"tenant": tenant})
            assert [d.metadata["tenant"] for d in docs] == [tenant]
    # re-ingesting tenant a's document is a no-op, and deleting it leaves b's
    assert store.add_documents([doc(None, text, triplets, tenant="a")]).passages_unchanged == 1
    store.delete_passages([default_passage_id(text, {"tenant": "a"})])
    assert [r["tenant"] for r in stored(store, fields=("tenant",)).values()] == ["b"]


def test_an_explicit_id_cannot_move_another_partitions_passage(make_store) -> None:
    store = make_store(LexicalEmbeddings(), partition_key_field="tenant")
    store.add_documents([doc("d1", "Tenant a's secret.", [["Ada", "knows", "the secret"]], tenant="a")])
    with pytest.raises(InvalidIdError, match="belongs to tenant 'a'"):
        store.add_documents([doc("d1", "Tenant b's text.", [], tenant="b")], strict=True)
    report = store.add_documents([doc("d1", "Tenant b's text.", [], tenant="b"), doc("d2", "B's own.", [], tenant="b")])
    assert report.records_skipped == 1 and report.passages_added == 1
    rows = stored(store, fields=("tenant", "text"))
    assert (rows["d1"]["tenant"], rows["d1"]["text"]) == ("a", "Tenant a's secret.")
    # the owner updates it as usual
    store.upsert_documents([doc("d1", "Tenant a's new secret.", [], tenant="a")], strict=True)
    assert stored(store, fields=("text",))["d1"]["text"] == "Tenant a's new secret."


def test_an_id_of_chunk_form_cannot_take_another_sources_chunk(make_store) -> None:
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    store = make_store(LexicalEmbeddings())
    assert chunk_source("x#0000") == "x" and chunk_source("x#12") is None
    with pytest.raises(InvalidIdError, match="chunk id of source 'x'"):
        store.add_documents([doc("x#0000", "A user's own document.", [])], strict=True)
    skipped = store.add_documents([doc("x#0000", "A user's own document.", [])])
    assert skipped.records_skipped == 1 and not store.exists()
    splitter = RecursiveCharacterTextSplitter(chunk_size=30, chunk_overlap=0)
    store.add_documents([Document(id="x", page_content="Ada wrote notes. " * 4)], splitter=splitter)
    chunks = stored(store, fields=("source_id", "text"))
    assert sorted(chunks) == [f"x#{i:04d}" for i in range(len(chunks))] and len(chunks) > 1
    assert {r["source_id"] for r in chunks.values()} == {"x"}
    # a passage that says it is chunk 0 of x (round-tripped from the store) may update it
    store.add_documents([doc("x#0000", "Ada wrote better notes.", [], source_id="x")], strict=True)
    assert stored(store, fields=("text",))["x#0000"]["text"] == "Ada wrote better notes."
    # user ids with '#' that are not of the chunk form are ordinary ids
    store.add_documents([doc("page#intro", "Intro.", []), doc("x#12", "Twelve.", [])], strict=True)
    assert {"page#intro", "x#12"} <= set(stored(store))


async def test_loader_documents_are_replaced_and_deleted_by_source(make_store, retrieve) -> None:
    store = make_store(LexicalEmbeddings())
    daniel = "corpus/daniel.txt"

    def pages(texts: list[str], source: str) -> list[Document]:  # what a LangChain loader returns
        return [
            Document(page_content=t, metadata={"source": source, "page": i, "triplets": []})
            for i, t in enumerate(texts)
        ]

    v1 = pages(["Daniel studied fluids.", "Daniel wrote Hydrodynamica.", "Daniel lived in Basel."], daniel)
    other = pages(["Euler lived in Berlin."], "corpus/euler.txt")
    store.add_documents(v1 + other)
    assert len(stored(store)) == 4
    v2 = pages(["Daniel studied fluids.", "Daniel wrote Hydrodynamica in 1738."], daniel)
    up = store.upsert_documents(v2)
    assert (up.deleted.passages_deleted, up.ingested.passages_added, up.ingested.passages_unchanged) == (2, 1, 1)
    rows = stored(store, fields=("source_id", "text", "source", "page"))
    assert sorted(r["text"] for r in rows.values() if r["source_id"] == daniel) == sorted(d.page_content for d in v2)
    assert len(rows) == 3

    docs = await retrieve(store.as_naive_retriever(k=1), "When was Hydrodynamica written?")
    assert docs[0].metadata["source"] == daniel and docs[0].metadata["page"] == 1

    report = store.delete_documents([daniel])
    assert report.passages_deleted == 2
    assert [r["source"] for r in stored(store, fields=("source",)).values()] == ["corpus/euler.txt"]


def test_loader_documents_chunked_by_a_splitter_are_replaced_by_source(make_store) -> None:
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    splitter = RecursiveCharacterTextSplitter(chunk_size=40, chunk_overlap=0)
    store = make_store(LexicalEmbeddings())
    source = "books/ada.pdf"
    v1 = [Document(page_content="Ada wrote many notes. " * 4, metadata={"source": source, "page": p}) for p in range(2)]
    store.add_documents(v1, splitter=splitter)
    ids = sorted(stored(store))
    assert ids == [f"{source}#{i:04d}" for i in range(len(ids))]  # numbered across both pages
    store.upsert_documents(
        [Document(page_content="Ada wrote one note.", metadata={"source": source})], splitter=splitter
    )
    rows = stored(store, fields=("text",))
    assert list(rows) == [f"{source}#0000"] and rows[f"{source}#0000"]["text"] == "Ada wrote one note."


def test_source_field_none_keeps_documents_their_own_source(make_store) -> None:
    store = make_store(LexicalEmbeddings(), source_field=None)
    store.add_documents([Document(page_content="A.", metadata={"source": "f.txt", "triplets": []})])
    assert store.delete_documents(["f.txt"]).passages_deleted == 0
    assert len(stored(store)) == 1


# ---------------------------------------------------------------------- 3. vectors
class FaultyEmbeddings(Embeddings):
    """Deterministic vectors, except for texts that ask for a fault."""

    def __init__(self, size: int = 16) -> None:
        self.inner = DeterministicFakeEmbedding(size=size)

    def _vector(self, text: str) -> list[float]:
        vector = self.inner.embed_query(text)
        if "NAN" in text:
            vector[3] = math.nan
        if "INF" in text:
            vector[0] = math.inf
        if "RAGGED" in text:
            vector = vector + [0.5]
        if "ZERO" in text:
            vector = [0.0] * len(vector)
        if "HUGE" in text:
            vector[1] = 1e300
        return vector

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._vector(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vector(text)


FAULTS = [
    ("NAN", InvalidEmbeddingError),
    ("INF", InvalidEmbeddingError),
    ("HUGE", InvalidEmbeddingError),
    ("ZERO", InvalidEmbeddingError),
    ("RAGGED", EmbeddingDimensionError),
]


def test_bad_vectors_are_refused_before_anything_is_created_or_written(make_store) -> None:
    """strict: the batch raises naming the document, nothing written; otherwise only it is skipped.

    A vector of another length (RAGGED) means a wrong model, not a bad document: it raises
    in both modes.
    """
    store = make_store(FaultyEmbeddings())
    good = [doc(f"g{i}", f"Good passage {i} about Ada.", [["Ada", "wrote", f"note {i}"]]) for i in range(4)]
    for fault, error in FAULTS:
        with pytest.raises(error, match=f"A {fault} passage"):
            store.add_documents([*good, doc("bad", f"A {fault} passage.", [["Ada", "met", "Bob"]])], strict=True)
        assert not store.exists(), fault  # no collection was created from the failed batch
    with pytest.raises(EmbeddingDimensionError, match="A RAGGED passage"):
        store.add_documents([*good, doc("bad", "A RAGGED passage.", [["Ada", "met", "Bob"]])])
    assert not store.exists()
    store.add_documents(good)
    before = store.counts()
    for fault, error in FAULTS:
        bad = doc("bad", f"A {fault} passage.", [["Ada", "met", "Bob"]])
        with pytest.raises(error, match=f"A {fault} passage"):
            store.add_documents([doc("g9", "Another good one.", [["Cy", "owns", "Dot"]]), bad], strict=True)
        with pytest.raises(error):  # an entity name that embeds badly is caught the same way
            store.add_documents([doc("g8", "Fine text.", [["Ada", "met", f"{fault} entity"]])], strict=True)
        with pytest.raises(error):  # an update with bad new vectors leaves the old version in place
            store.upsert_documents([doc("g0", f"Now a {fault} passage.", [["Ada", "wrote", "note 0"]])], strict=True)
        assert store.counts() == before, fault
    for fault, _ in FAULTS[:4]:  # not strict: the bad documents are skipped and counted, the good ones stored
        report = store.upsert_documents([doc("g0", f"Now a {fault} passage.", [["Ada", "wrote", "note 0"]])])
        assert report.ingested.records_skipped == 1 and report.ingested.passages_updated == 0, fault
        report = store.add_documents(
            [
                doc(f"g9{fault}", f"Another good one {fault.lower()}.", []),
                doc("g8", "Fine.", [["Ada", "met", f"{fault} x"]]),
            ]
        )
        assert report.passages_added == 1 and report.records_skipped == 1, fault
        assert [p.record_id for p in report.problems] == ["g8"], fault
    assert store.counts()["passages"] == before["passages"] + 4
    assert store.fetch("passages", ["g0"], ("text",))["g0"]["text"].startswith("Good")
    assert len(MilvusGraphRetriever(store=store, k=2).invoke("What did Ada write?")) == 2


def test_wrong_dimension_against_existing_collections_names_the_text(make_store) -> None:
    store = make_store(DeterministicFakeEmbedding(size=16), prefix=None)
    store.add_documents([doc("a", "Ada met Bob.", [["Ada", "met", "Bob"]])])
    other = make_store(DeterministicFakeEmbedding(size=8), prefix=store.collection_prefix)
    with pytest.raises(EmbeddingDimensionError, match="store 16-dimensional.*gives 8 for 'Cy owns Dot.'"):
        other.add_documents([doc("c", "Cy owns Dot.", [])])
    assert store.counts()["passages"] == 1


# ---------------------------------------------------------------------- 4. small ones
async def test_naive_retriever_refuses_a_non_string_query(make_store, retrieve) -> None:
    store = make_store(LexicalEmbeddings())
    store.add_documents([doc("a", "Ada met Bob.", [["Ada", "met", "Bob"]])])
    for query in (42, None, ["Ada"]):
        with pytest.raises(TypeError, match="query must be a string"):
            await retrieve(store.as_naive_retriever(k=1), query)


def test_a_bare_string_is_not_a_list_of_ids(make_store) -> None:
    store = make_store(LexicalEmbeddings())
    store.add_documents([doc(c, f"Passage {c}.", []) for c in ("d", "2", "d2")])
    with pytest.raises(TypeError, match="list of ids"):
        store.delete_passages("d2")
    with pytest.raises(TypeError, match="list of ids"):
        store.delete_documents("d2")
    with pytest.raises(TypeError, match="list of Documents"):
        store.upsert_documents(Document(page_content="x"))
    assert set(stored(store)) == {"d", "2", "d2"}
    assert store.delete_passages(["d2"]).passages_deleted == 1


async def test_a_string_filter_with_a_syntax_error_is_a_typed_error(make_store, retrieve) -> None:
    store = make_store(LexicalEmbeddings())
    store.add_documents([doc("a", "Ada met Bob.", [["Ada", "met", "Bob"]], tenant="a")])
    for bad_filter in ("tenant == ", 'tenant = "a"', "tenant in [", 'tenant == "a" and'):
        for retriever in (store.as_naive_retriever(k=1), MilvusGraphRetriever(store=store, k=1)):
            with pytest.raises(InvalidFilterError, match="filter"):
                await retrieve(retriever, "Who met Bob?", filter=bad_filter)
    docs = await retrieve(store.as_naive_retriever(k=1), "Who met Bob?", filter='tenant == "a"')
    assert [d.id for d in docs] == ["a"]


# ---------------------------------------------------------------------- 5. upserts validated first, tenant sources
def pages(texts: list[str], source: str, **meta) -> list[Document]:
    """What a LangChain loader returns for one file (no ids; ``metadata["source"]``)."""
    return [
        Document(page_content=t, metadata={"source": source, "page": i, "triplets": [], **meta})
        for i, t in enumerate(texts)
    ]


def test_non_strict_upsert_keeps_a_source_whose_new_version_is_invalid(make_store) -> None:
    from langchain_graphrag_milvus.ingest.upsert_plan import SkippedSource

    store = make_store(LexicalEmbeddings())
    store.add_documents(pages(["Good one.", "Good two."], "good.txt") + pages(["Bad one.", "Bad two."], "bad.txt"))
    before = stored(store, fields=("text", "source_id"))
    v2_bad = pages(["Bad one, new.", ""], "bad.txt")  # page 1 is empty: the new version is invalid
    with pytest.raises(MalformedRecordError):
        store.upsert_documents(pages(["Good one."], "good.txt") + v2_bad, strict=True)
    assert stored(store, fields=("text", "source_id")) == before  # strict: nothing changed
    report = store.upsert_documents(pages(["Good one."], "good.txt") + v2_bad)
    assert [(s.source, s.tenant) for s in report.sources_skipped] == [("bad.txt", None)]
    assert isinstance(report.sources_skipped[0], SkippedSource) and "empty" in report.sources_skipped[0].reason
    assert report.documents_skipped == 2 and "1 sources skipped" in str(report)
    assert (report.deleted.passages_deleted, report.ingested.passages_unchanged) == (1, 1)
    rows = stored(store, fields=("text", "source_id"))
    assert sorted(r["text"] for r in rows.values() if r["source_id"] == "bad.txt") == ["Bad one.", "Bad two."]
    assert [r["text"] for r in rows.values() if r["source_id"] == "good.txt"] == ["Good one."]


def test_a_foreign_id_refuses_its_source_before_any_delete(make_store) -> None:
    store = make_store(LexicalEmbeddings(), partition_key_field="tenant")
    store.add_documents([doc("d1", "Tenant a's secret.", [["Ada", "knows", "Bob"]], tenant="a")])
    store.add_documents([doc(f"b{i}", f"B's note {i}.", [], tenant="b", source_id="s") for i in (1, 2)])
    before = stored(store, fields=("text", "tenant", "source_id"))
    # tenant b's new version of source "s" names a's id "d1": the old b2 must not be deleted first
    new = [
        doc("d1", "B takes d1.", [], tenant="b", source_id="s"),
        doc("b1", "B's note 1.", [], tenant="b", source_id="s"),
    ]
    with pytest.raises(InvalidIdError, match="belongs to tenant 'a'"):
        store.upsert_documents(new, strict=True)
    assert stored(store, fields=("text", "tenant", "source_id")) == before
    report = store.upsert_documents(new)
    assert [(s.source, s.tenant) for s in report.sources_skipped] == [("s", "b")]
    assert "belongs to tenant 'a'" in report.sources_skipped[0].reason
    assert report.deleted.passages_deleted == 0 and report.ingested.passages_seen == 0
    assert stored(store, fields=("text", "tenant", "source_id")) == before


def test_sources_are_scoped_by_tenant(make_store) -> None:
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    store = make_store(LexicalEmbeddings(), partition_key_field="tenant")
    hostile = 'b" or tenant != "x'
    for who in ("a", "b", hostile):
        store.add_documents(pages([f"Notes of {who}."], "notes.txt", tenant=who))
    # b's upsert of "notes.txt" replaces b's passage only
    report = store.upsert_documents(pages(["New notes of b."], "notes.txt", tenant="b"))
    assert report.deleted.passages_deleted == 1
    texts = {r["tenant"]: r["text"] for r in stored(store, fields=("text", "tenant")).values()}
    assert texts == {"a": "Notes of a.", "b": "New notes of b.", hostile: f"Notes of {hostile}."}
    # a delete by source names its tenant, or asks for every tenant explicitly
    with pytest.raises(ValueError, match="tenant="):
        store.delete_documents(["notes.txt"])
    with pytest.raises(ValueError, match="not both"):
        store.delete_documents(["notes.txt"], tenant="a", all_tenants=True)
    assert store.delete_documents(["notes.txt"], tenant=hostile).passages_deleted == 1  # escaped: one tenant
    assert sorted(r["tenant"] for r in stored(store, fields=("tenant",)).values()) == ["a", "b"]
    assert store.delete_documents(["notes.txt"], tenant="b").passages_deleted == 1
    # chunks of a shared source name get per-tenant ids: neither tenant's upsert touches the other's
    splitter = RecursiveCharacterTextSplitter(chunk_size=30, chunk_overlap=0)
    for who in ("a", "b"):
        body = f"Chapter one by {who}. " * 3
        store.upsert_documents(
            [Document(page_content=body, metadata={"source": "book", "tenant": who})], splitter=splitter
        )
    rows = stored(store, fields=("tenant", "source_id"))
    book = {pk: r["tenant"] for pk, r in rows.items() if r["source_id"] == "book"}
    assert {t for t in book.values()} == {"a", "b"} and all(pk.startswith("book#") for pk in book)
    a_ids = [pk for pk, t in book.items() if t == "a"]
    assert store.delete_passages(a_ids, tenant="b").passages_deleted == 0  # b cannot delete a's ids
    assert store.delete_documents(["book", "notes.txt"], all_tenants=True).passages_deleted == len(book) + 1
    assert stored(store) == {}
    plain = make_store(LexicalEmbeddings())
    with pytest.raises(ValueError, match="partition_key_field"):
        plain.delete_documents(["notes.txt"], tenant="a")


async def test_a_query_vector_with_nan_or_inf_is_a_typed_error(make_store, retrieve) -> None:
    store = make_store(FaultyEmbeddings())
    store.add_documents([doc("g0", "Ada wrote a note.", [["Ada", "wrote", "a note"]])])
    for fault in ("NAN", "INF", "HUGE"):
        retrievers = (
            store.as_naive_retriever(k=1),
            MilvusGraphRetriever(store=store, k=1),
            MilvusPathRetriever(store=store),
        )
        for retriever in retrievers:
            with pytest.raises(InvalidEmbeddingError, match="query embedding.*no search was run"):
                await retrieve(retriever, f"What did Ada write {fault}?")
    assert len(await retrieve(MilvusGraphRetriever(store=store, k=1), "What did Ada write?")) == 1
