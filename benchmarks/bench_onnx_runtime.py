"""all-MiniLM-L6-v2 on ONNX Runtime vs sentence-transformers on torch: same vectors, start-up, throughput.

One command, every ratio from the same run (interleaved):

1. Equivalence: ``--passages`` passages of musique100 and its 51 questions embedded by both runtimes;
   cosine between the two vectors of each text; the top-5 / top-10 passages of each question by
   exact cosine search, and how many questions' lists differ.
2. Start-up: ``--cold`` rounds of a new process per runtime (torch, onnx, torch, onnx, ...) that imports
   the package, embeds one query and reports its import time, model load + first embedding, and the
   process's wall time (the ONNX export must exist: ``make onnx-model``).
3. Batch throughput (ingest): ``--rounds`` interleaved rounds of embedding ``--batch`` passages.
4. One query under a concurrent CPU load: ``--burners`` busy processes, ``--queries`` single queries each.
5. With ``--cli-store NAME.db``: the CLI's ``query`` end to end, a new process each, ``--cold`` rounds
   interleaved, the runtime chosen by ``$LANGCHAIN_GRAPHRAG_MILVUS_EMBEDDING_RUNTIME``.

Run: ``.venv/bin/python benchmarks/bench_onnx_runtime.py [--data ../shared/data/musique100]``.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from langchain_graphrag_milvus.embeddings import LocalMiniLMEmbeddings

ROOT = Path(__file__).resolve().parents[1]
COLD = """
import json, sys, time
t0 = time.perf_counter()
from langchain_graphrag_milvus.embeddings import LocalMiniLMEmbeddings
t1 = time.perf_counter()
emb = LocalMiniLMEmbeddings(runtime=sys.argv[1])
emb.embed_query("Who taught the mathematician Leonhard Euler?")
t2 = time.perf_counter()
print(json.dumps({"import": t1 - t0, "first": t2 - t1, "torch": "torch" in sys.modules,
                  "runtime": emb.active_runtime}))
"""


def _pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * len(values)))]


def _burn(stop: float) -> None:
    x = 0
    while time.time() < stop:
        x = (x * 31 + 7) % 1_000_003


def _load(data: Path, n: int) -> tuple[list[str], list[str]]:
    rows = [json.loads(line) for line in (data / "passages.jsonl").read_text(encoding="utf-8").splitlines()]
    passages = [f"{r['title']}\n{r['text']}" for r in rows[: n or None]]
    questions = [json.loads(line)["question"] for line in (data / "questions_dev.jsonl").read_text().splitlines()]
    return passages, questions


def equivalence(runtimes: dict[str, LocalMiniLMEmbeddings], passages: list[str], questions: list[str]) -> None:
    """Cosine of the two runtimes' vectors and the top-k lists of the questions."""
    p = {name: np.array(emb.embed_documents(passages)) for name, emb in runtimes.items()}
    q = {name: np.array([emb.embed_query(x) for x in questions]) for name, emb in runtimes.items()}
    cos_p, cos_q = (p["torch"] * p["onnx"]).sum(1), (q["torch"] * q["onnx"]).sum(1)
    print(f"\n1. equivalence: {len(passages)} passages, {len(questions)} questions (queries embedded one by one)")
    print(f"   passages : cosine min {cos_p.min():.9f}  mean {cos_p.mean():.9f}  "
          f"max |diff| {np.abs(p['torch'] - p['onnx']).max():.2e}")
    print(f"   questions: cosine min {cos_q.min():.9f}  mean {cos_q.mean():.9f}  "
          f"max |diff| {np.abs(q['torch'] - q['onnx']).max():.2e}")
    for k in (5, 10):
        tops = {n: np.argsort(-(q[n] @ p[n].T), axis=1, kind="stable")[:, :k] for n in p}
        differ = sum(list(a) != list(b) for a, b in zip(tops["torch"], tops["onnx"]))
        sets = sum(set(a) != set(b) for a, b in zip(tops["torch"], tops["onnx"]))
        print(f"   top-{k}: {differ} of {len(questions)} questions differ in order, {sets} in membership")


def cold(rounds: int) -> None:
    """New processes, interleaved: import, model load + first query embedding, whole-process wall time."""
    results: dict[str, list[dict[str, float]]] = {"torch": [], "onnx": []}
    for _ in range(rounds):
        for name in results:
            started = time.perf_counter()
            command = [sys.executable, "-c", COLD, name]
            out = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, check=True)
            row = json.loads(out.stdout.strip().splitlines()[-1])
            if row["runtime"] != name:
                raise SystemExit(f"asked for {name}, ran {row['runtime']}: {out.stderr[-500:]}")
            row["wall"] = time.perf_counter() - started
            results[name].append(row)
    print(f"\n2. start-up: {rounds} new processes per runtime, interleaved (median s; torch imported?)")
    print(f"   {'runtime':8} {'import':>8} {'load+1st':>9} {'process':>8}  torch")
    for name, rows in results.items():
        med = {k: statistics.median(r[k] for r in rows) for k in ("import", "first", "wall")}
        print(f"   {name:8} {med['import']:8.2f} {med['first']:9.2f} {med['wall']:8.2f}  {rows[0]['torch']}")
    ratios = [t["wall"] / o["wall"] for t, o in zip(results["torch"], results["onnx"])]
    pairs = list(zip(results["torch"], results["onnx"]))
    firsts = [(t["import"] + t["first"]) / (o["import"] + o["first"]) for t, o in pairs]
    print(f"   torch/onnx per pair: process wall median {statistics.median(ratios):.1f}x "
          f"(min {min(ratios):.1f}, max {max(ratios):.1f}); import+first embedding {statistics.median(firsts):.1f}x")


