"""Cross-validated choice of the no-LLM ranking, on musique100 and hotpotqa100.

One command prints, per data set × graph source, Recall@2/@5 of naive vector search,
the old default (PageRank + the fitted bridge step), the new default (chained walks, then the
pair step of ``retrieval/pair_order.py`` when the default ranking has it)
and the k-fold cross-validated lift (constants chosen on k-1 folds, scored on the k-th):

    .venv/bin/python benchmarks/cv_ranking.py                       # all sets it can build
    .venv/bin/python benchmarks/cv_ranking.py --sets musique:given  # one
    .venv/bin/python benchmarks/cv_ranking.py --sets musique100:given+offline_links  # given triplets + a supplement

Every retrieval input that needs Milvus (the query's embedding, entity hits, the full
similarity order of relations and passages; exact FLAT search) is gathered once per
question and cached on disk next to the embedding cache; the ranking variants then run
in-process on the graph (numpy only). The new default is also run through the real
``MilvusGraphRetriever`` and must agree with the in-process number (printed).
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import pickle
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from baseline_ranking import (  # noqa: E402  (beside this script)
    PPRRankingParams,
    bridge_choice,
    order_passages,
    ppr_passage_scores,
    predicate_overlap,
)

from langchain_graphrag_milvus.cli.evaluation import Question, load_questions, recall_at  # noqa: E402
from langchain_graphrag_milvus.cli.main import DEFAULT_CACHE, _embeddings  # noqa: E402
from langchain_graphrag_milvus.graph import GraphIndex  # noqa: E402
from langchain_graphrag_milvus.graph.ids import id_to_key  # noqa: E402
from langchain_graphrag_milvus.milvus.reads import MAX_TOP_K  # noqa: E402
from langchain_graphrag_milvus.retrieval.fusion import FUSION_DEPTH, fuse_orders  # noqa: E402
from langchain_graphrag_milvus.retrieval.graph_pipeline import MAX_QUERY_ENTITIES, first_unique_names  # noqa: E402
from langchain_graphrag_milvus.retrieval.keep_dense import keep_dense  # noqa: E402
from langchain_graphrag_milvus.retrieval.pair_order import PairParams, graph_pair_order  # noqa: E402
from langchain_graphrag_milvus.retrieval.params import RetrievalParams  # noqa: E402
from langchain_graphrag_milvus.retrieval.rankings import PageRankWalk  # noqa: E402
from langchain_graphrag_milvus.retrieval.walk_ranking import WalkParams, WalkSeeds, walk_ranking  # noqa: E402
from langchain_graphrag_milvus.store import MilvusGraphStore  # noqa: E402
from langchain_graphrag_milvus.text.names import entity_id  # noqa: E402

DATA = ROOT.parent / "shared" / "data"
KS = (2, 5)


#: (keep_dense, keep_dense_slack) settings of the final merge with the dense order, searched with every walk
#: setting; (0, 0): the graph's order alone (then dense fills, as before).
KEEPS = [(0, 0)] + [(m, g) for m in (1, 2, 3) for g in (0, 1, 2, 3, 4) if m + g <= max(KS)]

#: (fuse_dense, fuse_dense_c) settings of the weighted reciprocal-rank fusion with the dense order
#: (retrieval/fusion.py); (0, 0): off. Weights up to 0.5: the dense order's share never exceeds the graph's.
FUSIONS = [(0.0, 0.0)] + [(w, c) for w in (0.1, 0.2, 0.3, 0.4, 0.5) for c in (0.0, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0)]

#: (fuse_dense, fuse_dense_unlinked) settings, c = 0: the dense share for every query, and at least how much
#: for a query with no entity seed; (0, 0): off.
UNLINKED = [(w, u / 10) for w in (0.0, 0.1, 0.2, 0.3, 0.4, 0.5) for u in range(11)]

#: The walk's order is read this deep (the fusion reads FUSION_DEPTH; the top 5 does not depend on it).
WALK_LIMIT = max(max(KS), FUSION_DEPTH)


@dataclass(frozen=True)
class Variant:
    """A ranking setting: the walk's constants, the fusion and the final merge with the dense order."""

    walk: WalkParams
    keep: int = 0
    slack: int = 0
    fuse: float = 0.0
    fuse_c: float = 0.0
    fuse_unlinked: float = 0.0

    def __repr__(self) -> str:
        fusion = f"+fuse_dense={self.fuse},c={self.fuse_c}" if self.fuse or self.fuse_unlinked else ""
        fusion += f",unlinked={self.fuse_unlinked}" if self.fuse_unlinked else ""
        return f"{self.walk!r}+keep_dense={self.keep},slack={self.slack}{fusion}"


