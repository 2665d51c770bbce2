"""A store refuses an embedding model other than the one its collections were built with.

The fingerprint (:mod:`langchain_graphrag_milvus.milvus.fingerprint`) is the model's vector of a
fixed text, kept in the relation collection's properties: the same model (another store object,
another runtime's ~1e-6 noise) passes, another model of the same dimension is refused at its first
write (before anything is written) and at its first search. Lite and server.
"""

from __future__ import annotations

import uuid

import numpy as np
import pytest
from langchain_core.embeddings import Embeddings

from langchain_graphrag_milvus import EmbeddingMismatchError, MilvusGraphRetriever, MilvusGraphStore
from langchain_graphrag_milvus.datasets import nano_dataset
from langchain_graphrag_milvus.milvus.fingerprint import FINGERPRINT_KEY, MODEL_KEY, PROBE_TEXT, EmbeddingCheck
from langchain_graphrag_milvus.milvus.properties import STORE_ID_KEY, collection_properties

from ..fakes import LexicalEmbeddings
from .test_local_search_redteam import Rotated

QUESTION = "Who taught Leonhard Euler?"
MORE = [{"id": "zeta", "passage": "Zeta Quokka met Omega Lynx.", "triplets": [["Zeta Quokka", "met", "Omega Lynx"]]}]


class Noisy(Embeddings):
    """The same model through another runtime: lexical vectors plus ~1e-6 of noise."""

    def __init__(self, size: int = 256) -> None:
        self.inner = LexicalEmbeddings(size)
        self.rng = np.random.default_rng(3)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        vectors = np.array(self.inner.embed_documents(texts))
        return (vectors + self.rng.normal(scale=1e-6, size=vectors.shape)).tolist()

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


def relation_properties(store: MilvusGraphStore) -> dict:
    return collection_properties(store.client, store.collection_name("relations"))


def snapshot(store: MilvusGraphStore) -> tuple:
    """What a refused write must leave as it was: rows, their ids, the generation counter, the properties."""
    props = relation_properties(store)
    return (
        store.counts(),
        sorted(r["pk"] for r in store.iterate("passages", ("pk",))),
        store.generation(),
        props.get(FINGERPRINT_KEY),
        props.get(STORE_ID_KEY),
    )


def test_the_same_model_reopened_passes(make_store) -> None:
    first = make_store(LexicalEmbeddings())
    first.add_records(nano_dataset())
    props = relation_properties(first)
    assert props[MODEL_KEY] == "LexicalEmbeddings" and len(props[FINGERPRINT_KEY]) > 100
    again = make_store(LexicalEmbeddings(), prefix=first.collection_prefix)  # another object, same model
    assert len(MilvusGraphRetriever(store=again, k=2).invoke(QUESTION)) == 2
    assert again.add_records(MORE).passages_added == 1
    noisy = make_store(Noisy(), prefix=first.collection_prefix)  # another runtime of the same model
    assert noisy.delete_passages(["zeta"]).passages_deleted == 1
    assert len(MilvusGraphRetriever(store=noisy, k=2).invoke(QUESTION)) == 2
    assert relation_properties(noisy)[FINGERPRINT_KEY] == props[FINGERPRINT_KEY]  # recorded once, never rewritten


async def test_another_model_is_refused_at_write_and_at_search(make_store) -> None:
    built = make_store(LexicalEmbeddings())
    built.add_records(nano_dataset())
    before = snapshot(built)
    other = make_store(Rotated(), prefix=built.collection_prefix)
    for write in (
        lambda: other.add_records(MORE),
        lambda: other.delete_passages(["p0"]),
        lambda: other.merge_entities(["Euler"], into="Leonhard Euler"),
    ):
        with pytest.raises(EmbeddingMismatchError) as refused:
            write()
        message = str(refused.value)
        assert message.startswith("embedding: ") and "embedding=" in message
        assert "built with LexicalEmbeddings" in message and "embedding= is Rotated" in message
    assert snapshot(built) == before  # nothing was written
    with pytest.raises(EmbeddingMismatchError, match="built with LexicalEmbeddings.*is Rotated"):
        MilvusGraphRetriever(store=other, k=2).invoke(QUESTION)
    reader = make_store(Rotated(), prefix=built.collection_prefix)  # a fresh object: the async path checks too
    with pytest.raises(EmbeddingMismatchError):
        await MilvusGraphRetriever(store=reader, k=2).ainvoke(QUESTION)
    with pytest.raises(EmbeddingMismatchError):
        reader.as_naive_retriever(k=2).invoke(QUESTION)
    with pytest.raises(EmbeddingMismatchError):
        reader.passage_store.similarity_search(QUESTION)
    other.embedding = LexicalEmbeddings()  # the right model, set on the same object: checked again, passes
    assert other.add_records(MORE).passages_added == 1
    assert len(MilvusGraphRetriever(store=other, k=2).invoke(QUESTION)) == 2


