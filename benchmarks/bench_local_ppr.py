"""Benchmark: push-based local PageRank vs the global power iteration, 10k–1M relations.

    nice -n 10 .venv/bin/python benchmarks/bench_local_ppr.py                  # 10k, 100k, 1M
    nice -n 10 .venv/bin/python benchmarks/bench_local_ppr.py --relations 100000 --queries 50
    nice -n 10 .venv/bin/python benchmarks/bench_local_ppr.py --json out.json

Graphs come from ``synthetic.generate`` (seeded, zipf profile: ≈16.75 relations per
entity, largest hub ≈1% of relations; the shape of ``bench_expansion.py``). Seeds mimic a
query of the default no-LLM ranking (``retrieval/walk_ranking.py``): 50 relation seeds
(half from one topic entity's two-hop neighbourhood, half anywhere, as a similarity
search returns them), 3 passage seeds (passages of the best relation seeds), both
weighted by a softmax (temperature 0.02) of similarities drawn in [0.5, 0.8], and 3
query entities (the topic, one drawn by popularity, one uniformly) weighted by
specificity; each group sums to 1, damping 0.85: the default walk.

Per size and per query, measured in the same run (ratios hold on a noisy machine):
the global solver (``graph/ppr.py``: Gauss–Seidel sweeps over the whole graph), and the
push solver (``graph/local_ppr.py``) at several ``epsilon`` (each one's per-graph
structure, built once and cached with the graph, is timed apart, not per query): time p50/p99, nodes touched, and the
L1 distance of its normalised scores to the global ones, and whether the top 5 passages
are the same.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from synthetic import (
    generate,  # noqa: E402
    print_table,  # noqa: E402
)

from langchain_graphrag_milvus.graph import GraphIndex  # noqa: E402
from langchain_graphrag_milvus.graph.local_ppr import local_pagerank  # noqa: E402
from langchain_graphrag_milvus.graph.ppr import personalized_pagerank, transition_matrices  # noqa: E402
from langchain_graphrag_milvus.retrieval.walk_ranking import WalkParams, WalkSeeds, walk_ranking  # noqa: E402

EPSILONS = (1e-4, 1e-5, 1e-6)
DAMPING = 0.85


def _softmax(s: np.ndarray, t: float = 0.02) -> np.ndarray:
    z = np.exp((s - s.max()) / t)
    return z / z.sum()


def queries(g: GraphIndex, n: int, seed: int) -> list[dict[str, tuple[np.ndarray, np.ndarray]]]:
    """Seeds shaped like the default ranking's (see the module docstring), as restart weights."""
    return [q for q, _ in seeded(g, n, seed)]


def seeded(g: GraphIndex, n: int, seed: int) -> list[tuple[dict[str, tuple[np.ndarray, np.ndarray]], WalkSeeds]]:
    """Each query's restart weights, and the same seeds as ``walk_ranking`` takes them (similarities)."""
    rng = np.random.default_rng(seed)
    deg = g.entity_degree().astype(np.float64)
    pop = deg / deg.sum()
    out = []
    for _ in range(n):
        topic = int(rng.choice(g.n_entities, p=pop)) if rng.random() < 0.5 else int(rng.integers(g.n_entities))
        near = g.expand(entity_seeds=np.array([topic], np.int32), hops=2, max_neighbors=100, max_relations=200)
        local = rng.choice(near.relations, min(25, near.relations.size), replace=False)
        rels = np.unique(np.concatenate([local, rng.choice(g.n_relations, 50 - local.size, replace=False)]))[:50]
        sims = rng.uniform(0.5, 0.8, rels.size)
        best = rels[np.argsort(-sims)[:3]]
        pas = np.unique(np.concatenate([g.rel_pas.row(int(r)) for r in best]))[:3]
        ents = np.unique([topic, int(rng.choice(g.n_entities, p=pop)), int(rng.integers(g.n_entities))])
        spec = 1.0 / np.maximum(deg[ents], 1)
        p_sims = rng.uniform(0.5, 0.8, pas.size)
        weights = {
            "relation_weights": (rels, _softmax(sims)),
            "passage_weights": (pas, _softmax(p_sims)),
            "entity_weights": (ents, spec / spec.sum()),
        }
        r_order, p_order = np.argsort(-sims), np.argsort(-p_sims)
        walk = WalkSeeds(
            rels[r_order].astype(np.int32),
            sims[r_order].astype(np.float32),
            pas[p_order].astype(np.int32),
            p_sims[p_order].astype(np.float32),
            ents.astype(np.int32),
        )
        out.append((weights, walk))
    return out


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values) * 1e3, q))


