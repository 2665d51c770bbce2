"""Benchmark: the first query of a new process on a Milvus Lite store, graph rebuilt vs loaded from its saved index.

    .venv/bin/python benchmarks/bench_cold_start.py --uri STORE.db --prefix PREFIX [--rounds 3]

Each round starts two fresh processes, interleaved: one opens the store with ``graph_path=None``
(the graph is read from every relation in Milvus) and one with the default ``graph_path="auto"``
(loaded from ``STORE.db.graphs/PREFIX``, written by a first warm-up process). Each process loads
the embedding model first (not timed), then times opening the store, the first
``MilvusGraphRetriever`` query and a second one. Prints p50 per setting and the ratio, measured in
the same run. The store is only read; the warm-up writes the saved index beside it.

Use a store built with the local MiniLM model (e.g. an ``eval`` store under ``.cache/``); copy it
first if another process uses it (a Lite database is held by one process at a time).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = """
import json, sys, time
from langchain_graphrag_milvus import MilvusGraphRetriever, MilvusGraphStore
from langchain_graphrag_milvus.embeddings import LocalMiniLMEmbeddings

uri, prefix, mode, question = sys.argv[1:5]
emb = LocalMiniLMEmbeddings()
emb.embed_query("warm up")
t0 = time.perf_counter()
store = MilvusGraphStore(emb, uri=uri, collection_prefix=prefix, graph_path=None if mode == "none" else "auto")
retriever = MilvusGraphRetriever(store=store, k=5)
t1 = time.perf_counter()
retriever.invoke(question)
t2 = time.perf_counter()
retriever.invoke(question + " ")
t3 = time.perf_counter()
print(json.dumps({"open": t1 - t0, "first": t2 - t1, "second": t3 - t2, "saved": str(store.graph_path)}))
store.close()
"""

QUESTION = "Where was the director of Big Eyes born?"


def run(uri: str, prefix: str, mode: str) -> dict[str, float]:
    """One fresh process; its timings."""
    done = subprocess.run(
        [sys.executable, "-c", CHILD, uri, prefix, mode, QUESTION],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        timeout=900,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--uri", required=True, help="a Milvus Lite store (.db)")
    parser.add_argument("--prefix", required=True, help="its collection prefix")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    run(args.uri, args.prefix, "auto")  # warm-up: writes the saved index if there is none
    times: dict[str, list[dict[str, float]]] = {"none": [], "auto": []}
    for _ in range(args.rounds):
        for mode in ("none", "auto"):
            times[mode].append(run(args.uri, args.prefix, mode))
    print(f"{'graph_path':<22} {'open s':>8} {'first query s':>14} {'second query s':>15}")  # noqa: T201
    p50 = {m: {k: statistics.median(t[k] for t in ts) for k in ("open", "first", "second")} for m, ts in times.items()}
    for mode, label in (("none", "None (rebuild)"), ("auto", '"auto" (saved index)')):
        row = p50[mode]
        print(f"{label:<22} {row['open']:>8.2f} {row['first']:>14.2f} {row['second']:>15.2f}")  # noqa: T201
    ratio = p50["none"]["first"] / p50["auto"]["first"]
    print(f"first query: rebuild / saved = {ratio:.1f}x (p50 of {args.rounds} rounds, interleaved)")  # noqa: T201


if __name__ == "__main__":
    main()
