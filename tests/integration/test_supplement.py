"""``supplement=``: spaCy's title links added to given and extracted triplets, on Lite and a server.

The real spaCy parser and the real store; the LLM extractor is a ``RunnableLambda`` (no
OpenAI here). Skipped without the ``offline`` extra for the named supplement.
"""

from __future__ import annotations

import pytest
from langchain_core.runnables import RunnableLambda

from langchain_graphrag_milvus import MilvusGraphRetriever
from langchain_graphrag_milvus.datasets import NANO_QUESTION, nano_dataset
from langchain_graphrag_milvus.ingest.records import Triplet
from langchain_graphrag_milvus.ingest.supplement import merge_supplement
from langchain_graphrag_milvus.text.names import entity_key

from ..fakes import LexicalEmbeddings


def _records() -> list[dict]:
    return [
        {"id": f"nano-{i}", "title": r["passage"].split(" (")[0], "text": r["passage"], "triplets": r["triplets"]}
        for i, r in enumerate(nano_dataset())
    ]


def _relations(store) -> set[tuple[str, str, str]]:
    names = store.entity_names()
    rows = store.iterate("relations", output_fields=("subject_id", "predicate", "object_id"))
    return {(names[r["subject_id"]], r["predicate"], names[r["object_id"]]) for r in rows}


def test_offline_links_added_to_given_triplets(make_store, tmp_path) -> None:
    pytest.importorskip("spacy", reason="the offline extra is not installed")
    plain = make_store(LexicalEmbeddings())
    plain.add_records(_records())
    store = make_store(LexicalEmbeddings(), supplement="offline_links", extraction_cache=tmp_path / "t.sqlite")
    report = store.add_records(_records())
    given, linked = _relations(plain), _relations(store)
    added = linked - given
    assert report.triplets_supplemented == len(added) > 0 and given < linked
    assert all(p == "mentions" for _, p, _ in added)
    pairs = {frozenset((entity_key(s), entity_key(o))) for s, _, o in given}
    assert all(frozenset((entity_key(s), entity_key(o))) not in pairs for s, _, o in added)  # only new connections
    assert ("Johann Bernoulli", "mentions", "Leibniz") in added  # given: only "Leibniz's ideas"
    again = store.add_records(_records())
    assert again.passages_unchanged == 4 and again.relations_added == 0 and again.triplets_supplemented == 0
    docs = MilvusGraphRetriever(store=store, k=2).invoke(NANO_QUESTION)
    assert len(docs) == 2


def test_supplement_after_an_extractor_and_a_failing_supplement_is_retried(make_store, tmp_path) -> None:
    llm = RunnableLambda(lambda text: {"triplets": [["Euler", "was born in", "Basel"]], "usage": {}})
    calls: list[str] = []

    def links(text: str) -> list[list[str]]:
        calls.append(text)
        if "Basel" in text and len(calls) == 1:
            raise RuntimeError("parser down")
        return [["Euler", "mentions", "Basel"], ["Euler", "mentions", "Riehen"]]

    store = make_store(LexicalEmbeddings(), extractor=llm, supplement=RunnableLambda(links))
    docs = [{"id": "e", "passage": "Euler was born in Basel and grew up in Riehen."}]
    first = store.add_records(docs)
    assert first.extraction_failures == 1 and first.triplets_supplemented == 0
    assert _relations(store) == {("Euler", "was born in", "Basel")}  # the passage is written with its own triplets
    second = store.add_records(docs)  # the failed supplement is retried (the passage was marked for it)
    assert second.passages_updated == 1 and second.triplets_supplemented == 1
    assert _relations(store) == {("Euler", "was born in", "Basel"), ("Euler", "mentions", "Riehen")}
    own = [Triplet("Euler", "was born in", "Basel")]
    assert merge_supplement(own, [Triplet("Euler", "mentions", "Basel")]) == own


