"""BM25 passage hits as seeds of the walk and/or as a list merged into the final order (issue 26; harness only).

    nice -n 10 .venv/bin/python benchmarks/cv_bm25seed.py --cache-dir DIR
    # first, the stores and probes: cv_ranking.py --keep-only --cache-dir DIR --embed-cache E --sets ...

Reads ``cv_ranking.py``'s stores and cached probes in ``--cache-dir`` (as ``cv_pair.py`` does), adds
the clause seeds of a compound question as the retriever does, and per question:

* **BM25** over the store's passage texts with the eval's hybrid baseline settings
  (``cli/hybrid.py``: ``bm25s``, English stopwords, no stemming, hits with a positive score);
* **seeds**: the top ``m`` BM25 passages join the walk's passage group, weighted by BM25 score
  (normalised to sum 1) times ``w``, next to the dense passage seeds (a softmax summing to 1).
  ``within``: the group is renormalised to 1 (BM25 takes a share ``w / (1 + w)`` of the passage
  group, whose share of the restart stays one third); ``extra``: it is not (the passage group
  weighs ``1 + w`` against the entity and relation groups' 1 each). The continued walk keeps them, as
  it keeps the dense passage seeds. ``next``: as ``within``, but in the continued walk only (the first
  pick stays the default's). The pair step of ``PairParams()`` (the hand-searched weights, the retriever's
  until 2026-11-27, with which this experiment ran) follows, on the walk's order;
* **merge**: the BM25 list fused into the walk's order (``fuse_orders``, weight ``f``, constant ``c``,
  both lists cut at 20) or its top ``m`` kept at rank ``r + slack`` at the latest (``keep_dense``
  run on the BM25 list), before the default merge with the dense order (``fuse_dense_unlinked``).

Nothing here changes the package: the seed group is added by wrapping ``walk_ranking.seed_weights`` (or
``_next_walk``) for the duration of one walk. Folds: question ``i`` of each set in fold ``i mod 5``; one setting is
chosen on four folds of the three graphs pooled (mean R@2 + R@5 lift over naive), scored on the fifth.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import pickle
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))

import cv_pair  # noqa: E402
import cv_ranking as cv  # noqa: E402

sys.modules["__main__"].Probe = cv.Probe  # cv_ranking.py pickled its probes as __main__.Probe

import langchain_graphrag_milvus.retrieval.walk_ranking as wr  # noqa: E402
from langchain_graphrag_milvus.cli.evaluation import load_questions  # noqa: E402
from langchain_graphrag_milvus.retrieval.fusion import FUSION_DEPTH, fuse_orders  # noqa: E402
from langchain_graphrag_milvus.retrieval.keep_dense import keep_dense  # noqa: E402
from langchain_graphrag_milvus.retrieval.pair_order import PairParams, pair_order  # noqa: E402
from langchain_graphrag_milvus.retrieval.sparse_vectors import accumulate, add  # noqa: E402
from langchain_graphrag_milvus.retrieval.walk_ranking import WalkParams, WalkSeeds  # noqa: E402

SETS = cv_pair.SETS
BM25_DEPTH = 50  # the hybrid baseline's depth


@dataclass(frozen=True)
class Seed:
    """BM25 seeds of the walk: top ``m`` hits, weight ``w`` against the dense seeds; (0, 0): none."""

    m: int = 0
    w: float = 0.0
    mode: str = "within"


@dataclass(frozen=True)
class Merge:
    """The BM25 list in the final order: ``fuse`` (weight, c) or ``keep`` (top m, slack); none: off."""

    kind: str = "none"
    a: float = 0.0
    b: float = 0.0


WEIGHTS = (0.05, 0.1, 0.25, 0.5, 1.0, 2.0)
SEEDS = [Seed()] + [Seed(m, w, mode) for mode in ("within", "extra", "next") for m in (1, 2, 3, 5, 10) for w in WEIGHTS]
MERGES = (
    [Merge()]
    + [Merge("fuse", f, c) for f in (0.1, 0.2, 0.3, 0.5) for c in (0.0, 5.0)]
    + [Merge("keep", m, s) for m in (1, 2) for s in (1, 2, 3)]
)


@contextmanager
def bm25_seeds(hits: tuple[np.ndarray, np.ndarray], seed: Seed) -> Iterator[None]:
    """Within the block, the walks' passage group also holds these BM25 hits (graph index, score)."""
    original = wr.seed_weights
    idx, sc = hits[0][: seed.m], hits[1][: seed.m]
    sc, idx = sc[idx >= 0], idx[idx >= 0]

    original_next = wr._next_walk

    def with_bm25(pas: Any, within: bool) -> Any:
        if seed.m and idx.size:
            pas = add(pas, accumulate(idx, (seed.w * sc / sc.sum()).astype(np.float32)))
            if within:
                pas = (pas[0], (pas[1] / pas[1].sum()).astype(np.float32))
        return pas

    def patched(graph: Any, seeds: WalkSeeds, params: WalkParams, masks: Any = (None, None)) -> Any:
        ent, rel, pas = original(graph, seeds, params, masks)
        return ent, rel, with_bm25(pas, seed.mode == "within")

    def patched_next(graph: Any, picked: Any, seeds: WalkSeeds, first: Any, *args: Any, **kwargs: Any) -> Any:
        (ent, rel, pas), mass = first
        return original_next(graph, picked, seeds, ((ent, rel, with_bm25(pas, True)), mass), *args, **kwargs)

    if seed.mode == "next":  # the continued walk only: the first pick is the default's
        wr._next_walk = patched_next  # type: ignore[assignment]
    else:
        wr.seed_weights = patched  # type: ignore[assignment]
    try:
        yield
    finally:
        wr.seed_weights = original  # type: ignore[assignment]
        wr._next_walk = original_next  # type: ignore[assignment]


