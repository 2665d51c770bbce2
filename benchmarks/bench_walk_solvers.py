"""Cheaper walks for a Lite graph query, replayed on the walks real queries make (issue 25).

    PYTHONPATH=. nice -n 10 .venv/bin/python benchmarks/bench_walk_solvers.py \\
        --store COPY.db:PREFIX:../shared/data/musique100/questions_dev.jsonl [--store ...]

Each ``--store`` is a Lite database (a *copy*), its collection prefix and the questions to ask.
Every question goes once through the default ``MilvusGraphRetriever`` (k=5, no LLM); every
PageRank solve it makes (``walk_ranking.personalized_pagerank``: its seeds, masks and ``settle``)
is recorded, then replayed in this process, one thread, by each solver variant:

* ``order`` — the default (``ppr_stop="order"``: stop once the top ``settle`` passages are settled);
* ``residual`` — to the L1 tolerance 1e-4 only (``ppr_stop="residual"``);
* ``order, observed rate`` — the settle rule with the sweeps' observed L1 contraction (the larger
  of the last two ratios, at most damping²) in place of damping²;
* ``push ε`` — the local push solver (``ppr_method="push"``) at several ε;
* ``push ε → order`` — the global sweeps warm-started from the push estimate, then settled.

Per variant: sweeps (global), solves whose top ``settle`` passages (in order) differ from the
converged walk's (L1 change below 1e-9), and CPU per solve (``thread_time``, the push included).
With ``--scoring``, the relation table's scoring is also timed in the forms a client could use
(float32 ``einsum``, float32 BLAS ``matmul``, float16): the table is the saved graph's
``extra_vectors_relations.npy``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import langchain_graphrag_milvus.graph.ppr as ppr  # noqa: E402
import langchain_graphrag_milvus.retrieval.walk_ranking as walk_ranking  # noqa: E402
from langchain_graphrag_milvus.graph.local_ppr import local_pagerank  # noqa: E402

_DEFAULT_SWEEPS = ppr._sweeps


def record(spec: str, limit: int | None) -> tuple[Any, list[dict[str, Any]]]:
    """The store's graph and the keyword arguments of every solve its default graph queries make."""
    from langchain_graphrag_milvus import MilvusGraphRetriever, MilvusGraphStore
    from langchain_graphrag_milvus.embeddings import LocalMiniLMEmbeddings

    uri, prefix, questions_path = spec.split(":", 2)
    questions = [json.loads(line) for line in Path(questions_path).read_text().splitlines() if line.strip()]
    questions = questions[:limit] if limit else questions
    store = MilvusGraphStore(LocalMiniLMEmbeddings(), uri=uri, collection_prefix=prefix)
    retriever = MilvusGraphRetriever(store=store, k=5)
    solves: list[dict[str, Any]] = []
    graphs: list[Any] = []
    original = walk_ranking.personalized_pagerank

    def spy(graph: Any, **kwargs: Any) -> Any:
        graphs.append(graph)
        solves.append(dict(kwargs))
        return original(graph, **kwargs)

    walk_ranking.personalized_pagerank = spy  # type: ignore[assignment]
    try:
        for q in questions:
            retriever.invoke(q["question"])
    finally:
        walk_ranking.personalized_pagerank = original
    if any(g is not graphs[0] for g in graphs):
        raise SystemExit("the graph changed during the run: use a copy nobody writes to")
    return graphs[0], solves


def make_sweeps(observed_rate: bool = False, init: list[Any] | None = None) -> Callable[..., Any]:
    """``ppr._sweeps`` with the settle estimate's rate observed, or started from ``init[0]`` (then cleared)."""

    def sweeps(to_nodes: Any, to_relations: Any, s_nodes: Any, s_rel: Any, blocked: Any, setting: Any,
               settle: tuple[int, int] = (0, 0)) -> Any:  # fmt: skip
        damping, tol, max_iter = setting
        first_passage, top = settle
        c = damping**2
        keep_nodes, keep_rel = (1.0 - damping) * s_nodes, (1.0 - damping) * s_rel
        start = init.pop() if init else None
        x_nodes, x_rel = (s_nodes.copy(), s_rel.copy()) if start is None else start
        new_nodes, new_rel = np.empty_like(x_nodes), np.empty_like(x_rel)
        diff_nodes, diff_rel = np.empty_like(x_nodes), np.empty_like(x_rel)
        history: list[float] = []
        residual, settled, iterations = float("inf"), False, 0
        for iterations in range(1, max_iter + 1):
            ppr._damped(to_nodes, x_rel, new_nodes, damping, keep_nodes)
            ppr._damped(to_relations, new_nodes, new_rel, damping, keep_rel)
            if blocked is not None:
                new_rel[blocked] = 0.0
            np.abs(np.subtract(new_nodes, x_nodes, out=diff_nodes), out=diff_nodes)
            np.abs(np.subtract(new_rel, x_rel, out=diff_rel), out=diff_rel)
            residual = float(diff_nodes.sum() + diff_rel.sum())
            history.append(residual)
            x_nodes, new_nodes = new_nodes, x_nodes
            x_rel, new_rel = new_rel, x_rel
            if residual < tol:
                break
            rate = c
            if observed_rate and len(history) >= 3:
                rate = min(c, max(history[-1] / history[-2], history[-2] / history[-3]))
            remaining = diff_nodes[first_passage:] * (rate / (1 - rate))
            if top and ppr.passages_settled(x_nodes[first_passage:], remaining, top):
                settled = True
                break
        return x_nodes, x_rel, iterations, residual, settled

    return sweeps


