"""The scale benchmark's pure parts: a MuSiQue-like synthetic corpus, a free embedding, statistics.

* :func:`make_corpus`: passages of ≈9 relations each over entities with Zipf popularity (the
  graph of :func:`synthetic.generate`), multi-word capitalised names, a verb phrase per relation;
  the passage text is its relations as sentences, the triplets are given (no extraction).
* :func:`make_questions`: questions that mention 1–3 entity names as text (two-hop chains where
  the graph has them), some with a near-miss spelling; each with the passages it was made from.
* :class:`HashEmbedding`: a deterministic 384-d embedding (hashed word tokens → fixed random
  vectors, summed, normalised): texts that share words are similar, and it costs ~nothing.
* :func:`percentile`, :func:`union_length`: the statistics of the tables.

Everything is seeded: the same arguments give the same corpus, questions and vectors.
"""

from __future__ import annotations

import re
import threading
import time
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings
from scipy import sparse
from synthetic import generate

SYLLABLES = (
    "al ar ba be bo ca ce da de do el en fa fe ga ge ha he in is ja ka ke ko la le li lo lu ma me mi mo mu "
    "na ne ni no or pa pe po ra re ri ro ru sa se si so ta te ti to tu va ve vi wa we za ze zo"
).split()
PREDICATES = (
    "was born in|founded|is part of|was directed by|is located in|married|was written by|plays for|"
    "is the capital of|was succeeded by|studied at|was named after|is a member of|worked for|"
    "was released by|won|is headquartered in|performed with|owns|was designed by|is adjacent to|"
    "was produced by|served as|was built by|is the parent of|was discovered by|competed in|"
    "is an album by|was signed by|hosted"
).split("|")
QUESTION_TEMPLATES = {
    1: ("What is known about {0}?", "Which facts involve {0}?"),
    2: ("How is {0} related to {1}?", "What connects {0} and {1}?"),
    3: ("What links {0}, {1} and {2}?", "How are {0}, {1} and {2} connected?"),
}


@dataclass
class Corpus:
    """Records in the ingest format (``id``, ``title``, ``text``, ``triplets``) and their entities."""

    records: list[dict[str, Any]]
    names: list[str]
    n_relations: int
    relation_ends: np.ndarray = field(repr=False)  # (R, 2) entity indices
    relation_passages: list[list[int]] = field(repr=False)


def make_names(n: int, seed: int = 0) -> list[str]:
    """``n`` distinct capitalised names of two or three words (each of two or three syllables)."""
    rng = np.random.default_rng(seed)
    names: list[str] = []
    seen: set[str] = set()
    while len(names) < n:
        batch = n - len(names) + 64
        syl = rng.integers(0, len(SYLLABLES), size=(batch, 3, 3))
        n_syl = rng.integers(2, 4, size=(batch, 3))
        n_words = np.where(rng.random(batch) < 0.2, 3, 2)
        for b in range(batch):
            words = ["".join(SYLLABLES[s] for s in syl[b, w, : n_syl[b, w]]).capitalize() for w in range(n_words[b])]
            name = " ".join(words)
            if name.casefold() not in seen:
                seen.add(name.casefold())
                names.append(name)
                if len(names) == n:
                    break
    return names


