"""Cross-validated choice of ``fuse_dense`` × ``fuse_dense_unlinked``, Wikipedia sets and techdocs fitted jointly.

``cv_ranking.py --unlinked-only`` fits the two weights on musique100 and hotpotqa100; this adds the technical
docs (file-level recall, ``bench_techdocs.py``'s store) to the fit, since the fusion exists for them too:

    .venv/bin/python benchmarks/cv_unlinked.py --cache-dir .cache/langchain-graphrag-milvus \\
        --techdocs-db .cache/bench_techdocs/techdocs.db --corpus .cache/techdocs

Per question the walk's top 20 (fusion off) and the dense top 50 are read once — Wikipedia sets from
``cv_ranking.py``'s cached probes and stores, techdocs through the real retriever — and every setting is then
:func:`~langchain_graphrag_milvus.retrieval.fusion.fuse_orders` of those lists at the query's weight (the
pipeline's rule: ``fuse_dense``, or at least ``fuse_dense_unlinked`` when the query has no entity seed).
Folds: ``cv_ranking.py``'s (5, seed 0), one setting per fold for all sets, by mean R@2 + R@5 lift over naive.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import cv_ranking as cv  # noqa: E402  (beside this script)
from bench_techdocs import DATA as TECHDOCS  # noqa: E402

from langchain_graphrag_milvus.retrieval.fusion import FUSION_DEPTH, fuse_orders  # noqa: E402
from langchain_graphrag_milvus.retrieval.walk_ranking import WalkParams, walk_ranking  # noqa: E402

SETS = ("musique100:given", "musique100:offline", "hotpotqa100:offline")
GRIDS = {
    "unlinked": [(0.0, u / 10) for u in range(11)],
    "both": [(w / 10, u / 10) for w in range(6) for u in range(11)],
}


def wiki_rows(pair: str, cache: Path) -> list[dict[str, Any]]:
    """Walk top 20, dense top 50, gold ids and whether the query has an entity seed, per question."""
    dataset, source = pair.split(":")
    store = cv.open_store(dataset, source, cache, cache)
    try:
        questions = cv.load_questions(cv.DATA / dataset / "questions_dev.jsonl")
        graph = store.graph
        probes = cv.probe(store, questions, cache / f"cv_probe_{store.collection_prefix}.pkl")
        rows = []
        for q, pr in zip(questions, probes):
            p = cv.prepare(graph, q, pr)
            order, _ = walk_ranking(graph, p.seeds, WalkParams(), limit=FUSION_DEPTH)
            walk = [graph.passages.ids[int(g)] for g in order.tolist()]
            rows.append({"walk": walk, "dense": p.dense[:50], "gold": list(q.gold_passage_ids),
                         "linked": bool(p.seeds.entity_idx.size), "key": lambda i: i})  # fmt: skip
        return rows
    finally:
        store.close()


def techdocs_rows(db: Path, corpus: Path, prefix: str) -> list[dict[str, Any]]:
    """The same for techdocs through the real retriever; passages keyed by their file (file-level recall)."""
    from langchain_graphrag_milvus import MilvusGraphRetriever, MilvusGraphStore
    from langchain_graphrag_milvus.embeddings import LocalMiniLMEmbeddings
    from langchain_graphrag_milvus.retrieval.stages import entity_seeds

    questions = [json.loads(line) for line in (TECHDOCS / "questions_dev.jsonl").open() if line]
    store = MilvusGraphStore(LocalMiniLMEmbeddings(), uri=str(db), collection_prefix=prefix)
    root = os.path.abspath(corpus)
    files: dict[str, str] = {}
    rows = []
    try:
        graph_r, naive_r = MilvusGraphRetriever(store=store, k=FUSION_DEPTH), store.as_naive_retriever(k=50)
        for q in questions:
            docs = graph_r.invoke(q["question"])
            dense = naive_r.invoke(q["question"])
            for d in docs + dense:
                files[str(d.id)] = os.path.relpath(str(d.metadata.get("source", "")), root)
            names = store.entity_linker().find(q["question"])
            linked = bool(entity_seeds(_hits(store, q["question"], names)))
            walk = [str(d.id) for d in docs if d.metadata["_ranked_by"] == "graph"]
            rows.append({"walk": walk, "dense": [str(d.id) for d in dense], "gold": q["gold_files"],
                         "linked": linked, "key": files.__getitem__, "hops": q["hops"]})  # fmt: skip
    finally:
        store.close()
    return rows


def _hits(store: Any, query: str, names: list[str]) -> Any:
    """The pipeline's QueryHits of a linker-only query (exact names need no search: no entity hits)."""
    from langchain_graphrag_milvus.retrieval.stages import QueryHits

    return QueryHits(store.graph, None, query, (), names, [[] for _ in names], [], [])


