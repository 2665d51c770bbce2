"""Benchmark (issue 16): the whole retriever at 10k–200k passages on a real Milvus 2.3.5 server.

One command, every baseline in the same run::

    nice -n 10 .venv/bin/python benchmarks/bench_scale.py                      # 10k, 50k, 200k
    nice -n 10 .venv/bin/python benchmarks/bench_scale.py --sizes 2000 10000   # quick

Without ``--uri`` it starts a private server (``tests/milvus_server.py``, free ports, a temp
dir) and stops it by its own pid at the end. The corpus is synthetic and MuSiQue-like
(``scale_corpus.py``: ≈9 given triplets per passage, Zipf entity popularity, multi-word names,
questions naming 1–3 entities, a quarter with a near-miss spelling) and the embedding is a
free 384-d hash embedding, so what is timed is the library and Milvus.

Per size, each step in a new process (``scale_worker.py``):

1. the working tree ingests the corpus into a new prefix (one ``add_records`` call), answers
   its first query right after the load, then ``--queries`` questions with the graph retriever
   (default settings, no LLM) and the naive retriever, alternating; k=5;
2. "today's" retriever: the package at ``--baseline-ref`` (extracted with ``git archive`` into
   the temp dir) opens the same collections, builds its graph and answers the same questions;
3. at the largest size: a new process opens the store with an empty ``graph_path`` (a rebuild
   from Milvus, then saved), and another with the saved index (the cold start).

Before the sizes, the baseline ingests the same slice (the first ``--ingest-slice`` passages)
into a fresh prefix, compared with the working tree's load of that size (or of the slice, when
no size equals it). Tables are printed after each size, so a run cut short still reports.
Library time = wall time − (Milvus client calls ∪ embedding calls), from spies on the real calls.
Server memory: RSS of the server process (``/proc``) before and after each load.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "tests"))

from scale_corpus import make_corpus, make_questions  # noqa: E402
from scale_report import print_report  # noqa: E402

GIB = 1 << 30


def rss_bytes(pid: int | None) -> int | None:
    """Resident memory of ``pid`` and its children (None: unknown)."""
    if pid is None:
        return None
    total = 0
    pids = [pid]
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        pids += [int(c) for c in children]
    except OSError:
        pass
    for p in pids:
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
        except OSError:
            continue
    return total


def extract_baseline(ref: str, dest: Path) -> Path:
    """``git archive REF langchain_graphrag_milvus`` unpacked into ``dest`` (the .git is left alone)."""
    dest.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", ref, "langchain_graphrag_milvus"], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest


def tree_state() -> str:
    """The commit and a summary of uncommitted changes the run measures."""
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    status = subprocess.run(["git", "-C", str(ROOT), "status", "--short"], capture_output=True, text=True)
    diff = subprocess.run(["git", "-C", str(ROOT), "diff", "--shortstat"], capture_output=True, text=True)
    lines = [f"HEAD {head.stdout.strip()}; uncommitted: {diff.stdout.strip() or 'none'}"]
    lines += [f"  {line}" for line in status.stdout.splitlines()]
    return "\n".join(lines)


def _setting(text: str) -> tuple[str, Any]:
    """``name=value`` (the value parsed as JSON when it can be: numbers, true, null; else a string)."""
    name, _, value = text.partition("=")
    try:
        return name, json.loads(value)
    except json.JSONDecodeError:
        return name, value


class Run:
    """The temp dir, the server and the worker launcher of one benchmark run."""

    def __init__(self, args: argparse.Namespace, work: Path) -> None:
        self.args, self.work = args, work
        self.run_id = f"{int(time.time()) % 100000}"
        self.server: Any = None
        self.uri: str = args.uri or ""
        self.pid: int | None = args.server_pid
        self.prefixes: list[str] = []
        self.rss_start = rss_bytes(self.pid)
        #: Settings of the working tree's graph retriever (``--graph``), as JSON; None: its defaults.
        self.graph_kwargs: str | None = json.dumps(dict(args.graph)) if args.graph else None

    def start_server(self) -> None:
        if self.uri:
            return
        from milvus_server import MilvusServerHandle, free_ports

        self.server = MilvusServerHandle(self.work / "server", port=free_ports(1)[0])
        self.uri = self.server.start()
        self.pid = self.server.pid
        time.sleep(self.args.settle)
        self.rss_start = rss_bytes(self.pid)
        print(f"private Milvus server {self.uri} (pid {self.pid}) started in {self.server.startup_seconds:.0f}s")

    def stop_server(self) -> None:
        if self.server is not None:
            self.server.stop(grace=30)

    def prefix(self, name: str) -> str:
        prefix = f"bs{self.run_id}_{name}"
        self.prefixes.append(prefix)
        return prefix

    def worker(self, mode: str, code: Path, prefix: str, **opts: Any) -> dict[str, Any]:
        out = self.work / f"{prefix}_{mode}_{len(os.listdir(self.work))}.json"
        cmd = [sys.executable, str(HERE / "scale_worker.py"), mode, "--code", str(code), "--uri", self.uri]
        cmd += ["--prefix", prefix, "--out", str(out), "--k", str(self.args.k)]
        for key, value in opts.items():
            if value is not None:
                cmd += [f"--{key.replace('_', '-')}", str(value)]
        started = time.perf_counter()
        proc = subprocess.run(cmd, check=False)
        result: dict[str, Any] = json.loads(out.read_text()) if out.exists() else {}
        if proc.returncode != 0 and "error" not in result:
            result["error"] = f"worker exited with {proc.returncode}"
        result["wall"] = time.perf_counter() - started
        if "error" in result:
            print(f"  worker {mode} {prefix} ({code.name}): {result['error']}", flush=True)
        return result

    def drop(self, prefix: str) -> None:
        from pymilvus import MilvusClient

        client = MilvusClient(uri=self.uri)
        try:
            for name in client.list_collections():
                if name.startswith(prefix + "_"):
                    client.drop_collection(name)
        finally:
            client.close()

    def index_type(self, prefix: str) -> str:
        from pymilvus import MilvusClient

        client = MilvusClient(uri=self.uri)
        try:
            name = f"{prefix}_relations"
            indexes = client.list_indexes(name)
            return str(client.describe_index(name, indexes[0]).get("index_type")) if indexes else "none"
        except Exception as exc:  # only a label in the table
            return f"? ({type(exc).__name__})"
        finally:
            client.close()


def write_inputs(run: Run, size: int) -> tuple[Path, Path]:
    args = run.args
    started = time.perf_counter()
    corpus = make_corpus(size, seed=args.seed)
    questions = make_questions(corpus, 1 + args.warmup + args.queries, seed=args.seed + 7)
    corpus_path, questions_path = run.work / f"corpus_{size}.jsonl", run.work / f"questions_{size}.json"
    with corpus_path.open("w", encoding="utf-8") as fh:
        for record in corpus.records:
            fh.write(json.dumps(record) + "\n")
    questions_path.write_text(json.dumps(questions))
    print(
        f"corpus {size:,}: {corpus.n_relations:,} relation statements, {len(corpus.names):,} entities "
        f"({time.perf_counter() - started:.0f}s to generate)",
        flush=True,
    )
    return corpus_path, questions_path


def ingest_slice(run: Run, baseline: Path, corpus: Path, n: int, with_new: bool) -> dict[str, Any]:
    """The same first ``n`` passages into fresh prefixes by the baseline (and by the working tree if ``with_new``)."""
    out = {}
    for label, code in (("new", ROOT), ("baseline", baseline)):
        if label == "new" and not with_new:
            continue
        prefix = run.prefix(f"slice_{label}")
        print(f"ingest slice ({label}): {n:,} passages", flush=True)
        out[label] = run.worker("ingest", code, prefix, corpus=corpus, limit=n)
        run.drop(prefix)
    return out


def measure_size(run: Run, baseline: Path, size: int, largest: bool) -> dict[str, Any]:
    corpus, questions = write_inputs(run, size)
    prefix = run.prefix(f"n{size}")
    before = rss_bytes(run.pid)
    print(f"size {size:,}: ingest + queries (working tree)", flush=True)
    result: dict[str, Any] = {
        "size": size,
        "new": run.worker("ingest", ROOT, prefix, corpus=corpus, questions=questions, graph_kwargs=run.graph_kwargs),
    }
    time.sleep(run.args.settle)  # let the server move the load's rows out of its write buffers
    result["rss_before"], result["rss_after"], result["index"] = before, rss_bytes(run.pid), run.index_type(prefix)
    result["rss_server_start"] = run.rss_start
    print(f"size {size:,}: today's retriever ({run.args.baseline_ref}) on the same collections", flush=True)
    old = run.worker("query", baseline, prefix, questions=questions)
    if "error" in old and size <= run.args.baseline_fallback_max:
        print(f"size {size:,}: the baseline cannot read them; it ingests its own copy", flush=True)
        old_prefix = run.prefix(f"old{size}")
        old = run.worker("ingest", baseline, old_prefix, corpus=corpus, questions=questions)
        old["fallback"] = True
        run.drop(old_prefix)
    result["baseline"] = old
    result["rss_end"] = rss_bytes(run.pid)
    if largest and not run.args.skip_cold:
        graph_dir = run.work / f"graph_{size}"
        graph_dir.mkdir()
        print(f"size {size:,}: cold start (rebuild and save, then load the saved index)", flush=True)
        cold = {"questions": questions, "graph_path": graph_dir, "graph_kwargs": run.graph_kwargs}
        result["rebuild"] = run.worker("cold", ROOT, prefix, **cold)
        result["cold"] = run.worker("cold", ROOT, prefix, **cold)
    corpus.unlink()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 50_000, 200_000])
    parser.add_argument("--queries", type=int, default=120, help="measured questions per size")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--uri", help="a running server (default: start a private one)")
    parser.add_argument("--server-pid", type=int, help="with --uri: the server's pid, for its memory")
    parser.add_argument("--baseline-ref", default="20fa98a")
    parser.add_argument("--baseline-fallback-max", type=int, default=50_000)
    parser.add_argument("--ingest-slice", type=int, default=10_000)
    parser.add_argument("--settle", type=float, default=10.0, help="seconds before reading the server's memory")
    parser.add_argument("--skip-slice", action="store_true", help="no ingest comparison on a slice")
    parser.add_argument("--skip-cold", action="store_true")
    parser.add_argument("--json", type=Path, help="also write the raw results here")
    parser.add_argument(
        "--graph",
        type=_setting,
        action="append",
        help="a setting of the working tree's graph retriever, e.g. relation_scope=entities (repeatable)",
    )
    args = parser.parse_args()
    sizes = sorted(set(args.sizes))
    print(tree_state())
    if args.graph:
        print("graph retriever settings (working tree):", dict(args.graph))
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="bench_scale_") as tmp:
        run = Run(args, Path(tmp))
        baseline = extract_baseline(args.baseline_ref, run.work / "baseline")
        run.start_server()
        results: dict[str, Any] = {"args": {k: str(v) for k, v in vars(args).items()}, "sizes": []}
        try:
            slice_size = next((s for s in sizes if s >= args.ingest_slice), sizes[-1])
            n_slice = min(args.ingest_slice, slice_size)
            # a size equal to the slice is a load of the same passages into a fresh prefix: reused
            if not args.skip_slice:
                corpus, _ = write_inputs(run, slice_size)
                results["slice"] = ingest_slice(run, baseline, corpus, n_slice, with_new=n_slice not in sizes)
            for size in sizes:
                results["sizes"].append(measure_size(run, baseline, size, size == sizes[-1]))
                if size == n_slice and "slice" in results:
                    results["slice"]["new"] = results["sizes"][-1]["new"]
                if size != sizes[-1]:
                    run.drop(f"bs{run.run_id}_n{size}")
                    results["seconds"] = time.perf_counter() - started
                    print(f"\n(tables so far, {size:,} passages done)")
                    print_report(results, args.baseline_ref)
                    if args.json:
                        args.json.write_text(json.dumps(results, indent=1))
        finally:
            for prefix in run.prefixes:
                if run.uri:
                    try:
                        run.drop(prefix)
                    except Exception as exc:  # the server may be gone; nothing else to clean
                        print(f"could not drop {prefix}: {exc}")
            run.stop_server()
    results["seconds"] = time.perf_counter() - started
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    print_report(results, args.baseline_ref)


if __name__ == "__main__":
    main()