def top_passages(idx: Any, val: Any, k: int) -> list[int]:
    """The best ``k`` positive passages, score descending then index (the walk's order)."""
    idx, val = np.asarray(idx), np.asarray(val)
    keep = val > 0
    idx, val = idx[keep], val[keep]
    return [int(i) for i in idx[np.lexsort((idx, -val))[:k]]]


def replay(graph: Any, solves: list[dict[str, Any]], eps: list[float]) -> list[tuple[str, float, float, int, float]]:
    """(variant, sweeps mean, sweeps p50, top-k ≠ converged, CPU ms per solve) of every variant."""
    n_e, n_r, n_p = graph.n_entities, graph.n_relations, graph.n_passages
    ppr._sweeps = _DEFAULT_SWEEPS
    converged = []
    for kw in solves:
        exact = {**kw, "settle": 0, "tol": 1e-9, "max_iter": 1000}
        res = ppr.personalized_pagerank(graph, **exact)
        converged.append(top_passages(np.arange(n_p), res.passage, max(kw["settle"], 1)))
    init: list[Any] = []

    def global_solve(kw: dict[str, Any], k: int) -> tuple[list[int], int]:
        res = ppr.personalized_pagerank(graph, **kw)
        return top_passages(np.arange(n_p), res.passage, k), res.iterations

    def push(e: float, warm: bool) -> Callable[[dict[str, Any], int], tuple[list[int], int]]:
        def solve(kw: dict[str, Any], k: int) -> tuple[list[int], int]:
            args = {k: v for k, v in kw.items() if k != "settle"}
            local = local_pagerank(graph, epsilon=e, **args)
            if not warm:
                return top_passages(local.passage_idx, local.passage, k), 0
            x_nodes, x_rel = np.zeros(n_e + n_p, np.float32), np.zeros(n_r, np.float32)
            x_nodes[local.entity_idx] = local.entity
            x_nodes[n_e + local.passage_idx] = local.passage
            x_rel[local.relation_idx] = local.relation
            init.clear()
            init.append((x_nodes, x_rel))
            return global_solve(kw, k)

        return solve

    Solve = Callable[[dict[str, Any], int], tuple[list[int], int]]
    variants: list[tuple[str, Callable[..., Any], Solve, Callable[..., Any]]] = [
        ("order (default)", _DEFAULT_SWEEPS, global_solve, lambda kw: kw),
        ("residual (1e-4)", _DEFAULT_SWEEPS, global_solve, lambda kw: {**kw, "settle": 0}),
        ("order, observed rate", make_sweeps(observed_rate=True), global_solve, lambda kw: kw),
    ]
    for e in eps:
        variants.append((f"push {e:g}", _DEFAULT_SWEEPS, push(e, False), lambda kw: kw))
        variants.append((f"push {e:g} -> order", make_sweeps(init=init), push(e, True), lambda kw: kw))
    rows = []
    for name, sweeps, solve, adapt in variants:
        ppr._sweeps = sweeps
        counts, wrong, cpu = [], 0, 0.0
        for kw, want in zip(solves, converged):
            t0 = time.thread_time()
            got, n = solve(adapt(kw), len(want))
            cpu += time.thread_time() - t0
            counts.append(n)
            wrong += got != want
        ppr._sweeps = _DEFAULT_SWEEPS
        rows.append((name, float(np.mean(counts)), float(np.median(counts)), wrong, 1000 * cpu / len(solves)))
    return rows


def scoring(spec: str, repeat: int = 50) -> list[tuple[str, float]]:
    """Median CPU ms of one query's score over the saved relation table, in each form."""
    uri, prefix, _ = spec.split(":", 2)
    table = np.ascontiguousarray(np.load(Path(uri + ".graphs") / prefix / "extra_vectors_relations.npy"))
    query = table[len(table) // 2].copy()
    half, half_q = table.astype(np.float16), query.astype(np.float16)
    forms: list[tuple[str, Callable[[], Any], int]] = [
        (f"einsum float32 ({len(table):,} rows)", lambda: np.einsum("ij,j->i", table, query), repeat),
        ("matmul float32 (BLAS)", lambda: table @ query, repeat),
        ("einsum float16", lambda: np.einsum("ij,j->i", half, half_q), 5),
    ]
    out = []
    for name, fn, n in forms:
        fn()
        times = []
        for _ in range(n):
            t0 = time.thread_time()
            fn()
            times.append(time.thread_time() - t0)
        out.append((name, 1000 * float(np.median(times))))
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store", action="append", required=True, help="DB:PREFIX:QUESTIONS.jsonl (a copy)")
    parser.add_argument("--limit", type=int, help="at most this many questions per store")
    parser.add_argument("--eps", type=float, nargs="*", default=[1e-4, 3e-5], help="push tolerances to replay")
    parser.add_argument("--scoring", action="store_true", help="also time the relation table's scoring")
    args = parser.parse_args(argv)
    for spec in args.store:
        graph, solves = record(spec, args.limit)
        print(f"\n{Path(spec.split(':')[0]).name}:{spec.split(':')[1]}: {graph.n_relations:,} relations, "
              f"{len(solves)} solves")  # fmt: skip
        print(f"{'variant':<26} {'sweeps mean':>11} {'p50':>5} {'top-k != conv':>13} {'cpu ms/solve':>12}")
        for name, mean, p50, wrong, cpu in replay(graph, solves, args.eps):
            print(f"{name:<26} {mean:>11.2f} {p50:>5.0f} {wrong:>13d} {cpu:>12.2f}")
        if args.scoring:
            for name, ms in scoring(spec):
                print(f"scoring: {name:<40} {ms:7.2f} ms CPU")


if __name__ == "__main__":
    main()
