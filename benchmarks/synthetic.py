"""Seeded synthetic knowledge graphs shaped like real ones, and the benchmarks' table printer.

Two popularity profiles, both with a mean of ~16.75 relations per entity (the Elastic
article's figure) and a largest hub holding ~1% of all relations (the article's 24,700
of 2M):

* ``zipf`` (default): endpoints drawn with probability ∝ ``rank ** -s``, ``s`` solved for
  the 1% hub. That gives s ≈ 0.5–0.65, the rank–degree slope of the real OpenIE graph
  of ``musique100`` (0.50; its largest hub is 1.3% of its relations).
* ``hubs``: 70% of endpoints go to a core of hubs of ~1% each (140 of them), the rest
  is Zipf. Σp² ≈ 3.5e-3 makes ``Aᵀ·A`` ≈ 14 billion non-zeros at 1M relations: the
  graph behind the issue's measurements of the seed's approach (3.1 GB at 100k).

Each passage supports ~9 consecutive relations (MuSiQue: 9.2 triplets per passage) and
5% of relations are also supported by a second, random passage.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass
class SyntheticGraph:
    relation_keys: np.ndarray
    subject_keys: np.ndarray
    object_keys: np.ndarray
    passage_ids: list[list[str]]
    n_entities_drawn_from: int
    zipf_s: float


def _zipf_weights(n: int, s: float) -> np.ndarray:
    w = np.arange(1, n + 1, dtype=np.float64) ** -s
    return w / w.sum()


def _solve_s(n_entities: int, hub_share: float) -> float:
    # each relation has two endpoints: hub degree ≈ 2 R p_1  ->  p_1 ≈ hub_share / 2
    target = hub_share / 2
    lo, hi = 0.0, 2.0
    for _ in range(60):
        mid = (lo + hi) / 2
        p1 = _zipf_weights(n_entities, mid)[0]
        lo, hi = (mid, hi) if p1 < target else (lo, mid)
    return (lo + hi) / 2


def generate(
    n_relations: int,
    *,
    seed: int = 0,
    mean_degree: float = 16.75,
    hub_share: float = 0.01,
    relations_per_passage: int = 9,
    profile: str = "zipf",
) -> SyntheticGraph:
    rng = np.random.default_rng(seed)
    n_entities = max(16, int(2 * n_relations / mean_degree))
    if profile == "zipf":
        s = _solve_s(n_entities, hub_share)
        weights = _zipf_weights(n_entities, s)
    elif profile == "hubs":
        core_mass = 0.7
        n_hubs = max(1, min(n_entities // 2, round(core_mass / (hub_share / 2))))
        s = _solve_s(n_entities - n_hubs, hub_share)
        weights = np.concatenate(
            [np.full(n_hubs, core_mass / n_hubs), (1 - core_mass) * _zipf_weights(n_entities - n_hubs, s)]
        )
    else:
        raise ValueError(f"unknown profile {profile!r}")
    cdf = np.cumsum(weights)
    cdf /= cdf[-1]
    perm = rng.permutation(n_entities)  # popularity is not tied to key order
    subj = perm[np.minimum(np.searchsorted(cdf, rng.random(n_relations)), n_entities - 1)]
    obj = perm[np.minimum(np.searchsorted(cdf, rng.random(n_relations)), n_entities - 1)]
    # keys: distinct random 64-bit values (like the hashed ids of real data)
    ent_keys = rng.choice(np.iinfo(np.int64).max, size=n_entities, replace=False).astype(np.uint64)
    rel_keys = rng.choice(np.iinfo(np.int64).max, size=n_relations, replace=False).astype(np.uint64)
    n_passages = max(1, n_relations // relations_per_passage)
    first = np.minimum(np.arange(n_relations) // relations_per_passage, n_passages - 1)
    second = rng.integers(0, n_passages, n_relations)
    extra = rng.random(n_relations) < 0.05
    passage_ids = [
        [f"p{a}", f"p{b}"] if e and a != b else [f"p{a}"]
        for a, b, e in zip(first.tolist(), second.tolist(), extra.tolist())
    ]
    return SyntheticGraph(rel_keys, ent_keys[subj], ent_keys[obj], passage_ids, n_entities, s)


def print_table(rows: list[dict], cols: list[tuple[str, Callable[[dict], str]]]) -> None:
    """Rows as an aligned Markdown table; ``cols`` are (header, cell formatter) pairs."""
    table = [[name for name, _ in cols]] + [[f(r) for _, f in cols] for r in rows]
    widths = [max(len(line[i]) for line in table) for i in range(len(cols))]
    for i, line in enumerate(table):
        print("| " + " | ".join(cell.rjust(w) for cell, w in zip(line, widths)) + " |")
        if i == 0:
            print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
