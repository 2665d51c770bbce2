"""An IDF-weighted bridge in the pair step, cross-validated as ``cv_pair.py`` does.

    nice -n 10 .venv/bin/python benchmarks/cv_pair_idf.py --cache-dir DIR --keep-first-only \
        --report-sets musique100:given+offline_links --embed-cache given=ME --embed-cache offline=OFF

Harness only: the package's pair score is unchanged. For this run two bridge modes are added to ``PairParams``'
``"shared"`` and ``"main"``; the bridge term of a pair ``(a, b)`` becomes

    "idf":       bridge · max over shared entities e the query does not name of w(e)
    "idf_main":  bridge · max(1 if one of them is a main entity of a or b, max over them of w(e))

with ``w(e) = log(N / df(e)) / log(N)`` (in [0, 1]; 1 for an entity of one passage, 0 for one in all), ``df(e)``
the number of the graph's passages whose relations hold ``e`` (``GraphIndex.entity_passage_counts``) and ``N`` the
graph's passages. The rest of the score (cover, ranks) is ``pair_score``'s. The grid is ``cv_pair.py``'s pair grid
(the existing modes first, so a tie goes to them), then ``"idf"``, then ``"idf_main"``, each × window × bridge ×
cover; the folds, the objective and the scoring are ``cv_pair.py``'s (question i in fold i mod 5; one setting
chosen on four folds of the fitted sets pooled by mean R@2 + R@5 lift over naive, scored on the fifth;
``--report-sets`` scored with the folds' choices, not fitted).
"""

from __future__ import annotations

import argparse
import json
import math
import pickle
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))

import cv_pair  # noqa: E402
import cv_ranking as cv  # noqa: E402
from cv_pair import COVERS, held_out, lift  # noqa: E402

import langchain_graphrag_milvus.retrieval.pair_order as po  # noqa: E402
from langchain_graphrag_milvus.retrieval.pair_order import PairParams, main_entities  # noqa: E402

#: The bridge modes this harness adds (the package knows ``"shared"`` and ``"main"``).
IDF_MODES = ("idf", "idf_main")
BRIDGES = (0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 10.0)

Scorer = Callable[..., float]  # pair_score's signature: (ranks, entities, query, params, dense=(0.0, 0.0))


def idf_weights(df: Mapping[int, int], n: int) -> dict[int, float]:
    """``w(e) = log(n / df(e)) / log(n)``, clipped to [0, 1] (all 0 for a graph of one passage)."""
    if n <= 1:
        return {e: 0.0 for e in df}
    top = math.log(n)
    return {e: min(1.0, max(0.0, math.log(n / max(d, 1)) / top)) for e, d in df.items()}


def bridge_weight(
    entities: tuple[Mapping[int, int], Mapping[int, int]], query: set[int], weight: Mapping[int, float], mode: str
) -> float:
    """The bridge indicator's replacement: the largest ``weight`` of a shared non-query entity (0: none).

    ``mode="idf_main"``: 1 if a shared non-query entity is a main entity of one of the two (``"main"``'s test).
    """
    ca, cb = entities
    shared = (set(ca) & set(cb)) - query
    if not shared:
        return 0.0
    if mode == "idf_main" and shared & (main_entities(ca) | main_entities(cb)):
        return 1.0
    assert mode in IDF_MODES, mode
    return max(weight[e] for e in shared)


def idf_scorer(base: Scorer, weight: Mapping[int, float]) -> Scorer:
    """``base`` for the package's modes; for ``IDF_MODES`` its score without the bridge plus ``bridge`` × the weight."""

    def score(
        ranks: tuple[int, int],
        entities: tuple[Mapping[int, int], Mapping[int, int]],
        query: set[int],
        p: PairParams,
        dense: tuple[float, float] = (0.0, 0.0),
    ) -> float:
        if p.bridge_mode not in IDF_MODES:
            return base(ranks, entities, query, p, dense)
        rest = base(ranks, entities, query, replace(p, bridge=0.0, bridge_mode="shared"), dense)
        return rest + p.bridge * bridge_weight(entities, query, weight, p.bridge_mode)

    return score


