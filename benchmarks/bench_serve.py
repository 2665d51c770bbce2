"""The server's own cost: the same questions through ``serve`` (HTTP) and through the retriever in-process.

MuSiQue's 1,890 passages with their triplets, MiniLM embeddings, Milvus Lite in a temporary folder
(one process may open a Lite folder, so the phases run one after another):

1. in-process: ``MilvusGraphRetriever(k=4).invoke`` over the 51 dev questions (after one warm-up pass),
   with ``Strong`` reads as ``serve`` opens the store; measured again at the end (step 5);
2. CLI one-shot: ``python -m langchain_graphrag_milvus query Q --json`` for ``--cli`` questions, a
   new process each (start-up, model load, Milvus Lite and the graph paid every time);
3. ``serve``: a subprocess; the same questions over ``POST /query`` from one client (latency) and from
   four threads (throughput); the ten CLI questions again (total wall time);
4. during an ingest: ``POST /documents`` of ``--ingest`` new passages with triplets runs while one client
   keeps querying; p50/p99 of those queries, and of the same client right before;
5. in-process again, on the store as ``serve`` left it.

    .venv/bin/python benchmarks/bench_serve.py [--cli 10] [--ingest 600] [--passages N]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.serve_process import ServeProcess  # noqa: E402

DATA = ROOT.parent.parent / "shared" / "data" / "musique100"
if not DATA.exists():
    DATA = Path("/work/shared/data/musique100")


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def summary(name: str, seconds: list[float], wall: float | None = None) -> dict:
    wall = wall if wall is not None else sum(seconds)
    row = {
        "name": name,
        "n": len(seconds),
        "p50_ms": round(pct(seconds, 0.5) * 1000, 1),
        "p99_ms": round(pct(seconds, 0.99) * 1000, 1),
        "qps": round(len(seconds) / wall, 2),
    }
    print(json.dumps(row), flush=True)
    return row


def questions() -> list[str]:
    lines = (DATA / "questions_dev.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["question"] for line in lines if line.strip()]


def in_process(uri: str, qs: list[str], passages: int | None, label: str = "in-process retriever.invoke") -> dict:
    from langchain_graphrag_milvus import MilvusGraphRetriever, MilvusGraphStore
    from langchain_graphrag_milvus.embeddings import LocalMiniLMEmbeddings

    # opened as serve opens it (Strong reads), so the two measure the same retrieval
    store = MilvusGraphStore(LocalMiniLMEmbeddings(), uri=uri, collection_prefix="graphrag", consistency_level="Strong")
    if passages != 0:
        lines = (DATA / "passages.jsonl").read_text(encoding="utf-8").splitlines()
        records = [json.loads(line) for line in lines[:passages] if line.strip()]
        started = time.perf_counter()
        store.add_records(records)
        print(f"ingested {store.counts()} in {time.perf_counter() - started:.1f}s", flush=True)
    retriever = MilvusGraphRetriever(store=store, k=4)
    for q in qs:  # warm-up
        retriever.invoke(q)
    times = []
    for q in qs:
        t = time.perf_counter()
        retriever.invoke(q)
        times.append(time.perf_counter() - t)
    store.close()
    return summary(label, times)


def cli_one_shot(folder: Path, qs: list[str]) -> dict:
    times = []
    for q in qs:
        t = time.perf_counter()
        cmd = [sys.executable, "-m", "langchain_graphrag_milvus", "query", q, "--json", "--uri", str(folder / "m.db")]
        subprocess.run(cmd, cwd=folder, check=True, capture_output=True)
        times.append(time.perf_counter() - t)
    row = summary(f"CLI one-shot query x{len(qs)}", times)
    row["total_s"] = round(sum(times), 1)
    return row


def through_serve(url: str, qs: list[str], cli_qs: list[str]) -> list[dict]:
    rows = []
    with httpx.Client(base_url=url, timeout=120) as client:
        for q in qs:  # warm-up
            client.post("/query", json={"query": q, "k": 4}).raise_for_status()
        times = []
        for q in qs:
            t = time.perf_counter()
            client.post("/query", json={"query": q, "k": 4}).raise_for_status()
            times.append(time.perf_counter() - t)
        rows.append(summary("serve POST /query, 1 client", times))
        started = time.perf_counter()
        for q in cli_qs:
            client.post("/query", json={"query": q, "k": 4}).raise_for_status()
        total = time.perf_counter() - started
        rows.append({"name": f"serve, the {len(cli_qs)} CLI questions", "total_s": round(total, 2)})
        print(json.dumps(rows[-1]))

    def one(q: str) -> float:
        with httpx.Client(base_url=url, timeout=120) as c:
            t = time.perf_counter()
            c.post("/query", json={"query": q, "k": 4}).raise_for_status()
            return time.perf_counter() - t

    started = time.perf_counter()
    with ThreadPoolExecutor(4) as pool:
        times = list(pool.map(one, qs * 2))
    rows.append(summary("serve POST /query, 4 clients", times, time.perf_counter() - started))
    return rows


def during_ingest(url: str, qs: list[str], n: int) -> list[dict]:
    docs = [
        {"text": f"Person {i} of the benchmark met Person {i + 1} in Town {i % 50}.",
         "metadata": {"source": f"bench-{i}.md"},
         "triplets": [[f"Person {i}", "met", f"Person {i + 1}"], [f"Person {i}", "lived in", f"Town {i % 50}"]]}
        for i in range(n)
    ]  # fmt: skip
    rows = []
    with httpx.Client(base_url=url, timeout=300) as client:
        before = []
        for q in qs:
            t = time.perf_counter()
            client.post("/query", json={"query": q, "k": 4}).raise_for_status()
            before.append(time.perf_counter() - t)
        rows.append(summary("query, idle server", before))
        result: dict = {}

        def ingest() -> None:
            t = time.perf_counter()
            with httpx.Client(base_url=url, timeout=600) as writer:
                reply = writer.post("/documents", json={"documents": docs})
            result.update(status=reply.status_code, seconds=time.perf_counter() - t)

        thread = threading.Thread(target=ingest)
        thread.start()
        during = []
        i = 0
        while thread.is_alive():
            q = qs[i % len(qs)]
            i += 1
            t = time.perf_counter()
            client.post("/query", json={"query": q, "k": 4}).raise_for_status()
            during.append(time.perf_counter() - t)
        thread.join()
        health = client.get("/health").json()
    print(f"ingest of {n} documents: HTTP {result['status']} in {result['seconds']:.1f}s; health after: {health}")
    row = summary(f"query during an ingest of {n} documents", during)
    row["ingest_s"] = round(result["seconds"], 1)
    rows.append(row)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cli", type=int, default=10, help="questions asked through the CLI one-shot")
    parser.add_argument("--ingest", type=int, default=600, help="documents posted during the ingest phase")
    parser.add_argument("--passages", type=int, help="only the first N MuSiQue passages (default all 1,890)")
    parser.add_argument("--json", type=Path, help="write the rows here")
    args = parser.parse_args()
    qs = questions()
    cli_qs = qs[: args.cli]
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-serve-") as tmp:
        folder = Path(tmp)
        rows.append(in_process(str(folder / "m.db"), qs, args.passages))
        if args.cli:
            rows.append(cli_one_shot(folder, cli_qs))
        serve_args = ["--uri", str(folder / "m.db"), "--extractor", "none", "--log-level", "error"]
        server = ServeProcess(folder, *serve_args)
        t = time.perf_counter()
        server.wait(timeout=300)
        print(f"serve ready in {time.perf_counter() - t:.1f}s")
        try:
            rows += through_serve(server.url, qs, cli_qs)
            rows += during_ingest(server.url, qs, args.ingest)
        finally:
            server.stop()
        # the same in-process measurement again, on the store as serve left it (the machine is shared:
        # this pair, measured back to back, is the fairest comparison)
        rows.append(in_process(str(folder / "m.db"), qs, 0, "in-process retriever.invoke, after serve"))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
