"""Cross-validated choice of the pair step (``retrieval/pair_order.py``) on the three evaluation graphs.

    nice -n 10 .venv/bin/python benchmarks/cv_pair.py --cache-dir DIR --keep-first-only
    # first, the stores and probes: cv_ranking.py --keep-only --cache-dir DIR --embed-cache E --sets ...

Reads ``cv_ranking.py``'s stores and cached probes in ``--cache-dir`` (built by a run of
``cv_ranking.py --keep-only`` with the same ``--cache-dir``), adds the clause seeds of a compound
question (one passage search per part, as the retriever), runs the default chained walk once per
question, then every pair setting on the walk's order in-process, followed by the default
merge with the dense order (fusion, keep_dense) exactly as the pipeline does.

Folds: question ``i`` of each set is in fold ``i mod 5``. One setting is chosen on four folds of
all sets pooled (mean R@2 + R@5 lift over naive), scored on the fifth.
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))

import cv_ranking as cv  # noqa: E402

sys.modules["__main__"].Probe = cv.Probe  # cv_ranking.py pickled its probes as __main__.Probe

from langchain_graphrag_milvus.cli.evaluation import load_questions  # noqa: E402
from langchain_graphrag_milvus.retrieval.pair_order import PairParams, pair_order  # noqa: E402
from langchain_graphrag_milvus.retrieval.walk_ranking import WalkParams, WalkSeeds, ranked_walks  # noqa: E402
from langchain_graphrag_milvus.text.clauses import split_clauses  # noqa: E402

WINDOW_MAX = 8
#: The cover weights searched (rank positions a full cover of the query's entities is worth).
COVERS = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 10.0)
SETS = ["musique100:given", "musique100:offline", "hotpotqa100:offline"]


def pair_grid(anchors: tuple[bool, ...] = (True, False)) -> list[PairParams | None]:
    """None (no pair step) and every pair setting, simplest first (a tie goes to the earlier one).

    ``anchors``: the ``keep_first`` values searched.
    """
    out: list[PairParams | None] = [None]
    for first in anchors:
        for m in (3, 4, 5):
            for cover in COVERS[1:]:
                out.append(PairParams(window=m, bridge=0.0, cover=cover, keep_first=first))
            for mode in ("shared", "main"):
                for bridge in (0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 10.0):
                    for cover in COVERS:
                        out.append(PairParams(window=m, bridge=bridge, cover=cover, bridge_mode=mode, keep_first=first))
    return out


def with_clause_seeds(store: Any, question: str, seeds: WalkSeeds, params: WalkParams) -> WalkSeeds:
    """``seeds`` with the retriever's clause seeds: each part's top passages share the passage group."""
    parts = split_clauses(question) if params.clause_seeds else []
    if not parts:
        return seeds
    graph = store.graph
    vecs = store.embedding.embed_documents(parts)
    hits = store.search("passages", [tuple(map(float, v)) for v in vecs], params.passage_seeds)
    clause = tuple(
        (np.asarray(graph.passages.find([h.id for h in per]), np.int32), np.array([h.score for h in per], np.float32))
        for per in hits
    )
    return WalkSeeds(seeds.relation_idx, seeds.relation_scores, seeds.passage_idx, seeds.passage_scores,
                     seeds.entity_idx, clause_passages=clause)  # fmt: skip


def walk_inputs(pair: str, cache: Path, embed_cache: Path) -> dict[str, Any]:
    """Per question: the walk's order (graph indices), the dense ids, the seeds; and the graph."""
    dataset, source = pair.split(":")
    store = cv.open_store(dataset, source, cache, embed_cache)
    try:
        questions = load_questions(cv.DATA / dataset / "questions_dev.jsonl")
        graph = store.graph
        probes = cv.probe(store, questions, cache / f"cv_probe_{store.collection_prefix}.pkl")
        prepared = [cv.prepare(graph, q, pr) for q, pr in zip(questions, probes)]
        params = WalkParams()
        rows = []
        for q, p in zip(questions, prepared):
            seeds = with_clause_seeds(store, q.question, p.seeds, params)
            walk = ranked_walks(graph, seeds, params, limit=cv.WALK_LIMIT)
            order = walk.order.tolist()
            ents_of = {}
            for g in order[:WINDOW_MAX]:
                e, c = graph.passage_entities(g)
                ents_of[g] = dict(zip(e.tolist(), c.tolist()))
            ids = [graph.passages.ids[g] for g in order]
            rows.append((order, p.dense, seeds.entity_idx.tolist(), ents_of, ids))
        return {"questions": questions, "rows": rows}
    finally:
        store.close()


def run(data: dict[str, Any], setting: PairParams | None) -> np.ndarray:
    """Per-question R@2, R@5 of the default ranking with this pair step (None: without)."""
    variant = cv.default_variant()
    out = []
    for order0, dense, ents, ents_of, ids in data["rows"]:
        order = order0
        if setting is not None:
            order = pair_order(order, ents_of.__getitem__, ents, setting)
        out.append(cv.finish(_Passages(dict(zip(order0, ids))), order, dense, variant, linked=bool(ents)))
    return cv.recalls(data["questions"], out)