@contextmanager
def scored_by(weight: Mapping[int, float]) -> Iterator[None]:
    """``pair_order`` scores pairs with :func:`idf_scorer` inside the block; restored after."""
    original = po.pair_score
    po.pair_score = idf_scorer(original, weight)  # type: ignore[assignment]
    try:
        yield
    finally:
        po.pair_score = original


def grid(anchors: tuple[bool, ...], windows: tuple[int, ...], modes: Sequence[str]) -> list[PairParams | None]:
    """``cv_pair.pair_grid`` (None first), then per added mode every window × bridge × cover (bridge 0 is there)."""
    out = cv_pair.pair_grid(anchors, windows)
    for mode in modes:
        for first in anchors:
            for m in windows:
                out += [PairParams(m, b, c, mode, first) for b in BRIDGES for c in COVERS]
    return out


def document_frequencies(pair: str, cache: Path, embed_cache: Path, data: dict[str, Any]) -> dict[str, Any]:
    """``N`` and ``df`` of every entity of the window passages, read from the set's graph (checked against the rows)."""
    dataset, source = pair.split(":")
    store = cv.open_store(dataset, source, cache, embed_cache)
    try:
        graph = store.graph
        ents = sorted({e for row in data["rows"] for c in row[3].values() for e in c})
        counts = graph.entity_passage_counts(np.asarray(ents, np.int64))
        for row in data["rows"]:  # the cached rows' entity indices are this graph's
            for g, c in row[3].items():
                e, n = graph.passage_entities(g)
                assert dict(zip(e.tolist(), n.tolist())) == c, (pair, g)
        return {"n": int(graph.n_passages), "df": dict(zip(ents, (int(x) for x in counts)))}
    finally:
        store.close()


def load(pair: str, cache: Path, embed: dict[str, str]) -> dict[str, Any]:
    """``cv_pair.py``'s inputs of one set (cached as it caches them), its naive recalls and the entities' weights."""
    embed_cache = Path(embed.get(pair.split(":")[1].partition("+")[0], cache))
    cached = cache / f"pair_inputs_{pair.replace(':', '_')}.pkl"
    if cached.exists():
        data: dict[str, Any] = pickle.loads(cached.read_bytes())
    else:
        data = cv_pair.walk_inputs(pair, cache, embed_cache)
        cached.write_bytes(pickle.dumps(data))
    df_path = cache / f"pair_df_{pair.replace(':', '_')}.pkl"
    if df_path.exists():
        freq: dict[str, Any] = pickle.loads(df_path.read_bytes())
    else:
        freq = document_frequencies(pair, cache, embed_cache, data)
        df_path.write_bytes(pickle.dumps(freq))
    data["n_passages"], data["df"] = freq["n"], freq["df"]
    data["weight"] = idf_weights(freq["df"], freq["n"])
    data["naive"] = cv.recalls(data["questions"], [row[1][: max(cv.KS)] for row in data["rows"]])
    return data


def run_all(data: dict[str, Any], settings: Sequence[PairParams | None]) -> list[np.ndarray]:
    """Per setting, per-question R@2, R@5 (``cv_pair.run`` under this set's IDF scorer)."""
    memo: dict[tuple[int, ...], list[str]] = {}  # the final ranking depends on the first two passages only
    with scored_by(data["weight"]):
        return [cv_pair.run(data, s, memo) for s in settings]


def gold_weights(data: dict[str, Any], window: int = 4) -> tuple[list[tuple[float, bool]], list[tuple[float, bool]]]:
    """Where the walk's first passage is gold, for the gold / other passages at ranks 2-4: the best shared
    non-query weight, and whether ``"main"``'s bridge test holds."""
    gold: list[tuple[float, bool]] = []
    other: list[tuple[float, bool]] = []
    for q, (order, _, ents, ents_of, ids) in zip(data["questions"], data["rows"]):
        wanted = set(q.gold_passage_ids)
        if not order or not ents or ids[0] not in wanted:
            continue
        for g, pid in zip(order[1:window], ids[1:window]):
            pair = (ents_of[order[0]], ents_of[g])
            w = bridge_weight(pair, set(ents), data["weight"], "idf")
            main = bridge_weight(pair, set(ents), {e: 0.0 for e in data["weight"]}, "idf_main") == 1.0
            (gold if pid in wanted else other).append((w, main))
    return gold, other