def default_variant() -> Variant:
    """The retriever's default: ``WalkParams()`` and the default ranking's fusion and keep_dense settings."""
    p = RetrievalParams().ranking
    assert isinstance(p, PageRankWalk)  # the default ranking is the walk
    fuse_c = p.fuse_dense_c if p.fuse_dense or p.fuse_dense_unlinked else 0.0
    return Variant(WalkParams(), p.keep_dense, p.keep_dense_slack, p.fuse_dense, fuse_c, p.fuse_dense_unlinked)


def log(msg: str) -> None:
    """Progress on stderr."""
    print(msg, file=sys.stderr, flush=True)  # noqa: T201


@dataclass
class Probe:
    """What Milvus answers for one question (exact search), kept for in-process ranking."""

    names: list[str]
    entity_hits: list[list[str]]
    relation_ids: list[str]
    relation_scores: list[float]
    relation_predicates: list[str]
    passage_ids: list[str]
    passage_scores: list[float]


def open_store(dataset: str, source: str, cache: Path, embed_cache: Path) -> MilvusGraphStore:
    """The store of one data set × graph source (ingested once; embeddings and extractions cached)."""
    embedding, _ = _embeddings("local", embed_cache)
    path = DATA / dataset / "passages.jsonl"
    source, _, supplement = source.partition("+")  # "given+offline_links": given triplets and a supplement
    tag = f"{source}_{supplement}" if supplement else source
    prefix = f"cv_{dataset.removesuffix('100')}_{tag}"  # ingestion is idempotent: a changed file is upserted
    # one Milvus Lite data directory per offline set: a Lite directory admits one process,
    # and separate directories let the sets be built in parallel
    uri = str(cache / ("cv_milvus.db" if tag == "given" else f"cv_{dataset}_{tag}.db"))
    started = time.perf_counter()
    if source == "given":
        store = MilvusGraphStore(
            embedding,
            uri=uri,
            collection_prefix=prefix,
            supplement=supplement or None,  # type: ignore[arg-type]
            extraction_cache=embed_cache / "triplets.sqlite",
        )
        report = store.add_jsonl(path)
    else:
        from langchain_graphrag_milvus.ingest.offline import create_offline_triplet_extractor
        from langchain_graphrag_milvus.ingest.records import iter_jsonl

        store = MilvusGraphStore(
            embedding,
            uri=uri,
            collection_prefix=prefix,
            extractor=create_offline_triplet_extractor(),
            extraction_cache=embed_cache / "triplets.sqlite",
        )
        rows = [{k: v for k, v in row.items() if k != "triplets"} for _, row in iter_jsonl(path)]
        report = store.add_records(rows)
    log(f"  {dataset}/{source}: {report} ({time.perf_counter() - started:.0f}s)")
    return store