def run_size(n_relations: int, n_queries: int, epsilons: tuple[float, ...]) -> dict:
    """One graph size: global and push per query; the row of the table."""
    syn = generate(n_relations, seed=42)
    g = GraphIndex.from_relations(
        relation_keys=syn.relation_keys,
        subject_keys=syn.subject_keys,
        object_keys=syn.object_keys,
        passage_ids=syn.passage_ids,
    )
    del syn
    gc.collect()
    both = seeded(g, n_queries, 1)
    qs = [q for q, _ in both]
    row: dict = {"relations": n_relations, "entities": g.n_entities, "passages": g.n_passages}
    # per-graph structures, built once and cached with the graph (not per query): timed apart
    t = time.perf_counter()
    transition_matrices(g)
    row["global_build_s"] = time.perf_counter() - t
    t = time.perf_counter()
    local_pagerank(g, damping=DAMPING, epsilon=1.0, **qs[0])
    row["push_build_s"] = time.perf_counter() - t
    nodes = g.n_entities + g.n_relations + g.n_passages
    glob_t, glob = [], []
    for q in qs:
        t = time.perf_counter()
        r = personalized_pagerank(g, damping=DAMPING, **q)
        glob_t.append(time.perf_counter() - t)
        glob.append(r)
    row["global"] = {"p50_ms": pct(glob_t, 50), "p99_ms": pct(glob_t, 99), "touched": nodes}
    for eps in epsilons:
        times, touched, l1, top5, edges = [], [], [], [], []
        for q, ref in zip(qs, glob):
            t = time.perf_counter()
            loc = local_pagerank(g, damping=DAMPING, epsilon=eps, **q)
            res = loc.to_result(g)
            times.append(time.perf_counter() - t)
            touched.append(loc.touched)
            edges.append(loc.edges)
            a = np.concatenate([ref.entity, ref.relation, ref.passage])
            b = np.concatenate([res.entity, res.relation, res.passage])
            l1.append(float(np.abs(a - b).sum()))
            top5.append(
                np.array_equal(np.argsort(-ref.passage, kind="stable")[:5], np.argsort(-res.passage, kind="stable")[:5])
            )
        row[f"push {eps:g}"] = {
            "p50_ms": pct(times, 50),
            "p99_ms": pct(times, 99),
            "touched": float(np.median(touched)),
            "edges": float(np.median(edges)),
            "l1_median": float(np.median(l1)),
            "l1_max": float(np.max(l1)),
            "top5_same": float(np.mean(top5)),
        }
    row["walk_ranking"] = walk_rows(g, [w for _, w in both], epsilons)
    return row


def walk_rows(g: GraphIndex, seeds: list[WalkSeeds], epsilons: tuple[float, ...]) -> dict[str, dict[str, float]]:
    """The whole default ranking (two walks and their bookkeeping) per query, global vs push."""
    out: dict[str, dict[str, float]] = {}
    ref: list[list[int]] = []
    for name, params in [("global", WalkParams(ppr_method="global"))] + [
        (f"push {eps:g}", WalkParams(ppr_method="push", push_epsilon=eps)) for eps in epsilons
    ]:
        times, orders = [], []
        for s in seeds:
            t = time.perf_counter()
            order, _ = walk_ranking(g, s, params, limit=5)
            times.append(time.perf_counter() - t)
            orders.append(order.tolist())
        ref = ref or orders
        same = float(np.mean([a == b for a, b in zip(ref, orders)]))
        out[name] = {"p50_ms": pct(times, 50), "p99_ms": pct(times, 99), "top5_same": same}
    return out


def main(argv: list[str] | None = None) -> None:
    """Run the sizes and print one table (and optionally JSON)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--relations", type=int, action="append", help="graph size (repeatable; default 10k 100k 1M)")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--epsilon", type=float, action="append", help="push tolerance (repeatable)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    sizes = args.relations or [10_000, 100_000, 1_000_000]
    epsilons = tuple(args.epsilon or EPSILONS)
    rows = []
    for n in sizes:
        started = time.perf_counter()
        rows.append(run_size(n, args.queries, epsilons))
        r = rows[-1]
        build = f"one-time build: global matrices {r['global_build_s']:.2f} s, push lists {r['push_build_s']:.2f} s"
        print(f"# {n} relations: {time.perf_counter() - started:.0f} s; {build}", file=sys.stderr)  # noqa: T201
    flat = []
    for r in rows:
        base = r["global"]["p50_ms"]
        for method, m in r.items():
            if not isinstance(m, dict) or method == "walk_ranking":
                continue
            flat.append({"relations": r["relations"], "method": method, "base": base, **m})
    print_table(
        flat,
        [
            ("relations", lambda r: f"{r['relations']:,}"),
            ("method", lambda r: r["method"]),
            ("p50 ms", lambda r: f"{r['p50_ms']:.2f}"),
            ("p99 ms", lambda r: f"{r['p99_ms']:.2f}"),
            ("global ÷ this (p50)", lambda r: f"{r['base'] / r['p50_ms']:.1f}×"),
            ("nodes touched (median)", lambda r: f"{r['touched']:,.0f}"),
            (
                "L1 to global (median / max)",
                lambda r: f"{r['l1_median']:.1e} / {r['l1_max']:.1e}" if "l1_max" in r else "—",
            ),
            ("same top-5 passages", lambda r: f"{100 * r['top5_same']:.0f}%" if "top5_same" in r else "—"),
        ],
    )
    print("\nThe whole default ranking (`walk_ranking`: two walks), global vs push, per query:\n")  # noqa: T201
    walks = [
        {"relations": r["relations"], "method": m, "base": r["walk_ranking"]["global"]["p50_ms"], **v}
        for r in rows
        for m, v in r["walk_ranking"].items()
    ]
    print_table(
        walks,
        [
            ("relations", lambda r: f"{r['relations']:,}"),
            ("method", lambda r: r["method"]),
            ("p50 ms", lambda r: f"{r['p50_ms']:.2f}"),
            ("p99 ms", lambda r: f"{r['p99_ms']:.2f}"),
            ("global ÷ this (p50)", lambda r: f"{r['base'] / r['p50_ms']:.1f}×"),
            ("same top-5 order as global", lambda r: f"{100 * r['top5_same']:.0f}%"),
        ],
    )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
