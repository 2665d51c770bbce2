"""Triplet extraction from raw passages with a (fake) chat model: parsing, cache, retries, report."""

from __future__ import annotations

import pytest
from langchain_core.documents import Document
from langchain_core.exceptions import OutputParserException
from langchain_core.language_models.fake_chat_models import FakeListChatModel

from langchain_graphrag_milvus.ingest.triplets import create_llm_triplet_extractor

from ..cases import FENCED, GOOD, MIXED, TRUNCATED
from ..fakes import LexicalEmbeddings, ScriptedExtractionModel


def docs() -> list[Document]:
    return [
        Document(id="p1", page_content="Ada Lovelace was born in London."),
        Document(id="p2", page_content="Babbage designed the Analytical Engine."),
        Document(id="p3", page_content="Byron was the father of Ada Lovelace and wrote poems."),
        Document(id="p4", page_content="Mary taught Ada mathematics."),
        Document(id="p5", page_content="Nothing to see here."),
        Document(id="p6", page_content="Already extracted.", metadata={"triplets": [["It", "is", "done"]]}),
    ]


SCRIPT = {"born in London": GOOD, "Analytical Engine": FENCED, "Byron": TRUNCATED, "Mary": MIXED}


def test_extraction_at_ingest_with_report_cache_and_retry(make_store, tmp_path) -> None:
    llm = ScriptedExtractionModel(script=SCRIPT, fail_first=1)  # the very first call hits a network error
    store = make_store(
        LexicalEmbeddings(),
        extractor=create_llm_triplet_extractor(llm),
        extraction_cache=tmp_path / "triplets.sqlite",
        extraction_concurrency=2,
        supplement=None,  # the extractor's own triplets only (the default adds spaCy's links: below)
    )
    report = store.add_documents(docs())
    assert report.extraction_calls == 4 and report.extraction_failures == 1  # p5: no JSON at all
    assert llm.calls == 6  # 5 passages + 1 retry; p6 came with its triplets
    assert report.input_tokens > 0 and report.output_tokens > 0
    assert report.triplets_skipped == 4  # MIXED: two parts, an empty part, a number; TRUNCATED: its cut-off one
    assert any("p5" in str(p) and "extraction failed" in str(p) for p in report.problems)
    texts = {r["text"] for r in store.iterate("relations", ("text",))}
    assert {
        "Ada Lovelace was born in London",
        "Babbage designed the Analytical Engine",
        "Byron was the father of Ada Lovelace",
        "Mary taught Ada",
        "It is done",
    } == texts
    assert store.counts()["passages"] == 6  # p5 is stored (searchable) without triplets

    # same passages again: nothing to pay; the failed one is retried (and fails again here)
    again = store.add_documents(docs())
    assert again.extraction_calls == 0 and again.extraction_failures == 1 and again.passages_unchanged == 5
    assert llm.calls == 7
    # another store (another process) with the same cache file never calls the model for them
    quiet = ScriptedExtractionModel(script={})
    other = make_store(
        LexicalEmbeddings(),
        extractor=create_llm_triplet_extractor(quiet),
        extraction_cache=tmp_path / "triplets.sqlite",
        supplement=None,
    )
    third = other.add_documents(docs()[:4])
    assert third.extraction_cached == 4 and quiet.calls == 0


def test_an_llm_extractor_gets_spacys_title_links_by_default(make_store) -> None:
    """``supplement="auto"`` (the default): an LLM extractor's triplets plus spaCy's title → mention links."""
    doc = Document(
        id="b1",
        page_content="Charles Babbage designed the Analytical Engine. He lived in London and met Ada Lovelace.",
        metadata={"title": "Charles Babbage"},
    )
    answer = '{"triples": [["Charles Babbage", "designed", "Analytical Engine"]]}'
    relations = {}
    for setting in ("default", None):
        extractor = create_llm_triplet_extractor(FakeListChatModel(responses=[answer]))
        kwargs = {} if setting == "default" else {"supplement": setting}
        store = make_store(LexicalEmbeddings(), extractor=extractor, **kwargs)
        report = store.add_documents([doc])
        relations[setting] = {r["text"] for r in store.iterate("relations", ("text",))}
        assert report.triplets_supplemented == len(relations[setting]) - 1
    assert relations[None] == {"Charles Babbage designed Analytical Engine"}
    # the links the LLM left out: the title to the passage's other names (not to the engine: connected already)
    assert relations["default"] >= {
        "Charles Babbage designed Analytical Engine",
        "Charles Babbage mentions London",
        "Charles Babbage mentions Ada Lovelace",
    }
    assert not any("mentions" in t and "Analytical Engine" in t for t in relations["default"])


def test_extraction_respects_max_concurrency(make_store) -> None:
    llm = ScriptedExtractionModel(script={"": GOOD}, delay=0.05)
    store = make_store(LexicalEmbeddings(), extractor=create_llm_triplet_extractor(llm), extraction_concurrency=3)
    store.add_documents([Document(id=f"p{i}", page_content=f"Passage number {i}.") for i in range(12)])
    assert llm.calls == 12 and 1 < llm.max_in_flight <= 3


def test_strict_extraction_raises_and_per_call_extractor(make_store) -> None:
    store = make_store(LexicalEmbeddings())
    broken = create_llm_triplet_extractor(FakeListChatModel(responses=["no json"] * 3), retries=1)
    with pytest.raises(OutputParserException):
        store.add_documents([Document(id="x", page_content="X met Y.")], extractor=broken, strict=True)
    report = store.add_documents([Document(id="x", page_content="X met Y.")])  # no extractor: no triplets
    assert report.passages_added == 1 and report.extraction_calls == 0 and store.counts()["relations"] == 0
    ok = create_llm_triplet_extractor(FakeListChatModel(responses=['{"triples": [["X", "met", "Y"]]}']))
    store.add_documents([Document(id="y", page_content="X met Y again.")], extractor=ok)
    assert store.counts()["relations"] == 1