def probe(store: MilvusGraphStore, questions: Sequence[Question], path: Path) -> list[Probe]:
    """Milvus' answers for each question (cached in ``path``)."""
    if path.exists():
        cached: list[Probe] = pickle.loads(path.read_bytes())
        if len(cached) == len(questions):
            return cached
    graph = store.graph
    out = []
    for q in questions:
        names = first_unique_names(store.entity_linker().find(q.question), MAX_QUERY_ENTITIES)
        vectors = store.embedding.embed_documents([q.question, *names])
        qvec = tuple(map(float, vectors[0]))
        ent_hits = store.search("entities", [tuple(map(float, v)) for v in vectors[1:]], 3) if names else []
        (rel,) = store.search("relations", (qvec,), min(graph.n_relations, MAX_TOP_K), output_fields=("predicate",))
        (pas,) = store.search("passages", (qvec,), min(graph.n_passages + 5000, MAX_TOP_K))
        out.append(
            Probe(
                names,
                [[h.id for h in per] for per in ent_hits],
                [h.id for h in rel],
                [h.score for h in rel],
                [str(h.fields.get("predicate", "")) for h in rel],
                [h.id for h in pas],
                [h.score for h in pas],
            )
        )
    path.write_bytes(pickle.dumps(out))
    return out


@dataclass
class Prepared:
    """A probe as graph indices."""

    seeds: WalkSeeds
    dense: list[str]
    rel_score: dict[int, float]
    rel_pred: dict[int, str]
    query: str


def _find(lookup: Any, ids: Sequence[str]) -> np.ndarray:
    if not ids:
        return np.empty(0, np.int32)
    return np.asarray(lookup.find(np.array([id_to_key(i) for i in ids], dtype=np.uint64)))


def prepare(graph: GraphIndex, q: Question, pr: Probe) -> Prepared:
    """Seeds exactly as the retriever's stage builds them."""
    exact = _find(graph.entities, [entity_id(n) for n in pr.names])
    ents = [int(e) for e in exact if e >= 0]
    for i, per in enumerate(pr.entity_hits):
        if exact[i] < 0 and per:
            ents += [int(e) for e in _find(graph.entities, per[:1]) if e >= 0]
    r_idx = _find(graph.relations, pr.relation_ids)
    r_sc = np.asarray(pr.relation_scores, np.float32)
    p_idx = np.asarray(graph.passages.find(pr.passage_ids))
    p_sc = np.asarray(pr.passage_scores, np.float32)
    seeds = WalkSeeds(
        r_idx.astype(np.int32),
        r_sc,
        p_idx.astype(np.int32),
        p_sc,
        np.array(sorted(set(ents)), np.int32),
    )
    rel_score = {int(i): float(s) for i, s in zip(r_idx.tolist(), pr.relation_scores) if i >= 0}
    rel_pred = {int(i): p for i, p in zip(r_idx.tolist(), pr.relation_predicates) if i >= 0}
    return Prepared(seeds, pr.passage_ids, rel_score, rel_pred, q.question)


def finish(
    graph: GraphIndex, order: Sequence[int], dense: Sequence[str], v: Variant, k: int = max(KS), linked: bool = True
) -> list[str]:
    """Graph order (fused with dense, the dense top kept, as the pipeline does), then dense passages, ``k`` ids.

    ``linked``: the query has an entity seed (else the fusion's weight is at least ``v.fuse_unlinked``).
    """
    ids = [graph.passages.ids[int(g)] for g in order]
    weight = v.fuse if linked else max(v.fuse, v.fuse_unlinked)
    if weight:
        ids = fuse_orders(ids, dense[:FUSION_DEPTH], weight=weight, c=v.fuse_c)
    ids = keep_dense(ids, dense[: max(k, v.keep)], k=k, keep=v.keep, slack=v.slack)
    out = list(dict.fromkeys(ids + list(dense[:k])))
    return out[:k]


