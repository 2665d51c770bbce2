"""A redundancy penalty in the pair step (maximal marginal relevance), cross-validated as ``cv_pair.py`` does.

    nice -n 10 .venv/bin/python benchmarks/cv_pair_mmr.py --cache-dir DIR --keep-first-only \
        --report-sets musique100:given+offline_links --embed-cache given=ME --embed-cache offline=OFF

Harness only: the package's pair score is unchanged. For this run the score of a pair ``(a, b)`` is

    pair_score(a, b)  −  redundancy · cos(a, b)                          (--thresholds 0, the default)
    pair_score(a, b)  −  redundancy · max(0, cos(a, b) − τ) / (1 − τ)     (a threshold 0 < τ < 1: near-duplicates only)

with ``cos`` the cosine of the two passages' vectors (the MiniLM vectors the store holds, read by primary key
through the store's ``fetch``). ``redundancy = 0`` is ``pair_score`` exactly; a pair of identical passages
loses ``redundancy`` rank positions whatever ``τ``. The grid is every ``redundancy`` (0 first, so a tie
goes to the settings without the term) × threshold × ``cv_pair.py``'s pair grid; the
folds, the objective and the scoring are ``cv_pair.py``'s (question i in fold i mod 5; one setting chosen on
four folds of the fitted sets pooled by mean R@2 + R@5 lift over naive, scored on the fifth; ``--report-sets``
scored with the folds' choices, not fitted).
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))

import cv_pair  # noqa: E402
import cv_ranking as cv  # noqa: E402
from cv_pair import held_out, lift, lost  # noqa: E402

import langchain_graphrag_milvus.retrieval.pair_order as po  # noqa: E402
from langchain_graphrag_milvus.retrieval.pair_order import PairParams  # noqa: E402

#: The redundancy weights searched (rank positions a pair of identical passages loses).
REDUNDANCIES = (0.0, 0.5, 1.0, 2.0, 3.0, 4.0, 6.0)

Scorer = Callable[..., float]  # pair_score's signature: (ranks, entities, query, params, dense=(0.0, 0.0))


class Vectored(dict[int, int]):
    """A passage's entity counts, as the pair step reads them, carrying the passage's vector."""

    def __init__(self, counts: Mapping[int, int], vector: np.ndarray) -> None:
        super().__init__(counts)
        self.vector = vector


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    """The cosine similarity of two vectors (0 if either is zero)."""
    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    return float(np.dot(a, b)) / (na * nb) if na and nb else 0.0


def redundancy(cos: float, threshold: float = 0.0) -> float:
    """The penalty's factor: ``cos`` (threshold 0), else the part of ``cos`` over ``threshold``, scaled to 1 at 1."""
    if not threshold:
        return cos
    return max(0.0, cos - threshold) / (1.0 - threshold)


def redundancy_scorer(base: Scorer, weight: float, threshold: float = 0.0) -> Scorer:
    """``base`` minus ``weight`` times :func:`redundancy` of the two passages' cosine (their ``Vectored.vector``)."""

    def score(
        ranks: tuple[int, int],
        entities: tuple[Mapping[int, int], Mapping[int, int]],
        query: set[int],
        p: PairParams,
        dense: tuple[float, float] = (0.0, 0.0),
    ) -> float:
        s = base(ranks, entities, query, p, dense)
        if weight:  # 0: the base score exactly
            a, b = entities
            assert isinstance(a, Vectored) and isinstance(b, Vectored)
            s -= weight * redundancy(cosine(a.vector, b.vector), threshold)
        return s

    return score


@contextmanager
def scored_by(weight: float, threshold: float = 0.0) -> Iterator[None]:
    """``pair_order`` scores pairs with the redundancy penalty inside the block; restored after."""
    original = po.pair_score
    po.pair_score = redundancy_scorer(original, weight, threshold)  # type: ignore[assignment]
    try:
        yield
    finally:
        po.pair_score = original