def recalls(row: dict[str, Any], order: list[str]) -> list[float]:
    """R@2, R@5 of the top 5 (dense fills), by the row's key (passage id or file)."""
    top = [row["key"](i) for i in list(dict.fromkeys(order + row["dense"]))[:5]]
    return [len(set(top[:k]) & set(row["gold"])) / len(set(row["gold"])) for k in cv.KS]


def run(sets: dict[str, list[dict[str, Any]]], grid: list[tuple[float, float]], label: str) -> None:
    """Print the folds' choices and each set's CV-fitted lift and held-out losses."""
    naive = {s: np.array([recalls(r, r["dense"][:5]) for r in rows]) for s, rows in sets.items()}
    runs: dict[str, list[np.ndarray]] = {s: [] for s in sets}
    for base, unlinked in grid:
        for s, rows in sets.items():
            per = []
            for r in rows:
                weight = base if r["linked"] else max(base, unlinked)
                order = fuse_orders(r["walk"], r["dense"][:FUSION_DEPTH], weight=weight, c=0.0) if weight else r["walk"]
                per.append(recalls(r, order))
            runs[s].append(np.array(per))
    fold_of = {s: cv.folds(len(rows), 5) for s, rows in sets.items()}
    held = {s: np.zeros_like(naive[s]) for s in sets}
    lifts: dict[str, list[np.ndarray]] = {s: [] for s in sets}
    chosen = []
    for i in range(5):

        def train(v: int, i: int = i) -> float:
            out = []
            for s in sets:
                mask = np.ones(len(naive[s]), bool)
                mask[fold_of[s][i]] = False
                out.append(runs[s][v][mask].mean() - naive[s][mask].mean())
            return float(np.mean(out))

        best = max(range(len(grid)), key=lambda v: (round(train(v), 9), -v))
        chosen.append(grid[best])
        for s in sets:
            idx = fold_of[s][i]
            held[s][idx] = runs[s][best][idx]
            lifts[s].append(runs[s][best][idx].mean(axis=0) - naive[s][idx].mean(axis=0))
    print(f"\n{label}: folds chose (fuse_dense, fuse_dense_unlinked) {chosen}")  # noqa: T201
    for s in sets:
        lift = np.array(lifts[s])
        lost = int((held[s][:, 1] < naive[s][:, 1]).sum())
        print(f"  {s}: CV-fitted R@2 {cv.spread(lift[:, 0])} / R@5 {cv.spread(lift[:, 1])}; R@5 losses {lost}")  # noqa: T201


def main() -> int:
    """Gather the orders, then cross-validate both grids with and without techdocs."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache-dir", type=Path, default=ROOT / cv.DEFAULT_CACHE, help="cv_ranking.py's cache")
    parser.add_argument("--techdocs-db", type=Path, required=True, help="bench_techdocs.py's ingested store")
    parser.add_argument("--corpus", type=Path, required=True, help="the corpus folder the store was ingested from")
    parser.add_argument("--prefix", default="techdocs")
    args = parser.parse_args()
    wiki = {pair: wiki_rows(pair, args.cache_dir) for pair in SETS}
    techdocs = techdocs_rows(args.techdocs_db, args.corpus, args.prefix)
    for name, grid in GRIDS.items():
        run(wiki, grid, f"{name} ({len(grid)} settings), Wikipedia sets")
        run({**wiki, "techdocs": techdocs}, grid, f"{name} ({len(grid)} settings), Wikipedia sets + techdocs")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
