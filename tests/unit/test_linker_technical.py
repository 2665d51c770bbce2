"""The offline linker on technical questions: lower-case names, partial names, aliases, stop words."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from langchain_graphrag_milvus import EntityLinker
from langchain_graphrag_milvus.retrieval.query_entities import looks_like_code
from langchain_graphrag_milvus.text.name_index import TokenIndex

#: Passages mentioning each entity, in a graph of 1,000 passages.
COUNTS = {
    "pip": 8,
    "keyring": 3,
    "polkit": 2,
    "init.defaultBranch": 40,
    "sha256": 30,
    "use": 300,
    "system": 120,
    "version": 90,
    "Leonhard Euler": 4,
    "Johann Bernoulli": 3,
    "system trust store": 2,
    "country": 60,
    "Debian": 50,
    "make_archive": 20,
    "Adam Smith": 2,
    "Will Smith": 2,
    "Euler identity": 1,
}


def frequency(names: Sequence[str]) -> tuple[list[int], int]:
    return [COUNTS.get(n, 0) for n in names], 1000


def linker(**kwargs: object) -> EntityLinker:
    return EntityLinker(list(COUNTS) + ["the", "how"], require_capital=True, frequency=frequency, **kwargs)  # type: ignore[arg-type]


def test_lowercase_specific_names_link_generic_words_do_not() -> None:
    found = linker().find("how do i get pip to use the system trust store and the keyring with polkit?")
    assert found == ["pip", "system trust store", "keyring", "polkit"]
    # a question that capitalises its names: a lower-case word is a common noun (unless written as code)
    assert linker().find("How can pip use the Keyring on Debian?") == ["keyring", "Debian"]
    assert linker().find("Does Debian ship sha256 and keyring?") == ["Debian", "sha256"]
    # generic: in more than 1% of the passages and written in lower case
    assert linker().find("which version of the system do i use in this country?") == []


def test_code_names_link_however_written() -> None:
    assert linker().find("what does init.defaultbranch set, and is sha256 used?") == ["init.defaultBranch", "sha256"]
    assert linker().find("Which formats can shutil make_archive produce?") == ["make_archive"]
    assert looks_like_code("init.defaultBranch") and looks_like_code("sha256") and looks_like_code("--user")
    assert not looks_like_code("keyring") and not looks_like_code("Leonhard Euler")


def test_partial_names_link_the_one_name_they_end() -> None:
    assert linker(partial=True).find("Who taught Euler?") == ["Leonhard Euler"]
    assert linker(partial=True).find("who taught euler?") == ["Leonhard Euler"]  # specific: 4 passages
    assert linker(partial=True).find("Is euler Swiss?") == []  # lower case in a capitalised question
    assert linker(partial=True).find("Who taught Bernoulli's son?") == ["Johann Bernoulli"]
    # "Smith" ends two names: ambiguous, nothing is linked
    assert linker(partial=True).find("Who is Smith?") == []
    assert linker().find("Who taught Euler?") == []  # partial matching is opt-in
    assert linker(partial=True).find("is the trust store used?") == ["system trust store"]


def test_aliases_case_possessive_plural_and_near_misses() -> None:
    found = linker(partial=True).find("Was Leonard Euler's teacher Johann bernoulli?")
    assert found == ["Leonhard Euler", "Johann Bernoulli"]
    assert linker().find("Is DEBIAN using Pip?") == ["Debian", "pip"]


def test_stop_words_never_link() -> None:
    assert linker(partial=True).find("how the of is it") == []
    assert EntityLinker(["the", "how", "of the"], require_capital=True, frequency=frequency).find("The How") == []


def test_without_frequency_the_older_rule_holds() -> None:
    old = EntityLinker(["pip", "country", "Debian"], require_capital=True)
    assert old.find("How does pip work on Debian?") == ["Debian"]
    assert old.find("how does pip work on debian?") == ["pip", "debian".capitalize()]


def test_generic_share_is_checked() -> None:
    with pytest.raises(ValueError, match="generic_share"):
        EntityLinker([], generic_share=2.0)
    loose = linker(generic_share=0.5)
    assert loose.find("use the system") == ["use", "system"]


def test_token_index_runs_and_ends() -> None:
    index = TokenIndex(["leonhard euler", "euler identity", "euler", "a euler b euler"])
    assert sorted(index.containing(["euler"])) == [(0, True), (1, False), (3, True)]
    assert index.containing(["leonhard", "euler"]) == []  # equal to the key: an exact match, not partial
    assert index.containing(["nobody"]) == []


def test_graph_frequency_counts_passages_of_the_named_entities() -> None:
    from langchain_graphrag_milvus import GraphIndex
    from langchain_graphrag_milvus.graph.ids import id_to_key
    from langchain_graphrag_milvus.retrieval.graph_linker import graph_frequency
    from langchain_graphrag_milvus.text.names import entity_id

    facts = [("pip", "uses", "keyring", "p1"), ("pip", "reads", "pip.conf", "p2"), ("Git", "has", "pip", "p3")]
    graph = GraphIndex.from_relations(
        relation_keys=list(range(100, 100 + len(facts))),
        subject_keys=[id_to_key(entity_id(s)) for s, _, _, _ in facts],
        object_keys=[id_to_key(entity_id(o)) for _, _, o, _ in facts],
        passage_ids=[[p] for *_, p in facts],
    )
    counts, total = graph_frequency(lambda: graph)(["Pip", "keyring", "nothing"])
    assert (list(counts), total) == ([3, 1, 0], 3)
    linked = EntityLinker(["pip", "keyring", "Git"], require_capital=True, frequency=graph_frequency(lambda: graph))
    assert linked.find("does pip use the keyring?") == ["pip", "keyring"]  # 3 passages or fewer: specific


def _containing_reference(choices: list[str], tokens: list[str]) -> list[tuple[int, bool]]:
    """The word index's answer by brute force over every key (what the dict-of-lists version returned)."""
    out = []
    for i, key in enumerate(choices):
        words = key.split(" ")
        if " " not in key or len(words) <= len(tokens) or not tokens:
            continue
        width = len(tokens)
        ends = [s + width == len(words) for s in range(len(words) - width + 1) if words[s : s + width] == tokens]
        if ends:
            out.append((i, any(ends)))
    return out


WORDS = ["a", "b", "euler", "leonhard", "é", "zz"]


@given(
    st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=4), max_size=30),
    st.lists(st.sampled_from([*WORDS, "nobody"]), min_size=1, max_size=3),
)
def test_token_index_equals_a_scan_of_every_key(keys: list[list[str]], run: list[str]) -> None:
    """The flat postings (sorted words, int32 key indices) answer exactly what a scan of the keys does, in order."""
    choices = [" ".join(k) for k in keys]
    assert TokenIndex(choices).containing(run) == _containing_reference(choices, run)