class Probed(LexicalEmbeddings):
    """Lexical embeddings that count the fingerprint's probe calls."""

    def __init__(self) -> None:
        super().__init__()
        self.probes = 0

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.probes += texts == [PROBE_TEXT]
        return super().embed_documents(texts)


def test_the_probe_is_embedded_once_per_store_object(make_store) -> None:
    writer = make_store(Probed())
    writer.add_records(nano_dataset()[:2])
    writer.add_records(nano_dataset()[2:])
    MilvusGraphRetriever(store=writer, k=2).invoke(QUESTION)
    writer.add_records(MORE)
    assert writer.embedding.probes == 1
    reader = make_store(Probed(), prefix=writer.collection_prefix)
    for _ in range(3):
        MilvusGraphRetriever(store=reader, k=2).invoke(QUESTION)
    assert reader.embedding.probes == 1 and reader.embedding.calls == [1, 1, 1, 1]  # three queries, one probe


def test_an_older_store_adopts_the_model_of_its_first_write(make_store, monkeypatch) -> None:
    with monkeypatch.context() as m:  # an earlier version: writes without recording a model
        m.setattr(EmbeddingCheck, "before_write", lambda self: None)
        old = make_store(LexicalEmbeddings())
        old.add_records(nano_dataset())
    assert FINGERPRINT_KEY not in relation_properties(old)
    reader = make_store(Rotated(), prefix=old.collection_prefix)
    assert len(MilvusGraphRetriever(store=reader, k=2).invoke(QUESTION)) == 2  # nothing recorded to refuse it by
    before = snapshot(old)
    writer = make_store(LexicalEmbeddings(), prefix=old.collection_prefix)
    writer.add_records(MORE)  # the first write records its model
    props = relation_properties(old)
    assert props[MODEL_KEY] == "LexicalEmbeddings" and props[STORE_ID_KEY] == before[4]
    late = make_store(Rotated(), prefix=old.collection_prefix)
    with pytest.raises(EmbeddingMismatchError):
        late.add_records(nano_dataset())
    with pytest.raises(EmbeddingMismatchError):
        MilvusGraphRetriever(store=late, k=2).invoke(QUESTION)


def test_a_large_fingerprint_fits(make_store) -> None:
    """3,072 dimensions (OpenAI's text-embedding-3-large): an 8 KiB property, on Lite and on the server."""
    store = make_store(LexicalEmbeddings(3072))
    store.add_records(nano_dataset()[:1])
    assert len(relation_properties(store)[FINGERPRINT_KEY]) == 3072 * 2 * 4 // 3
    again = make_store(Noisy(3072), prefix=store.collection_prefix)
    assert again.add_records(MORE).passages_added == 1
    with pytest.raises(EmbeddingMismatchError):
        make_store(Rotated(3072), prefix=store.collection_prefix).add_records(MORE)


def test_an_existing_collection_is_never_written_to(request, backend, tmp_path) -> None:
    from langchain_core.runnables import RunnableLambda
    from langchain_milvus import Milvus

    from langchain_graphrag_milvus import ExistingCollectionGraphStore

    from ..conftest import backend_uri

    uri = backend_uri(request, backend, tmp_path)
    name = f"docs_{uuid.uuid4().hex[:8]}"
    records = nano_dataset()
    Milvus.from_texts(
        [r["passage"] for r in records],
        LexicalEmbeddings(),
        collection_name=name,
        connection_args={"uri": uri},
        consistency_level="Strong",
    )
    by_text = {r["passage"]: r["triplets"] for r in records}
    extractor = RunnableLambda(lambda text: {"triplets": by_text.get(text, [])})
    stores: list[ExistingCollectionGraphStore] = []
    try:
        store = ExistingCollectionGraphStore(LexicalEmbeddings(), collection_name=name, uri=uri, extractor=extractor)
        stores.append(store)
        team_before = collection_properties(store.client, name)
        assert store.index_passages().passages_with_triplets == len(records)
        assert collection_properties(store.client, name) == team_before  # the team's collection: untouched
        assert FINGERPRINT_KEY not in team_before
        assert relation_properties(store)[MODEL_KEY] == "LexicalEmbeddings"  # the graph's own collection
        other = ExistingCollectionGraphStore(Rotated(), collection_name=name, uri=uri, extractor=extractor)
        stores.append(other)
        with pytest.raises(EmbeddingMismatchError):
            other.index_passages()
        with pytest.raises(EmbeddingMismatchError):
            MilvusGraphRetriever(store=other, k=2).invoke(QUESTION)
        assert collection_properties(store.client, name) == team_before
    finally:
        for s in stores:
            s.close()
        if backend == "server":
            from pymilvus import MilvusClient

            client = MilvusClient(uri=uri)
            for collection in (name, f"{name}_graph_entities", f"{name}_graph_relations"):
                if client.has_collection(collection):
                    client.drop_collection(collection)
            client.close()


def test_the_probe_text_is_fixed() -> None:
    """A changed probe would refuse every store built before it: changing it needs a migration."""
    assert PROBE_TEXT.startswith("langchain-graphrag-milvus embedding fingerprint: Leonhard Euler")
