"""The long profile of the model-based store test (tests/integration/test_store_model.py): >= 10,000 checked steps.

Runs the hypothesis state machine with random (not fixed) seeds: ``--lite-runs`` runs on
Milvus Lite and ``--server-runs`` on a Milvus server (``MILVUS_URI``, else the test session
starts its own), each run a sequence of up to 25 writes and filtered retrievals with hostile
ids, sources and metadata, each step followed by a full comparison of the store with the
model. Prints one table: runs, steps (the generated cases), typed refusals of invalid input,
failures and time per backend.

    python benchmarks/store_model_long.py                  # or: make model-test-long
    python benchmarks/store_model_long.py --lite-runs 40 --server-runs 5   # a quick look
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

ROOT = Path(__file__).resolve().parents[1]


def run(backend: str, runs: int, stats: Path) -> tuple[int, float, str]:
    env = {
        **os.environ,
        "STORE_MODEL_PROFILE": "long",
        "STORE_MODEL_EXAMPLES": str(runs),
        "STORE_MODEL_STATS": str(stats),
    }
    select = ["-m", "not server"] if backend == "lite" else ["-k", "server"]
    cmd = [sys.executable, "-m", "pytest", "tests/integration/test_store_model.py", "-q", "-p", "no:cacheprovider"]
    cmd += ["--timeout=0", *select]  # the suite's 600 s per-test limit would cut a long run
    started = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    tail = [line for line in proc.stdout.splitlines() if line.startswith(("E   ", "FAILED", "ERROR"))][:12]
    return proc.returncode, seconds, "\n".join(line[:300] for line in tail)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lite-runs", type=int, default=500)
    parser.add_argument("--server-runs", type=int, default=45)
    args = parser.parse_args()
    stats = Path(tempfile.mkdtemp(prefix="store-model-")) / "stats.jsonl"
    results = []
    for backend, runs in (("lite", args.lite_runs), ("server", args.server_runs)):
        if runs <= 0:
            continue
        code, seconds, failure = run(backend, runs, stats)
        results.append((backend, code, seconds, failure))
        print(f"{backend}: exit {code} after {seconds:.0f} s", flush=True)
    rows = [json.loads(line) for line in stats.read_text().splitlines()] if stats.exists() else []
    print("\n| backend | runs | steps (cases) | typed refusals | failures | seconds |")
    print("|---|---|---|---|---|---|")
    total_steps = 0
    for backend, code, seconds, _ in results:
        mine = [r for r in rows if r["backend"] == backend]
        runs_done = sum(r.get("runs", 0) for r in mine)
        steps = sum(r.get("steps", 0) for r in mine)
        refused = sum(r.get("refused", 0) for r in mine)
        total_steps += steps
        print(f"| {backend} | {runs_done} | {steps} | {refused} | {0 if code == 0 else 1} | {seconds:.0f} |")
    print(f"\ntotal steps: {total_steps}")
    for backend, code, _, failure in results:
        if code != 0:
            print(f"\n{backend} failed:\n{failure}")
    sys.exit(0 if all(code == 0 for _, code, _, _ in results) else 1)


if __name__ == "__main__":
    main()
