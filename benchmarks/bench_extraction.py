"""Benchmark: offline (spaCy) triplet extraction speed, against spaCy's parse alone.

    python benchmarks/bench_extraction.py                     # musique100 + hotpotqa100, all passages
    python benchmarks/bench_extraction.py --limit 300

Per data set, in the same process and on the same texts (``title`` separate, ``text``
parsed, as the store does with ``"title\\ntext"`` records):

* baseline: ``nlp.pipe`` alone (tagger, parser, NER, lemmatizer), no rules;
* the extractor: ``OfflineTripletExtractor.extract_many`` (the same parse plus the rules);

and the triplets per passage it finds. One process, no cache. Throughput is given per
wall-clock second and per CPU second of this process (``time.process_time``): on a shared,
loaded machine the first moves with the load; the second is what one free core does.
The load average is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from langchain_graphrag_milvus.ingest.offline import create_offline_triplet_extractor  # noqa: E402

DATA = ROOT.parent / "shared" / "data"


def load(path: Path, limit: int | None) -> list[dict[str, str]]:
    rows = []
    with path.open(encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            rows.append({"title": row["title"], "text": row["text"]})
            if limit is not None and len(rows) >= limit:
                break
    return rows


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int)
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args()
    extractor = create_offline_triplet_extractor(batch_size=args.batch_size)
    nlp = extractor.nlp
    nlp.pipe(["warm up the pipeline."] * 4)
    print(f"pipeline {extractor.name}, batch {args.batch_size}, 1 process, cpus {os.cpu_count()}")
    print(f"load average before: {' '.join(f'{x:.1f}' for x in os.getloadavg())}\n")
    print(
        "| data set | passages | spaCy parse only: passages/s (per CPU s) "
        "| offline extractor: passages/s (per CPU s) | triplets/passage |"
    )
    print("|---|---|---|---|---|")
    for name in ("musique100", "hotpotqa100"):
        rows = load(DATA / name / "passages.jsonl", args.limit)
        started, cpu = time.perf_counter(), time.process_time()
        for _ in nlp.pipe((r["text"] for r in rows), batch_size=args.batch_size):
            pass
        parse_s, parse_cpu = time.perf_counter() - started, time.process_time() - cpu
        started, cpu = time.perf_counter(), time.process_time()
        results = extractor.extract_many(rows)
        extract_s, extract_cpu = time.perf_counter() - started, time.process_time() - cpu
        per = sum(len(r["triplets"]) for r in results) / len(rows)
        n = len(rows)
        print(
            f"| {name} | {n} | {n / parse_s:.1f} ({n / parse_cpu:.1f}) "
            f"| {n / extract_s:.1f} ({n / extract_cpu:.1f}) | {per:.1f} |"
        )
    print(f"\nload average after: {' '.join(f'{x:.1f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