def bm25_lists(store: Any, dataset: str, queries: list[str]) -> list[list[tuple[str, float]]]:
    """Per query, the BM25 hits (id, score) over the store's passages, as the eval's hybrid baseline."""
    import bm25s

    from langchain_graphrag_milvus.ingest.records import iter_jsonl

    pids = [str(row["id"]) for _, row in iter_jsonl(cv.DATA / dataset / "passages.jsonl")]
    rows = store.fetch("passages", pids, ("text",))
    ids = [pid for pid in dict.fromkeys(pids) if pid in rows]
    index = bm25s.BM25()
    index.index(bm25s.tokenize([str(rows[i].get("text", "")) for i in ids], stopwords="en", show_progress=False),
                show_progress=False)  # fmt: skip
    out = []
    for q in queries:
        tokens = bm25s.tokenize([q], stopwords="en", show_progress=False, return_ids=False)
        if not (tokens and tokens[0]):
            out.append([])
            continue
        docs, scores = index.retrieve(tokens, k=min(BM25_DEPTH, len(ids)), show_progress=False)
        out.append([(ids[int(i)], float(s)) for i, s in zip(docs[0], scores[0]) if s > 0])
    return out


def walk_orders(pair: str, cache: Path, embed_cache: Path) -> dict[str, Any]:
    """Per question and seed setting: the walk's order after the default pair step (ids); dense, BM25, linked."""
    dataset, source = pair.split(":")
    store = cv.open_store(dataset, source, cache, embed_cache)
    try:
        questions = load_questions(cv.DATA / dataset / "questions_dev.jsonl")
        graph = store.graph
        probes = cv.probe(store, questions, cache / f"cv_probe_{store.collection_prefix}.pkl")
        prepared = [cv.prepare(graph, q, pr) for q, pr in zip(questions, probes)]
        bm25 = bm25_lists(store, dataset, [q.question for q in questions])
        params = WalkParams()
        rows = []
        for q, p, hits in zip(questions, prepared, bm25):
            seeds = cv_pair.with_clause_seeds(store, q.question, p.seeds, params)  # the retriever's clause seeds
            b_idx = np.asarray(graph.passages.find([h for h, _ in hits]), np.int64) if hits else np.empty(0, np.int64)
            b_sc = np.array([s for _, s in hits], np.float32)
            ents = seeds.entity_idx.tolist()
            orders = {}
            for seed in SEEDS:
                with bm25_seeds((b_idx, b_sc), seed):
                    order = wr.ranked_walks(graph, seeds, params, limit=cv.WALK_LIMIT).order.tolist()

                def ents_of(g: int) -> dict[int, int]:
                    e, c = graph.passage_entities(g)
                    return dict(zip(e.tolist(), c.tolist()))

                order = pair_order(order, ents_of, ents, PairParams())
                orders[seed] = [graph.passages.ids[g] for g in order]
            rows.append({"orders": orders, "dense": p.dense[:50], "bm25": [h for h, _ in hits], "linked": bool(ents)})
        return {"questions": questions, "rows": rows}
    finally:
        store.close()


