"""One tokenizer (text/tokens.py): each caller tokenises exactly as before the merge.

The expected values were recorded from the three separate tokenizers (ranking, offline
linker, path linearisation) before they were merged; eval numbers depend on them.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from langchain_graphrag_milvus.retrieval import linearize, query_entities
from langchain_graphrag_milvus.text import tokens

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

import baseline_ranking as ranking  # noqa: E402  (the previous ranking, moved out of the package)

BEFORE = {
    "What contributions did the sons of Euler's teacher make?": {
        "ranking_tokens": ["contributions", "did", "euler", "make", "of", "s", "sons", "teacher", "the", "what"],
        "content_words": ["contribut", "eul", "make", "s", "son", "teach"],
        "linker_spans": [
            ["what", "What"],
            ["contribution", "contributions"],
            ["did", "did"],
            ["the", "the"],
            ["son", "sons"],
            ["of", "of"],
            ["euler", "Euler"],
            ["teacher", "teacher"],
            ["make", "make"],
        ],
        "linker_tokens": ["what", "contribution", "did", "the", "son", "of", "euler", "teacher", "make"],
        "linearize_words": ["contributions", "did", "euler", "make", "s", "sons", "teacher", "what"],
    },
    "İstanbul Straße ﬁnance Gödel's GÖDEL": {
        "ranking_tokens": ["finance", "gödel", "i̇stanbul", "s", "strasse"],
        "content_words": ["finance", "gödel", "i̇stanbul", "s", "strasse"],
        "linker_spans": [
            ["istanbul", "İstanbul"],
            ["strasse", "Straße"],
            ["finance", "finance"],
            ["godel", "Gödel"],
            ["godel", "GÖDEL"],
        ],
        "linker_tokens": ["istanbul", "strasse", "finance", "godel", "godel"],
        "linearize_words": ["finance", "gödel", "i", "s", "stanbul", "strasse"],
    },
    "The Big Eye's  class; Jakob-Bernoulli's 1st_prize (1690s) naïve Café": {
        "ranking_tokens": [
            "1690s",
            "1st_prize",
            "bernoulli",
            "big",
            "café",
            "class",
            "eye",
            "jakob",
            "naïve",
            "s",
            "the",
        ],
        "content_words": ["1690", "1st_prize", "bernoulli", "big", "café", "clas", "eye", "jakob", "naïve", "s"],
        "linker_spans": [
            ["the", "The"],
            ["big", "Big"],
            ["eye", "Eye"],
            ["class", "class"],
            ["jakob", "Jakob"],
            ["bernoulli", "Bernoulli"],
            ["1st_prize", "1st_prize"],
            ["1690", "1690s"],
            ["naive", "naïve"],
            ["cafe", "Café"],
        ],
        "linker_tokens": ["the", "big", "eye", "class", "jakob", "bernoulli", "1st_prize", "1690", "naive", "cafe"],
        "linearize_words": ["1690s", "1st_prize", "bernoulli", "big", "café", "class", "eye", "jakob", "naïve", "s"],
    },
    "was the son of": {
        "ranking_tokens": ["of", "son", "the", "was"],
        "content_words": ["son"],
        "linker_spans": [["was", "was"], ["the", "the"], ["son", "son"], ["of", "of"]],
        "linker_tokens": ["was", "the", "son", "of"],
        "linearize_words": ["son"],
    },
    "Who is he? It's the one!": {
        "ranking_tokens": ["he", "is", "it", "one", "s", "the", "who"],
        "content_words": ["one", "s"],
        "linker_spans": [["who", "Who"], ["is", "is"], ["he", "he"], ["it", "It"], ["the", "the"], ["one", "one"]],
        "linker_tokens": ["who", "is", "he", "it", "the", "one"],
        "linearize_words": ["one", "s"],
    },
    "Leonhard EULER’s 2nd wife’s ß ǅ": {
        "ranking_tokens": ["2nd", "euler", "leonhard", "s", "ss", "wife", "ǆ"],
        "content_words": ["2nd", "eul", "leonhard", "s", "ss", "wife", "ǆ"],
        "linker_spans": [
            ["leonhard", "Leonhard"],
            ["euler", "EULER"],
            ["2nd", "2nd"],
            ["wife", "wife"],
            ["ss", "ß"],
            ["dz", "Dž"],
        ],
        "linker_tokens": ["leonhard", "euler", "2nd", "wife", "ss", "dz"],
        "linearize_words": ["2nd", "euler", "leonhard", "s", "ss", "wife", "ǆ"],
    },
    "stations relations workers builders a": {
        "ranking_tokens": ["a", "builders", "relations", "stations", "workers"],
        "content_words": ["build", "rel", "stat", "work"],
        "linker_spans": [
            ["station", "stations"],
            ["relation", "relations"],
            ["worker", "workers"],
            ["builder", "builders"],
            ["a", "a"],
        ],
        "linker_tokens": ["station", "relation", "worker", "builder", "a"],
        "linearize_words": ["builders", "relations", "stations", "workers"],
    },
}


@pytest.mark.parametrize("text", list(BEFORE))
def test_each_caller_tokenises_as_before(text: str) -> None:
    want = BEFORE[text]
    assert sorted(ranking._tokens(text)) == want["ranking_tokens"]
    assert sorted(ranking.content_words(text)) == want["content_words"]
    assert [list(p) for p in query_entities._spans(text)] == want["linker_spans"]
    assert list(query_entities._tokens(text)) == want["linker_tokens"]
    assert sorted(linearize._words(text)) == want["linearize_words"]


def test_the_callers_keep_their_differences() -> None:
    # casefolding order: the ranking folds word by word, the linearisation the whole text first
    assert tokens.words("İstanbul") == ["i̇stanbul"]
    assert tokens.words("İstanbul", casefold="text") == ["i", "stanbul"]
    # three named stopword sets, none a copy of another
    assert "which" in tokens.QUESTION_STOPWORDS and "which" in tokens.SENTENCE_STOPWORDS
    assert "are" not in tokens.QUESTION_STOPWORDS and "are" in tokens.SENTENCE_STOPWORDS
    assert "would" in tokens.NAME_STOPWORDS and "would" not in tokens.QUESTION_STOPWORDS
    assert query_entities.STOPWORDS is tokens.NAME_STOPWORDS
    # stopwords are checked before stemming; stemming keeps at least three letters
    assert tokens.terms("The sons", stopwords=tokens.QUESTION_STOPWORDS, stem=True) == {"son"}
    assert tokens.stem("was") == "was" and tokens.stem("stations") == "stat"
