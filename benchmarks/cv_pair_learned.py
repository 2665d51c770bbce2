"""A learned second place for the pair step (a conditional logit over pair features), cross-validated.

    nice -n 10 .venv/bin/python benchmarks/cv_pair_learned.py --cache-dir DIR \
        --report-sets musique100:given+offline_links --embed-cache given=ME --embed-cache offline=OFF

The fit behind the retriever's pair step (``pair_order.DEFAULT_PAIR``: the model on all questions, in rank
positions; this script checks the package's copy of the weights). The walk's first passage stays first
(``keep_first``, the default); the second place goes to the candidate ``j`` (ranks 1 … window−1 of the walk's order)
that maximises ``w · x_j``, a linear score of the features below, with ``w`` fitted by an L2-regularised conditional
logit (softmax over a question's candidates; the likelihood of the gold ones). A question without an entity seed
keeps the walk's order, as the pair step does. The ranking is then finished exactly as ``cv_pair.py`` does (the
merge with the dense order, ``keep_dense``).

Features of candidate ``j`` paired with the first passage ``a`` (:data:`FEATURES`; the default set,
:data:`CHOSEN`, is what the retriever reads at query time): rank ``j``; the dense score ``cos(q, j)`` (a
candidate outside the dense top ``--dense-depth`` gets the last score of that top); a main and a shared bridge
(``pair_order.pair_score``'s tests); the cover of the query's entities by ``a`` or ``j``, and by ``j`` beyond
``a``; how many query entities ``j`` is about. Measured and not in the default set: ``log2(1 + dense rank)``,
``cos(a, j)`` of the stored vectors, ``log(1 +`` shared non-query entities``)``, the pair's "about". The grid's
pair score is one linear function of these, so the model can express it.

Protocol: folds as ``cv_pair.py`` (``--seeds 0``: question i in fold i mod 5; another seed: a seeded shuffle
first), the fitted sets pooled. Per outer fold, ``cv_pair.py``'s grid is chosen on the four training folds as it
chooses it, and the learned model's window and L2 weight by an inner cross-validation over the same four folds
(mean R@2 + R@5 on the inner held-out questions); the model is fitted on the four folds and both are scored on
the fifth. Last, the window and L2 weight are chosen over all questions, the model fitted on all of them and
printed in rank positions (the package's ``DEFAULT_PAIR``), and ``DEFAULT_PAIR`` run through the package's own
``pair_order`` on all questions (its lifts equal the fitted model's when the weights are copied right).
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scipy.optimize import minimize

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))

import cv_pair  # noqa: E402
import cv_pair_mmr  # noqa: E402
import cv_ranking as cv  # noqa: E402

from langchain_graphrag_milvus.retrieval.pair_order import (  # noqa: E402
    DEFAULT_PAIR,
    PairParams,
    dense_bonus,
    main_entities,
    pair_order,
)

FEATURES = (
    "rank",
    "cos(q, j)",
    "log2(1 + dense rank)",
    "main bridge",
    "shared bridge",
    "cover",
    "new cover",
    "about",
    "cos(a, j)",
    "log(1 + shared)",
    "about (pair)",
)
#: The features the retriever's model reads (``DEFAULT_PAIR``).
CHOSEN = ("rank", "cos(q, j)", "main bridge", "shared bridge", "cover", "new cover", "about")


@dataclass(frozen=True)
class Config:
    """What one run fits: the feature columns (indices into FEATURES), the dense depth, the windows, the L2 weights."""

    used: tuple[int, ...] = tuple(FEATURES.index(f) for f in CHOSEN)
    depth: int = 5
    windows: tuple[int, ...] = (4, 5)
    l2s: tuple[float, ...] = (0.1, 1.0, 10.0, 100.0)


def folds(n: int, k: int, seed: int) -> list[np.ndarray]:
    """Question i in fold i mod k (seed 0, ``cv_pair.py``'s folds), else in fold perm[i] mod k (a seeded shuffle)."""
    if not seed:
        return cv_pair.folds_mod(n, k)
    perm = np.random.default_rng(seed).permutation(n)
    return [np.sort(perm[i::k]) for i in range(k)]


def grid_recalls(s: dict[str, Any], params: PairParams | None) -> np.ndarray:
    """Per-question recalls of one pair setting (None: the walk's order): the package's ``pair_order`` picks the
    second place, read from the table of recalls per second place."""
    out = np.zeros_like(s["naive"])
    for i, (order, _, ents, ents_of, _) in enumerate(s["rows"]):
        j = 0
        if s["feats"][i] is not None and params is not None:
            j = order.index(pair_order(order, ents_of.__getitem__, ents, params)[1]) - 1
        out[i] = s["recall"][i][j]
    return out


def candidate_features(row: tuple[Any, ...], score_of: dict[str, float], depth: int) -> np.ndarray:
    """Features of the walk's ranks 1 … 7 as the second passage of a pair with rank 0 (rows × FEATURES).

    ``depth``: how deep the dense list is read (0: all of it); beyond it, a candidate gets the last score read
    and the rank ``depth`` (what a retriever that searched only that deep would know).
    """
    order, dense, ents, ents_of, ids = row
    query = set(ents)
    depth = depth or len(dense)
    dense_rank = {pid: r for r, pid in enumerate(dense[:depth])}
    floor = score_of.get(dense[min(depth, len(dense)) - 1], 0.0) if dense else 0.0
    score_of = {pid: score_of[pid] for pid in dense_rank if pid in score_of}
    a = ents_of[order[0]]
    ea, ma = set(a), main_entities(a)
    out = []
    for j in range(1, min(len(order), len(ents_of))):
        b = ents_of[order[j]]
        eb, mb = set(b), main_entities(b)
        shared = (ea & eb) - query
        out.append(
            [  # noqa: PERF401
                j,
                score_of.get(ids[j], floor),
                np.log2(2 + dense_rank.get(ids[j], depth)),
                float(bool(shared & (ma | mb))),
                float(bool(shared)),
                len(query & (ea | eb)) / len(query),
                len((query & eb) - ea) / len(query),
                len(query & mb),
                cv_pair_mmr.cosine(a.vector, b.vector),
                np.log1p(len(shared)),
                len(query & (ma | mb)),
            ]
        )
    return np.asarray(out, np.float64).reshape(-1, len(FEATURES))


def prepare(pair: str, cache: Path, embed: dict[str, str], depth: int) -> dict[str, Any]:
    """One set's questions, naive recalls, per-question candidate features and per-choice recalls."""
    data = cv_pair_mmr.load(pair, cache, embed)
    dataset, source = pair.split(":")
    probe_path = cache / f"cv_probe_cv_{dataset.removesuffix('100')}_{source.replace('+', '_')}.pkl"
    probes = pickle.loads(probe_path.read_bytes())
    variant = cv.default_variant()
    feats, recall, package = [], [], []
    for row, pr in zip(data["rows"], probes):
        order, dense, ents, _, ids = row
        usable = bool(ents) and len(order) >= 3
        feats.append(candidate_features(row, dict(zip(pr.passage_ids, pr.passage_scores)), depth) if usable else None)
        passages = cv_pair._Passages(dict(zip(order, ids)))
        outs = []
        for j in range(1, 8 if usable else 2):
            moved = list(order)  # a rank past the walk's order: the order as it is (never chosen)
            if j < len(order):
                moved = [order[0], order[j], *(p for p in order if p not in (order[0], order[j]))]
            outs.append(cv.finish(passages, moved, dense, variant, linked=bool(ents)))
        recall.append(cv.recalls([data["questions"][len(recall)]] * len(outs), outs))
        # the package's DEFAULT_PAIR, through its own pair_order, the dense top as the retriever reads it
        above = dense_bonus(list(zip(pr.passage_ids, pr.passage_scores)), DEFAULT_PAIR.dense_depth)
        by_graph = {g: above.get(pid, 0.0) for g, pid in zip(order, ids)}
        mine = pair_order(order, row[3].__getitem__, ents, DEFAULT_PAIR, by_graph.__getitem__)
        package.append(cv.finish(passages, mine, dense, variant, linked=bool(ents)))
    gold = [
        None if f is None else np.array([ids[j] in set(q.gold_passage_ids) for j in range(1, 1 + len(f))])
        for f, q, (_, _, _, _, ids) in zip(feats, data["questions"], data["rows"])
    ]
    return {
        "questions": data["questions"],
        "rows": data["rows"],
        "naive": data["naive"],
        "feats": feats,
        "recall": recall,
        "gold": gold,
        "package": cv.recalls(data["questions"], package),
    }


Model = tuple[np.ndarray, np.ndarray, np.ndarray]  # weights, and the features' mean and scale


def fit(items: list[tuple[np.ndarray, np.ndarray]], l2: float, used: Sequence[int]) -> Model:
    """Weights of the conditional logit on standardised features (and the mean and scale used)."""
    items = [(x[:, list(used)], y) for x, y in items]
    allx = np.vstack([x for x, _ in items])
    mu, sd = allx.mean(axis=0), allx.std(axis=0) + 1e-9
    data = [((x - mu) / sd, y) for x, y in items if 0 < y.sum() < len(y)]

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        total, grad = 0.5 * l2 * float(w @ w), l2 * w
        for x, y in data:
            s = x @ w
            s = s - s.max()
            p = np.exp(s) / np.exp(s).sum()
            pg = p * y / (p * y).sum()
            total -= float(np.log((p * y).sum()))
            grad = grad - (pg - p) @ x
        return total, grad

    w = minimize(loss, np.zeros(len(used)), jac=True, method="L-BFGS-B").x
    return w, mu, sd


def predict(s: dict[str, Any], idx: np.ndarray, model: Model | None, window: int, used: Sequence[int]) -> np.ndarray:
    """Per-question recalls of questions ``idx`` with the second place the model's pick (None: the walk's)."""
    out = np.zeros((len(idx), 2))
    for n, i in enumerate(idx):
        f = s["feats"][i]
        j = 0
        if model is not None and f is not None:
            w, mu, sd = model
            scores = ((f[: window - 1, list(used)] - mu) / sd) @ w
            j = int(np.argmax(scores))
        out[n] = s["recall"][i][j]
    return out


def items_of(sets: dict[str, dict[str, Any]], names: list[str], masks: dict[str, np.ndarray], window: int) -> list:
    """(features, gold) of the training questions' first ``window − 1`` candidates."""
    out = []
    for name in names:
        s = sets[name]
        for i in np.flatnonzero(masks[name]):
            if s["feats"][i] is not None:
                out.append((s["feats"][i][: window - 1], s["gold"][i][: window - 1]))
    return out


def choose(
    sets: dict[str, dict[str, Any]], names: list[str], train: dict[str, np.ndarray], k: int, cfg: Config
) -> tuple[int, float]:
    """The (window, l2) with the best mean R@2 + R@5 in an inner CV over the ``train`` questions (tie: earlier)."""
    best: tuple[float, int, float] | None = None
    for window in cfg.windows:
        for l2 in cfg.l2s:
            scores = []
            for inner in range(k - 1):
                fit_mask, test_mask = {}, {}
                for name in names:
                    t = np.flatnonzero(train[name])
                    held = t[inner :: k - 1]
                    m = train[name].copy()
                    m[held] = False
                    fit_mask[name], test_mask[name] = m, np.isin(np.arange(len(m)), held)
                model = fit(items_of(sets, names, fit_mask, window), l2, cfg.used)
                tests = [predict(sets[n], np.flatnonzero(test_mask[n]), model, window, cfg.used) for n in names]
                scores.append(np.mean([t.mean() for t in tests]))
            score = float(np.mean(scores))
            if best is None or score > best[0] + 1e-9:
                best = (score, window, l2)
    assert best is not None
    return best[1], best[2]


def cross_validate(
    sets: dict[str, dict[str, Any]], names: list[str], k: int, seed: int, grid: list[PairParams | None], cfg: Config
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], list[dict[str, Any]]]:
    """Held-out recalls of the pair grid (``cv_pair.py``'s choice) and of the learned second place, same folds."""
    held = {pair: np.zeros_like(s["naive"]) for pair, s in sets.items()}
    base = {pair: np.zeros_like(s["naive"]) for pair, s in sets.items()}
    fold_of = {pair: folds(len(s["questions"]), k, seed) for pair, s in sets.items()}
    chosen = []
    for fold in range(k):
        train = {}
        for pair, s in sets.items():
            m = np.ones(len(s["questions"]), bool)
            m[fold_of[pair][fold]] = False
            train[pair] = m
        lifts = [np.mean([(sets[n]["grid"][v][train[n]] - sets[n]["naive"][train[n]]).mean() for n in names])
                 for v in range(len(grid))]  # fmt: skip
        v = int(np.argmax(np.asarray(lifts) - 1e-9 * np.arange(len(grid))))  # a tie: the earlier setting
        window, l2 = choose(sets, names, train, k, cfg)
        model = fit(items_of(sets, names, train, window), l2, cfg.used)
        chosen.append({"grid": repr(grid[v]), "window": window, "l2": l2, "w": model[0].tolist()})
        for pair, s in sets.items():
            idx = fold_of[pair][fold]
            held[pair][idx] = predict(s, idx, model, window, cfg.used)
            base[pair][idx] = s["grid"][v][idx]
    return base, held, chosen