def final(ids: list[str], row: dict[str, Any], merge: Merge, k: int = max(cv.KS)) -> list[str]:
    """The BM25 merge, then the default merge with the dense order and the dense fill (``cv_ranking.finish``)."""
    bm25 = row["bm25"]
    if merge.kind == "fuse" and bm25:
        ids = fuse_orders(ids, bm25[:FUSION_DEPTH], weight=merge.a, c=merge.b)
    elif merge.kind == "keep" and bm25:
        ids = keep_dense(ids, bm25[: max(k, int(merge.a))], k=k, keep=int(merge.a), slack=int(merge.b))
    v = cv.default_variant()
    dense = row["dense"]
    weight = v.fuse if row["linked"] else max(v.fuse, v.fuse_unlinked)
    if weight:
        ids = fuse_orders(ids, dense[:FUSION_DEPTH], weight=weight, c=v.fuse_c)
    ids = keep_dense(ids, dense[: max(k, v.keep)], k=k, keep=v.keep, slack=v.slack)
    return list(dict.fromkeys(ids + list(dense[:k])))[:k]


def fmt(x: np.ndarray, naive: np.ndarray) -> str:
    """``lift R@2 / lift R@5`` in points."""
    d = 100 * (x.mean(axis=0) - naive.mean(axis=0))
    return f"{d[0]:+.1f} / {d[1]:+.1f}"


