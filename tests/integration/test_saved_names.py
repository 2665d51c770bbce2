"""Entity names saved with ``graph_path``: a reopened store answers without reading them from Milvus."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.documents import Document

from langchain_graphrag_milvus import MilvusGraphRetriever, MilvusGraphStore
from langchain_graphrag_milvus.errors import CorruptIndexError
from langchain_graphrag_milvus.graph import persist

from ..fakes import LexicalEmbeddings

DOCS = [
    Document(
        id=pid,
        page_content=text,
        metadata={"triplets": triplets, "tenant": tenant},
    )
    for pid, text, triplets, tenant in [
        ("a1", "Leonhard Euler was born in Basel.", [["Leonhard Euler", "born in", "Basel"]], "a"),
        ("a2", "Euler studied under Johann Bernoulli.", [["Leonhard Euler", "student of", "Johann Bernoulli"]], "a"),
        ("b1", "Kurt Gödel worked in Princeton.", [["Kurt Gödel", "worked in", "Princeton"]], "b"),
    ]
]
QUERIES = ["Where was Leonard Euler born?", "Who taught Leonhard Euler?", "Where did Kurt Godel work?"]


def spy_on_reads(store: MilvusGraphStore) -> list[str]:
    """Record the collections the store iterates (wrapping the real method: every read still happens)."""
    calls: list[str] = []
    real = store._reads.iterate

    def iterate(kind: str, *args: Any, **kwargs: Any) -> Iterator[dict[str, Any]]:
        calls.append(kind)
        return real(kind, *args, **kwargs)

    store._reads.iterate = iterate  # type: ignore[method-assign]
    return calls


def answers(store: MilvusGraphStore) -> list[list[str | None]]:
    retriever = MilvusGraphRetriever(store=store, k=2)
    return [[d.id for d in retriever.invoke(q)] for q in QUERIES]


@pytest.fixture
def written(make_store: Callable[..., MilvusGraphStore], tmp_path: Path) -> tuple[MilvusGraphStore, Path]:
    path = tmp_path / "graph-index"
    writer = make_store(LexicalEmbeddings(), graph_path=path)
    writer.add_documents(DOCS)
    return writer, path


def test_a_reopened_store_answers_its_first_query_without_reading_entities(make_store, written) -> None:
    writer, path = written
    expected, names = answers(writer), writer.entity_names()
    assert any(f.startswith("extra_names_") for f in json.loads((path / "manifest.json").read_text())["files"])
    reader = make_store(LexicalEmbeddings(), prefix=writer.collection_prefix, graph_path=path)
    calls = spy_on_reads(reader)
    assert answers(reader) == expected
    assert reader.entity_linker().find(QUERIES[0]) == ["Leonhard Euler"]  # the near miss links
    assert reader.entity_names() == names
    # neither the graph nor the names nor the linker read a collection (the passage vectors held for the
    # query are scanned once per process: not saved with the index yet, milvus/local_passages.py)
    assert [c for c in calls if c != "passages"] == []


def test_an_index_saved_without_names_still_loads_and_reads_them(make_store, written) -> None:
    writer, path = written
    expected, names = answers(writer), writer.entity_names()
    fingerprint = persist.read_manifest(path)["fingerprint"]
    persist.save(persist.load(path, mmap=False), path, fingerprint=fingerprint)  # as saved before names were
    assert not any("names" in f for f in json.loads((path / "manifest.json").read_text())["files"])
    reader = make_store(LexicalEmbeddings(), prefix=writer.collection_prefix, graph_path=path)
    calls = spy_on_reads(reader)
    assert answers(reader) == expected
    assert reader.entity_names() == names
    assert [c for c in calls if c != "passages"] == ["entities"]  # the names; the graph itself came from the file


def test_damaged_names_are_a_damaged_index(make_store, written) -> None:
    writer, path = written
    texts = path / "extra_names_texts_blob.npy"
    texts.write_bytes(texts.read_bytes()[:-3] + b"xyz")
    strict = make_store(LexicalEmbeddings(), prefix=writer.collection_prefix, graph_path=path, on_stale="error")
    with pytest.raises(CorruptIndexError, match="extra_names_texts_blob"):
        _ = strict.graph
    reader = make_store(LexicalEmbeddings(), prefix=writer.collection_prefix, graph_path=path)
    assert reader.entity_names() == writer.entity_names()  # rebuilt from Milvus, saved again
    persist.verify(path)


def test_tenant_linkers_stay_sealed_with_saved_names(make_store, written) -> None:
    writer, path = written
    reader = make_store(LexicalEmbeddings(), prefix=writer.collection_prefix, graph_path=path)
    spy_on_reads(reader)
    assert reader.entity_linker('tenant == "a"').find("Kurt Gödel and Leonhard Euler") == ["Leonhard Euler"]
    assert reader.entity_linker('tenant == "b"').find("Kurt Gödel and Leonhard Euler") == ["Kurt Gödel"]
    assert reader.entity_linker().find("Kurt Gödel and Leonhard Euler") == ["Kurt Gödel", "Leonhard Euler"]


def test_names_written_later_are_saved_too(make_store, written) -> None:
    writer, path = written
    writer.entity_linker().find("Euler")  # the linker's keys exist: later saves update them
    writer.add_documents(
        [
            Document(
                id="c1",
                page_content="Ada Lovelace met Babbage.",
                metadata={"triplets": [["Ada Lovelace", "met", "Charles Babbage"]], "tenant": "c"},
            )
        ]
    )
    reader = make_store(LexicalEmbeddings(), prefix=writer.collection_prefix, graph_path=path)
    calls = spy_on_reads(reader)
    assert reader.entity_names() == writer.entity_names()
    assert reader.entity_linker().find("Did Ada Lovelace meet Charles Babage?") == ["Ada Lovelace", "Charles Babbage"]
    assert calls == []


def count_builds(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Count the linker keys computed and the fuzzy indexes built (wrapping the real functions)."""
    from langchain_graphrag_milvus.text import name_index, name_table

    counts = {"keys": 0, "indexes": 0}
    real_key, real_build = name_table.linker_key, name_index._build

    def linker_key(name: str) -> str:
        counts["keys"] += 1
        return real_key(name)

    def build(choices: list[str]) -> dict[str, Any]:
        counts["indexes"] += 1
        return real_build(choices)

    monkeypatch.setattr(name_table, "linker_key", linker_key)
    monkeypatch.setattr(name_index, "_build", build)
    return counts


