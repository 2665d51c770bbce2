"""The walk's order-settled stop (``graph/ppr.py::passages_settled``, ``ppr_stop="order"``).

A global walk that only has to rank its best ``k`` passages stops when no passage's estimated
remaining change (its last change × c/(1 − c), c = damping²: a sweep's contraction) can reorder
them. The estimate is not a bound, so what is tested is what it must give: on random graphs and
on musique100's real graph (its given triplets, seeded from each dev question's named entities),
the top ``k`` is the order of the walk run to convergence (where the tolerance's walk has it
too), in fewer sweeps than the tolerance needs; ties and too few scored passages never settle;
``ppr_stop="residual"`` keeps the walk of before.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from langchain_graphrag_milvus.graph import GraphIndex
from langchain_graphrag_milvus.graph.ppr import passages_settled, personalized_pagerank
from langchain_graphrag_milvus.retrieval.walk_ranking import WalkParams, WalkSeeds, ranked_walks

from ..conftest import DATA_DIR
from .test_graph_index import random_graph


def top(scores: np.ndarray, k: int) -> list[int]:
    """The walk's order of the best ``k`` positive scores (score descending, then index)."""
    idx = np.flatnonzero(scores > 0)
    return idx[np.lexsort((idx, -scores[idx]))][:k].tolist()


def f32(*values: float) -> np.ndarray:
    return np.array(values, np.float32)


def test_clear_gaps_settle_and_overlapping_estimates_do_not() -> None:
    scores = f32(0.5, 0.1, 0.3, 0.0, 0.2)
    assert passages_settled(scores, f32(0.01, 0.01, 0.01, 0.0, 0.01), 2)
    assert passages_settled(scores, f32(0.01, 0.01, 0.01, 0.0, 0.01), 4)
    # the second and third overlap: 0.3 - 0.06 <= 0.2 + 0.06
    assert not passages_settled(scores, f32(0.01, 0.01, 0.06, 0.0, 0.06), 3)
    # the second is clear of the third, but a passage outside the top may still climb past it
    assert not passages_settled(scores, f32(0.01, 0.2, 0.01, 0.0, 0.01), 2)
    # ... or the last one's own estimate reaches below zero
    assert not passages_settled(f32(0.5, 0.1), f32(0.0, 0.2), 2)


def test_ties_and_missing_scores_never_settle() -> None:
    zero = f32(0.0, 0.0, 0.0, 0.0)
    assert not passages_settled(f32(0.4, 0.4, 0.1, 0.0), zero, 2)  # a tie inside the top
    assert not passages_settled(f32(0.4, 0.2, 0.2, 0.0), zero, 2)  # a tie at the cut
    assert not passages_settled(f32(0.4, 0.2, 0.0, 0.0), zero, 3)  # fewer scored passages than the top
    assert not passages_settled(f32(0.4, 0.2), zero, 3)  # fewer passages than the top
    assert not passages_settled(f32(0.4, 0.2), zero, 0)
    assert passages_settled(f32(0.4, 0.2), zero, 2)  # the whole graph's order, all of it scored


