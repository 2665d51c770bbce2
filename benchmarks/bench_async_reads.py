"""Benchmark: ``ainvoke``/``abatch`` with pymilvus' native async reads vs the blocking read in a worker thread.

    python benchmarks/bench_async_reads.py                  # Milvus Lite and a server started from the wheel
    python benchmarks/bench_async_reads.py --rounds 5 --queries 64 --backends lite
    python benchmarks/bench_async_reads.py --uri http://127.0.0.1:19530   # an existing server (and Lite)

Issue 27: a read is written once, blocking (:class:`~langchain_graphrag_milvus.milvus.read_seam.StoreReads`);
its async forms default to that read in a worker thread. ``MilvusReads`` overrode ``asearch`` and
``afetch`` with ``AsyncMilvusClient``; this script measured what that native twin bought (nothing
beyond noise), and the override was removed. Variants, on the same store (the same graph, linker
and connections, warmed up), switched per measurement:

- ``native``: the removed override, kept here verbatim (``NativeReads``: ``asearch``/``afetch`` on
  one ``AsyncMilvusClient`` per event loop; ``NativeLocalSearch``: the store's async search as it
  was, its steps in threads and Milvus' search awaited), so the comparison can be run again;
- ``thread``: the package as it is, the read in the event loop's default executor
  (``min(32, cpu + 4)`` workers: 6 on 2 cores), the baseline of the ratios;
- ``thread32``: the same with a 32-worker default executor (is the ceiling of 6 what costs?).

Workloads: ``ainvoke`` with ``asyncio.gather`` at concurrency 1, 8 and 32 (a semaphore keeps that
many queries in flight), and ``abatch`` with ``max_concurrency=32``. Per query: latency p50 / p99
(pooled over rounds); per measurement: throughput, the event loop's responsiveness (the lag of a
1 ms ``asyncio.sleep`` ticker running beside the queries: its p99 and max), and the default
executor's queue (the longest a submitted call waited for a worker; the most workers busy).

Every search goes to Milvus (``local_search="off"``: on Lite the default would answer entity and
relation searches in the client, leaving only the passage search to compare). No reranker and no
LLM: reads dominate. Deterministic fake embeddings (``aembed_documents`` runs in the default
executor in every variant). The corpus is musique100's first ``--passages`` passages with their
triplets. Rounds are interleaved (each round runs every workload in every variant, the variants'
order alternating), and ratios are native / thread per round: the table gives their median and
range, which is the noise to read them against.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

from langchain_core.embeddings import DeterministicFakeEmbedding
from pymilvus import AsyncMilvusClient

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from langchain_graphrag_milvus import MilvusGraphRetriever, MilvusGraphStore  # noqa: E402
from langchain_graphrag_milvus.cli.evaluation import load_questions  # noqa: E402
from langchain_graphrag_milvus.milvus import exact  # noqa: E402
from langchain_graphrag_milvus.milvus.filters import filter_errors  # noqa: E402
from langchain_graphrag_milvus.milvus.local_search import LocalSearch  # noqa: E402
from langchain_graphrag_milvus.milvus.read_seam import Hit, StoreReads  # noqa: E402
from langchain_graphrag_milvus.milvus.reads import MilvusReads, _parse_hits  # noqa: E402
from langchain_graphrag_milvus.milvus.schema import Kind  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "musique100"
DEFAULT_WORKERS = min(32, (os.cpu_count() or 1) + 4)


class ThreadReads(MilvusReads):
    """``MilvusReads`` with the read seam's default async forms: the blocking read in a worker thread."""

    asearch = StoreReads.asearch  # type: ignore[assignment]
    afetch = StoreReads.afetch  # type: ignore[assignment]


#: The ``AsyncMilvusClient`` of each (connection, event loop), as ``milvus/clients.py`` kept them.
_ACLIENTS: dict[tuple[int, asyncio.AbstractEventLoop], AsyncMilvusClient] = {}


async def _aclient(connection: Any) -> AsyncMilvusClient:
    key = (id(connection), asyncio.get_running_loop())
    if key not in _ACLIENTS:
        _ACLIENTS[key] = AsyncMilvusClient(**connection.resolved_args(), timeout=connection.timeout)
    return _ACLIENTS[key]


