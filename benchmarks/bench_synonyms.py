"""Does synonym linking (``synonym_threshold``) help retrieval? Recall@2/@5 with and without.

Ingests the same passages once per setting (a Milvus Lite store under ``.cache/``, one
collection prefix per threshold; embeddings come from the shared on-disk cache, so only
the first run pays for them) and evaluates the naive and graph retrievers on the same
questions. The row with threshold ``off`` is the baseline of the same run.

Run (from the repository root)::

    .venv/bin/python benchmarks/bench_synonyms.py \
        --passages ../shared/data/musique100/passages.jsonl \
        --questions ../shared/data/musique100/questions_dev.jsonl --thresholds off 0.9 0.8
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from langchain_graphrag_milvus.cli.evaluation import evaluate, load_questions
from langchain_graphrag_milvus.cli.main import DEFAULT_CACHE, _embeddings, _file_tag
from langchain_graphrag_milvus.store import MilvusGraphStore


def _threshold(value: str) -> float | None:
    return None if value == "off" else float(value)


def main() -> None:
    """Print one table row per threshold."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--passages", type=Path, required=True)
    parser.add_argument("--questions", type=Path, required=True)
    parser.add_argument("--thresholds", nargs="+", default=["off", "0.9", "0.8"])
    parser.add_argument("--embeddings", choices=["local", "fake"], default="local")
    parser.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE)
    args = parser.parse_args()
    args.cache_dir.mkdir(parents=True, exist_ok=True)
    embedding, model = _embeddings(args.embeddings, args.cache_dir)
    questions = load_questions(args.questions)
    uri = str(args.cache_dir / "bench_synonyms.db")
    rows = []
    for raw in args.thresholds:
        threshold = _threshold(raw)
        tag = "off" if threshold is None else str(threshold).replace(".", "")
        prefix = f"syn_{tag}_{model.replace('-', '_').lower()}_{_file_tag(args.passages)}"
        store = MilvusGraphStore(embedding, uri=uri, collection_prefix=prefix, synonym_threshold=threshold)
        started = time.perf_counter()
        store.add_jsonl(args.passages, show_progress=False)
        ingest_s = time.perf_counter() - started
        links = int(store.graph.synonyms.indices.size)
        print(
            f"[{raw}] ingested in {ingest_s:.0f} s, {links} synonym links; evaluating ...", file=sys.stderr, flush=True
        )
        result = evaluate(store, questions, pools={}, show_progress=False)
        rows.append((raw, ingest_s, links, result.methods))
        m = result.methods
        print(
            f"[{raw}] graph R@2 {100 * m['graph']['recall@2']:.1f} R@5 {100 * m['graph']['recall@5']:.1f}; naive R@2 "
            f"{100 * m['naive']['recall@2']:.1f} R@5 {100 * m['naive']['recall@5']:.1f}",
            file=sys.stderr,
            flush=True,
        )
        store.close()
    print(f"{len(questions)} questions, {model}, exact (FLAT) search")  # noqa: T201
    header = "| synonym_threshold | synonym links | ingest s | naive R@2 | naive R@5 | graph R@2 | graph R@5 |"
    print(header + " similarity R@2 | similarity R@5 |")  # noqa: T201
    print("|---|---|---|---|---|---|---|---|---|")  # noqa: T201
    for raw, ingest_s, links, methods in rows:
        cells = [
            f"{100 * methods[m][f'recall@{k}']:.1f}" for m in ("naive", "graph", "graph_similarity") for k in (2, 5)
        ]
        print(f"| {raw} | {links} | {ingest_s:.0f} | " + " | ".join(cells) + " |")  # noqa: T201


if __name__ == "__main__":
    main()
