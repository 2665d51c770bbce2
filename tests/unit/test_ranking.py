"""The no-LLM rankings' pure parts (numpy + graph only) and the offline linker.

The previous ranking (the "old default" baseline) lives in ``benchmarks/baseline_ranking.py``;
its tests stay here.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from langchain_graphrag_milvus import EntityLinker, GraphIndex
from langchain_graphrag_milvus.retrieval import ranking
from langchain_graphrag_milvus.retrieval.params import RetrievalParams
from langchain_graphrag_milvus.retrieval.ranking import interleave
from langchain_graphrag_milvus.retrieval.walk_ranking import WalkParams, WalkSeeds, _novel, walk_ranking

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from baseline_ranking import (  # noqa: E402
    PPRRankingParams,
    bridge_choice,
    content_words,
    order_passages,
    ppr_passage_scores,
    predicate_overlap,
    softmax_weights,
)

NANO_TRIPLETS = {
    "jakob": [("Jakob", "was the older brother of", "Johann"), ("Jakob", "is known for", "Bernoulli numbers")],
    "johann": [
        ("Johann", "contributed to", "calculus of variations"),
        ("Johann", "worked on", "calculus"),
        ("Johann", "was known for", "brachistochrone"),
    ],
    "daniel": [("Daniel", "was the son of", "Johann"), ("Daniel", "made major contributions to", "fluid dynamics")],
    "euler": [("Euler", "was a student of", "Johann"), ("Euler", "was born in", "Basel")],
}


Triplet = tuple[str, str, str]


def graph_of(
    passages: dict[str, list[Triplet]],
) -> tuple[GraphIndex, dict[Triplet, int], dict[str, int], dict[str, int]]:
    """A graph of one relation per triplet (keys 100, 101, ... in order), each supported by its passage.

    Returns the graph and the array indices of its relations (by triplet), passages (by id) and
    entities (by name).
    """
    names: dict[str, int] = {}
    rels = []
    for pid, triplets in passages.items():
        for s, p, o in triplets:
            for n in (s, o):
                names.setdefault(n, len(names) + 1)
            rels.append(((s, p, o), pid))
    g = GraphIndex.from_relations(
        relation_keys=list(range(100, 100 + len(rels))),
        subject_keys=[names[t[0]] for t, _ in rels],
        object_keys=[names[t[2]] for t, _ in rels],
        passage_ids=[[pid] for _, pid in rels],
    )
    rel = {t: int(g.relations.lookup([100 + i])[0]) for i, (t, _) in enumerate(rels)}
    pas = {pid: int(g.passages.lookup([pid])[0]) for pid in passages}
    ent = {n: int(g.entities.lookup([k])[0]) for n, k in names.items()}
    return g, rel, pas, ent


def nano_graph() -> tuple[GraphIndex, dict[Triplet, int], dict[str, int]]:
    g, rel_index, _, ent_index = graph_of(NANO_TRIPLETS)
    return g, rel_index, ent_index


def test_the_old_ranking_left_the_package_with_a_pointer() -> None:
    """The previous ranking's names are gone from retrieval.ranking, and an import of one says where they went."""
    assert set(ranking.__all__) == {"entity_passage_counts", "interleave"}
    for name in ranking.MOVED:
        with pytest.raises(AttributeError, match="benchmarks/baseline_ranking.py"):
            getattr(ranking, name)
        with pytest.raises(ImportError):
            exec(f"from langchain_graphrag_milvus.retrieval.ranking import {name}", {})
    with pytest.raises(AttributeError, match="has no attribute 'nothing'"):
        ranking.nothing  # noqa: B018


def test_softmax_and_lexical_helpers() -> None:
    w = softmax_weights([0.9, 0.5, 0.1], 0.02)
    assert abs(float(w.sum()) - 1) < 1e-6 and w[0] > 0.99
    assert softmax_weights([], 0.1).size == 0
    assert content_words("What contributions did the sons make?") == {"what", "contribut", "son", "make"} - {"what"}
    overlap = predicate_overlap("What did the son of Euler's teacher do?", ["was the son of", "was born in", "of"])
    assert overlap.tolist() == [1.0, 0.0, 0.0]
    assert interleave(["a", "b", "c"], ["b", "d"]) == ["a", "b", "d", "c"]
    assert order_passages(np.array([0.0, 0.3, 0.1, 0.3], np.float32), 10).tolist() == [1, 3, 2]
    assert order_passages(np.array([0.0, 0.3, 0.1], np.float32), 1).tolist() == [1]


