"""Benchmark: queries per second, sync vs threaded batch vs async, with an LLM-like reranker.

    python benchmarks/bench_async.py                 # starts a Milvus server from the wheel
    python benchmarks/bench_async.py --uri http://127.0.0.1:19530
    python benchmarks/bench_async.py --uri ./bench.db   # Milvus Lite

The corpus is musique100 (1,890 passages, ~17k relations) with deterministic fake
embeddings (throughput, not quality, is measured here). The reranker is a stand-in that
sleeps ``--llm-ms`` (200 ms) like a remote LLM call and then picks the first relations;
its async version awaits ``asyncio.sleep`` so concurrent calls overlap. Ratios are
against sequential sync calls in the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path

from langchain_core.embeddings import DeterministicFakeEmbedding
from langchain_core.runnables import RunnableLambda

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from langchain_graphrag_milvus import MilvusGraphRetriever, MilvusGraphStore  # noqa: E402
from langchain_graphrag_milvus.cli.evaluation import load_questions  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "musique100"


def reranker(delay: float) -> RunnableLambda:
    def pick(payload: dict) -> list[int]:
        time.sleep(delay)
        return [0, 1, 2]

    async def apick(payload: dict) -> list[int]:
        await asyncio.sleep(delay)
        return [0, 1, 2]

    return RunnableLambda(pick, afunc=apick, name="sleeping_llm")


async def run_async(retriever: MilvusGraphRetriever, queries: list[str], concurrency: int) -> float:
    gate = asyncio.Semaphore(concurrency)

    async def one(q: str) -> None:
        async with gate:
            await retriever.ainvoke(q)

    started = time.perf_counter()
    await asyncio.gather(*(one(q) for q in queries))
    return time.perf_counter() - started


def measure(store: MilvusGraphStore, queries: list[str], delay: float) -> list[dict]:
    retriever = MilvusGraphRetriever(store=store, k=5, reranker=reranker(delay))
    retriever.invoke(queries[0])  # warm-up: graph, linker, connections
    asyncio.run(run_async(retriever, queries[:2], 2))
    rows = []
    started = time.perf_counter()
    for q in queries:
        retriever.invoke(q)
    rows.append({"mode": "sync, sequential", "seconds": time.perf_counter() - started})
    for workers in (8, 32):
        started = time.perf_counter()
        retriever.batch(queries, config={"max_concurrency": workers})
        rows.append({"mode": f"sync batch, {workers} threads", "seconds": time.perf_counter() - started})
    for concurrency in (1, 8, 32):
        seconds = asyncio.run(run_async(retriever, queries, concurrency))
        rows.append({"mode": f"async, concurrency {concurrency}", "seconds": seconds})
    base = rows[0]["seconds"]
    for row in rows:
        row["qps"] = len(queries) / row["seconds"]
        row["speedup"] = base / row["seconds"]
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--uri", help="Milvus URI (default: start a server from the milvus wheel)")
    parser.add_argument("--queries", type=int, default=64)
    parser.add_argument("--llm-ms", type=float, default=200.0)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)

    server = None
    uri = args.uri
    if uri is None:
        sys.path.insert(0, str(ROOT / "tests"))
        from milvus_server import MilvusServerHandle

        server = MilvusServerHandle(Path(tempfile.mkdtemp(prefix="bench-milvus-")))
        uri = server.start()
        print(f"started Milvus {uri} in {server.startup_seconds:.1f}s", file=sys.stderr)
    try:
        store = MilvusGraphStore(DeterministicFakeEmbedding(size=384), uri=uri, collection_prefix="bench_async")
        report = store.add_jsonl(DATA / "passages.jsonl")
        print(f"ingest: {report}", file=sys.stderr)
        questions = [q.question for q in load_questions(DATA / "questions_dev.jsonl")]
        queries = [questions[i % len(questions)] for i in range(args.queries)]
        rows = measure(store, queries, args.llm_ms / 1000)
        print(f"\n{len(queries)} queries against {uri}, reranker sleeping {args.llm_ms:.0f} ms\n")
        print("| mode | seconds | queries/s | vs sequential |")
        print("|---|---|---|---|")
        for row in rows:
            print(f"| {row['mode']} | {row['seconds']:.2f} | {row['qps']:.1f} | {row['speedup']:.1f}x |")
        if args.json:
            args.json.write_text(json.dumps(rows, indent=1))
        store.drop()
        store.close()
    finally:
        if server is not None:
            server.stop()


if __name__ == "__main__":
    main()
