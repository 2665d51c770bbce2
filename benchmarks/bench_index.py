"""Benchmark: recall and latency of HNSW against exact FLAT search on a Milvus server, at >= 100k rows.

    python benchmarks/bench_index.py --uri http://127.0.0.1:19530 --passages 12000 --extra-passages 100000

The corpus is the scale benchmark's (``scale_corpus.make_corpus``, its 384-d hash embedding):
``--passages`` passages with their ~9 triplets each (so ~9x as many relations) and
``--extra-passages`` more passages without triplets (so the passage collection passes 100k
rows too). Queries are ``make_questions`` questions. In one run:

1. the store is loaded with ``index="flat"`` (exact); each query's exact top-k is computed
   by brute force over the stored vectors (``milvus/indexes.exact_top_k``) and FLAT's
   answers are checked against it (recall 1.0 expected);
2. both collections are switched to HNSW (``M=16``, ``efConstruction=200``: what
   ``index="auto"`` builds past its threshold), the build timed;
3. recall@10 and recall@50 of HNSW against the exact top-k, and the search latency (p50 of
   one top-50 search per query), for several ``ef`` values (the store searches with
   ``ef = max(256, limit)``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from scale_corpus import HashEmbedding, make_corpus, make_questions  # noqa: E402
from synthetic import print_table  # noqa: E402

from langchain_graphrag_milvus import MilvusGraphStore  # noqa: E402
from langchain_graphrag_milvus.milvus.indexes import creation_index, exact_top_k, switch_index  # noqa: E402

KINDS = ("relations", "passages")


def measure(store: MilvusGraphStore, vectors: list[list[float]], exact: dict[str, list[list[str]]]) -> list[dict]:
    rows = []
    for kind in KINDS:
        found, times = [], []
        for v in vectors:
            started = time.perf_counter()
            (hits,) = store._reads.search(kind, [v], 50)
            times.append(time.perf_counter() - started)
            found.append([h.id for h in hits])
        row: dict[str, Any] = {"kind": kind, "p50_ms": 1000 * statistics.median(times)}
        for k in (10, 50):
            shares = [len(set(f[:k]) & set(e[:k])) / len(e[:k]) for f, e in zip(found, exact[kind]) if e]
            row[f"recall@{k}"] = statistics.mean(shares)
        rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--uri", default="http://127.0.0.1:19530")
    parser.add_argument("--passages", type=int, default=12_000)
    parser.add_argument("--extra-passages", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--ef", type=int, nargs="+", default=[64, 128, 256, 512])
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    corpus = make_corpus(args.passages + args.extra_passages)
    records = [{**r, "triplets": r["triplets"] if i < args.passages else []} for i, r in enumerate(corpus.records)]
    embedding = HashEmbedding(384)
    store = MilvusGraphStore(embedding, uri=args.uri, collection_prefix="bench_index", index="flat")
    store.drop()
    started = time.perf_counter()
    report = store.add_records(records)
    print(f"loaded in {time.perf_counter() - started:.0f}s: {report}", file=sys.stderr)
    counts = store.counts()
    questions = [q["question"] for q in make_questions(corpus, args.queries)]
    vectors = [embedding.embed_query(q) for q in questions]
    exact = {kind: exact_top_k(store._reads, kind, vectors, 50) for kind in KINDS}
    rows = [{"index": "FLAT", "ef": "-", "rows": counts[r["kind"]], **r} for r in measure(store, vectors, exact)]
    assert all(r["recall@10"] > 0.99 for r in rows), f"FLAT disagrees with the brute-force scan: {rows}"
    builds = {}
    for kind in KINDS:
        started = time.perf_counter()
        switch_index(store._connection, kind, creation_index("hnsw", "COSINE"))
        builds[kind] = time.perf_counter() - started
    print(f"HNSW build (release, drop, build, load): {builds}", file=sys.stderr)
    params = store._reads.search_params.setdefault("params", {})
    for ef in args.ef:
        params["ef"] = ef
        rows += [
            {"index": "HNSW", "ef": f"max({ef}, 50)", "rows": counts[r["kind"]], **r}
            for r in measure(store, vectors, exact)
        ]
    flat_p50 = {r["kind"]: r["p50_ms"] for r in rows[:2]}
    print(f"\n{args.queries} queries, 384-d hash embedding; exact top-k by a brute-force scan")
    print_table(
        rows,
        [
            ("index", lambda r: r["index"]),
            ("search ef", lambda r: str(r["ef"])),
            ("collection", lambda r: r["kind"]),
            ("rows", lambda r: str(r["rows"])),
            ("recall@10", lambda r: f"{r['recall@10']:.3f}"),
            ("recall@50", lambda r: f"{r['recall@50']:.3f}"),
            ("search p50 ms", lambda r: f"{r['p50_ms']:.1f}"),
            ("× FLAT", lambda r: f"{r['p50_ms'] / flat_p50[r['kind']]:.2f}"),
        ],
    )
    print(f"\nHNSW build seconds: {', '.join(f'{k} {v:.0f}' for k, v in builds.items())}")
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "builds": builds}, indent=2))
    if not args.keep:
        store.drop()


if __name__ == "__main__":
    main()