def old_default(graph: GraphIndex, p: Prepared, names: Callable[[int], str]) -> list[str]:
    """The previous default: PageRank + the bridge step with its fitted constants."""
    params = PPRRankingParams()
    s = p.seeds
    n_r = params.relation_seeds
    r_idx, r_sc = s.relation_idx[:n_r], s.relation_scores[:n_r]
    preds = [p.rel_pred.get(int(i), "") for i in r_idx.tolist()]
    r_sc = r_sc + params.lexical_weight * predicate_overlap(p.query, preds)
    p_idx, p_sc = s.passage_idx[: params.passage_seeds], s.passage_scores[: params.passage_seeds]
    scores = ppr_passage_scores(
        graph,
        relation_idx=r_idx[r_idx >= 0],
        relation_scores=r_sc[r_idx >= 0].astype(np.float32),
        passage_idx=p_idx[p_idx >= 0],
        passage_scores=p_sc[p_idx >= 0],
        entity_idx=s.entity_idx,
        params=params,
    )
    order = order_passages(scores, max(max(KS), 50, params.bridge_candidates)).tolist()
    if len(order) >= 2:
        top = order[: params.bridge_candidates]
        rels = np.unique(np.concatenate([graph.pas_rel.row(g) for g in top])).tolist()
        preds_all = [p.rel_pred.get(r, "") for r in rels]
        bonus = params.lexical_weight * predicate_overlap(p.query, preds_all)
        sims = {r: p.rel_score[r] + float(b) for r, b in zip(rels, bonus) if r in p.rel_score}
        ent_names = {int(e): names(int(e)) for e in graph.passage_entities(order[0])[0].tolist()}
        bridged = bridge_choice(graph, top, sims, p.rel_pred, ent_names, p.query, params)
        if bridged is not None:
            order.remove(bridged)
            order.insert(1, bridged)
    return finish(graph, order, p.dense, Variant(WalkParams()))


def paired(graph: GraphIndex, order: Sequence[int], p: Prepared) -> list[int]:
    """The walk's order with the pair step of ``PairParams()`` applied (retrieval/pair_order.py).

    These are the hand-searched weights, the retriever's until 2026-11-27 (the tables made with this script used
    them); the retriever's ``DEFAULT_PAIR`` also reads the dense top's similarities (``cv_pair_learned.py``).
    """
    ranking = RetrievalParams().ranking
    if not (isinstance(ranking, PageRankWalk) and ranking.pair_step):
        return list(order)
    return graph_pair_order(graph, list(order), p.seeds.entity_idx.tolist(), PairParams())


def new_ranking(graph: GraphIndex, p: Prepared, params: WalkParams | Variant) -> list[str]:
    """The chained-walk ranking with these constants, the default pair step, and this merge with the dense order."""
    v = params if isinstance(params, Variant) else Variant(params)
    order, _ = walk_ranking(graph, p.seeds, v.walk, limit=WALK_LIMIT)
    return finish(graph, paired(graph, order.tolist(), p), p.dense, v, linked=bool(p.seeds.entity_idx.size))


def variant_runs(graph: GraphIndex, prepared: Sequence[Prepared], variants: Sequence[Variant]) -> list[list[list[str]]]:
    """Every variant's top-5 ids per question; each walk setting walks once for all its merges."""
    orders: dict[WalkParams, list[list[int]]] = {}
    for v in variants:
        if v.walk not in orders:
            orders[v.walk] = [
                paired(graph, walk_ranking(graph, p.seeds, v.walk, limit=WALK_LIMIT)[0].tolist(), p) for p in prepared
            ]
    return [
        [finish(graph, o, p.dense, v, linked=bool(p.seeds.entity_idx.size)) for o, p in zip(orders[v.walk], prepared)]
        for v in variants
    ]


def recalls(questions: Sequence[Question], runs: Sequence[list[str]]) -> np.ndarray:
    """Per-question Recall@2 and @5 (shape: questions × 2)."""
    return np.array([[recall_at(r, q.gold_passage_ids, k) for k in KS] for q, r in zip(questions, runs)])


def folds(n: int, k: int) -> list[np.ndarray]:
    """k question folds (a fixed shuffle, seed 0)."""
    perm = np.random.default_rng(0).permutation(n)
    return [np.sort(perm[i::k]) for i in range(k)]


def grid(
    full: bool, keeps: Sequence[tuple[int, int]] = ((0, 0),), fusions: Sequence[tuple[float, float]] = ((0.0, 0.0),)
) -> list[Variant]:
    """Every walk setting with every fusion and merge setting, simplest first (a tie goes to the earlier one)."""
    return [Variant(w, m, g, f, c) for (f, c) in fusions for (m, g) in keeps for w in walk_grid(full)]