class NativeReads(MilvusReads):
    """``MilvusReads`` with the native async forms it had before issue 27 (verbatim, but for the client's home)."""

    async def asearch(  # type: ignore[override]
        self,
        kind: Kind,
        vectors: Sequence[Sequence[float]],
        limit: int,
        *,
        filter_expr: str | None = None,
        output_fields: Sequence[str] = ("pk",),
    ) -> list[list[Hit]]:
        if not vectors or limit < 1:
            return [[] for _ in vectors]
        if self.connection.dim is None:
            await asyncio.to_thread(self.connection.check_open)
        self._check_dim(self.connection.check_open(), vectors)
        client = await _aclient(self.connection)
        request = self._search_request(kind, vectors, limit, filter_expr, output_fields)
        with filter_errors(filter_expr):
            hits = _parse_hits(await client.search(**request))
            if self._short(kind, request, hits):
                rows = await client.query(**exact.exact_query(request, self.layout.key_field(kind)))
                hits = self._exact(kind, request, hits, rows)
        return self.layout.hits(kind, hits)

    async def afetch(  # type: ignore[override]
        self,
        kind: Kind,
        ids: Iterable[str],
        output_fields: Sequence[str] | None = ("pk",),
        *,
        filter_expr: str | None = None,
    ) -> dict[str, dict[str, Any]]:
        unique = self._unique(kind, ids)
        if not unique:
            return {}
        if self.connection.dim is None:
            await asyncio.to_thread(self.connection.check_open)
        client = await _aclient(self.connection)
        requests = self._fetch_requests(kind, unique, output_fields, filter_expr)
        with filter_errors(filter_expr):
            results = await asyncio.gather(*(client.query(**req) for req in requests))
        return self._rows(kind, results)


class NativeLocalSearch(LocalSearch):
    """``LocalSearch`` with the async search it had before issue 27 (steps in threads, Milvus' search awaited)."""

    async def asearch(  # type: ignore[override]
        self,
        kind: Kind,
        vectors: Sequence[Sequence[float]],
        limit: int,
        *,
        filter_expr: str | None = None,
        output_fields: Sequence[str] = ("pk",),
        within: Sequence[str] | None = None,
    ) -> list[list[Hit]]:
        fields = self._fields(kind, output_fields)
        now: asyncio.Future[Any] | None = None
        if self._may_hold(kind, limit, filter_expr, within, fields):
            now = asyncio.ensure_future(asyncio.to_thread(self._stamp))
        plan = await asyncio.to_thread(self._plan, kind, vectors, filter_expr, within) if limit >= 1 else None
        if plan is None:
            if now is not None:
                now.cancel()
            return await self.reads.asearch(kind, vectors, limit, filter_expr=filter_expr, output_fields=output_fields)
        table, stamp, rows = plan
        found = await asyncio.to_thread(self._score, kind, table, vectors, limit, rows)
        if now is not None and self._direct(kind, table, stamp, fields):
            if await now == stamp:
                return self._held(kind, table, found, fields)
        elif now is not None:
            now.cancel()
        ids = list(dict.fromkeys(i for per_query in found for i, _ in per_query))
        read = await self.reads.afetch(kind, ids, fields or ("pk",)) if ids else {}
        return self._hits(kind, found, fields, read)


#: The variant's reads class, its search class, and the size of the event loop's default executor.
VARIANTS: dict[str, tuple[type[MilvusReads], type[LocalSearch], int]] = {
    "native": (NativeReads, NativeLocalSearch, DEFAULT_WORKERS),
    "thread": (ThreadReads, LocalSearch, DEFAULT_WORKERS),
    "thread32": (ThreadReads, LocalSearch, 32),
}


class CountingPool(ThreadPoolExecutor):
    """A thread pool that records how long each call waited for a worker and the most workers busy."""

    def __init__(self, max_workers: int) -> None:
        super().__init__(max_workers=max_workers, thread_name_prefix="bench-default")
        self.waits: list[float] = []
        self.busy = 0
        self.peak = 0
        self._count_lock = threading.Lock()

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:  # type: ignore[override]
        queued = time.perf_counter()

        def run() -> Any:
            with self._count_lock:
                self.waits.append(time.perf_counter() - queued)
                self.busy += 1
                self.peak = max(self.peak, self.busy)
            try:
                return fn(*args, **kwargs)
            finally:
                with self._count_lock:
                    self.busy -= 1

        return super().submit(run)