def short(g: PairParams | None) -> str:
    """window/bridge/cover of a setting ("none": the walk alone)."""
    return "none" if g is None else f"{g.window}/{g.bridge:g}/{g.cover:g}"


def summary(rows: Sequence[tuple[float, bool]]) -> str:
    """Mean weight, how many share no non-query entity, the mean of those that share one, how many pass "main"."""
    ws = [w for w, _ in rows]
    some = [w for w in ws if w > 0]
    mains = sum(m for _, m in rows)
    return (f"mean {np.mean(ws):.3f} (n={len(ws)}), none shared {len(ws) - len(some)}, "
            f"mean where shared {np.mean(some) if some else 0.0:.3f}, main bridge {mains}")  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    """Run the grid on every set, cross-validate with and without the IDF modes, print the tables."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cv_pair.common_args(ap)
    ap.add_argument("--modes", nargs="*", default=list(IDF_MODES), choices=IDF_MODES)
    args = ap.parse_args(argv)
    embed = dict(s.split("=", 1) for s in args.embed_cache)
    anchors = (True,) if args.keep_first_only else (True, False)
    settings = grid(anchors, tuple(args.windows), args.modes)
    sets: dict[str, dict[str, Any]] = {}
    for pair in args.sets + args.report_sets:
        sets[pair] = data = load(pair, args.cache_dir, embed)
        data["runs"] = run_all(data, settings)
    k = args.folds
    fitted = [name for name in sets if name not in args.report_sets]
    n_base = len(cv_pair.pair_grid(anchors, tuple(args.windows)))  # the baseline grid: the prefix
    chosen = cv_pair.choose(sets, range(len(settings)), fitted, k)
    print(f"{len(settings)} settings ({n_base} the baseline's)")  # noqa: T201
    print("with the IDF modes, folds chose:", [repr(settings[c]) for c in chosen])  # noqa: T201
    base = cv_pair.compare_base(sets, settings, cv_pair.choose(sets, range(n_base), fitted, k), chosen, k)
    cv_pair.print_losses(sets, settings, chosen, k)
    report: dict[str, Any] = {"base_choices": base, "choices": [repr(settings[c]) for c in chosen], "sets": {}}
    for pair, s in sets.items():
        report["sets"][pair] = {"naive": s["naive"].tolist(), "chosen": held_out(s, chosen, k).tolist()}
    objective = cv_pair.objectives(sets, fitted, len(settings))
    # each bridge mode on its own: the grid of window × bridge × cover cross-validated with the mode fixed
    print("\n| bridge mode | folds chose (window/bridge/cover) | " + " | ".join(  # noqa: T201
        f"{p} held out" for p in sets) + " | " + " | ".join(f"{p} 4/2.5/3" for p in sets) +
        " | best on all questions (objective) |")  # fmt: skip
    print("|---" * (3 + 2 * len(sets)) + "|")  # noqa: T201
    for mode in ("shared", "main", *args.modes):
        cands = [0] + [v for v, g in enumerate(settings) if g is not None and (g.bridge_mode == mode or not g.bridge)]
        ch = cv_pair.choose(sets, cands, fitted, k)
        picks = ", ".join(short(settings[c]) for c in ch)
        d = settings.index(replace(PairParams(), bridge_mode=mode))
        cells = [lift(s, held_out(s, ch, k)) for s in sets.values()] + [lift(s, s["runs"][d]) for s in sets.values()]
        bridged = [v for v, g in enumerate(settings) if g is not None and g.bridge and g.bridge_mode == mode]
        top = max(bridged, key=objective.__getitem__)  # the earliest of the best
        best = f"{short(settings[top])} {100 * objective[top]:.3f}: " + ", ".join(
            lift(s, s["runs"][top]) for s in sets.values()
        )
        print(f"| {mode} | {picks} | " + " | ".join(cells) + f" | {best} |")  # noqa: T201
    for pair, s in sets.items():
        g, o = gold_weights(s)
        print(f"{pair} (N={s['n_passages']}), the walk's first passage gold, its best shared non-query w with the "  # noqa: T201
              f"passages at ranks 2-4: gold {summary(g)}; others {summary(o)}")  # fmt: skip
    cv_pair.print_all_data(sets, [repr(g) for g in settings], objective, settings.index(PairParams()))
    if args.json:
        args.json.write_text(json.dumps(report, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