def test_the_fuzzy_index_is_saved_so_a_reopened_store_never_builds_it(make_store, written, monkeypatch) -> None:
    writer, path = written
    expected = answers(writer)
    assert any(f.startswith("extra_names_index_") for f in json.loads((path / "manifest.json").read_text())["files"])
    counts = count_builds(monkeypatch)
    reader = make_store(LexicalEmbeddings(), prefix=writer.collection_prefix, graph_path=path)
    assert answers(reader) == expected
    assert reader.entity_linker().find(QUERIES[0]) == ["Leonhard Euler"]  # fuzzy, through the loaded index
    assert counts == {"keys": 0, "indexes": 0}


def test_a_first_load_leaves_the_linker_built_for_the_first_query(make_store, monkeypatch) -> None:
    store = make_store(LexicalEmbeddings())
    report = store.add_documents(DOCS)
    assert report.bulk_load  # a first load into empty collections
    counts = count_builds(monkeypatch)
    assert store.entity_linker().find(QUERIES[0]) == ["Leonhard Euler"]
    assert answers(store)[2][0] == "b1"
    assert counts == {"keys": 0, "indexes": 0}
    # a later write changes the names: the linker is built again, computing keys for the new names only
    later = Document(id="c1", page_content="Ada met Babbage.", metadata={"triplets": [["Ada", "met", "Babbage"]]})
    store.add_documents([later])
    assert store.entity_linker().find("Did Ada meet Babbage?") == ["Ada", "Babbage"]
    assert counts["keys"] == 2