async def ticker(stop: asyncio.Event, lags: list[float]) -> None:
    """Sleep 1 ms again and again; record how late each wake-up was (the event loop's responsiveness)."""
    while not stop.is_set():
        started = time.perf_counter()
        await asyncio.sleep(0.001)
        lags.append(time.perf_counter() - started - 0.001)


async def workload(
    retriever: MilvusGraphRetriever, queries: list[str], mode: str, concurrency: int
) -> tuple[list[float], list[str]]:
    """Run the queries; return each query's latency (``abatch``: none) and the failures (counted, not raised)."""
    if mode == "abatch":
        answers = await retriever.abatch(queries, config={"max_concurrency": concurrency}, return_exceptions=True)
        return [], [repr(a)[:200] for a in answers if isinstance(a, Exception)]
    gate = asyncio.Semaphore(concurrency)
    latencies: list[float] = []

    async def one(q: str) -> None:
        async with gate:
            started = time.perf_counter()
            await retriever.ainvoke(q)
            latencies.append(time.perf_counter() - started)

    answers = await asyncio.gather(*(one(q) for q in queries), return_exceptions=True)
    return latencies, [repr(a)[:200] for a in answers if isinstance(a, Exception)]


async def measure_once(
    store: MilvusGraphStore, retriever: MilvusGraphRetriever, queries: list[str], variant: str, mode: str, conc: int
) -> dict[str, Any]:
    reads_class, search_class, workers = VARIANTS[variant]
    store._reads.__class__ = reads_class  # the same objects (LocalSearch holds the reads), other async forms
    store._search.__class__ = search_class
    loop = asyncio.get_running_loop()
    pool = CountingPool(workers)
    loop.set_default_executor(pool)
    await workload(retriever, queries[:2], "ainvoke", 2)  # warm-up of this variant's path
    pool.waits.clear()
    pool.peak = 0
    stop, lags = asyncio.Event(), []
    tick = asyncio.ensure_future(ticker(stop, lags))
    started = time.perf_counter()
    latencies, errors = await workload(retriever, queries, mode, conc)
    for error in errors:
        print(f"  {variant} {mode} c={conc}: {error}", file=sys.stderr)
    seconds = time.perf_counter() - started
    stop.set()
    await tick
    pool.shutdown(wait=False)
    return {
        "seconds": seconds,
        "qps": len(queries) / seconds,
        "latencies": latencies,
        "lag_p99": quantile(lags, 0.99),
        "lag_max": max(lags),
        "queue_max": max(pool.waits, default=0.0),
        "busy_peak": pool.peak,
        "errors": len(errors),
    }


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def workloads(variants: list[str]) -> list[tuple[str, int, list[str]]]:
    """(mode, concurrency, variants measured): thread32 only where more than 6 reads can be in flight."""
    rows = []
    for mode, conc in (("ainvoke", 1), ("ainvoke", 8), ("ainvoke", 32), ("abatch", 32)):
        rows.append((mode, conc, [v for v in variants if v != "thread32" or conc > DEFAULT_WORKERS]))
    return rows


async def run_backend(store: MilvusGraphStore, queries: list[str], rounds: int, variants: list[str]) -> list[dict]:
    retriever = MilvusGraphRetriever(store=store, k=5)
    retriever.invoke(queries[0])  # graph, linker, sync client
    results: dict[tuple[str, int, str], list[dict[str, Any]]] = {}
    plan = workloads(variants)
    for r in range(rounds):
        for mode, conc, names in plan:
            order = names if r % 2 == 0 else names[::-1]
            for variant in order:
                results.setdefault((mode, conc, variant), []).append(
                    await measure_once(store, retriever, queries, variant, mode, conc)
                )
        print(f"  round {r + 1}/{rounds} done", file=sys.stderr)
    store._reads.__class__, store._search.__class__ = MilvusReads, LocalSearch
    for client in _ACLIENTS.values():
        await client.close()
    _ACLIENTS.clear()
    return summarise(results, plan)


