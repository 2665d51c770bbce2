"""Benchmark: what the freshness check costs per query, and how soon a reader sees another writer.

    python benchmarks/bench_freshness.py --uri http://127.0.0.1:19530   # a Milvus server
    python benchmarks/bench_freshness.py                                 # Milvus Lite (temp dir)

Corpus: the tutorial's nano dataset (deterministic fake embeddings; latency, not quality).
A reader store answers the same query ``--queries`` times with ``refresh_interval=None``
(never check: the baseline), ``1.0`` (the default) and ``0`` (check on every query),
taking turns query by query; the raw cost of one check (``store.generation()``, one
``describe_collection``) is timed alone. Then a *second* store instance on the same URI
and prefix adds a passage, and the time until the reader (``refresh_interval=0``, then
the default) has it in its graph, and until a retrieval returns it, is measured. On a
server the second can be longer: the reader's searches use ``"Session"`` consistency,
under which another client's rows become searchable within the server's staleness bound.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

from langchain_core.embeddings import DeterministicFakeEmbedding

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from langchain_graphrag_milvus import MilvusGraphRetriever, MilvusGraphStore  # noqa: E402
from langchain_graphrag_milvus.datasets import NANO_QUESTION, nano_dataset  # noqa: E402


def per_query_ms(retriever: MilvusGraphRetriever, intervals: list[float | None], n: int) -> list[tuple[float, float]]:
    """p50 and p95 query latency per interval; the settings take turns query by query (fair under noise)."""
    times: list[list[float]] = [[] for _ in intervals]
    store = retriever.store
    for _ in range(n):
        for i, interval in enumerate(intervals):
            store.refresh_interval = interval
            start = time.perf_counter()
            retriever.invoke(NANO_QUESTION)
            times[i].append((time.perf_counter() - start) * 1000)
    out = []
    for t in times:
        t.sort()
        out.append((statistics.median(t), t[int(0.95 * (len(t) - 1))]))
    return out


def time_to_notice(
    reader: MilvusGraphStore, writer: MilvusGraphStore, marker: str, interval: float | None
) -> tuple[float, float]:
    """Seconds from the writer's return until the reader's graph holds the new passage, and until it is returned."""
    reader.refresh_interval = interval
    retriever = MilvusGraphRetriever(store=reader, k=8)
    names = ["Zeta Quokka", "Johann Bernoulli"]
    writer.add_records([{"id": marker, "passage": f"{marker} Zeta Quokka met Johann Bernoulli.",
                         "triplets": [["Zeta Quokka", "met", "Johann Bernoulli"]]}])  # fmt: skip
    start = time.perf_counter()
    in_graph = float("nan")
    while time.perf_counter() - start < 60:
        ids = {d.id for d in retriever.invoke("Who did Zeta Quokka meet?", entities=names)}
        if in_graph != in_graph and marker in reader._graph_cache.loaded.passages:  # type: ignore[union-attr]
            in_graph = time.perf_counter() - start
        if marker in ids:
            return in_graph, time.perf_counter() - start
        time.sleep(0.01)
    return in_graph, float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--uri", default=None, help="Milvus server URI (default: Milvus Lite in a temp dir)")
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    tmp = tempfile.TemporaryDirectory()
    uri = args.uri or str(Path(tmp.name) / "fresh.db")
    prefix = f"fresh{uuid.uuid4().hex[:8]}"
    emb = DeterministicFakeEmbedding(size=64)
    writer = MilvusGraphStore(emb, uri=uri, collection_prefix=prefix)
    writer.add_records(nano_dataset())
    reader = MilvusGraphStore(emb, uri=uri, collection_prefix=prefix, refresh_interval=None)
    try:
        retriever = MilvusGraphRetriever(store=reader, k=2)
        per_query_ms(retriever, [None], 20)  # warm-up: connect, load, build the graph
        checks = []
        for _ in range(args.queries):
            start = time.perf_counter()
            reader.generation()
            checks.append((time.perf_counter() - start) * 1000)
        settings = [("never (None): baseline", None), ("1 s (default)", 1.0), ("every query (0)", 0.0)]
        rows = per_query_ms(retriever, [interval for _, interval in settings], args.queries)
        base = rows[0][0]
        backend = "Milvus Lite" if uri.endswith(".db") else f"server {uri}"
        check_ms = statistics.median(checks)
        print(f"\n{backend}; {args.queries} queries per row; one check alone: median {check_ms:.2f} ms")
        print("| refresh_interval | query p50 ms | query p95 ms | p50 vs baseline |")
        print("|---|---|---|---|")
        for (label, _), (p50, p95) in zip(settings, rows):
            print(f"| {label} | {p50:.2f} | {p95:.2f} | {p50 - base:+.2f} ms |")
        print("\n| reader's refresh_interval | in the reader's graph after | returned after |")
        print("|---|---|---|")
        for label, interval in (("every query (0)", 0.0), ("1 s (default)", 1.0)):
            in_graph, returned = time_to_notice(reader, writer, f"m{uuid.uuid4().hex[:6]}", interval)
            print(f"| {label} | {in_graph:.2f} s | {returned:.2f} s |")
    finally:
        for store in (reader, writer):
            if not uri.endswith(".db"):
                store.drop()
            store.close()
        tmp.cleanup()


if __name__ == "__main__":
    main()
