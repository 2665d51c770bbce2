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
from collections.abc import Iterable, Sequence
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


def pair_grid(
    anchors: tuple[bool, ...] = (True, False),
    windows: tuple[int, ...] = (3, 4, 5),
    abouts: tuple[float, ...] = (),
    about_modes: tuple[str, ...] = ("count", "share"),
) -> list[PairParams | None]:
    """None (no pair step) and every pair setting, simplest first (a tie goes to the earlier one).

    ``anchors``: the ``keep_first`` values searched; ``windows``: the windows; ``abouts``: the non-zero
    ``about`` weights, each with every ``about_modes`` (all after the settings without the term, so a tie
    goes to a setting without it). The defaults give the grid of the README's pair-step table.
    """
    out: list[PairParams | None] = [None]
    terms = [(0.0, "count")] + [(a, mode) for mode in about_modes for a in abouts if a]
    for about, about_mode in terms:
        for first in anchors:
            for m in windows:

                def setting(bridge: float, cover: float, mode: str = "main") -> PairParams:
                    return PairParams(m, bridge, cover, mode, first, about, about_mode)  # noqa: B023

                out += [setting(0.0, cover) for cover in COVERS[int(not about) :]]  # about alone: with the term
                for mode in ("shared", "main"):
                    for bridge in (0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 10.0):
                        out += [setting(bridge, cover, mode) for cover in COVERS]
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


def run(data: dict[str, Any], setting: PairParams | None, memo: dict[tuple[int, ...], list[str]]) -> np.ndarray:
    """Per-question R@2, R@5 of the default ranking with this pair step (None: without).

    ``memo``: the final ranking of (question, first two passages) — the pair step's output is the walk's
    order with those two moved to the top, so they determine it.
    """
    variant = cv.default_variant()
    out = []
    for i, (order0, dense, ents, ents_of, ids) in enumerate(data["rows"]):
        order = order0
        if setting is not None:
            order = pair_order(order, ents_of.__getitem__, ents, setting)
        key = (i, *order[:2])
        if key not in memo:
            memo[key] = cv.finish(_Passages(dict(zip(order0, ids))), order, dense, variant, linked=bool(ents))
        out.append(memo[key])
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


def choose(sets: dict[str, dict[str, Any]], candidates: Iterable[int], fitted: Sequence[str], k: int) -> list[int]:
    """Per fold, the setting (grid index among ``candidates``) with the best mean lift over naive on the other folds.

    The lift is the mean of R@2 and R@5 over the training questions minus naive's, averaged over the
    ``fitted`` sets; a tie goes to the earlier candidate.
    """
    candidates = list(candidates)
    chosen = []
    for i in range(k):
        best: tuple[float, int] | None = None
        for v in candidates:
            train = []
            for name in fitted:
                s = sets[name]
                mask = np.ones(len(s["questions"]), bool)
                mask[folds_mod(len(s["questions"]), k)[i]] = False
                train.append(float(s["runs"][v][mask].mean() - s["naive"][mask].mean()))
            score = float(np.mean(train))
            if best is None or score > best[0] + 1e-9:
                best = (score, v)
        assert best is not None
        chosen.append(best[1])
    return chosen


def held_out(s: dict[str, Any], chosen: Sequence[int], k: int) -> np.ndarray:
    """Per-question recalls, each question ranked with the setting its fold's training folds chose."""
    held = np.zeros_like(s["naive"])
    for i, f in enumerate(folds_mod(len(s["questions"]), k)):
        held[f] = s["runs"][chosen[i]][f]
    return held


def lost(s: dict[str, Any], runs: np.ndarray, j: int) -> list[str]:
    """Ids of the questions where ``runs`` recall less than naive at ``cv.KS[j]``."""
    return [s["questions"][i].id for i in np.flatnonzero(runs[:, j] < s["naive"][:, j])]


def print_losses(sets: dict[str, dict[str, Any]], grid: list[PairParams | None], chosen: list[int], k: int) -> None:
    """Losses against naive (R@2 count; R@5 count and ids): walk only, CV-chosen (held out), pair default."""
    fixed = grid.index(PairParams()) if PairParams() in grid else 0
    for pair, s in sets.items():
        for label, runs in (("walk only", s["runs"][0]), ("CV pair", held_out(s, chosen, k)),
                            ("pair default", s["runs"][fixed])):  # fmt: skip
            r5 = lost(s, runs, 1)
            print(f"losses vs naive, {pair}, {label}: R@2 {len(lost(s, runs, 0))}, R@5 {len(r5)} {r5}")  # noqa: T201


def lift(s: dict[str, Any], runs: np.ndarray) -> str:
    """Pooled R@2 / R@5 lift over naive, in points."""
    d = 100 * (runs.mean(axis=0) - s["naive"].mean(axis=0))
    return f"{d[0]:+.1f} / {d[1]:+.1f}"


def objectives(sets: dict[str, dict[str, Any]], fitted: Sequence[str], n: int) -> list[float]:
    """Per setting (of ``n``), the mean R@2 + R@5 lift over naive on all questions of the ``fitted`` sets."""
    return [float(np.mean([s["runs"][v].mean() - s["naive"].mean() for name, s in sets.items() if name in fitted]))
            for v in range(n)]  # fmt: skip


