"""``graph_path="auto"`` (the default): a Milvus Lite store saves its graph beside the database.

A new process loads the saved index instead of reading every relation from Milvus (checked in
a real second process in which reading the relations from Milvus raises). A folder at that place
that is not the package's is left alone (nothing saved, a logged reason); ``drop()`` removes what
the store saved and nothing else; a server store saves nothing unless asked; the CLI does not
read the saved index as documents when the store sits inside the folder it ingests.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from langchain_core.documents import Document

from langchain_graphrag_milvus import MilvusGraphRetriever
from langchain_graphrag_milvus.cli.main import main

from ..fakes import LexicalEmbeddings

ROOT = Path(__file__).resolve().parents[2]

DOCS = [
    Document(id="euler", page_content="Leonhard Euler was a student of Johann Bernoulli.",
             metadata={"triplets": [["Leonhard Euler", "student of", "Johann Bernoulli"]]}),
    Document(id="daniel", page_content="Daniel Bernoulli was the son of Johann Bernoulli.",
             metadata={"triplets": [["Daniel Bernoulli", "son of", "Johann Bernoulli"]]}),
]  # fmt: skip
QUESTION = "Who was the son of Euler's teacher?"

SECOND_PROCESS = textwrap.dedent(
    """
    import json, sys
    from langchain_graphrag_milvus import MilvusGraphRetriever, MilvusGraphStore
    from langchain_graphrag_milvus.milvus import graph_cache
    from tests.fakes import LexicalEmbeddings

    def refuse(*args, **kwargs):
        raise AssertionError("the graph was read from Milvus instead of the saved index")

    graph_cache.read_graph_rows = refuse
    store = MilvusGraphStore(LexicalEmbeddings(), uri=sys.argv[1], collection_prefix=sys.argv[2])
    docs = MilvusGraphRetriever(store=store, k=2).invoke(sys.argv[3])
    print(json.dumps({"ids": [d.id for d in docs], "graph_path": str(store.graph_path)}))
    store.close()
    """
)


def _lite(make_store) -> None:
    if make_store.backend != "lite":
        pytest.skip("the default saves beside a Milvus Lite database only")


def test_a_new_process_loads_the_graph_saved_beside_the_database(make_store) -> None:
    _lite(make_store)
    store = make_store(LexicalEmbeddings())
    expected = Path(os.path.abspath(make_store.uri + ".graphs")) / store.collection_prefix
    assert store.graph_path == expected
    store.add_documents(DOCS)
    assert (expected / "manifest.json").is_file()
    here = [d.id for d in MilvusGraphRetriever(store=store, k=2).invoke(QUESTION)]
    store.close()  # one process holds a Lite database at a time
    done = subprocess.run(
        [sys.executable, "-c", SECOND_PROCESS, make_store.uri, store.collection_prefix, QUESTION],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    assert answer == {"ids": here, "graph_path": str(expected)}


def test_a_write_in_a_new_process_keeps_the_saved_index_current(make_store, caplog, monkeypatch) -> None:
    """A store that writes before it ever read the graph loads the saved one first: no rebuild after the write."""
    from langchain_graphrag_milvus import MilvusGraphStore
    from langchain_graphrag_milvus.graph import persist
    from langchain_graphrag_milvus.milvus.graph_cache import GraphCache

    _lite(make_store)
    first = make_store(LexicalEmbeddings())
    first.add_documents(DOCS[:1])
    first.close()
    reads: list[int] = []
    read_graph = GraphCache._read_graph
    monkeypatch.setattr(GraphCache, "_read_graph", lambda self: reads.append(1) or read_graph(self))
    again = MilvusGraphStore(LexicalEmbeddings(), uri=make_store.uri, collection_prefix=first.collection_prefix)
    try:
        with caplog.at_level(logging.WARNING, logger="langchain_graphrag_milvus"):
            again.add_documents(DOCS[1:])  # (its no-relations check reads the graph after the write)
            names = set(again.entity_names().values())
        assert "Daniel Bernoulli" in names and "Leonhard Euler" in names
        assert reads == [] and "rebuilding" not in caplog.text
        saved = persist.read_manifest(again.graph_path)["fingerprint"]
        assert saved == again.fingerprint()  # saved by the write, current
    finally:
        again.close()


def test_a_folder_that_is_not_ours_is_left_alone(make_store, caplog) -> None:
    _lite(make_store)
    prefix = "autoforeign"
    theirs = Path(make_store.uri + ".graphs") / prefix
    theirs.mkdir(parents=True)
    (theirs / "notes.txt").write_text("mine")
    with caplog.at_level(logging.WARNING, logger="langchain_graphrag_milvus.milvus.saved_graph"):
        store = make_store(LexicalEmbeddings(), prefix=prefix)
    assert store.graph_path is None
    assert "notes.txt" in caplog.text and "saves no graph index" in caplog.text
    store.add_documents(DOCS)
    assert [p.name for p in theirs.iterdir()] == ["notes.txt"]
    assert (theirs / "notes.txt").read_text() == "mine"
    store.drop()
    assert [p.name for p in theirs.iterdir()] == ["notes.txt"]


def test_drop_removes_the_saved_index_and_nothing_else(make_store) -> None:
    _lite(make_store)
    a = make_store(LexicalEmbeddings())
    a.add_documents(DOCS)
    folder = Path(make_store.uri + ".graphs")
    assert (folder / a.collection_prefix / "manifest.json").is_file()
    a.drop()
    assert not folder.exists()  # the index, then the emptied folder
    b = make_store(LexicalEmbeddings())
    b.add_documents(DOCS)
    (folder / "README").write_text("a user's file beside the indexes")
    b.drop()
    assert sorted(p.name for p in folder.iterdir()) == ["README"]


def test_none_saves_nothing_and_a_server_saves_nothing_by_default(make_store) -> None:
    store = make_store(LexicalEmbeddings(), graph_path=None)
    store.add_documents(DOCS)
    assert store.graph_path is None
    if make_store.backend == "lite":
        assert not Path(make_store.uri + ".graphs").exists()
    else:
        assert make_store(LexicalEmbeddings(), prefix=store.collection_prefix).graph_path is None


def test_the_cli_saves_beside_the_store_and_never_ingests_it(tmp_path: Path, capsys) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    (root / "a.md").write_text("# Basel\n\nLeonhard Euler was born in Basel.\n")
    uri = str(root / "store.db")
    options = ["--uri", uri, "--prefix", "clig", "--embeddings", "fake"]
    for _ in range(2):
        assert main(["ingest", str(root), *options, "--extractor", "none", "--json"]) == 0
        summary = json.loads(capsys.readouterr().out)
        assert summary["files_found"] == 1, summary
    assert (root / "store.db.graphs" / "clig" / "manifest.json").is_file()
    assert main(["stats", *options, "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["graph"]["saved_at"] == str(root / "store.db.graphs" / "clig")
    assert main(["stats", *options, "--graph-path", "none", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["graph"]["saved_at"] is None