def test_eval_cli_supplement(tmp_path, capsys) -> None:
    pytest.importorskip("spacy", reason="the offline extra is not installed")
    import json

    from langchain_graphrag_milvus.cli.main import main

    (tmp_path / "passages.jsonl").write_text("".join(json.dumps(r) + "\n" for r in _records()), encoding="utf-8")
    question = {"id": "q", "question": NANO_QUESTION, "hops": 2, "gold_passage_ids": ["nano-3", "nano-2"]}
    (tmp_path / "questions_dev.jsonl").write_text(json.dumps(question) + "\n", encoding="utf-8")
    common = ["--dataset", str(tmp_path), "--embeddings", "fake", "--cache-dir", str(tmp_path / "c"), "--no-progress"]
    out_json = tmp_path / "out.json"
    assert main(["eval", *common, "--supplement", "offline_links", "--json", str(out_json)]) == 0
    out = capsys.readouterr().out
    assert "given+offline_links triplets" in out and "triplets added by the supplement" in out
    config = json.loads(out_json.read_text())["config"]
    assert config["supplement"] == "offline_links" and config["index"]["triplets_supplemented"] > 0
    assert main(["eval", *common]) == 0  # without: another prefix, the given triplets alone
    out = capsys.readouterr().out
    assert "added by the supplement" not in out and "given triplets (given); 4 passages added" in out


def test_ingest_cli_supplement(tmp_path, capsys) -> None:
    """``ingest --supplement offline_links``: a file's chunks get spaCy's links beside the extractor's triplets."""
    pytest.importorskip("spacy", reason="the offline extra is not installed")
    import json

    from langchain_graphrag_milvus import MilvusGraphStore
    from langchain_graphrag_milvus.cli.main import main

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "euler.md").write_text(
        "# Leonhard Euler\n\nLeonhard Euler was born in Basel. He studied with Johann Bernoulli in Riehen.\n"
    )
    options = ["--uri", str(tmp_path / "s.db"), "--embeddings", "fake"]
    counts = {}
    for prefix, extra in (("plain", []), ("linked", ["--supplement", "offline_links"])):
        argv = ["ingest", str(docs), *options, "--prefix", prefix, "--extractor", "none", *extra, "--json"]
        assert main(argv) == 0
        summary = json.loads(capsys.readouterr().out)
        # the summary says what ran beside the extractor ("auto" with --extractor none: nothing)
        assert summary["supplement"] == ("offline_links" if extra else None)
        assert (summary["triplets_supplemented"] > 0) == bool(extra)
        store = MilvusGraphStore(LexicalEmbeddings(), uri=str(tmp_path / "s.db"), collection_prefix=prefix)
        counts[prefix] = _relations(store)
        store.close()
    assert counts["plain"] == set()  # --extractor none: no triplet of its own
    assert counts["linked"] and all(p == "mentions" for _, p, _ in counts["linked"])


@pytest.mark.parametrize("extractor", ["llm", "offline", "none"])
def test_serve_adds_the_links_to_an_llm_extractor_as_ingest_does(tmp_path, monkeypatch, extractor) -> None:
    """``serve --extractor llm``: its ingests (``POST /documents``, ``/files``) get the store's default links too."""
    pytest.importorskip("spacy", reason="the offline extra is not installed")
    pytest.importorskip("langchain_openai", reason="the openai extra is not installed")
    from langchain_graphrag_milvus.cli import serve
    from langchain_graphrag_milvus.cli.main import build_parser
    from langchain_graphrag_milvus.ingest.offline import OfflineTripletExtractor

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")  # the extractor's model is made, never called
    argv = ["serve", "--uri", str(tmp_path / "s.db"), "--embeddings", "fake", "--extractor", extractor, "--llm", "fake"]
    state = serve._state(build_parser().parse_args(argv))
    try:
        links = state.store.supplement
        if extractor == "llm":
            assert isinstance(links, OfflineTripletExtractor) and links.links_only
        else:
            assert links is None
    finally:
        state.store.close()