def main(argv: list[str] | None = None) -> int:
    """Cross-validate the learned second place against the pair grid; print the tables."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cv_pair.common_args(ap)
    default = Config()
    ap.add_argument("--learned-windows", nargs="*", type=int, default=list(default.windows))
    ap.add_argument("--l2s", nargs="*", type=float, default=list(default.l2s))
    ap.add_argument("--features", nargs="*", default=list(CHOSEN), choices=FEATURES, help="the features used")
    ap.add_argument("--seeds", nargs="*", type=int, default=[0], help="fold assignments (0: i mod k)")
    ap.add_argument("--dense-depth", type=int, default=default.depth, help="dense list read (0: all)")
    args = ap.parse_args(argv)
    used = tuple(FEATURES.index(f) for f in args.features)
    cfg = Config(used, args.dense_depth, tuple(args.learned_windows), tuple(args.l2s))
    embed = dict(x.split("=", 1) for x in args.embed_cache)
    grid = cv_pair.pair_grid((True,), tuple(args.windows))
    sets = {pair: prepare(pair, args.cache_dir, embed, cfg.depth) for pair in args.sets + args.report_sets}
    for s in sets.values():
        s["grid"] = [grid_recalls(s, g) for g in grid]
    names = [n for n in sets if n not in args.report_sets]
    report: dict[str, Any] = {"features": [FEATURES[i] for i in used], "seeds": {}}
    summary = [report_seed(sets, names, args.folds, seed, grid, cfg, report) for seed in args.seeds]
    report["all"] = report_all(sets, names, args.folds, cfg)
    if len(args.seeds) > 1:
        print("\n| seed | " + " | ".join(f"{p} grid | {p} learned" for p in sets) + " |")  # noqa: T201
        print("|---" * (1 + 2 * len(sets)) + "|")  # noqa: T201
        mean = ["mean"] + [np.mean([r[1 + i] for r in summary], axis=0) for i in range(2 * len(sets))]
        for row in [*summary, mean]:
            print(f"| {row[0]} | " + " | ".join(f"{x[0]:+.1f} / {x[1]:+.1f}" for x in row[1:]) + " |")  # noqa: T201
    if args.json:
        args.json.write_text(json.dumps(report, indent=1), encoding="utf-8")
    return 0


def report_seed(
    sets: dict[str, dict[str, Any]],
    names: list[str],
    k: int,
    seed: int,
    grid: list[PairParams | None],
    cfg: Config,
    report: dict[str, Any],
) -> list[Any]:
    """One fold assignment: the folds' choices, the held-out table; the row of the seeds' summary."""
    base, held, chosen = cross_validate(sets, names, k, seed, grid, cfg)
    report["seeds"][seed] = {"folds": chosen}
    print(f"\nseed {seed}")  # noqa: T201
    for i, c in enumerate(chosen):
        w = ", ".join(f"{FEATURES[n]}={v:+.2f}" for n, v in zip(cfg.used, c["w"]))
        print(f"fold {i}: grid {c['grid']}; learned window {c['window']}, l2 {c['l2']:g}, w {w}")  # noqa: T201
    head = "| set | fold | n | naive R@2 / R@5 | pair grid, held out | learned, held out |"
    print(head + " grid − naive | learned − naive |")  # noqa: T201
    print("|---" * 8 + "|")  # noqa: T201
    row: list[Any] = [seed]
    for pair, s in sets.items():
        report["seeds"][seed][pair] = {"naive": s["naive"].tolist(), "grid": base[pair].tolist(),
                                       "learned": held[pair].tolist()}  # fmt: skip
        cv_pair._row(pair, "all", len(s["questions"]), *(100 * x.mean(axis=0) for x in (s["naive"], base[pair], held[pair])))  # fmt: skip  # noqa: E501
        print(f"per question, {pair}: " + cv_pair.question_cells(s, base[pair], held[pair], ""))  # noqa: T201
        row += [100 * (x[pair].mean(axis=0) - s["naive"].mean(axis=0)) for x in (base, held)]
    return row


def report_all(sets: dict[str, dict[str, Any]], names: list[str], k: int, cfg: Config) -> dict[str, Any]:
    """The model fitted on all questions (window and L2 by a k-fold CV over them), in rank positions."""
    everything = {pair: np.ones(len(s["questions"]), bool) for pair, s in sets.items()}
    window, l2 = choose(sets, names, everything, k + 1, cfg)  # choose() holds out 1 / (its k − 1): k folds
    w, mu, sd = fit(items_of(sets, names, everything, window), l2, cfg.used)
    print(f"\nall questions: window {window}, l2 {l2:g}; per feature (weight, mean, scale; per unit):")  # noqa: T201
    rank = w[list(cfg.used).index(0)] / sd[list(cfg.used).index(0)] if 0 in cfg.used else -1.0
    for n, *v in zip(cfg.used, w, mu, sd):
        print(f"  {FEATURES[n]}: " + ", ".join(f"{x:.6g}" for x in v)  # noqa: T201
              + f"; per unit {v[0] / v[2]:+.4f} ({v[0] / v[2] / -rank:+.2f} rank positions)")  # fmt: skip
    for pair, s in sets.items():
        fitted = predict(s, np.arange(len(s["questions"])), (w, mu, sd), window, cfg.used)
        lift = 100 * (fitted.mean(axis=0) - s["naive"].mean(axis=0))
        mine = 100 * (s["package"].mean(axis=0) - s["naive"].mean(axis=0))
        print(f"  on all questions (in-sample), {pair}: {lift[0]:+.1f} / {lift[1]:+.1f}; "  # noqa: T201
              f"the package's DEFAULT_PAIR {mine[0]:+.1f} / {mine[1]:+.1f}")  # fmt: skip
    return {"window": window, "l2": l2, "w": w.tolist(), "mean": mu.tolist(), "scale": sd.tolist()}


if __name__ == "__main__":
    raise SystemExit(main())