def test_bridge_follows_the_relevant_fact_to_the_unanswered_part() -> None:
    g, rel, ent = nano_graph()
    p = {pid: int(g.passages.lookup([pid])[0]) for pid in NANO_TRIPLETS}
    query = "What contribution did the son of Euler's teacher make?"
    scores = {i: 0.3 for i in rel.values()}
    scores[rel[("Euler", "was a student of", "Johann")]] = 0.6
    predicates = {i: t[1] for t, i in rel.items()}
    names = {i: n for n, i in ent.items()}
    params = PPRRankingParams()
    candidates = [p["euler"], p["johann"], p["jakob"], p["daniel"]]
    chosen = bridge_choice(g, candidates, scores, predicates, names, query, params)
    assert chosen == p["daniel"]  # uses "son of" and "contributions": the unanswered words
    # without the coverage term, the passage most *about* the bridge (Johann) wins
    about_only = PPRRankingParams(bridge_coverage_weight=0.0, bridge_about_weight=1.0)
    assert bridge_choice(g, candidates, scores, predicates, names, query, about_only) == p["johann"]
    # entities the query already names are not bridges; a single candidate has no bridge
    assert bridge_choice(g, [p["euler"]], scores, predicates, names, query, params) is None
    assert bridge_choice(g, candidates, scores, predicates, names, "Johann Basel Euler", params) is None


def test_ppr_passage_scores_groups_and_empty_seeds() -> None:
    g, rel, ent = nano_graph()
    params = PPRRankingParams()
    none = np.empty(0, np.int32)
    empty = ppr_passage_scores(
        g,
        relation_idx=none,
        relation_scores=np.empty(0, np.float32),
        passage_idx=none,
        passage_scores=np.empty(0, np.float32),
        entity_idx=none,
        params=params,
    )
    assert empty.shape == (g.n_passages,) and not empty.any()
    scores = ppr_passage_scores(
        g,
        relation_idx=np.array([rel[("Euler", "was a student of", "Johann")]], np.int32),
        relation_scores=np.array([0.6], np.float32),
        passage_idx=none,
        passage_scores=np.empty(0, np.float32),
        entity_idx=np.array([ent["Euler"]], np.int32),
        params=params,
    )
    order = [g.passages.ids[i] for i in order_passages(scores, 4)]
    assert order[0] == "euler" and set(order) == set(NANO_TRIPLETS)


def test_linker_capitals_possessives_and_plurals() -> None:
    linker = EntityLinker(["Big Eyes", "director", "Tim Burton", "country", "WILM", "the"], require_capital=True)
    assert linker.find("Who is the spouse of Big Eye's main director?") == ["Big Eyes"]
    assert linker.find("What country is WILM in?") == ["WILM"]
    assert linker.find("who is the spouse of big eye's main director?") == ["Big Eyes", "director"]  # all lower case
    assert linker.find("Director Tim Burton") == ["Tim Burton"]  # a capitalised first word is not enough
    plain = EntityLinker(["Big Eyes", "director"])
    assert plain.find("Who is the spouse of Big Eye's main director?") == ["Big Eyes", "director"]
    assert len(plain) == 2


def test_linker_diacritics_and_near_misses() -> None:
    linker = EntityLinker(
        ["Leonhard Euler", "Kurt Gödel", "Johann Bernoulli", "Basel", "country"], require_capital=True
    )
    assert linker.find("Was Leonard Euler a student of Johan Bernoulli?") == ["Leonhard Euler", "Johann Bernoulli"]
    assert linker.find("What did Kurt Godel prove?") == ["Kurt Gödel"]
    assert linker.find("What did KURT GÖDEL prove?") == ["Kurt Gödel"]
    assert linker.find("Which country is Basle in?") == []  # "Basle" is too far from "Basel" (ratio 80)
    strict = EntityLinker(["Leonhard Euler"], fuzzy_cutoff=None)
    assert strict.find("Leonard Euler") == []
    assert EntityLinker([]).find("Anything At All") == []