def walk_grid(full: bool) -> list[WalkParams]:
    """The candidate constants, simplest first (a tie goes to the earlier one)."""
    chains = [(0, "entities", False, "none"), (1, "entities", True, "none"), (1, "entities", False, "none")]
    chains += [(1, "passages", True, "none"), (1, "entities", True, "entities"), (1, "entities", True, "all")]
    if full:
        chains += [(2, "entities", True, "none")]
    out = []
    for (chain, mode, cover, novel), damping, temperature, n_rel, n_pas in itertools.product(
        chains, (0.5, 0.7, 0.85), (0.02, 0.05, 0.1), (50,) if not full else (20, 50), (3, 10)
    ):
        out.append(
            WalkParams(
                chain=chain,
                chain_mode=mode,
                cover_query_entities=cover,
                novel_seeds=novel,
                damping=damping,
                temperature=temperature,
                relation_seeds=n_rel,
                passage_seeds=n_pas,
            )
        )
    return out


def _grid_tag(variants: list[Variant]) -> str:
    """Changes when the grid or the ranking code changes (cached runs are then recomputed)."""
    import langchain_graphrag_milvus.retrieval.fusion as fusion
    import langchain_graphrag_milvus.retrieval.keep_dense as merge
    import langchain_graphrag_milvus.retrieval.pair_order as pairs
    import langchain_graphrag_milvus.retrieval.sparse_vectors as vectors
    import langchain_graphrag_milvus.retrieval.walk_ranking as module

    modules = (module, vectors, merge, fusion, pairs)
    code = b"".join(Path(m.__file__).read_bytes() for m in modules)  # type: ignore[arg-type]
    source = code + repr(variants).encode() + repr(default_variant()).encode()
    return hashlib.blake2b(source, digest_size=4).hexdigest()


def objective(r: np.ndarray) -> float:
    """What the folds maximise: mean of Recall@2 and Recall@5."""
    return float(r.mean())


def cross_validate(
    sets: dict[str, dict[str, Any]], variants: list[Variant], n_folds: int
) -> dict[str, list[tuple[Variant, np.ndarray]]]:
    """Joint k-fold CV: fit one setting on k-1 folds of every set, score it on fold k of each.

    Also fills each set's ``"held_out"``: per question, the recalls of the setting chosen without its fold.
    """
    per_set_folds = {name: folds(len(s["questions"]), n_folds) for name, s in sets.items()}
    out: dict[str, list[tuple[Variant, np.ndarray]]] = {name: [] for name in sets}
    for s in sets.values():
        s["held_out"] = np.zeros_like(s["naive"])
    for i in range(n_folds):
        best: tuple[float, int] | None = None
        for v in range(len(variants)):
            train = []
            for name, s in sets.items():
                mask = np.ones(len(s["questions"]), bool)
                mask[per_set_folds[name][i]] = False
                train.append(objective(s["variants"][v][mask]) - objective(s["naive"][mask]))
            score = float(np.mean(train))
            if best is None or score > best[0] + 1e-9:
                best = (score, v)
        assert best is not None
        for name, s in sets.items():
            idx = per_set_folds[name][i]
            lift = s["variants"][best[1]][idx].mean(axis=0) - s["naive"][idx].mean(axis=0)
            s["held_out"][idx] = s["variants"][best[1]][idx]
            out[name].append((variants[best[1]], lift))
    return out


def fold_lifts(s: dict[str, Any], runs: np.ndarray, n_folds: int) -> np.ndarray:
    """Lift over naive of fixed runs on each fold (folds × 2)."""
    return np.array([runs[f].mean(axis=0) - s["naive"][f].mean(axis=0) for f in folds(len(runs), n_folds)])


def spread(values: Sequence[float]) -> str:
    """mean ± sd [min, max] in points."""
    v = [100 * x for x in values]
    return f"{statistics.mean(v):+.1f} ± {statistics.stdev(v):.1f} [{min(v):+.1f}, {max(v):+.1f}]"