class _Passages:
    """Stands in for the graph in ``cv_ranking.finish``: ``passages.ids[g]`` of the walk's passages."""

    def __init__(self, ids: dict[int, str]) -> None:
        self.ids = ids
        self.passages = self


def _row(pair: str, fold: str, n: int, naive: np.ndarray, *others: np.ndarray) -> None:
    """One table row: recalls in points, and the lifts over naive."""
    cells = [pair, fold, str(n)] + [f"{x[0]:.1f} / {x[1]:.1f}" for x in (naive, *others)]
    cells += [f"{x[0] - naive[0]:+.1f} / {x[1] - naive[1]:+.1f}" for x in others]
    print("| " + " | ".join(cells) + " |")  # noqa: T201


def folds_mod(n: int, k: int) -> list[np.ndarray]:
    """Question i in fold i mod k."""
    return [np.arange(i, n, k) for i in range(k)]


def main(argv: list[str] | None = None) -> int:
    """Run every setting on every set, cross-validate, print the tables."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache-dir", type=Path, required=True)
    ap.add_argument("--embed-cache", action="append", default=[], help="source=DIR (given=..., offline=...)")
    ap.add_argument("--sets", nargs="*", default=SETS)
    ap.add_argument("--report-sets", nargs="*", default=[], help="sets scored with the folds' choices, not fitted")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--keep-first-only", action="store_true", help="search only keep_first=True settings")
    args = ap.parse_args(argv)
    embed = dict(s.split("=", 1) for s in args.embed_cache)
    grid = pair_grid((True,) if args.keep_first_only else (True, False))
    sets: dict[str, dict[str, Any]] = {}
    for pair in args.sets + args.report_sets:
        source = pair.split(":")[1]
        base = source.partition("+")[0]
        cached = args.cache_dir / f"pair_inputs_{pair.replace(':', '_')}.pkl"
        if cached.exists():
            data = pickle.loads(cached.read_bytes())
        else:
            data = walk_inputs(pair, args.cache_dir, Path(embed.get(base, args.cache_dir)))
            cached.write_bytes(pickle.dumps(data))
        data["naive"] = cv.recalls(data["questions"], [row[1][: max(cv.KS)] for row in data["rows"]])
        data["runs"] = [run(data, g) for g in grid]
        sets[pair] = data
    k = args.folds
    chosen: list[int] = []
    for i in range(k):
        best: tuple[float, int] | None = None
        for v in range(len(grid)):
            train = []
            for name, s in sets.items():
                if name in args.report_sets:
                    continue
                mask = np.ones(len(s["questions"]), bool)
                mask[folds_mod(len(s["questions"]), k)[i]] = False
                train.append(float(s["runs"][v][mask].mean() - s["naive"][mask].mean()))
            score = float(np.mean(train))
            if best is None or score > best[0] + 1e-9:
                best = (score, v)
        assert best is not None
        chosen.append(best[1])
    report: dict[str, Any] = {"choices": [repr(grid[c]) for c in chosen]}
    print("folds chose:", [repr(grid[c]) for c in chosen])  # noqa: T201
    head = "| set | fold | n | naive R@2 / R@5 | walk only | CV-chosen pair step | pair default |"
    print(head + " walk − naive | CV pair − naive | pair default − naive |")  # noqa: T201
    print("|---" * 10 + "|")  # noqa: T201
    fixed = grid.index(PairParams()) if PairParams() in grid else 0
    for pair, s in sets.items():
        n = len(s["questions"])
        held = np.zeros_like(s["naive"])
        rows = []
        for i, f in enumerate(folds_mod(n, k)):
            held[f] = s["runs"][chosen[i]][f]
            runs = (s["naive"], s["runs"][0], s["runs"][chosen[i]], s["runs"][fixed])
            nv, d, c, fx = (100 * x[f].mean(axis=0) for x in runs)
            rows.append([nv, d, c, fx])
            _row(pair, str(i), len(f), nv, d, c, fx)
        nv, d, c, fx = (100 * x.mean(axis=0) for x in (s["naive"], s["runs"][0], held, s["runs"][fixed]))
        _row(pair, "all", n, nv, d, c, fx)
        report[pair] = {
            "folds": [[x.tolist() for x in r] for r in rows],
            "pooled": [nv.tolist(), d.tolist(), c.tolist(), fx.tolist()],
        }
    fitted = [s for name, s in sets.items() if name not in args.report_sets]
    ranked = sorted(range(len(grid)), key=lambda v: -np.mean([s["runs"][v].mean() - s["naive"].mean() for s in fitted]))
    for v in ranked[:10]:
        lifts = " ".join(
            f"{pair}={100 * (s['runs'][v].mean(axis=0) - s['naive'].mean(axis=0))}" for pair, s in sets.items()
        )
        print(f"all-data: {grid[v]!r} {lifts}", file=sys.stderr)  # noqa: T201
    if args.json:
        args.json.write_text(json.dumps(report, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
