"""The offline (spaCy) triplet extractor on real sentences, and through the real store.

Needs the ``offline`` extra (spaCy and an English pipeline); no mocks: the real parser runs.
Cost: loading the pipeline once (~1 s) and parsing a few passages; the store test ingests
the four nano passages on each backend.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain_core.documents import Document

from langchain_graphrag_milvus import MilvusGraphRetriever
from langchain_graphrag_milvus.datasets import NANO_QUESTION, nano_dataset
from langchain_graphrag_milvus.ingest.offline import (
    OfflineExtractorUnavailableError,
    OfflineTripletExtractor,
    create_offline_triplet_extractor,
    split_title,
)
from langchain_graphrag_milvus.ingest.offline_rules import clean_name
from langchain_graphrag_milvus.ingest.triplets import TripletCache, extract_texts

from .fakes import LexicalEmbeddings

pytest.importorskip("spacy", reason="the offline extra is not installed")

MUSIQUE = Path(__file__).resolve().parents[2] / "shared" / "data" / "musique100" / "passages.jsonl"


@pytest.fixture(scope="module")
def extractor() -> OfflineTripletExtractor:
    return create_offline_triplet_extractor()


def triplets(extractor: OfflineTripletExtractor, item: object) -> set[tuple[str, str, str]]:
    return {tuple(t) for t in extractor.invoke(item)["triplets"]}  # type: ignore[misc]


def test_subject_verb_object_with_prepositions_passives_and_appositions(extractor) -> None:
    nano = [r["passage"] for r in nano_dataset()]
    euler = triplets(extractor, nano[3])
    assert ("Leonhard Euler", "was born in", "Basel") in euler  # "Euler" is the subject's own name
    assert ("Leonhard Euler", "was a student of", "Johann Bernoulli") in euler  # coordinated verb, copula + "of"
    daniel = triplets(extractor, nano[2])
    assert ("Daniel Bernoulli", "is the son of", "Johann Bernoulli") in daniel  # apposition
    assert ("Daniel Bernoulli", "made major contributions to", "fluid dynamics") in daniel  # folded object
    assert ("Daniel Bernoulli", "made major contributions to", "statistics") in daniel  # coordinated objects
    passive = triplets(extractor, "Demon Dice\nDemon Dice is a collectible dice game created by Lester Smith.")
    assert ("Demon Dice", "created by", "Lester Smith") in passive  # participle hangs on "is a game"


def test_pronouns_and_short_references_resolve_only_where_safe(extractor) -> None:
    jakob = triplets(extractor, nano_dataset()[0]["passage"])
    assert ("Jakob Bernoulli", "made significant contributions to", "calculus") in jakob  # "He made ..."
    journal = json.loads(MUSIQUE.read_text(encoding="utf-8").splitlines()[0])
    facts = triplets(extractor, {"title": journal["title"], "text": journal["text"]})
    assert ("Journal of Mathematical Physics", "was published in", "January 1960") in facts  # "The journal was ..."
    # "he" in a passage about a game is somebody else: not resolved to the game
    game = triplets(extractor, {"title": "Chaos Progenitus", "text": "Chaos Progenitus is a dice game. He sold it."})
    assert not any(s == "Chaos Progenitus" and p == "sold" for s, p, _ in game)
    assert all(s.lower() not in {"he", "she", "it", "they", "who", "which"} for s, _, _ in game)


def test_title_links_from_metadata_title_line_or_first_subject(extractor) -> None:
    row = json.loads(MUSIQUE.read_text(encoding="utf-8").splitlines()[0])
    doc = Document(page_content=row["text"], metadata={"title": row["title"]})
    linked = triplets(extractor, doc)
    assert ("Journal of Mathematical Physics", "mentions", "University of Copenhagen") in linked
    assert triplets(extractor, f"{row['title']}\n{row['text']}") == linked  # "title\ntext" records
    assert split_title("Euler was born in Basel. He moved.") == ("Euler was born in Basel. He moved.", None)
    euler = triplets(extractor, nano_dataset()[3]["passage"])  # no title: the first sentence's subject
    assert ("Leonhard Euler", "mentions", "Bernoulli") in euler
    assert not any(p == "mentions" and o[:1].isdigit() for _, p, o in euler)  # no dates or numbers linked


def test_names_are_normalised(extractor) -> None:
    assert clean_name("  the   Bernoulli  family ") == "Bernoulli family"
    assert clean_name("Person - centered therapy") == "Person-centered therapy"
    assert clean_name("“Euler’s”") == "Euler"
    musique = [json.loads(line) for line in MUSIQUE.read_text(encoding="utf-8").splitlines()[:20]]
    results = extractor.batch([{"title": r["title"], "text": r["text"]} for r in musique])
    assert len(results) == 20 and sum(len(r["triplets"]) for r in results) > 100
    for result in results:
        for s, p, o in result["triplets"]:
            for name in (s, o):
                assert name == " ".join(name.split()) and name.strip("\"'.,;:()") == name
                assert name.split()[0].lower() not in {"the", "a", "an", "his", "her", "its", "their"}
            assert p and p == p.lower() or p.startswith(("is", "was"))


def test_empty_and_garbage_text_give_no_triplets(extractor) -> None:
    garbage = ["", "   \n  ", "!!! ??? ...", "\x00\x01\x02", "qwx zzv plk " * 200, "1234 5678 90"]
    assert [r["triplets"] for r in extractor.batch(garbage)] == [[] for _ in garbage]
    assert extractor.batch([]) == []
    with pytest.raises(TypeError):
        extractor.invoke(42)


def test_unknown_pipeline_is_a_clear_error_and_store_rejects_unknown_names(make_store) -> None:
    with pytest.raises(OfflineExtractorUnavailableError, match="spacy download"):
        create_offline_triplet_extractor("no_such_pipeline_xyz")
    with pytest.raises(ValueError, match="offline"):
        make_store(LexicalEmbeddings(), extractor="spacy")


def test_cache_keys_include_the_title(extractor, tmp_path) -> None:
    cache = TripletCache(tmp_path / "t.sqlite")
    text = "The journal was founded in 1960 by Jan Solovej."
    first = extract_texts([text], extractor, cache, max_concurrency=1, titles=["Journal of Physics"])
    again = extract_texts([text], extractor, cache, max_concurrency=1, titles=["Journal of Physics"])
    untitled = extract_texts([text], extractor, cache, max_concurrency=1)
    assert first[0][2] is False and again[0][2] is True and again[0][0] == first[0][0]
    assert untitled[0][2] is False  # another title, another extraction
    assert ["Journal of Physics", "was founded in", "1960"] in first[0][0]


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