def throughput(runtimes: dict[str, LocalMiniLMEmbeddings], texts: list[str], rounds: int) -> None:
    """Passages per second of a large call (the ingest path), interleaved rounds."""
    rates: dict[str, list[float]] = {name: [] for name in runtimes}
    for emb in runtimes.values():
        emb.embed_documents(texts[:16])  # warm the batch path (ONNX Runtime's batch session)
    for _ in range(rounds):
        for name, emb in runtimes.items():
            started = time.perf_counter()
            emb.embed_documents(texts)
            rates[name].append(len(texts) / (time.perf_counter() - started))
    print(f"\n3. batch throughput: {rounds} interleaved rounds of {len(texts)} passages (batch_size 64)")
    for name, values in rates.items():
        print(f"   {name:8} median {statistics.median(values):7.1f} passages/s  (min {min(values):.1f}, "
              f"max {max(values):.1f})")
    ratios = [o / t for t, o in zip(rates["torch"], rates["onnx"])]
    print(f"   onnx/torch per round: median {statistics.median(ratios):.2f}x "
          f"(min {min(ratios):.2f}, max {max(ratios):.2f})")


def loaded_queries(runtimes: dict[str, LocalMiniLMEmbeddings], queries: int, burners: int) -> None:
    """Single-query latency with ``burners`` busy processes (both runtimes on their one-thread path)."""
    stop = time.time() + 600
    procs = [mp.Process(target=_burn, args=(stop,), daemon=True) for _ in range(burners)]
    for proc in procs:
        proc.start()
    times: dict[str, list[float]] = {name: [] for name in runtimes}
    try:
        for i in range(queries):
            for name, emb in runtimes.items():
                started = time.perf_counter()
                emb.embed_query(f"Who taught the mathematician number {i}?")
                times[name].append((time.perf_counter() - started) * 1000)
    finally:
        for proc in procs:
            proc.terminate()
    print(f"\n4. one query, {burners} busy processes on {os.cpu_count()} cores, {queries} queries each (ms)")
    for name, values in times.items():
        print(f"   {name:8} p50 {_pct(values, 0.5):7.1f}  p99 {_pct(values, 0.99):7.1f}")
    print(f"   torch/onnx p50: {statistics.median(times['torch']) / statistics.median(times['onnx']):.2f}x")


def cli_query(store: str, rounds: int) -> None:
    """Wall time of ``python -m langchain_graphrag_milvus query`` on a store, torch vs onnx, interleaved."""
    walls: dict[str, list[float]] = {"torch": [], "onnx": []}
    command = [sys.executable, "-m", "langchain_graphrag_milvus", "query", "Who publishes the Journal of Mathematical "
               "Physics?", "--uri", store]  # fmt: skip
    for _ in range(rounds):
        for name in walls:
            env = {**os.environ, "LANGCHAIN_GRAPHRAG_MILVUS_EMBEDDING_RUNTIME": name}
            started = time.perf_counter()
            subprocess.run(command, capture_output=True, cwd=ROOT, env=env, check=True)
            walls[name].append(time.perf_counter() - started)
    print(f"\n5. CLI query on {store}: {rounds} new processes per runtime, interleaved (s)")
    for name, values in walls.items():
        print(f"   {name:8} median {statistics.median(values):6.2f}  (min {min(values):.2f}, max {max(values):.2f})")
    ratios = [t / o for t, o in zip(walls["torch"], walls["onnx"])]
    print(f"   torch/onnx per pair: median {statistics.median(ratios):.1f}x "
          f"(min {min(ratios):.1f}, max {max(ratios):.1f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "musique100")
    parser.add_argument("--passages", type=int, default=200, help="passages for the equivalence (0: all)")
    parser.add_argument("--cold", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--burners", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--cli-store", help="a Lite store (NAME.db) for the CLI query section (5)")
    parser.add_argument("--skip", default="", help="comma-separated sections to skip: equivalence,cold,batch,load")
    args = parser.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    runtimes = {"torch": LocalMiniLMEmbeddings(runtime="torch"), "onnx": LocalMiniLMEmbeddings(runtime="onnx")}
    passages, questions = _load(args.data, args.passages)
    for emb in runtimes.values():
        emb.embed_query("warm up")
    print(f"all-MiniLM-L6-v2, {os.cpu_count()} cores, python {sys.version.split()[0]}")
    if "equivalence" not in skip:
        equivalence(runtimes, passages, questions)
    if "cold" not in skip:
        cold(args.cold)
    if "batch" not in skip:
        texts = _load(args.data, args.batch)[0]
        throughput(runtimes, texts, args.rounds)
    if "load" not in skip:
        loaded_queries(runtimes, args.queries, args.burners)
    if args.cli_store:
        cli_query(args.cli_store, args.cold)


if __name__ == "__main__":
    main()