# ---------------------------------------------------------------- chained walks (walk_ranking)
def chain_graph() -> tuple[GraphIndex, dict[str, int], dict[str, int]]:
    """``first`` links the query's entity A to the bridge B; ``second`` continues from B to C;
    ``nearA`` and ``nearA2`` are more facts about A (closer to the query than ``second``)."""
    passages = {
        "first": [("A", "r", "B")],
        "second": [("B", "s", "C")],
        "nearA": [("A", "t", "D")],
        "nearA2": [("A", "u", "E")],
        "other": [("X", "v", "Y")],
    }
    g, _, pas, ent = graph_of(passages)
    return g, pas, ent


def seeds_for(passages: list[int], scores: list[float], entities: list[int]) -> WalkSeeds:
    none = np.empty(0, np.int32)
    return WalkSeeds(
        none,
        np.empty(0, np.float32),
        np.array(passages, np.int32),
        np.array(scores, np.float32),
        np.array(entities, np.int32),
    )


def test_walk_continues_from_the_picked_passage_to_the_bridge() -> None:
    g, pas, ent = chain_graph()
    seeds = seeds_for([pas["first"], pas["nearA"], pas["nearA2"]], [0.9, 0.6, 0.6], [ent["A"]])
    plain = [g.passages.ids[i] for i in walk_ranking(g, seeds, WalkParams(chain=0), limit=5)[0]]
    assert plain[0] == "first" and plain.index("second") > plain.index("nearA")  # one walk: more about A
    chained = [g.passages.ids[i] for i in walk_ranking(g, seeds, WalkParams(chain=1), limit=5)[0]]
    assert chained[:2] == ["first", "second"]  # the next walk restarts at B, which the query never named
    assert set(chained) == set(plain) and "other" not in chained  # unreachable passages are not ranked
    assert len(walk_ranking(g, seeds, WalkParams(chain=1), limit=2)[0]) == 2


def test_walk_covers_each_query_entity() -> None:
    g, pas, ent = chain_graph()
    # "A or X?": two passages about A are most similar; the one about X must come second
    seeds = seeds_for([pas["nearA"], pas["nearA2"], pas["other"]], [0.9, 0.85, 0.5], [ent["A"], ent["X"]])
    chained = [g.passages.ids[i] for i in walk_ranking(g, seeds, WalkParams(chain=1), limit=5)[0]]
    assert chained[0] == "nearA" and chained[1] == "other"


def test_walk_seeds_empty_masked_and_missing() -> None:
    g, pas, ent = chain_graph()
    empty = seeds_for([], [], [])
    order, scores = walk_ranking(g, empty, WalkParams(), limit=5)
    assert order.size == 0 and scores.shape == (g.n_passages,) and not scores.any()
    # -1 marks a hit outside the graph: it uses up a seed slot and carries no weight
    seeds = seeds_for([-1, pas["second"], pas["first"]], [0.9, 0.8, 0.1], [])
    one = walk_ranking(g, seeds, WalkParams(passage_seeds=2, chain=0), limit=5)[0]
    assert g.passages.ids[one[0]] == "second" and pas["other"] not in one.tolist()
    allowed = np.ones(g.n_passages, bool)
    allowed[pas["second"]] = False
    masked, _ = walk_ranking(g, seeds, WalkParams(chain=1), limit=5, allowed_passages=allowed)
    assert pas["second"] not in masked.tolist() and masked.size > 0
    with pytest.raises(ValueError):
        WalkParams(damping=1.0)
    with pytest.raises(ValueError):
        WalkParams(temperature=0.0)
    with pytest.raises(ValueError):
        WalkParams(chain_mode="bridge")
    for bad in ({"ppr_chain": -1}, {"ppr_chain": True}, {"ppr_temperature": 0}):
        with pytest.raises(ValueError):
            RetrievalParams(**bad)
    assert RetrievalParams(ppr_chain=0).ranking.chain == 0


