"""Benchmark (issue 25): the push walk's CPU on the walks real queries make, and a bit-for-bit check across checkouts.

    PYTHONPATH=. nice -n 10 .venv/bin/python benchmarks/bench_push_rounds.py \\
        --store STORE.db:PREFIX:../shared/data/musique100/questions_dev.jsonl [--store ...] \\
        [--dump walks.pkl] [--compare other.pkl]

Every question goes once through the default ``MilvusGraphRetriever`` (k=5, no LLM); each
``local_pagerank`` call it makes (the push walks of ``ppr_method="auto"``) is recorded, then
replayed in-process by ``PYTHONPATH``'s checkout: unmasked as recorded, and with a random relation
mask, passage mask and both (the tenant views' paths), once each for the results; the unmasked
ones ``--repeat`` times for ``thread_time`` per walk (p50, mean). ``--dump`` writes the replayed
results (every array, the residual and the work counts); ``--compare`` counts the fields that
differ from another checkout's dump (0: the same walk bit for bit). Run it against a *copy* of a
store (the first query may refresh its saved graph).
"""

from __future__ import annotations

import argparse
import json
import pickle
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np

FIELDS = ("entity_idx", "entity", "relation_idx", "relation", "passage_idx", "passage")
COUNTS = ("residual", "rounds", "pushes", "touched", "edges", "converged")


def replay(spec: str, repeat: int) -> tuple[str, list[tuple[Any, ...]], list[float]]:
    import langchain_graphrag_milvus.graph.local_ppr as local_ppr
    import langchain_graphrag_milvus.retrieval.walk_ranking as walk_ranking
    from langchain_graphrag_milvus import MilvusGraphRetriever, MilvusGraphStore
    from langchain_graphrag_milvus.embeddings import LocalMiniLMEmbeddings

    uri, prefix, questions_path = spec.split(":", 2)
    lines = Path(questions_path).read_text().splitlines()
    questions = [json.loads(line)["question"] for line in lines if line.strip()]
    store = MilvusGraphStore(LocalMiniLMEmbeddings(), uri=uri, collection_prefix=prefix)
    retriever = MilvusGraphRetriever(store=store, k=5)
    calls: list[dict[str, Any]] = []
    real = walk_ranking.local_pagerank

    def spy(graph: Any, **kwargs: Any) -> Any:
        calls.append(kwargs)
        return real(graph, **kwargs)

    walk_ranking.local_pagerank = spy  # type: ignore[assignment]
    try:
        for q in questions:
            retriever.invoke(q)
    finally:
        walk_ranking.local_pagerank = real
    graph = store.graph
    rng = np.random.default_rng(1)
    rmask, pmask = rng.random(graph.n_relations) < 0.7, rng.random(graph.n_passages) < 0.7
    masks: list[dict[str, Any]] = [{}, {"relation_mask": rmask}, {"passage_mask": pmask}]
    masks.append({"relation_mask": rmask, "passage_mask": pmask})
    results = []
    for kwargs in calls:
        for mask in masks:
            r = local_ppr.local_pagerank(graph, **{**kwargs, **mask})
            results.append(tuple(getattr(r, f) for f in FIELDS + COUNTS))
    cpu = []
    for _ in range(repeat):
        for kwargs in calls:
            start = time.thread_time()
            local_ppr.local_pagerank(graph, **kwargs)
            cpu.append(time.thread_time() - start)
    store.close()
    return f"{Path(uri).name}:{prefix}", results, cpu


def differing(ours: list[tuple[Any, ...]], theirs: list[tuple[Any, ...]]) -> int:
    """Fields (arrays by value and dtype, numbers by value) that differ, over all walks."""
    bad = abs(len(ours) - len(theirs))
    for a, b in zip(ours, theirs):
        for x, y in zip(a, b):
            if isinstance(x, np.ndarray):
                bad += not (np.array_equal(x, y) and x.dtype == y.dtype)
            else:
                bad += x != y
    return bad


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store", action="append", required=True, help="URI:PREFIX:QUESTIONS.jsonl")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--dump", type=Path)
    parser.add_argument("--compare", type=Path)
    args = parser.parse_args(argv)
    import langchain_graphrag_milvus

    print(f"package: {Path(langchain_graphrag_milvus.__file__).parent}")
    out: dict[str, list[tuple[Any, ...]]] = {}
    for spec in args.store:
        name, results, cpu = replay(spec, args.repeat)
        out[name] = results
        ms = [1000 * c for c in cpu]
        print(f"{name}: {len(results) // 4} walks; CPU ms / walk p50 {statistics.median(ms):.3f} "
              f"mean {statistics.mean(ms):.3f}")  # fmt: skip
    if args.dump:
        args.dump.write_bytes(pickle.dumps(out))
    if args.compare:
        theirs = pickle.loads(args.compare.read_bytes())  # noqa: S301  (a dump this script wrote)
        for name, results in out.items():
            print(f"{name}: {len(results)} replayed walks, fields differing from {args.compare}: "
                  f"{differing(results, theirs.get(name, []))}")  # fmt: skip


if __name__ == "__main__":
    main()
