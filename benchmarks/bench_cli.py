"""Time of each CLI command on the demo corpus, as a user runs them (a new process each).

The demo corpus is the seed's four Bernoulli/Euler passages as four kinds of file (text,
Markdown, HTML, a two-page PDF), written by ``datasets.write_nano_files``. Each command runs
``--repeat`` times in a fresh process against a Milvus Lite store in a temporary folder, with
MiniLM embeddings and spaCy extraction; the median wall and CPU seconds are reported (on a
shared machine the CPU time, user + system, is the steadier figure). Baselines from the same run:
``python -c pass`` (the interpreter alone) and importing the package's store and
retrievers eagerly (what ``--help`` cost before the CLI's imports were made lazy).

    .venv/bin/python benchmarks/bench_cli.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from langchain_graphrag_milvus.datasets import NANO_QUESTION, write_nano_files  # noqa: E402


def timed(argv: list[str], cwd: Path) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system of the process and its children)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, env={**os.environ, "CI": "1"})
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{proc.stderr[-2000:]}")
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    py = sys.executable
    cli = [py, "-m", "langchain_graphrag_milvus"]
    work = Path(tempfile.mkdtemp(prefix="bench-cli-"))
    try:
        write_nano_files(work / "docs")
        store = ["--uri", str(work / "demo.db")]
        steps: list[tuple[str, list[str], bool]] = [
            ("python -c pass (baseline)", [py, "-c", "pass"], False),
            (
                "eager import of store + retrievers (baseline: --help before)",
                [py, "-c", "import langchain_graphrag_milvus.store, langchain_graphrag_milvus.retrievers"],
                False,
            ),
            ("--help", [*cli, "--help"], False),
            ("ingest docs/ --sync (new store: 4 files)", [*cli, "ingest", "docs", "--sync", *store], True),
            ("ingest docs/ --sync (nothing changed)", [*cli, "ingest", "docs", "--sync", *store], False),
            ("query (graph, k=2)", [*cli, "query", NANO_QUESTION, "-k", "2", *store], False),
            ("query --mode naive", [*cli, "query", NANO_QUESTION, "-k", "2", "--mode", "naive", *store], False),
            ("query --html answer.html", [*cli, "query", NANO_QUESTION, "-k", "2", "--html", "a.html", *store], False),
            ("graph export -o graph.graphml", [*cli, "graph", "export", "-o", "g.graphml", *store], False),
            ("stats", [*cli, "stats", *store], False),
        ]
        rows = []
        for name, argv, fresh in steps:
            walls, cpus = [], []
            for _ in range(args.repeat):
                if fresh:
                    shutil.rmtree(work / "demo.db", ignore_errors=True)
                wall, cpu = timed(argv, work)
                walls.append(wall)
                cpus.append(cpu)
            rows.append((name, statistics.median(walls), statistics.median(cpus)))
            print(f"  {name}: wall {rows[-1][1]:.2f}s, cpu {rows[-1][2]:.2f}s", file=sys.stderr, flush=True)
        load = os.getloadavg()[0]
        print(f"\nCLI on the demo corpus ({args.repeat} runs each, new process each; load average {load:.1f})\n")
        print("| command | wall s (median) | CPU s (median, user + system) |")
        print("|---|---|---|")
        for name, wall, cpu in rows:
            print(f"| {name} | {wall:.2f} | {cpu:.2f} |")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