def passage_vectors(pair: str, cache: Path, embed_cache: Path, ids: Sequence[str]) -> dict[str, np.ndarray]:
    """The stored vectors of ``ids`` in this set's store (the store's ``fetch`` by primary key)."""
    dataset, source = pair.split(":")
    store = cv.open_store(dataset, source, cache, embed_cache)
    try:
        rows = store.fetch("passages", sorted(set(ids)), ("vector",))
    finally:
        store.close()
    missing = set(ids) - set(rows)
    assert not missing, f"{len(missing)} passages without a stored vector, e.g. {sorted(missing)[:3]}"
    return {pk: np.asarray(row["vector"], np.float32) for pk, row in rows.items()}


def load(pair: str, cache: Path, embed: dict[str, str]) -> dict[str, Any]:
    """``cv_pair.py``'s inputs of one set (cached as it caches them), each window passage's counts ``Vectored``."""
    base = pair.split(":")[1].partition("+")[0]
    embed_cache = Path(embed.get(base, cache))
    cached = cache / f"pair_inputs_{pair.replace(':', '_')}.pkl"
    if cached.exists():
        data: dict[str, Any] = pickle.loads(cached.read_bytes())
    else:
        data = cv_pair.walk_inputs(pair, cache, embed_cache)
        cached.write_bytes(pickle.dumps(data))
    vec_path = cache / f"pair_vectors_{pair.replace(':', '_')}.pkl"
    wanted = [ids[i] for order, _, _, ents_of, ids in data["rows"] for i in range(min(len(order), len(ents_of)))]
    if vec_path.exists():
        vectors: dict[str, np.ndarray] = pickle.loads(vec_path.read_bytes())
    else:
        vectors = passage_vectors(pair, cache, embed_cache, wanted)
        vec_path.write_bytes(pickle.dumps(vectors))
    rows = []
    for order, dense, ents, ents_of, ids in data["rows"]:
        id_of = dict(zip(order, ids))
        rows.append((order, dense, ents, {g: Vectored(c, vectors[id_of[g]]) for g, c in ents_of.items()}, ids))
    data["rows"] = rows
    data["naive"] = cv.recalls(data["questions"], [row[1][: max(cv.KS)] for row in rows])
    return data


def grid(
    anchors: tuple[bool, ...], windows: tuple[int, ...], redundancies: Sequence[float], thresholds: Sequence[float]
) -> list[Any]:
    """None (no pair step), then every (pair setting, redundancy, threshold): redundancy 0 first, in cv_pair's order."""
    pairs = [g for g in cv_pair.pair_grid(anchors, windows) if g is not None]
    out: list[Any] = [None] + [(g, 0.0, 0.0) for g in pairs]
    return out + [(g, r, t) for t in thresholds for r in redundancies if r for g in pairs]


def run_all(data: dict[str, Any], settings: Sequence[Any]) -> list[np.ndarray]:
    """Per setting, per-question R@2, R@5 (``cv_pair.run`` under the redundancy's scorer)."""
    memo: dict[tuple[int, ...], list[str]] = {}  # the final ranking depends on the first two passages only
    out = []
    for s in settings:
        if s is None:
            out.append(cv_pair.run(data, None, memo))
            continue
        with scored_by(s[1], s[2]):
            out.append(cv_pair.run(data, s[0], memo))
    return out


def label(s: Any) -> str:
    """A setting, short."""
    if s is None:
        return "walk only"
    p, r, t = s
    return f"window={p.window}, bridge={p.bridge:g}, cover={p.cover:g}, {p.bridge_mode}, redundancy={r:g}, τ={t:g}"


def gold_cosines(data: dict[str, Any], window: int = 4) -> tuple[list[float], list[float]]:
    """Where the walk's first passage is gold: its cosine with the others of the first ``window``, gold / not."""
    gold: list[float] = []
    other: list[float] = []
    for q, (order, _, _, ents_of, ids) in zip(data["questions"], data["rows"]):
        wanted = set(q.gold_passage_ids)
        if not order or ids[0] not in wanted:
            continue
        for g, pid in zip(order[1:window], ids[1:window]):
            (gold if pid in wanted else other).append(cosine(ents_of[order[0]].vector, ents_of[g].vector))
    return gold, other