def losses(s: dict[str, Any], runs: np.ndarray) -> list[list[str]]:
    """Ids of the questions where ``runs`` recall less than naive, at R@2 and at R@5."""
    ids = [q.id for q in s["questions"]]
    return [[ids[i] for i in np.flatnonzero(runs[:, j] < s["naive"][:, j])] for j in range(len(KS))]


def load_set(
    dataset: str, source: str, cache: Path, embed_cache: Path, variants: list[Variant], check: bool
) -> dict[str, Any]:
    """Ingest, probe, and run every ranking on every question of one data set × source."""
    store = open_store(dataset, source, cache, embed_cache)
    try:
        questions = load_questions(DATA / dataset / "questions_dev.jsonl")
        graph = store.graph
        probes = probe(store, questions, cache / f"cv_probe_{store.collection_prefix}.pkl")
        names = store.entity_names()
        ent_ids = graph.entities.keys
        from langchain_graphrag_milvus.graph.ids import key_to_id

        def name(e: int) -> str:
            return names.get(key_to_id(int(ent_ids[e])), "")

        prepared = [prepare(graph, q, pr) for q, pr in zip(questions, probes)]
        started = time.perf_counter()
        result: dict[str, Any] = {
            "questions": questions,
            "naive": recalls(questions, [p.dense[: max(KS)] for p in prepared]),
            "old": recalls(questions, [old_default(graph, p, name) for p in prepared]),
            "new": recalls(questions, [new_ranking(graph, p, default_variant()) for p in prepared]),
            "graph": f"{graph.n_passages} passages, {graph.n_entities} entities, {graph.n_relations} relations",
        }
        result["variants"] = [recalls(questions, runs) for runs in variant_runs(graph, prepared, variants)]
        log(f"  {len(variants)} variants in {time.perf_counter() - started:.0f}s")
        if check:  # the real retriever, end to end through Milvus, must give the same recalls
            from langchain_graphrag_milvus.retrievers import MilvusGraphRetriever

            retriever = MilvusGraphRetriever(store=store, k=max(KS))
            real = recalls(questions, [[str(d.id) for d in retriever.invoke(q.question)] for q in questions])
            result["real"] = real
        return result
    finally:
        store.close()


def candidate(spec: str) -> Variant:
    """The default with ``option=value[,option=value...]`` applied (values parsed by the default's type).

    Options: those of ``WalkParams``, ``keep_dense`` / ``keep_dense_slack`` of the final merge and
    ``fuse_dense`` / ``fuse_dense_c`` of the fusion.
    """
    default = default_variant()
    changes: dict[str, Any] = {}
    merge: dict[str, Any] = {"keep_dense": default.keep, "keep_dense_slack": default.slack}
    merge |= {"fuse_dense": default.fuse, "fuse_dense_c": default.fuse_c, "fuse_dense_unlinked": default.fuse_unlinked}
    for part in spec.split(","):
        option, _, value = part.partition("=")
        if option in merge:
            merge[option] = type(merge[option])(value)
        else:
            changes[option] = type(getattr(default.walk, option))(value)
    walk = WalkParams(**{**default.walk.__dict__, **changes})
    fuse_c = merge["fuse_dense_c"] if merge["fuse_dense"] or merge["fuse_dense_unlinked"] else 0.0
    fusion = (merge["fuse_dense"], fuse_c, merge["fuse_dense_unlinked"])
    return Variant(walk, merge["keep_dense"], merge["keep_dense_slack"], *fusion)


