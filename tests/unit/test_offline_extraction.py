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

from langchain_graphrag_milvus.datasets import nano_dataset
from langchain_graphrag_milvus.ingest.offline import (
    OfflineTripletExtractor,
    create_offline_triplet_extractor,
    split_title,
)
from langchain_graphrag_milvus.ingest.offline_rules import clean_name, title_name
from langchain_graphrag_milvus.ingest.triplets import TripletCache, extract_texts

pytest.importorskip("spacy", reason="the offline extra is not installed")

MUSIQUE = Path(__file__).resolve().parents[3] / "shared" / "data" / "musique100" / "passages.jsonl"


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
                assert name == " ".join(name.split()) and name.strip("\"'.,;:") == name and '"' not in name
                assert name.count("(") == name.count(")")  # no bracket trimmed off its pair
                assert name.split()[0].lower() not in {"the", "a", "an", "his", "her", "its", "their"}
            assert p and p == p.lower() or p.startswith(("is", "was"))


def test_a_qualified_title_names_what_the_text_calls_it(extractor) -> None:
    # hotpotqa100's Mark King: "Mark King (musician" was the subject (the ")" trimmed as punctuation),
    # so the passage never joined the "Mark King" that other passages and the question name
    king = {"title": "Mark King (musician)", "text": "Mark King (born 20 October 1958) is an English musician."}
    assert ("Mark King", "is", "English musician") in triplets(extractor, king)
    assert title_name("Freak Out (311 song)", '"Freak Out" is a single released by 311.') == "Freak Out"
    # the qualifier stays when the text never says the rest of the title
    assert title_name("Installation (Linux)", "Run make and copy the binary.") == "Installation (Linux)"
    assert title_name("ls(1)", "ls lists files.") == "ls(1)"
    assert title_name("(film)", "A film.") == "film"
    # the rest of the title as a whole word of the text, not inside another word
    assert title_name("Art (painting)", "Artists paint.") == "Art (painting)"
    assert title_name("Art (painting)", "Art is old.") == "Art"
    assert title_name("Art (painting)", "Pop-Art, 1960.") == "Art"
    # a nickname in quotes: the name the question uses, with no stray quote
    hexum = {"title": "Nick Hexum", "text": 'Nicholas Lofton "Nick" Hexum (born April 12, 1970) is an American singer.'}
    assert ("Nick Hexum", "is", "American singer") in triplets(extractor, hexum)
    assert clean_name("Alice in Wonderland (1951 film)") == "Alice in Wonderland (1951 film)"
    assert clean_name('the "Outer Limits" award') == "Outer Limits award"
    assert clean_name("(AAAS)") == "AAAS" and clean_name("((a)") == "a" and clean_name("foo()") == "foo()"


def test_empty_and_garbage_text_give_no_triplets(extractor) -> None:
    garbage = ["", "   \n  ", "!!! ??? ...", "\x00\x01\x02", "qwx zzv plk " * 200, "1234 5678 90"]
    assert [r["triplets"] for r in extractor.batch(garbage)] == [[] for _ in garbage]
    assert extractor.batch([]) == []
    with pytest.raises(TypeError):
        extractor.invoke(42)


def test_cache_keys_include_the_title(extractor, tmp_path) -> None:
    cache = TripletCache(tmp_path / "t.sqlite")
    text = "The journal was founded in 1960 by Jan Solovej."
    first = extract_texts([text], extractor, cache, max_concurrency=1, titles=["Journal of Physics"])
    again = extract_texts([text], extractor, cache, max_concurrency=1, titles=["Journal of Physics"])
    untitled = extract_texts([text], extractor, cache, max_concurrency=1)
    assert first[0][2] is False and again[0][2] is True and again[0][0] == first[0][0]
    assert untitled[0][2] is False  # another title, another extraction
    assert ["Journal of Physics", "was founded in", "1960"] in first[0][0]
