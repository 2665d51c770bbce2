"""Supplement triplets (``ingest/supplement.py``): the merge rule, the names, and spaCy's title links.

The merge is pure and checked with hypothesis; the offline links run the real spaCy parser
(skipped without the ``offline`` extra).
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from langchain_core.runnables import RunnableLambda

from langchain_graphrag_milvus.datasets import nano_dataset
from langchain_graphrag_milvus.ingest.records import Triplet
from langchain_graphrag_milvus.ingest.supplement import SUPPLEMENTS, merge_supplement, resolve_supplement
from langchain_graphrag_milvus.text.names import entity_key

T = Triplet


def test_merge_keeps_the_own_triplets_and_adds_only_unconnected_pairs() -> None:
    own = [T("Leonhard Euler", "was born in", "Basel"), T("Johann Bernoulli", "taught", "Leonhard Euler")]
    extra = [
        T("leonhard  EULER", "mentions", "Basel"),  # same pair, another spelling: known
        T("Leonhard Euler", "mentions", "Johann Bernoulli"),  # reversed pair: known
        T("Leonhard Euler", "mentions", "Saint Petersburg"),  # new
        T("Leonhard Euler", "lived in", "Saint Petersburg"),  # the same new pair again: first kept
        T("Euler", "mentions", "euler"),  # one entity: no relation
    ]
    merged = merge_supplement(own, extra)
    assert merged == [*own, T("Leonhard Euler", "mentions", "Saint Petersburg")]
    assert merge_supplement(own, []) == own and merge_supplement([], extra[:1]) == extra[:1]


NAMES = st.sampled_from(["Euler", "euler", " Basel", "BASEL", "Johann Bernoulli", "johann  bernoulli", "Leibniz", "Ö"])
TRIPLETS = st.lists(st.builds(T, NAMES, st.sampled_from(["mentions", "was born in", "taught"]), NAMES), max_size=12)


@given(TRIPLETS, TRIPLETS)
def test_merge_properties(own: list[Triplet], extra: list[Triplet]) -> None:
    merged = merge_supplement(own, extra)
    assert merged[: len(own)] == own  # the own triplets first, untouched (even a self-loop of their own)

    def pair(t: Triplet) -> frozenset[str]:
        return frozenset((entity_key(t.subject), entity_key(t.object)))

    added = merged[len(own) :]
    known = {pair(t) for t in own}
    assert all(t in extra for t in added)
    assert all(len(pair(t)) == 2 and pair(t) not in known for t in added)  # each adds a new connection
    assert len({pair(t) for t in added}) == len(added)  # at most one triplet per new pair
    # every pair of the extra triplets is connected afterwards (nothing new is lost), and merging is idempotent
    assert {pair(t) for t in extra if len(pair(t)) == 2} <= {pair(t) for t in merged}
    assert merge_supplement(merged, extra) == merged


def test_resolve_names_and_refuse_anything_else() -> None:
    assert resolve_supplement(None) is None
    lam = RunnableLambda(lambda text: [])
    assert resolve_supplement(lam) is lam
    with pytest.raises(ValueError, match="offline_links"):
        resolve_supplement("spacy")
    with pytest.raises(TypeError, match="Runnable"):
        resolve_supplement(42)  # type: ignore[arg-type]
    assert SUPPLEMENTS == ("offline_links", "offline")


def test_offline_links_are_every_named_mention_of_the_title() -> None:
    pytest.importorskip("spacy", reason="the offline extra is not installed")
    links = resolve_supplement("offline_links")
    full = resolve_supplement("offline")
    assert links is not None and full is not None
    assert links.name.startswith("offline_links_v") and full.name.startswith("offline_triplets_v")  # two caches
    euler = {"title": "Leonhard Euler", "text": nano_dataset()[3]["passage"]}
    got = [tuple(t) for t in links.invoke(euler)["triplets"]]
    facts = [tuple(t) for t in full.invoke(euler)["triplets"]]
    assert got and all(s == "Leonhard Euler" and p == "mentions" for s, p, _ in got)
    objects = {o for _, _, o in got}
    # a mention a clause already links (born in Basel, student of Johann Bernoulli) is a link too
    assert {"Basel", "Johann Bernoulli"} <= objects
    assert ("Leonhard Euler", "was born in", "Basel") in facts and ("Leonhard Euler", "mentions", "Basel") not in facts
    # the full extractor's own title links are a subset of the links, and no date or number is linked
    assert {o for s, p, o in facts if p == "mentions"} <= objects
    assert not any(o[:1].isdigit() for o in objects)


def test_auto_is_the_title_links_for_an_llm_extractor_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """``supplement="auto"`` (the store's default): the links for an LLM extractor, nothing for any other."""
    pytest.importorskip("spacy", reason="the offline extra is not installed")
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    from langchain_graphrag_milvus.ingest import offline
    from langchain_graphrag_milvus.ingest.supplement import auto_supplement, is_llm_extractor
    from langchain_graphrag_milvus.ingest.triplets import create_llm_triplet_extractor

    llm = create_llm_triplet_extractor(FakeListChatModel(responses=["{}"]), retries=3)
    plain = RunnableLambda(lambda text: {"triplets": []})
    assert is_llm_extractor(llm) and is_llm_extractor(llm.with_config(tags=["mine"]))
    assert not is_llm_extractor(plain) and not is_llm_extractor(None) and not is_llm_extractor(object())
    assert auto_supplement(llm) == "offline_links"
    links = resolve_supplement("auto", llm)
    assert isinstance(links, offline.OfflineTripletExtractor) and links.links_only
    for other in (None, plain, offline.create_offline_triplet_extractor()):
        assert auto_supplement(other) is None and resolve_supplement("auto", other) is None
    # without spaCy: the LLM extractor's own triplets, and a warning that says what is missing
    monkeypatch.setattr(offline, "_installed", lambda name: False)
    with pytest.warns(UserWarning, match="offline"):
        assert resolve_supplement("auto", llm) is None
    with pytest.raises(offline.OfflineExtractorUnavailableError):
        resolve_supplement("offline_links", llm)  # asked for by name: an error, as before


@pytest.mark.parametrize("retries", [1, 3])
def test_the_llm_marker_survives_a_users_own_metadata(retries: int) -> None:
    """``extractor.with_config(metadata=...)`` (LangChain merges config keys shallowly) keeps the links on."""
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    from langchain_graphrag_milvus.ingest.extraction_cache import extractor_name
    from langchain_graphrag_milvus.ingest.supplement import is_llm_extractor
    from langchain_graphrag_milvus.ingest.triplets import create_llm_triplet_extractor

    answer = '{"triples": [["Ada Lovelace", "born in", "London"]]}'
    llm = create_llm_triplet_extractor(FakeListChatModel(responses=[answer]), retries=retries)
    mine = llm.with_config(metadata={"team": "search"})
    renamed = llm.with_config(run_name="mine", metadata={"team": "search"})
    for wrapped in (mine, renamed, mine.with_retry(stop_after_attempt=2), mine.bind(), mine.with_config(tags=["t"])):
        assert is_llm_extractor(wrapped)
    # the cache identity is the run name, as before the marker
    assert extractor_name(llm) == extractor_name(mine) == "graph_triplet_extraction[FakeListChatModel]"
    assert extractor_name(renamed) == "mine"
    text = "Ada Lovelace was born in London."
    assert llm.invoke(text)["triplets"] == mine.invoke(text)["triplets"] == [["Ada Lovelace", "born in", "London"]]