def print_all_data(
    sets: dict[str, dict[str, Any]], labels: Sequence[str], objective: Sequence[float], fixed: int
) -> None:
    """The ten best settings on all questions and the pair default's objective (stderr)."""
    for v in sorted(range(len(labels)), key=lambda v: -objective[v])[:10]:
        lifts = " ".join(f"{p}={lift(s, s['runs'][v])}" for p, s in sets.items())
        print(f"all-data: {labels[v]} objective {100 * objective[v]:.3f} {lifts}", file=sys.stderr)  # noqa: T201
    print(f"all-data: pair default objective {100 * objective[fixed]:.3f}", file=sys.stderr)  # noqa: T201


def common_args(ap: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """The arguments every pair-step cross-validation takes (this script's and its experiments')."""
    ap.add_argument("--cache-dir", type=Path, required=True)
    ap.add_argument("--embed-cache", action="append", default=[], help="source=DIR (given=..., offline=...)")
    ap.add_argument("--sets", nargs="*", default=SETS)
    ap.add_argument("--report-sets", nargs="*", default=[], help="sets scored with the folds' choices, not fitted")
    ap.add_argument("--folds", type=int, default=5)
    ap.add_argument("--json", type=Path)
    ap.add_argument("--keep-first-only", action="store_true", help="search only keep_first=True settings")
    ap.add_argument("--windows", nargs="*", type=int, default=[3, 4, 5], help="the windows searched")
    return ap


def versus(
    sets: dict[str, dict[str, Any]], base: Sequence[int], chosen: Sequence[int], k: int, columns: tuple[str, ...]
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Print the held-out table of two choices (per fold and all; ``columns``: the 4 header cells after naive's).

    Returns each set's held-out recalls under ``base`` and under ``chosen``.
    """
    print("| set | fold | n | naive R@2 / R@5 | " + " | ".join(columns) + " |")  # noqa: T201
    print("|---" * 8 + "|")  # noqa: T201
    out = {}
    for pair, s in sets.items():
        a, b = out[pair] = held_out(s, base, k), held_out(s, chosen, k)
        for i, f in enumerate(folds_mod(len(s["questions"]), k)):
            _row(pair, str(i), len(f), *(100 * x[f].mean(axis=0) for x in (s["naive"], a, b)))
        _row(pair, "all", len(s["questions"]), *(100 * x.mean(axis=0) for x in (s["naive"], a, b)))
    return out


def question_cells(s: dict[str, Any], a: np.ndarray, b: np.ndarray, word: str) -> str:
    """Per cutoff, the questions ``b`` recalls more / less of than ``a`` ("R@2 {word}better n [ids], worse ...")."""
    cells = []
    for j, at in enumerate(cv.KS):
        wins = [s["questions"][i].id for i in np.flatnonzero(b[:, j] > a[:, j])]
        losses = [s["questions"][i].id for i in np.flatnonzero(b[:, j] < a[:, j])]
        cells.append(f"R@{at} {word}better {len(wins)} {wins}, worse {len(losses)} {losses}")
    return "; ".join(cells)


def compare_base(
    sets: dict[str, dict[str, Any]], grid: list[PairParams | None], base: list[int], chosen: list[int], k: int
) -> list[str]:
    """The extended grid's held-out recall against the README grid's (both cross-validated in this run)."""
    print("README grid's folds chose:", [repr(grid[c]) for c in base])  # noqa: T201
    columns = ("CV, README grid", "CV, extended grid", "README grid − naive", "extended − naive")
    for pair, (a, b) in versus(sets, base, chosen, k, columns).items():
        s = sets[pair]
        r5 = (lost(s, a, 1), lost(s, b, 1))
        print(f"per question, {pair}: " + question_cells(s, a, b, "extended "))  # noqa: T201
        print(f"R@5 losses vs naive, {pair}: README grid {len(r5[0])} {r5[0]}, extended {len(r5[1])} {r5[1]}")  # noqa: T201
    return [repr(grid[c]) for c in base]


def main(argv: list[str] | None = None) -> int:
    """Run every setting on every set, cross-validate, print the tables."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    common_args(ap)
    ap.add_argument("--abouts", nargs="*", type=float, default=[], help="non-zero about weights searched (0: off)")
    ap.add_argument("--about-modes", nargs="*", default=["count", "share"], choices=["count", "share"])
    args = ap.parse_args(argv)
    embed = dict(s.split("=", 1) for s in args.embed_cache)
    anchors = (True,) if args.keep_first_only else (True, False)
    grid = pair_grid(anchors, tuple(args.windows), tuple(args.abouts), tuple(args.about_modes))
    position = {g: v for v, g in enumerate(grid)}
    base_grid = [position[g] for g in pair_grid(anchors)]  # the README table's grid: a subset, in the same order
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
        memo: dict[tuple[int, ...], list[str]] = {}
        data["runs"] = [run(data, g, memo) for g in grid]
        sets[pair] = data
    k = args.folds
    fitted_names = [name for name in sets if name not in args.report_sets]
    chosen = choose(sets, range(len(grid)), fitted_names, k)
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
    print_losses(sets, grid, chosen, k)
    if len(base_grid) < len(grid):
        report["base_choices"] = compare_base(sets, grid, choose(sets, base_grid, fitted_names, k), chosen, k)
    if args.json:
        args.json.write_text(json.dumps(report, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