def compare(sets: dict[str, dict[str, Any]], variants: list[Variant], options: list[str], n_folds: int) -> None:
    """A second table: the default against the default with ``option=value`` (same run, same folds)."""
    default = default_variant()
    for spec in options:
        cand = candidate(spec)
        if cand not in variants or default not in variants:
            log(f"--compare {spec}: not in the grid")
            continue
        d, c = variants.index(default), variants.index(cand)
        print(
            f"\n| set | default R@2 / R@5 | {spec} | "  # noqa: T201
            "default − naive per fold R@2 | R@5 | candidate − naive per fold R@2 | R@5 |"
        )
        print("|---|---|---|---|---|---|---|")  # noqa: T201
        for pair, s in sets.items():
            a, b = s["variants"][d].mean(axis=0) * 100, s["variants"][c].mean(axis=0) * 100
            fa, fb = fold_lifts(s, s["variants"][d], n_folds), fold_lifts(s, s["variants"][c], n_folds)
            cells = [pair, f"{a[0]:.1f} / {a[1]:.1f}", f"{b[0]:.1f} / {b[1]:.1f}"]
            cells += [spread(fa[:, 0]), spread(fa[:, 1]), spread(fb[:, 0]), spread(fb[:, 1])]
            print("| " + " | ".join(cells) + " |")  # noqa: T201
        for pair, s in sets.items():
            for label, runs in (("default", s["variants"][d]), (spec, s["variants"][c])):
                lost = losses(s, runs)
                log(f"{pair} {label}: lost vs naive R@2 {len(lost[0])} {lost[0]}, R@5 {len(lost[1])} {lost[1]}")


