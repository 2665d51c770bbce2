"""store.memory_report() and ``stats`` name every part of the graph state that is in memory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain_core.documents import Document

from langchain_graphrag_milvus.cli.main import main

from ..fakes import LexicalEmbeddings

DOCS = [
    Document(id="euler", page_content="Leonhard Euler was a student of Johann Bernoulli.",
             metadata={"triplets": [["Leonhard Euler", "student of", "Johann Bernoulli"]]}),
    Document(id="daniel", page_content="Daniel Bernoulli was the son of Johann Bernoulli.",
             metadata={"triplets": [["Daniel Bernoulli", "son of", "Johann Bernoulli"]]}),
]  # fmt: skip


def test_the_report_grows_with_what_the_store_builds(
    make_store, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    store = make_store(LexicalEmbeddings(), graph_path=tmp_path / "graph")
    store.add_documents(DOCS)
    _ = store.graph
    before = store.memory_report()
    assert before.items["graph arrays"] > 0 and before.items["passage ids"] > 0
    assert before.n_relations == 2 and before.array_bytes == store.graph.nbytes
    assert store.entity_linker().find("Who taught Leonhard Euler?") == ["Leonhard Euler"]
    after = store.memory_report()
    for item in ("entity names", "name table", "linker names", "linker"):
        assert after.items[item] > 0, after.items
    assert after.total > before.total > 0
    assert "total:" in after.format() and "linker" in after.format()

    # a second store on the same data loads the saved index memory-mapped: mapped bytes, not heap
    reader = make_store(
        LexicalEmbeddings(), uri=store._connection.uri, prefix=store._connection.collection_prefix,
        graph_path=tmp_path / "graph",
    )  # fmt: skip
    _ = reader.graph
    assert reader.memory_report().mapped > 0

    code = main(["stats", "--uri", store._connection.uri, "--prefix", store._connection.collection_prefix,
                 "--embeddings", "fake", "--json"])  # fmt: skip
    stats = json.loads(capsys.readouterr().out)
    assert code == 0 and stats["memory"]["items"]["graph arrays"] > 0
    assert stats["memory"]["total"] >= stats["memory"]["items"]["graph arrays"]
    assert main(["stats", "--uri", store._connection.uri, "--prefix", store._connection.collection_prefix,
                 "--embeddings", "fake"]) == 0  # fmt: skip
    text = capsys.readouterr().out
    assert "in memory:" in text and "graph arrays:" in text