def make_corpus(n_passages: int, *, seed: int = 0, relations_per_passage: int = 9) -> Corpus:
    """A corpus of ``n_passages`` passages with ≈``relations_per_passage`` given triplets each."""
    if n_passages < 1:
        raise ValueError("n_passages must be at least 1")
    graph = generate(n_passages * relations_per_passage, seed=seed, relations_per_passage=relations_per_passage)
    keys, inverse = np.unique(np.concatenate([graph.subject_keys, graph.object_keys]), return_inverse=True)
    n_rel = len(graph.relation_keys)
    ends = inverse.reshape(2, n_rel).T.astype(np.int64)
    names = make_names(len(keys), seed=seed + 1)
    predicates = np.random.default_rng(seed + 2).integers(0, len(PREDICATES), size=n_rel)
    n_out = max(1, n_rel // relations_per_passage)
    triplets: list[list[list[str]]] = [[] for _ in range(n_out)]
    rel_passages: list[list[int]] = []
    for r in range(n_rel):
        triple = [names[ends[r, 0]], PREDICATES[predicates[r]], names[ends[r, 1]]]
        ps = [int(p[1:]) for p in graph.passage_ids[r]]
        rel_passages.append(ps)
        for p in ps:
            triplets[p].append(triple)
    records = [
        {
            "id": f"p{i}",
            "title": t[0][0] if t else f"Passage {i}",
            "text": " ".join(f"{s} {p} {o}." for s, p, o in t),
            "triplets": t,
        }
        for i, t in enumerate(triplets)
    ]
    return Corpus(records, names, n_rel, ends, rel_passages)


def near_miss(name: str, rng: np.random.Generator) -> str:
    """``name`` with one letter of its longest word dropped or two adjacent letters swapped."""
    words = name.split()
    w = max(range(len(words)), key=lambda i: len(words[i]))
    word = words[w]
    if len(word) < 4:
        return name
    i = int(rng.integers(1, len(word) - 2))
    word = word[:i] + word[i + 1 :] if rng.random() < 0.5 else word[:i] + word[i + 1] + word[i] + word[i + 2 :]
    words[w] = word
    return " ".join(words)


def _chain(corpus: Corpus, by_subject: dict[int, list[int]], rng: np.random.Generator, n: int) -> list[int]:
    """Relation indices of a chain of up to ``n`` hops (each starts where the previous ended)."""
    chain = [int(rng.integers(0, corpus.n_relations))]
    while len(chain) < n:
        nxt = by_subject.get(int(corpus.relation_ends[chain[-1], 1]), [])
        if not nxt:
            break
        chain.append(nxt[int(rng.integers(0, len(nxt)))])
    return chain


def make_questions(corpus: Corpus, n: int, *, seed: int = 0, near_miss_share: float = 0.25) -> list[dict[str, Any]]:
    """``n`` questions naming 1–3 entities of a relation chain; ``gold`` lists the chain's passage ids."""
    rng = np.random.default_rng(seed)
    order = np.argsort(corpus.relation_ends[:, 0], kind="stable")
    subjects = corpus.relation_ends[order, 0]
    starts = np.flatnonzero(np.r_[True, subjects[1:] != subjects[:-1]])
    bounds = np.r_[starts, len(order)]
    by_subject = {int(subjects[a]): order[a:b].tolist() for a, b in zip(bounds[:-1], bounds[1:])}
    questions = []
    for q in range(n):
        n_names = int(rng.choice([1, 2, 3], p=[0.25, 0.5, 0.25]))
        chain = _chain(corpus, by_subject, rng, max(1, n_names - 1))
        entities = [int(corpus.relation_ends[chain[0], 0])] + [int(corpus.relation_ends[r, 1]) for r in chain]
        entities = list(dict.fromkeys(entities))[:n_names]
        names = [corpus.names[e] for e in entities]
        misspelt = bool(rng.random() < near_miss_share)
        if misspelt:
            j = int(rng.integers(0, len(names)))
            names[j] = near_miss(names[j], rng)
        templates = QUESTION_TEMPLATES[len(names)]
        text = templates[q % len(templates)].format(*names)
        gold = sorted({f"p{p}" for r in chain for p in corpus.relation_passages[r]})
        questions.append({"question": text, "names": names, "near_miss": misspelt, "gold": gold})
    return questions


class HashEmbedding(Embeddings):
    """Deterministic ``dim``-d vectors: hashed lower-case word tokens → fixed random rows, summed, normalised.

    When ``intervals`` is a list, every call appends its ``(start, end)`` (``time.perf_counter``).
    """

    def __init__(self, dim: int = 384, table_size: int = 1 << 14, seed: int = 0) -> None:
        self.dim = dim
        self.table = np.random.default_rng(seed).standard_normal((table_size, dim)).astype(np.float32)
        self.intervals: list[tuple[float, float]] | None = None
        self._lock = threading.Lock()

    def _tokens(self, text: str) -> list[int]:
        size = len(self.table)
        return [zlib.crc32(t.encode()) % size for t in re.findall(r"\w+", text.lower())] or [0]

    def vectors(self, texts: Sequence[str]) -> np.ndarray:
        """The embeddings of ``texts`` as a float32 array (rows of unit length)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        ids = [self._tokens(t) for t in texts]
        indptr = np.cumsum([0] + [len(row) for row in ids])
        flat = np.fromiter((i for row in ids for i in row), dtype=np.int64, count=int(indptr[-1]))
        counts = sparse.csr_matrix(
            (np.ones(len(flat), dtype=np.float32), flat, indptr), shape=(len(texts), len(self.table))
        )
        out = np.asarray(counts @ self.table, dtype=np.float32)
        out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-12)
        return out

    def _timed(self, texts: Sequence[str]) -> list[list[float]]:
        start = time.perf_counter()
        out = self.vectors(texts).tolist()
        if self.intervals is not None:
            with self._lock:
                self.intervals.append((start, time.perf_counter()))
        return out

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self._timed(texts)

    def embed_query(self, text: str) -> list[float]:
        return self._timed([text])[0]


def percentile(values: Iterable[float], q: float) -> float:
    """The ``q``-th percentile (0–100, linear interpolation); NaN for no values."""
    arr = np.asarray(list(values), dtype=np.float64)
    return float(np.percentile(arr, q)) if arr.size else float("nan")


def waves(intervals: Iterable[tuple[float, float]]) -> int:
    """Sequential groups of overlapping intervals (calls issued together count once): round trips in a row."""
    count, end = 0, float("-inf")
    for a, b in sorted(intervals):
        if a > end:
            count += 1
        end = max(end, b)
    return count


def union_length(
    intervals: Iterable[tuple[float, float]], lo: float = float("-inf"), hi: float = float("inf")
) -> float:
    """Total length covered by ``intervals`` clipped to ``[lo, hi]`` (overlaps counted once)."""
    clipped = sorted((max(a, lo), min(b, hi)) for a, b in intervals if min(b, hi) > max(a, lo))
    total, end = 0.0, float("-inf")
    for a, b in clipped:
        if b <= end:
            continue
        total += b - max(a, end)
        end = b
    return total
