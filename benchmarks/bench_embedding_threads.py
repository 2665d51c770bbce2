"""Query embedding latency under a concurrent CPU load: torch's default threads vs one thread.

Starts ``--burners`` busy processes (default: one per core), then embeds ``--queries`` single
questions with ``LocalMiniLMEmbeddings(query_threads=None)`` (torch's default threads, the old
behaviour) and with the default ``query_threads=1``, interleaved, and a 512-text batch with
each (batches use torch's default threads in both: throughput must not change). Prints p50/p99
and the ratio. Run: ``.venv/bin/python benchmarks/bench_embedding_threads.py``.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import statistics
import time

from langchain_graphrag_milvus.embeddings import LocalMiniLMEmbeddings


def _burn(stop: float) -> None:
    x = 0
    while time.time() < stop:
        x = (x * 31 + 7) % 1_000_003


def _pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))] * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--burners", type=int, default=os.cpu_count() or 2)
    args = parser.parse_args()
    default, tuned = LocalMiniLMEmbeddings(query_threads=None), LocalMiniLMEmbeddings()
    for emb in (default, tuned):
        emb.embed_query("warm up")
    stop = time.time() + 600
    burners = [mp.Process(target=_burn, args=(stop,), daemon=True) for _ in range(args.burners)]
    for p in burners:
        p.start()
    try:
        times: dict[str, list[float]] = {"torch default threads": [], "query_threads=1 (default)": []}
        for i in range(args.queries):
            for name, emb in zip(times, (default, tuned)):
                started = time.perf_counter()
                emb.embed_query(f"Who taught the mathematician number {i}?")
                times[name].append(time.perf_counter() - started)
        texts = [f"passage {i}: a sentence about mathematics, rivers and cities" for i in range(512)]
        batch = {}
        for name, emb in zip(times, (default, tuned)):
            started = time.perf_counter()
            emb.embed_documents(texts)
            batch[name] = time.perf_counter() - started
    finally:
        for p in burners:
            p.terminate()
    print(f"{args.burners} busy processes on {os.cpu_count()} cores; {args.queries} single-query embeddings each")
    print(f"{'setting':28} {'p50 ms':>8} {'p99 ms':>8} {'batch 512 s':>12}")
    for name, values in times.items():
        print(f"{name:28} {_pct(values, 0.5):8.1f} {_pct(values, 0.99):8.1f} {batch[name]:12.2f}")
    base, new = (statistics.median(v) for v in times.values())
    print(f"p50 ratio default/tuned: {base / new:.1f}x")


if __name__ == "__main__":
    main()