def summarise(results: dict[tuple[str, int, str], list[dict[str, Any]]], plan: list) -> list[dict]:
    rows = []
    for mode, conc, names in plan:
        base = results[(mode, conc, "thread")]
        for variant in names:
            runs = results[(mode, conc, variant)]
            lat = [x for run in runs for x in run["latencies"]]
            ratios = [run["qps"] / b["qps"] for run, b in zip(runs, base)]
            rows.append(
                {
                    "mode": mode,
                    "concurrency": conc,
                    "variant": variant,
                    "qps": statistics.median(run["qps"] for run in runs),
                    "p50_ms": quantile(lat, 0.5) * 1000 if lat else None,
                    "p99_ms": quantile(lat, 0.99) * 1000 if lat else None,
                    "qps_ratio": statistics.median(ratios),
                    "qps_ratio_min": min(ratios),
                    "qps_ratio_max": max(ratios),
                    "lag_p99_ms": statistics.median(run["lag_p99"] for run in runs) * 1000,
                    "lag_max_ms": max(run["lag_max"] for run in runs) * 1000,
                    "queue_max_ms": max(run["queue_max"] for run in runs) * 1000,
                    "busy_peak": max(run["busy_peak"] for run in runs),
                    "errors": sum(run["errors"] for run in runs),
                }
            )
    return rows


def print_table(backend: str, rows: list[dict], queries: int, rounds: int) -> None:
    def ms(v: float | None) -> str:
        return "-" if v is None else f"{v:.0f}"

    print(f"\n{backend}: {queries} queries per measurement, {rounds} interleaved rounds\n")
    print(
        "| workload | variant | queries/s (median) | vs thread (median [min–max] over rounds) | p50 ms | p99 ms "
        "| loop lag p99 ms | loop lag max ms | default-executor queue max ms | workers busy (peak) | failed queries |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        ratio = f"{row['qps_ratio']:.2f}x [{row['qps_ratio_min']:.2f}–{row['qps_ratio_max']:.2f}]"
        print(
            f"| {row['mode']} c={row['concurrency']} | {row['variant']} | {row['qps']:.1f} | {ratio} "
            f"| {ms(row['p50_ms'])} | {ms(row['p99_ms'])} | {row['lag_p99_ms']:.1f} | {row['lag_max_ms']:.0f} "
            f"| {row['queue_max_ms']:.0f} | {row['busy_peak']} | {row['errors']} |"
        )


def subset(passages: int, directory: Path) -> Path:
    path = directory / "passages.jsonl"
    with (DATA / "passages.jsonl").open() as src, path.open("w") as dst:
        for i, line in enumerate(src):
            if i >= passages:
                break
            dst.write(line)
    return path


def open_store(uri: str, passages: Path) -> MilvusGraphStore:
    store = MilvusGraphStore(
        DeterministicFakeEmbedding(size=384), uri=uri, collection_prefix="bench_async_reads", local_search="off"
    )
    started = time.perf_counter()
    store.add_jsonl(passages)
    print(f"ingest into {uri}: {time.perf_counter() - started:.1f}s", file=sys.stderr)
    return store


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backends", default="lite,server", help="comma-separated: lite, server")
    parser.add_argument("--uri", help="server URI (default: start a server from the milvus wheel)")
    parser.add_argument("--passages", type=int, default=600)
    parser.add_argument("--queries", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--variants", default="native,thread,thread32")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    variants = args.variants.split(",")
    if "thread" not in variants:
        parser.error("--variants must include thread (the baseline)")
    tmp = Path(tempfile.mkdtemp(prefix="bench-async-reads-"))
    passages = subset(args.passages, tmp)
    questions = [q.question for q in load_questions(DATA / "questions_dev.jsonl")]
    queries = [questions[i % len(questions)] for i in range(args.queries)]
    report: dict[str, list[dict]] = {}
    for backend in args.backends.split(","):
        server = None
        if backend == "lite":
            uri = str(tmp / "lite.db")
        elif args.uri:
            uri = args.uri
        else:
            sys.path.insert(0, str(ROOT / "tests"))
            from milvus_server import MilvusServerHandle

            server = MilvusServerHandle(tmp / "server")
            uri = server.start()
            print(f"started Milvus {uri} in {server.startup_seconds:.1f}s", file=sys.stderr)
        try:
            store = open_store(uri, passages)
            try:
                report[backend] = asyncio.run(run_backend(store, queries, args.rounds, variants))
            finally:
                store.drop()
                store.close()
        finally:
            if server is not None:
                server.stop()
        name = "Milvus Lite" if backend == "lite" else f"Milvus server {uri}"
        print_table(f"{name}, {args.passages} passages", report[backend], args.queries, args.rounds)
    print(f"\ncpu_count={os.cpu_count()}, default executor workers={DEFAULT_WORKERS}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