def main(argv: list[str] | None = None) -> int:
    """Run the grid on every set, cross-validate with and without the term, print the tables."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cv_pair.common_args(ap)
    ap.add_argument("--redundancies", nargs="*", type=float, default=list(REDUNDANCIES))
    ap.add_argument("--thresholds", nargs="*", type=float, default=[0.0], help="0: plain cos; τ: cos over τ")
    args = ap.parse_args(argv)
    assert args.redundancies[0] == 0.0, "redundancy 0 first: the baseline grid is the prefix"
    embed = dict(s.split("=", 1) for s in args.embed_cache)
    anchors = (True,) if args.keep_first_only else (True, False)
    settings = grid(anchors, tuple(args.windows), args.redundancies, args.thresholds)
    sets: dict[str, dict[str, Any]] = {}
    for pair in args.sets + args.report_sets:
        sets[pair] = data = load(pair, args.cache_dir, embed)
        data["runs"] = run_all(data, settings)
    k = args.folds
    fitted = [name for name in sets if name not in args.report_sets]
    terms = [(0.0, 0.0)] + [(r, t) for t in args.thresholds for r in args.redundancies if r]
    by_r = {rt: [0] + [v for v, s in enumerate(settings) if s is not None and s[1:] == rt] for rt in terms}
    base = cv_pair.choose(sets, by_r[0.0, 0.0], fitted, k)
    chosen = cv_pair.choose(sets, range(len(settings)), fitted, k)
    fixed = settings.index((PairParams(), 0.0, 0.0))
    print("baseline (redundancy 0) folds chose:", [label(settings[c]) for c in base])  # noqa: T201
    print("with redundancy, folds chose:", [label(settings[c]) for c in chosen])  # noqa: T201
    report: dict[str, Any] = {"base_choices": [label(settings[c]) for c in base],
                              "choices": [label(settings[c]) for c in chosen], "sets": {}}  # fmt: skip
    columns = ("CV, baseline grid", "CV, with redundancy", "baseline − naive", "with redundancy − naive")
    held = cv_pair.versus(sets, base, chosen, k, columns)
    for pair, (a, b) in held.items():
        s = sets[pair]
        report["sets"][pair] = {"naive": s["naive"].tolist(), "baseline": a.tolist(), "redundancy": b.tolist()}
    for pair, (a, b) in held.items():
        s = sets[pair]
        line = cv_pair.question_cells(s, a, b, "")
        print(f"per question (held out, with redundancy vs baseline), {pair}: " + line)  # noqa: T201
        for name, runs in (("baseline", a), ("with redundancy", b)):
            r5 = lost(s, runs, 1)
            print(f"losses vs naive, {pair}, {name} (held out): R@2 {len(lost(s, runs, 0))}, "  # noqa: T201
                  f"R@5 {len(r5)} {r5}")  # fmt: skip
    # each redundancy on its own: the pair grid cross-validated with the term fixed; and on all questions
    print("\n| redundancy, τ | folds chose (window/bridge/cover) | " + " | ".join(  # noqa: T201
        f"{p} held out" for p in sets) + " | " + " | ".join(f"{p} default pair" for p in sets) + " |")  # fmt: skip
    print("|---" * (2 + 2 * len(sets)) + "|")  # noqa: T201
    for (r, t), cands in by_r.items():
        ch = cv_pair.choose(sets, cands, fitted, k)
        short = "{0.window}/{0.bridge:g}/{0.cover:g}".format
        picks = ", ".join("none" if settings[c] is None else short(settings[c][0]) for c in ch)
        d = settings.index((PairParams(), r, t))
        cells = [lift(s, held_out(s, ch, k)) for s in sets.values()] + [lift(s, s["runs"][d]) for s in sets.values()]
        print(f"| {r:g}, {t:g} | {picks} | " + " | ".join(cells) + " |")  # noqa: T201
    for pair, s in sets.items():
        g, o = gold_cosines(s)
        print(f"{pair}, the walk's first passage gold: its cosine with the gold at ranks 2-4, mean "  # noqa: T201
              f"{np.mean(g):.3f} (n={len(g)}); with the others, {np.mean(o):.3f} (n={len(o)})")  # fmt: skip
    objective = cv_pair.objectives(sets, fitted, len(settings))
    cv_pair.print_all_data(sets, [label(g) for g in settings], objective, fixed)
    if args.json:
        args.json.write_text(json.dumps(report, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
