"""The pure parts of ``benchmarks/bench_scale.py``: corpus, questions, free embedding, statistics."""

from __future__ import annotations

import math
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from scale_corpus import (  # noqa: E402
    HashEmbedding,
    make_corpus,
    make_names,
    make_questions,
    near_miss,
    percentile,
    union_length,
)
from scale_report import client_estimate, memory_estimate, share, summarize, top_calls  # noqa: E402
from scale_worker import MilvusSpy, by_name, split_time  # noqa: E402


@pytest.fixture(scope="module")
def corpus():
    return make_corpus(1500, seed=3)


def test_names_are_distinct_capitalised_multiword_and_seeded():
    names = make_names(5000, seed=1)
    assert len(names) == 5000
    assert len({n.casefold() for n in names}) == 5000
    assert all(2 <= len(n.split()) <= 3 and all(w[0].isupper() for w in n.split()) for n in names)
    assert names == make_names(5000, seed=1)
    assert names != make_names(5000, seed=2)


def test_corpus_shape(corpus):
    assert len(corpus.records) == 1500
    assert corpus.n_relations == 1500 * 9
    per_passage = [len(r["triplets"]) for r in corpus.records]
    assert 9 <= np.mean(per_passage) < 9.9  # 9 each, plus ~5% stated again in a second passage
    assert sum(per_passage) == sum(len(ps) for ps in corpus.relation_passages)
    names = set(corpus.names)
    for record in corpus.records[:200]:
        assert record["id"].startswith("p")
        for s, p, o in record["triplets"]:
            assert s in names and o in names and p
            assert f"{s} {p} {o}." in record["text"]


def test_corpus_popularity_is_skewed(corpus):
    degree = Counter(corpus.relation_ends.ravel().tolist())
    counts = sorted(degree.values(), reverse=True)
    # a hub holding ~1% of the relations (synthetic.py's Zipf profile), far above the median entity
    assert 0.005 < counts[0] / corpus.n_relations < 0.02
    assert counts[0] > 5 * np.median(counts)


def test_corpus_is_seeded():
    a, b = make_corpus(300, seed=5), make_corpus(300, seed=5)
    assert a.records == b.records
    assert make_corpus(300, seed=6).records != a.records


def test_near_miss_is_one_edit_away():
    rng = np.random.default_rng(0)
    for name in make_names(300, seed=4):
        miss = near_miss(name, rng)
        if miss == name:
            continue
        a, b = name.replace(" ", ""), miss.replace(" ", "")
        if len(b) == len(a) - 1:  # one letter dropped
            assert any(a[:i] + a[i + 1 :] == b for i in range(len(a)))
        else:  # two adjacent letters swapped
            diff = [i for i in range(len(a)) if a[i] != b[i]]
            assert len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]]


def test_questions_name_their_entities_and_gold_passages(corpus):
    questions = make_questions(corpus, 200, seed=1)
    assert len(questions) == 200
    by_id = {r["id"]: r for r in corpus.records}
    sizes = Counter(len(q["names"]) for q in questions)
    assert set(sizes) <= {1, 2, 3} and sizes[1] and sizes[2]
    assert 0.1 < sum(q["near_miss"] for q in questions) / 200 < 0.4
    for q in questions:
        assert all(name in q["question"] for name in q["names"])
        gold_text = " ".join(by_id[g]["text"] for g in q["gold"])
        exact = [n for n in q["names"] if n in corpus.names]
        assert len(exact) >= len(q["names"]) - 1
        assert all(n in gold_text for n in exact)
    assert make_questions(corpus, 50, seed=1) == questions[:50]


