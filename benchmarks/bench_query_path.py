"""Benchmark: the per-query library work of the default graph retrieval, 10k–1M relations, no Milvus.

    nice -n 10 .venv/bin/python benchmarks/bench_query_path.py                   # 10k, 100k, 1M
    nice -n 10 .venv/bin/python benchmarks/bench_query_path.py --relations 30000 --relations 50000 --queries 50

The default pipeline (``retrieval/graph_pipeline.py``: ``ranking="ppr"``, k=5, no reranker)
runs on an in-memory synthetic graph (``synthetic.generate``, the zipf profile of
``bench_expansion.py`` and ``bench_local_ppr.py``) driven by a scripted executor that
answers every request from hits computed beforehand, so what is timed is the library
alone: the seeds, both walks, the passage hops, the candidates and the Documents (the
answers are dictionary lookups). Each query looks like a real one: the linker names 3
graph entities (a topic entity, a popular one and a random one: exact names, as the
offline linker returns), the relation search returns 50 relations (25 from the topic's
two-hop neighbourhood, 25 anywhere) and the passage search 5 passages (those of the best
relations first), similarities in [0.5, 0.8].

Per size, in the same run, over the same queries: the pipeline with the global PageRank
solver (``ppr_method="global"``: what the default ran at every size before), with the
default (``"auto"``: global below ``AUTO_PUSH_RELATIONS`` relations, push above) and with
push at ε = 1e-5; p50 / p99 of the whole pipeline, of its walk ranking alone, and the
requests a query makes.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from synthetic import generate, print_table  # noqa: E402

from langchain_graphrag_milvus.graph import GraphIndex  # noqa: E402
from langchain_graphrag_milvus.graph.ids import id_to_key, key_to_id  # noqa: E402
from langchain_graphrag_milvus.milvus.reads import Hit  # noqa: E402
from langchain_graphrag_milvus.retrieval import stages  # noqa: E402
from langchain_graphrag_milvus.retrieval.effects import (  # noqa: E402
    Embed,
    Fetch,
    Gather,
    GetGraph,
    LinkEntities,
    Search,
)
from langchain_graphrag_milvus.retrieval.graph_pipeline import graph_pipeline  # noqa: E402
from langchain_graphrag_milvus.retrieval.params import RetrievalParams  # noqa: E402
from langchain_graphrag_milvus.retrieval.walk_ranking import AUTO_PUSH_RELATIONS, WalkParams  # noqa: E402
from langchain_graphrag_milvus.text.names import entity_id  # noqa: E402

METHODS = {
    "global (before)": WalkParams(ppr_method="global"),
    "auto (default)": WalkParams(),
    "push ε=1e-5": WalkParams(ppr_method="push", push_epsilon=1e-5),
}


def build(n_relations: int) -> tuple[GraphIndex, list[str]]:
    """The synthetic graph, its entities keyed by the ids of names ``e<key>`` (so names resolve exactly)."""
    syn = generate(n_relations, seed=42)
    unique, inverse = np.unique(np.concatenate([syn.subject_keys, syn.object_keys]), return_inverse=True)
    names = [f"e{int(k)}" for k in unique.tolist()]
    keys = np.array([id_to_key(entity_id(n)) for n in names], np.uint64)[inverse]
    g = GraphIndex.from_relations(
        relation_keys=syn.relation_keys,
        subject_keys=keys[:n_relations],
        object_keys=keys[n_relations:],
        passage_ids=syn.passage_ids,
    )
    by_key = dict(zip(keys.tolist(), [names[i] for i in inverse.tolist()]))
    return g, [by_key[int(k)] for k in g.entities.keys.tolist()]


class Query:
    """One query's canned answers."""

    def __init__(self, g: GraphIndex, names: list[str], rng: np.random.Generator, pop: np.ndarray) -> None:
        topic = int(rng.choice(g.n_entities, p=pop)) if rng.random() < 0.5 else int(rng.integers(g.n_entities))
        near = g.expand(entity_seeds=np.array([topic], np.int32), hops=2, max_neighbors=100, max_relations=200)
        local = rng.choice(near.relations, min(25, near.relations.size), replace=False)
        rels = np.unique(np.concatenate([local, rng.choice(g.n_relations, 50 - local.size, replace=False)]))[:50]
        sims = np.sort(rng.uniform(0.5, 0.8, rels.size))[::-1]
        rels = rels[rng.permutation(rels.size)]
        self.relation_hits = [
            Hit(key_to_id(int(g.relations.keys[r])), float(s), self.relation_fields(g, r))
            for r, s in zip(rels.tolist(), sims.tolist())
        ]
        best = [p for h in self.relation_hits[:3] for p in h.fields["passage_ids"]]
        extra = [g.passages.ids[int(i)] for i in rng.integers(0, g.n_passages, 5)]
        pids = list(dict.fromkeys(best + extra))[:5]
        self.passage_hits = [Hit(p, 0.8 - 0.05 * i, self.row(p)) for i, p in enumerate(pids)]
        ents = [topic, int(rng.choice(g.n_entities, p=pop)), int(rng.integers(g.n_entities))]
        self.names = [names[e] for e in dict.fromkeys(ents)]

    @staticmethod
    def relation_fields(g: GraphIndex, r: int) -> dict[str, Any]:
        return {"text": f"relation {r}", "predicate": "p", "passage_ids": [g.passages.ids[p] for p in g.rel_pas.row(r)]}

    @staticmethod
    def row(pid: str) -> dict[str, Any]:
        return {"text": f"text of {pid}", "source": f"{pid}.txt"}

    def answer(self, effect: Any, g: GraphIndex) -> Any:
        if isinstance(effect, LinkEntities):
            return self.names
        if isinstance(effect, GetGraph):
            return g
        if isinstance(effect, Embed):
            return [[0.1, 0.2, 0.3]] * len(effect.texts)
        if isinstance(effect, Gather):
            out = {"relations": self.relation_hits, "passages": self.passage_hits}
            return [[out.get(s.kind, [])] * len(s.vectors) if isinstance(s, Search) else False for s in effect.effects]
        if isinstance(effect, Fetch):
            return {i: {"pk": i, **self.row(i)} for i in effect.ids}
        raise TypeError(f"unexpected {effect!r}")


