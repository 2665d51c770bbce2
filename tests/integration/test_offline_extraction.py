"""The offline (spaCy) triplet extractor on real sentences, and through the real store.

Needs the ``offline`` extra (spaCy and an English pipeline); no mocks: the real parser runs.
Cost: loading the pipeline once (~1 s) and parsing a few passages; the store test ingests
the four nano passages on each backend.
"""

from __future__ import annotations

import json

import pytest
from langchain_core.documents import Document

from langchain_graphrag_milvus import MilvusGraphRetriever
from langchain_graphrag_milvus.datasets import NANO_QUESTION, nano_dataset
from langchain_graphrag_milvus.ingest.offline import (
    OfflineExtractorUnavailableError,
    create_offline_triplet_extractor,
)

from ..fakes import LexicalEmbeddings

pytest.importorskip("spacy", reason="the offline extra is not installed")


def test_unknown_pipeline_is_a_clear_error_and_store_rejects_unknown_names(make_store) -> None:
    with pytest.raises(OfflineExtractorUnavailableError, match="spacy download"):
        create_offline_triplet_extractor("no_such_pipeline_xyz")
    with pytest.raises(ValueError, match="offline"):
        make_store(LexicalEmbeddings(), extractor="spacy")


def test_add_documents_without_triplets_through_the_store(make_store, tmp_path) -> None:
    store = make_store(LexicalEmbeddings(), extractor="offline", extraction_cache=tmp_path / "x.sqlite")
    docs = [Document(id=f"nano-{i}", page_content=r["passage"]) for i, r in enumerate(nano_dataset())]
    report = store.add_documents(docs)
    assert report.extraction_calls == 4 and report.extraction_failures == 0 and report.relations_added > 20
    again = store.add_documents(docs)
    assert again.passages_added == 0 and again.extraction_calls == 0
    retriever = MilvusGraphRetriever(store=store, k=2)
    found = retriever.invoke(NANO_QUESTION)
    relations = [r for d in found for r in d.metadata["_relations"]]
    assert relations and any("Johann Bernoulli" in r for r in relations)
    assert {d.id for d in found} & {"nano-2", "nano-3"}


def test_eval_cli_builds_the_graph_offline_and_refuses_given_without_triplets(tmp_path, capsys) -> None:
    from langchain_graphrag_milvus.cli.main import main

    passages, questions = tmp_path / "passages.jsonl", tmp_path / "questions_dev.jsonl"
    rows = [
        {"id": f"nano-{i}", "title": r["passage"].split(" (")[0], "text": r["passage"]}
        for i, r in enumerate(nano_dataset())
    ]
    passages.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    question = {
        "id": "q",
        "question": NANO_QUESTION,
        "hops": 2,
        "type": "bridge",
        "gold_passage_ids": ["nano-3", "nano-2"],
    }
    questions.write_text(json.dumps(question) + "\n", encoding="utf-8")
    common = ["--embeddings", "fake", "--cache-dir", str(tmp_path / "cache"), "--no-progress"]
    # no triplets in the file: "given" cannot work (a one-line error, exit status 2)
    assert main(["eval", "--dataset", str(tmp_path), "--extractor", "given", *common]) == 2
    assert "has no triplets" in capsys.readouterr().err
    out_json = tmp_path / "out.json"
    assert main(["eval", "--dataset", str(tmp_path), "--extractor", "offline", "--json", str(out_json), *common]) == 0
    out = capsys.readouterr().out
    assert "offline triplets" in out and "passages/s" in out and "| naive |" in out and "R@2 bridge" in out
    data = json.loads(out_json.read_text())
    assert data["config"]["index"]["extraction_calls"] == 4 and data["config"]["extractor"] == "offline"
    # a re-run parses nothing: the collections and the triplet cache are reused
    assert main(["eval", "--dataset", str(tmp_path), "--extractor", "offline", *common]) == 0
    assert "0 passages added" in capsys.readouterr().out