def test_walk_novel_seeds_look_past_what_the_picked_passage_supplies() -> None:
    """The continued walk drops seeds already explained by the pick: its relations, itself, its private entities."""
    passages = {
        "first": [("A", "r", "B"), ("A", "q", "P")],  # P: mentioned by the picked passage only
        "hubB": [("B", "s", "C"), ("B", "s2", "D"), ("B", "s3", "E")],  # more about the bridge B
        "answer": [("F", "w", "B")],  # the relation the query also asks about (a weaker seed)
    }
    g, by_triplet, pas, ent = graph_of(passages)
    rel = {t[1]: index for t, index in by_triplet.items()}
    seeds = WalkSeeds(
        np.array([rel["r"], rel["w"]], np.int32),
        np.array([0.9, 0.8], np.float32),
        np.array([pas["first"]], np.int32),
        np.array([0.9], np.float32),
        np.array([ent["A"]], np.int32),
    )

    def ranked(**kw: object) -> list[str]:
        return [g.passages.ids[i] for i in walk_ranking(g, seeds, WalkParams(**kw), limit=5)[0]]  # type: ignore[arg-type]

    assert ranked() == ["first", "hubB", "answer"]  # the pick's own seeds keep pushing mass through B's hub
    assert ranked(novel_seeds="all") == ["first", "answer", "hubB"]  # only the unexplained relation seed is left
    assert ranked(novel_seeds="all", chain=0) == ranked(chain=0)  # no pick, nothing to drop
    # "entities": P's restart share (it can only flow back to "first") goes to the bridge B instead
    bridge = np.zeros(g.n_entities, np.float32)
    bridge[[ent["B"], ent["P"]]] = [0.25, 0.75]
    r0, p0 = np.full(g.n_relations, 0.2, np.float32), np.zeros(g.n_passages, np.float32)
    sizes = (g.n_relations, g.n_passages, g.n_entities)

    def novel(mode: str) -> list[np.ndarray]:  # _novel on sparse vectors, answered densely
        given = tuple((np.flatnonzero(d), d[np.flatnonzero(d)]) for d in (r0, p0, bridge))
        out = _novel(g, [pas["first"]], given, (None, None), WalkParams(novel_seeds=mode), True)  # type: ignore[arg-type]
        return [np.bincount(i, weights=v, minlength=n).astype(np.float32) for (i, v), n in zip(out, sizes)]

    r1, p1, b1 = novel("entities")
    assert b1[ent["B"]] == 1.0 and b1[ent["P"]] == 0.0 and np.array_equal(r1, r0 / r0.sum())
    r2, _, _ = novel("all")
    assert r2[rel["r"]] == 0.0 and r2[rel["q"]] == 0.0 and np.isclose(r2.sum(), 1.0)
    with pytest.raises(ValueError, match="novel_seeds"):
        WalkParams(novel_seeds="yes")


def _counts_one_by_one(graph, entities, relation_mask=None, passage_mask=None):
    """The per-entity loop the vectorised count replaced."""
    from langchain_graphrag_milvus.graph.csr import gather_rows

    out = []
    for ent in np.asarray(entities, dtype=np.int64).ravel().tolist():
        rels = graph.ent_rel.row(ent)
        if relation_mask is not None:
            rels = rels[relation_mask[rels]]
        _, passages = gather_rows(graph.rel_pas, rels)
        if passage_mask is not None:
            passages = passages[passage_mask[passages]]
        out.append(np.unique(passages).size)
    return np.asarray(out, dtype=np.int64)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_entity_passage_counts_equal_the_per_entity_loop(seed: int) -> None:
    from langchain_graphrag_milvus.retrieval.ranking import entity_passage_counts

    from .test_graph_index import random_graph

    g = random_graph(seed)
    rng = np.random.default_rng(seed)
    entities = np.concatenate([rng.integers(0, g.n_entities, 15), [0, 0]])  # repeats count each time
    rel_mask, pas_mask = rng.random(g.n_relations) > 0.3, rng.random(g.n_passages) > 0.3
    for masks in ((None, None), (rel_mask, None), (None, pas_mask), (rel_mask, pas_mask)):
        got = entity_passage_counts(g, entities, *masks)
        assert got.dtype == np.int64 and got.tolist() == _counts_one_by_one(g, entities, *masks).tolist()
    assert g.entity_passage_counts([]).tolist() == []