def run(q: Query, g: GraphIndex, p: RetrievalParams) -> tuple[list[Any], int]:
    """The pipeline for one query; its Documents and the number of requests."""
    pipeline = graph_pipeline("a question", p, entity_extractor=None, reranker=None)
    value: Any = None
    requests = 0
    while True:
        try:
            effect = pipeline.send(value)
        except StopIteration as stop:
            return stop.value, requests
        requests += 1
        value = q.answer(effect, g)


def pct(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values) * 1e3, q))


def run_size(n_relations: int, n_queries: int) -> list[dict[str, Any]]:
    """One graph size: every method over the same queries."""
    g, names = build(n_relations)
    gc.collect()
    deg = g.entity_degree().astype(np.float64)
    rng = np.random.default_rng(1)
    queries = [Query(g, names, rng, deg / deg.sum()) for _ in range(n_queries)]
    rows = []
    real_walks = stages.ranked_walks
    for label, walk in METHODS.items():
        p = RetrievalParams(k=5)
        walk_times: list[float] = []

        def timed(
            graph: GraphIndex, seeds: Any, params: WalkParams, _walk: WalkParams = walk, _t: list[float] = walk_times,
            **kw: Any,
        ) -> Any:  # fmt: skip
            """The stage's walk ranking with this solver (the retriever's other settings kept), timed."""
            solver = {"ppr_method": _walk.ppr_method, "push_epsilon": _walk.push_epsilon}
            started = time.perf_counter()
            try:
                return real_walks(graph, seeds, dataclasses.replace(params, **solver), **kw)
            finally:
                _t.append(time.perf_counter() - started)

        stages.ranked_walks = timed  # type: ignore[assignment]
        try:
            run(queries[0], g, p)  # per-graph structures (transition matrices, push lists) built once, not timed
            walk_times.clear()
            times, docs, requests = [], [], []
            for q in queries:
                started = time.perf_counter()
                out, n = run(q, g, p)
                times.append(time.perf_counter() - started)
                docs.append([d.id for d in out])
                requests.append(n)
        finally:
            stages.ranked_walks = real_walks
        rows.append(
            {
                "relations": n_relations,
                "method": label,
                "p50_ms": pct(times, 50),
                "p99_ms": pct(times, 99),
                "walk_p50_ms": pct(walk_times, 50),
                "walk_p99_ms": pct(walk_times, 99),
                "requests": float(np.mean(requests)),
                "docs": docs,
            }
        )
    base = rows[0]["docs"]
    for r in rows:
        r["same_docs"] = float(np.mean([a == b for a, b in zip(base, r.pop("docs"))]))
    return rows


def main(argv: list[str] | None = None) -> None:
    """Run the sizes and print one table (and optionally JSON)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--relations", type=int, action="append", help="graph size (repeatable; default 10k 100k 1M)")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    rows = []
    for n in args.relations or [10_000, 100_000, 1_000_000]:
        started = time.perf_counter()
        rows += run_size(n, args.queries)
        print(f"# {n} relations: {time.perf_counter() - started:.0f} s", file=sys.stderr)  # noqa: T201
    base = {r["relations"]: r["p50_ms"] for r in rows if r["method"].startswith("global")}
    print(f"\nauto: push from {AUTO_PUSH_RELATIONS:,} relations on; {args.queries} queries per size\n")  # noqa: T201
    print_table(
        rows,
        [
            ("relations", lambda r: f"{r['relations']:,}"),
            ("solver", lambda r: r["method"]),
            ("library p50 ms", lambda r: f"{r['p50_ms']:.2f}"),
            ("p99 ms", lambda r: f"{r['p99_ms']:.2f}"),
            ("global ÷ this (p50)", lambda r: f"{base[r['relations']] / r['p50_ms']:.1f}×"),
            ("walk ranking p50 / p99 ms", lambda r: f"{r['walk_p50_ms']:.2f} / {r['walk_p99_ms']:.2f}"),
            ("requests per query", lambda r: f"{r['requests']:.1f}"),
            ("same 5 passages as global", lambda r: f"{100 * r['same_docs']:.0f}%"),
        ],
    )
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