def walk(g: GraphIndex, seeds: dict, **kw: float | int) -> object:
    return personalized_pagerank(g, damping=0.85, **seeds, **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize("seed", range(12))
def test_on_random_graphs_the_settled_top_is_the_converged_one(seed: int) -> None:
    g = random_graph(seed, n_entities=400, n_relations=1500, n_passages=300)
    rng = np.random.default_rng(seed)
    masked = seed % 3 == 2
    mask = rng.random(g.n_relations) > 0.2 if masked else None
    seeds = dict(
        entity_weights=(rng.choice(g.n_entities, 3, replace=False), rng.random(3)),
        relation_weights=(rng.choice(g.n_relations, 30, replace=False), rng.random(30) ** 4),
        passage_weights=(rng.choice(g.n_passages, 3, replace=False), rng.random(3)),
        relation_mask=mask,
    )
    exact = walk(g, seeds, tol=1e-12, max_iter=2000)
    before = walk(g, seeds)  # tol 1e-4: the walk of ppr_stop="residual"
    for k in (1, 5, 10):
        got = walk(g, seeds, settle=k)
        assert got.settled and not got.converged
        assert got.iterations < before.iterations
        assert top(got.passage, k) == top(exact.passage, k)


def musique_graph() -> tuple[GraphIndex, dict[str, int], list[str]]:
    """musique100's graph from its given triplets (no Milvus), its entity names → index, the dev questions."""
    names: dict[str, int] = {}
    subj, obj, pids = [], [], []
    with (DATA_DIR / "passages.jsonl").open() as f:
        for line in f:
            row = json.loads(line)
            for triplet in row.get("triplets") or []:
                if len(triplet) != 3:
                    continue  # the file holds a few malformed ones
                s, _, o = triplet
                subj.append(names.setdefault(s.strip().lower(), len(names)))
                obj.append(names.setdefault(o.strip().lower(), len(names)))
                pids.append([row["id"]])
    g = GraphIndex.from_relations(
        relation_keys=np.arange(1, len(subj) + 1),
        subject_keys=np.array(subj) + 1,
        object_keys=np.array(obj) + 1,
        passage_ids=pids,
    )
    by_name = {n: g.entities.find([k + 1])[0] for n, k in names.items()}
    with (DATA_DIR / "questions_dev.jsonl").open() as f:
        questions = [json.loads(line)["question"] for line in f]
    return g, by_name, questions


@pytest.mark.skipif(not (DATA_DIR / "passages.jsonl").exists(), reason="musique100 is not on this machine")
def test_on_musique100_the_settled_top_5_is_the_converged_one() -> None:
    g, by_name, questions = musique_graph()
    sweeps, before_sweeps, asked, unresolved = [], [], 0, 0
    for question in questions:
        text = question.lower()
        named = [n for n in by_name if len(n) > 3 and n in text and re.search(rf"\b{re.escape(n)}\b", text)]
        ents = sorted({by_name[n] for n in named})
        if not ents:
            continue
        rels = np.unique(np.concatenate([g.ent_rel.row(e) for e in ents]))[:50]
        seeds = dict(entity_weights=(ents, np.ones(len(ents))), relation_weights=(rels, np.ones(rels.size)))
        exact, before = walk(g, seeds, tol=1e-9, max_iter=2000), walk(g, seeds)
        if top(before.passage, 5) != top(exact.passage, 5):
            unresolved += 1  # a near-tie the tolerance itself does not resolve (gaps of 1e-5 relative)
            continue
        got = walk(g, seeds, settle=5)
        assert top(got.passage, 5) == top(exact.passage, 5), question
        asked += 1
        sweeps.append(got.iterations)
        before_sweeps.append(before.iterations)
    assert asked >= 40 and unresolved <= 3
    assert sum(sweeps) < 0.8 * sum(before_sweeps)


def test_ranked_walks_settle_only_what_is_read() -> None:
    g = random_graph(3, n_entities=300, n_relations=1200, n_passages=200)
    rng = np.random.default_rng(3)
    seeds = WalkSeeds(
        rng.choice(g.n_relations, 40, replace=False).astype(np.int32),
        np.sort(rng.uniform(0.4, 0.9, 40)).astype(np.float32)[::-1].copy(),
        rng.choice(g.n_passages, 3, replace=False).astype(np.int32),
        f32(0.8, 0.7, 0.6),
        rng.choice(g.n_entities, 2, replace=False).astype(np.int32),
    )
    exact = ranked_walks(g, seeds, WalkParams(ppr_stop="residual"), limit=30)
    settled = ranked_walks(g, seeds, WalkParams(), limit=30, settle=5)
    assert settled.order[:5].tolist() == exact.order[:5].tolist()
    # settle defaults to the whole order read; ppr_stop="residual" ignores it
    assert ranked_walks(g, seeds, WalkParams(ppr_stop="residual"), limit=30, settle=5).order.tolist() == (
        exact.order.tolist()
    )
    with pytest.raises(ValueError, match="ppr_stop"):
        WalkParams(ppr_stop="never")


@pytest.mark.parametrize(
    ("ranking", "want_pool", "linked", "read"),
    [
        ({}, False, True, "k"),  # the no-LLM default on a linked query: the k returned (and the pair step's window)
        ({"pair_step": False}, False, True, "k"),  # without the pair step: the k returned alone
        ({}, False, False, "walk_limit"),  # ... on a query with no entity seed: fused with dense (fuse_dense_unlinked)
        ({"fuse_dense_unlinked": 0.0}, False, False, "k"),  # no fusion at all
        ({"keep_dense": 2}, False, True, "k"),  # keep_dense places dense hits inside the first k
        ({}, True, True, "walk_limit"),  # a reranker's pool lists the whole order
        ({"fuse_dense": 0.5}, False, True, "walk_limit"),  # the fusion reads the order to its depth
    ],
)
def test_the_ranking_settles_what_it_reads(
    ranking: dict[str, float], want_pool: bool, linked: bool, read: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from langchain_graphrag_milvus.graph.ids import id_to_key
    from langchain_graphrag_milvus.retrieval import rankings
    from langchain_graphrag_milvus.retrieval.params import RetrievalParams
    from langchain_graphrag_milvus.retrieval.stages import QueryHits
    from langchain_graphrag_milvus.text.names import entity_id, relation_id

    graph = GraphIndex.from_relations(
        relation_keys=[id_to_key(relation_id("Euler", "studied under", "Bernoulli"))],
        subject_keys=[id_to_key(entity_id("Euler"))],
        object_keys=[id_to_key(entity_id("Bernoulli"))],
        passage_ids=[["p1"]],
    )
    names = ["Euler"] if linked else ["Gauss"]  # a graph entity, or a name the graph does not have
    q = QueryHits(graph, None, "q", (1.0,), names, [[]], [], [])
    seen: dict[str, object] = {}
    monkeypatch.setattr(rankings, "ppr_ranking", lambda *args, **kwargs: seen.update(kwargs))
    p = RetrievalParams(k=4, ranking=rankings.PageRankWalk(**ranking))
    p.ranking.rank(q, p, want_pool, None)
    from langchain_graphrag_milvus.retrieval.pair_order import DEFAULT_PAIR

    expected = getattr(p, read)
    if read == "k" and p.ranking.pair_step:  # the k returned, and the pair step's window (it reorders those)
        expected = max(p.k, DEFAULT_PAIR.window)
    assert seen["settle"] == expected and p.k < p.walk_limit