def test_hash_embedding():
    emb = HashEmbedding()
    a, b, c = emb.embed_documents(["Leonhard Euler was born in Basel", "Euler born in Basel", "Paris France"])
    assert len(a) == 384 and math.isclose(float(np.linalg.norm(a)), 1.0, rel_tol=1e-5)
    assert emb.embed_query("Leonhard Euler was born in Basel") == pytest.approx(a, abs=1e-6)
    assert np.dot(a, b) > np.dot(a, c) + 0.3
    assert HashEmbedding().embed_query("Paris France") == pytest.approx(c, abs=1e-6)
    assert emb.embed_documents([]) == []
    assert len(emb.embed_query("")) == 384  # no tokens: still a vector


def test_hash_embedding_records_intervals_when_asked():
    emb = HashEmbedding()
    emb.embed_query("x")
    assert emb.intervals is None
    emb.intervals = []
    emb.embed_documents(["a", "b"])
    emb.embed_query("c")
    assert len(emb.intervals) == 2 and all(end >= start for start, end in emb.intervals)


def test_percentile():
    assert percentile([3, 1, 2], 50) == 2
    assert percentile(range(101), 99) == 99
    assert math.isnan(percentile([], 50))


@pytest.mark.parametrize(
    ("intervals", "lo", "hi", "expected"),
    [
        ([], -1, 10, 0.0),
        ([(0, 2), (1, 3)], -1, 10, 3.0),  # overlap counted once
        ([(0, 10), (2, 3)], -1, 20, 10.0),  # nested
        ([(0, 1), (5, 6)], -1, 10, 2.0),  # disjoint
        ([(0, 10)], 2, 5, 3.0),  # clipped
        ([(0, 1)], 2, 5, 0.0),  # outside
    ],
)
def test_union_length(intervals, lo, hi, expected):
    assert union_length(intervals, lo, hi) == pytest.approx(expected)


def test_split_time_subtracts_the_union_of_milvus_and_embedding():
    spy = MilvusSpy()
    spy.calls = [(1.0, 2.0, "search"), (1.5, 2.5, "query"), (9.0, 11.0, "search")]  # the last is outside
    emb = HashEmbedding()
    emb.intervals = [(2.0, 3.0), (0.0, 0.5)]  # the second is outside
    split = split_time(spy, emb, 0.8, 5.0)
    assert split["total"] == pytest.approx(4.2)
    assert split["milvus"] == pytest.approx(1.5)
    assert split["embed"] == pytest.approx(1.0)
    assert split["library"] == pytest.approx(4.2 - 2.0)  # Milvus and embedding overlap 0.5 s
    assert split["calls"] == 2 and split["by_name"] == {"search": [1, 1.0], "query": [1, 1.0]}
    assert by_name([]) == {}


def test_summarize_share_and_top_calls():
    splits = [
        {"total": t, "library": t / 2, "milvus": t / 4, "embed": 0.0, "calls": 3, "recall": r}
        for t, r in [(0.01, 1.0), (0.02, 0.0), (0.03, 0.5)]
    ]
    stats = summarize(splits)
    assert stats["total_p50"] == pytest.approx(20.0) and stats["library_p50"] == pytest.approx(10.0)
    assert stats["calls_p50"] == 3 and stats["recall"] == pytest.approx(0.5)
    assert share({"total": 2.0, "library": 0.5}, "library") == 0.25
    assert share({"total": 0.0, "library": 0.5}, "library") == 0.0
    text = top_calls({"by_name": {"search": [2, 0.5], "query": [1, 1.5]}}, {"by_name": {"search": [1, 0.25]}})
    assert text == "1× query (1.50), 3× search (0.75)"


def test_memory_estimates():
    est = memory_estimate(rows=1_000, passages=100, rss_delta=3_500_000, target=1_000)
    assert est["per_row"] == 3500 and est["target_rows"] == 10_000 and est["target_bytes"] == 35_000_000
    assert client_estimate([(100, 1000.0)], target=1000) == 10_000.0  # one size: proportional
    assert client_estimate([(100, 1000.0), (200, 1500.0)], target=1000) == 1500.0 + 5 * 800
    assert client_estimate([(100, 1000.0), (200, 900.0)], target=1000) == 900.0  # never shrinks
