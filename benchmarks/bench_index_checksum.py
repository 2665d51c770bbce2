"""Benchmark: what verifying a saved graph index costs (lengths + CRC-32 of every file) on load.

    python benchmarks/bench_index_checksum.py [--relations 100000 1000000]

Builds a synthetic graph (the generator of ``bench_expansion.py``), saves it with
``GraphIndex.save`` (which records every file's length and CRC-32 in ``manifest.json``) and
loads it memory-mapped with the check (the default) and without it (``check=False``, the
baseline: what loading cost before the check existed). Best of 5 loads each, page cache warm.
"""

from __future__ import annotations

import argparse
import gc
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from synthetic import generate  # noqa: E402

from langchain_graphrag_milvus.graph import GraphIndex, persist  # noqa: E402


def best(fn, repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--relations", type=int, nargs="+", default=[100_000, 1_000_000])
    args = parser.parse_args()
    print("| relations | index files MiB | save s | load, no check (baseline) s | load + verify s | verify MiB/s |")
    print("|---|---|---|---|---|---|")
    for n in args.relations:
        syn = generate(n, seed=42)
        g = GraphIndex.from_relations(
            relation_keys=syn.relation_keys,
            subject_keys=syn.subject_keys,
            object_keys=syn.object_keys,
            passage_ids=syn.passage_ids,
        )
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "index"
            start = time.perf_counter()
            g.save(path)
            save_s = time.perf_counter() - start
            mib = sum(f.stat().st_size for f in path.iterdir()) / 2**20
            plain = best(lambda p=path: persist.load(p, check=False))
            checked = best(lambda p=path: persist.load(p))
            rate = f"{mib / (checked - plain):.0f}" if checked > plain else "— (within noise)"
            print(f"| {n:,} | {mib:.1f} | {save_s:.2f} | {plain:.3f} | {checked:.3f} | {rate} |")


if __name__ == "__main__":
    main()