def main(argv: list[str] | None = None) -> int:
    """Run the cross-validation and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sets",
        nargs="*",
        help="dataset:source pairs (default: all that can be built here); a source is given or offline, "
        "optionally +offline_links or +offline (a supplement, ingest/supplement.py): musique100:given+offline_links",
    )
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--full-grid", action="store_true", help="also 20 relation seeds and two chained picks")
    parser.add_argument(
        "--keep-grid",
        action="store_true",
        help="also search keep_dense / keep_dense_slack (the final merge with the dense order) with every walk setting",
    )
    parser.add_argument(
        "--keep-only",
        action="store_true",
        help="search only keep_dense / keep_dense_slack, with the default walk (one walk per question: fast)",
    )
    parser.add_argument(
        "--fusion-grid",
        action="store_true",
        help="also search fuse_dense / fuse_dense_c (reciprocal-rank fusion with the dense order) with every walk "
        "setting",
    )
    parser.add_argument(
        "--fusion-only",
        action="store_true",
        help="search only fuse_dense / fuse_dense_c (and keep_dense with --keep-grid), with the default walk",
    )
    parser.add_argument(
        "--unlinked-only",
        action="store_true",
        help="search only fuse_dense (0-0.5) x fuse_dense_unlinked (0-1), c=0, with the default walk",
    )
    parser.add_argument(
        "--data", type=Path, default=DATA, help="directory of musique100/, hotpotqa100/ (default: %(default)s)"
    )
    parser.add_argument("--check", action="store_true", help="also run the real retriever (new default)")
    parser.add_argument("--cache-dir", type=Path, default=ROOT / DEFAULT_CACHE, help="Milvus Lite data and probes")
    parser.add_argument(
        "--embed-cache", type=Path, help="directory of embeddings.sqlite and triplets.sqlite (default: --cache-dir)"
    )
    parser.add_argument("--json", type=Path, help="write per-fold numbers here")
    parser.add_argument(
        "--compare",
        nargs="*",
        default=[],
        help="option=value[,option=value] settings of WalkParams to compare with the default "
        "(e.g. novel_seeds=all or ppr_method=push,push_epsilon=1e-5; settings outside the grid are ranked too)",
    )
    parser.add_argument("--rerun", action="store_true", help="rank again even if this grid's runs are cached")
    args = parser.parse_args(argv)
    globals()["DATA"] = args.data  # open_store and load_set read the module's DATA
    pairs = args.sets
    if pairs is None:
        pairs = ["musique100:given"]
        try:
            import langchain_graphrag_milvus.ingest.offline  # noqa: F401

            pairs += ["musique100:offline", "hotpotqa100:offline"]
        except ImportError:
            log("offline extractor not installed: only the given triplets")
    keeps = KEEPS if args.keep_grid else [(0, 0)]
    fusions = FUSIONS if args.fusion_grid or args.fusion_only else [(0.0, 0.0)]
    variants = grid(args.full_grid, keeps, fusions)
    if args.keep_only:
        variants = [Variant(WalkParams(), m, g) for m, g in KEEPS]
    if args.fusion_only:
        variants = [Variant(WalkParams(), m, g, f, c) for f, c in fusions for m, g in keeps]
    if args.unlinked_only:
        variants = [Variant(WalkParams(), 0, 0, w, 0.0, u) for w, u in UNLINKED]
    n_grid = len(variants)  # --compare settings outside the grid are ranked too, but not fitted by the CV
    variants += [c for c in dict.fromkeys(candidate(spec) for spec in args.compare) if c not in variants]
    sets = {}
    for pair in pairs:
        dataset, source = pair.split(":")
        log(f"{pair}:")
        runs_file = args.cache_dir / f"cv_runs_{dataset}_{source}_{_grid_tag(variants)}.pkl"
        if runs_file.exists() and not args.check and not args.rerun:
            sets[pair] = pickle.loads(runs_file.read_bytes())  # the rankings ran before on the same grid
            continue
        sets[pair] = load_set(dataset, source, args.cache_dir, args.embed_cache or args.cache_dir, variants, args.check)
        runs_file.write_bytes(pickle.dumps(sets[pair]))
    cv = cross_validate(sets, variants[:n_grid], args.folds)
    head = (
        "| set | graph | naive R@2 / R@5 | old default | **new default** | new − naive | "
        f"new − naive per fold R@2 ({args.folds} folds: mean ± sd [min, max]) | R@5 | CV-fitted lift R@2 | R@5 | "
        "losses vs naive R@2 / R@5: new | CV-fitted |"
    )
    print(head)  # noqa: T201
    print("|" + "|".join("---" for _ in range(head.count("|") - 1)) + "|")  # noqa: T201
    report: dict[str, Any] = {}
    for pair, s in sets.items():
        naive, old, new = (s[m].mean(axis=0) * 100 for m in ("naive", "old", "new"))
        fl = fold_lifts(s, s["new"], args.folds)
        cl = np.array([lift for _, lift in cv[pair]])
        dataset, source = pair.split(":")
        cells = [
            dataset,
            source,
            f"{naive[0]:.1f} / {naive[1]:.1f}",
            f"{old[0]:.1f} / {old[1]:.1f}",
            f"**{new[0]:.1f} / {new[1]:.1f}**",
            f"{new[0] - naive[0]:+.1f} / {new[1] - naive[1]:+.1f}",
            spread(fl[:, 0]),
            spread(fl[:, 1]),
            spread(cl[:, 0]),
            spread(cl[:, 1]),
            " / ".join(str(len(x)) for x in losses(s, s["new"])),
            " / ".join(str(len(x)) for x in losses(s, s["held_out"])),
        ]
        print("| " + " | ".join(cells) + " |")  # noqa: T201
        report[pair] = {
            "graph": s["graph"],
            "naive": naive.tolist(),
            "old": old.tolist(),
            "new": new.tolist(),
            "new_fold_lifts": fl.tolist(),
            "cv_lifts": cl.tolist(),
            "cv_choices": [repr(v) for v, _ in cv[pair]],
            "new_losses_vs_naive": dict(zip(("recall@2", "recall@5"), losses(s, s["new"]))),
            "cv_losses_vs_naive": dict(zip(("recall@2", "recall@5"), losses(s, s["held_out"]))),
        }
        if "real" in s:
            real = s["real"].mean(axis=0) * 100
            report[pair]["real_retriever"] = real.tolist()
            log(f"{pair}: real retriever {real[0]:.1f} / {real[1]:.1f} (in-process {new[0]:.1f} / {new[1]:.1f})")
    compare(sets, variants, args.compare, args.folds)
    first = next(iter(cv.values()))
    for i, (v, _) in enumerate(first):
        log(f"fold {i}: chose {v}")
    best = sorted(
        range(n_grid),
        key=lambda v: -np.mean([objective(s["variants"][v]) - objective(s["naive"]) for s in sets.values()]),
    )[:8]
    for v in best:
        lifts = " ".join(f"{(s['variants'][v].mean(axis=0) - s['naive'].mean(axis=0)) * 100}" for s in sets.values())
        log(f"all-data top: {variants[v]} {lifts}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