def main(argv: list[str] | None = None) -> int:
    """Run every setting on every set, cross-validate three grids, print the tables."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache-dir", type=Path, required=True)
    ap.add_argument("--embed-cache", action="append", default=[], help="source=DIR (given=..., offline=...)")
    ap.add_argument("--sets", nargs="*", default=SETS)
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    embed = dict(s.split("=", 1) for s in args.embed_cache)
    settings = [(s, m) for s in SEEDS for m in MERGES]
    sets: dict[str, dict[str, Any]] = {}
    for pair in args.sets:
        base = pair.split(":")[1].partition("+")[0]
        tag = hashlib.blake2b(repr(SEEDS).encode(), digest_size=4).hexdigest()  # the walks of these seed settings
        cached = args.cache_dir / f"bm25seed_inputs_{pair.replace(':', '_')}_{tag}.pkl"
        if cached.exists():
            data = pickle.loads(cached.read_bytes())
        else:
            data = walk_orders(pair, args.cache_dir, Path(embed.get(base, args.cache_dir)))
            cached.write_bytes(pickle.dumps(data))
        qs = data["questions"]
        data["naive"] = cv.recalls(qs, [r["dense"][: max(cv.KS)] for r in data["rows"]])
        data["bm25"] = cv.recalls(qs, [r["bm25"][: max(cv.KS)] for r in data["rows"]])
        data["runs"] = [cv.recalls(qs, [final(r["orders"][s], r, m) for r in data["rows"]]) for s, m in settings]
        sets[pair] = data
    k = args.folds
    default = settings.index((Seed(), Merge()))
    grids = {
        "seeds": [i for i, (s, m) in enumerate(settings) if m == Merge()],
        "merges": [i for i, (s, m) in enumerate(settings) if s == Seed()],
        "joint": list(range(len(settings))),
    }
    report: dict[str, Any] = {"grids": {}}
    for name, cand in grids.items():
        chosen = cv_pair.choose(sets, cand, list(sets), k)
        print(f"\n{name} ({len(cand)} settings): folds chose {[settings[c] for c in chosen]}")  # noqa: T201
        print("| set | fold | n | naive R@2 / R@5 | default − naive | CV-chosen − naive |")  # noqa: T201
        print("|---|---|---|---|---|---|")  # noqa: T201
        report["grids"][name] = {"choices": [repr(settings[c]) for c in chosen]}
        for pair, s in sets.items():
            n = len(s["questions"])
            ho = cv_pair.held_out(s, chosen, k)
            for i, f in enumerate(cv_pair.folds_mod(n, k)):
                nv = 100 * s["naive"][f].mean(axis=0)
                cells = [pair, str(i), str(len(f)), f"{nv[0]:.1f} / {nv[1]:.1f}",
                         fmt(s["runs"][default][f], s["naive"][f]), fmt(ho[f], s["naive"][f])]  # fmt: skip
                print("| " + " | ".join(cells) + " |")  # noqa: T201
            nv = 100 * s["naive"].mean(axis=0)
            lost_d = [q.id for q, a, b in zip(s["questions"], s["runs"][default][:, 1], s["naive"][:, 1]) if a < b]
            lost_c = [q.id for q, a, b in zip(s["questions"], ho[:, 1], s["naive"][:, 1]) if a < b]
            cells = [pair, "all", str(n), f"{nv[0]:.1f} / {nv[1]:.1f}", fmt(s["runs"][default], s["naive"]),
                     fmt(ho, s["naive"])]  # fmt: skip
            print("| " + " | ".join(cells) + " |")  # noqa: T201
            print(f"R@5 losses vs naive {pair}: default {len(lost_d)} {lost_d}; CV {len(lost_c)} {lost_c}")  # noqa: T201
            report["grids"][name][pair] = {
                "held_out": ho.tolist(), "lost_r5_default": lost_d, "lost_r5_cv": lost_c,
            }  # fmt: skip
    print("\nall questions, fixed settings (lift over naive R@2 / R@5 per set), best 15 by pooled mean:")  # noqa: T201
    ranked = sorted(range(len(settings)), key=lambda v: -np.mean([s["runs"][v].mean() - s["naive"].mean()
                                                                  for s in sets.values()]))  # fmt: skip
    for v in [default, *ranked[:15]]:
        lifts = " | ".join(fmt(s["runs"][v], s["naive"]) for s in sets.values())
        print(f"{settings[v]} | {lifts}")  # noqa: T201
    print("\nall questions, every seed setting without a BM25 merge, and every merge without BM25 seeds:")  # noqa: T201
    for v in grids["seeds"] + grids["merges"][1:]:
        lifts = " | ".join(fmt(s["runs"][v], s["naive"]) for s in sets.values())
        print(f"{settings[v]} | {lifts}")  # noqa: T201
    for pair, s in sets.items():
        print(f"{pair}: naive {100 * s['naive'].mean(axis=0)}, BM25 alone {100 * s['bm25'].mean(axis=0)}")  # noqa: T201
    if args.json:
        report["runs"] = {p: [r.tolist() for r in s["runs"]] for p, s in sets.items()}
        report["settings"] = [repr(x) for x in settings]
        args.json.write_text(json.dumps(report, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
