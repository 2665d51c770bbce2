"""Benchmark (issue 25): graph vs naive query on Milvus Lite, the embedded default, with MiniLM.

    nice -n 10 .venv/bin/python benchmarks/bench_query_lite.py \\
        --store STORE.db:PREFIX:../shared/data/musique100/questions_dev.jsonl [--store ...] [--rounds 2]

Each ``--store`` is a Milvus Lite database built with the local MiniLM model (e.g. a
``cv_ranking.py`` or ``eval`` store under ``.cache/``; copy it first if another process holds
it), its collection prefix and the questions to ask (``question`` and ``gold_passage_ids``).
Every question goes through the default ``MilvusGraphRetriever`` (k=5, no LLM), the same
retriever on a store with ``local_search="off"`` (every entity and relation search made by
Milvus, as before client-side vectors) and the naive retriever, rotating which goes first,
``--rounds`` times after a warm-up. Every Milvus client call is timed by a spy on
``MilvusClient`` (``scale_worker.MilvusSpy``), so per query it prints:
wall p50/p99, the query embedding, Milvus time, the library's own time (wall minus both), the
calls made and the **waves**: groups of calls in a row (calls issued together count once), and
graph ÷ naive at p50, all from the same run. Recall@5 is printed as a check that what is
timed is the retriever of the eval figures.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from scale_corpus import percentile  # noqa: E402
from scale_worker import MilvusSpy, split_time  # noqa: E402
from synthetic import print_table  # noqa: E402


class TimedEmbeddings:
    """The MiniLM embeddings, recording ``(start, end)`` of every call (``intervals``)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.intervals: list[tuple[float, float]] = []

    def _timed(self, fn: Any, *args: Any) -> Any:
        start = time.perf_counter()
        try:
            return fn(*args)
        finally:
            self.intervals.append((start, time.perf_counter()))

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self._timed(self.inner.embed_documents, texts)  # type: ignore[no-any-return]

    def embed_query(self, text: str) -> list[float]:
        return self._timed(self.inner.embed_query, text)  # type: ignore[no-any-return]

    async def aembed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.embed_documents(texts)

    async def aembed_query(self, text: str) -> list[float]:
        return self.embed_query(text)


def run_store(spec: str, rounds: int, warmup: int, limit: int | None) -> dict[str, Any]:
    from langchain_core.embeddings import Embeddings

    from langchain_graphrag_milvus import MilvusGraphRetriever, MilvusGraphStore
    from langchain_graphrag_milvus.embeddings import LocalMiniLMEmbeddings

    uri, prefix, questions_path = spec.split(":", 2)
    questions = [json.loads(line) for line in Path(questions_path).read_text().splitlines() if line.strip()]
    questions = questions[:limit] if limit else questions
    embedding = TimedEmbeddings(LocalMiniLMEmbeddings())
    Embeddings.register(TimedEmbeddings)
    spy = MilvusSpy()
    spy.install()
    store = MilvusGraphStore(embedding, uri=uri, collection_prefix=prefix)  # type: ignore[arg-type]
    # the same data with every search made by Milvus (the store before client-side vectors)
    remote = MilvusGraphStore(embedding, uri=uri, collection_prefix=prefix, local_search="off")  # type: ignore[arg-type]
    retrievers = {
        "graph": MilvusGraphRetriever(store=store, k=5),
        "graph, Milvus search": MilvusGraphRetriever(store=remote, k=5),
        "naive": store.as_naive_retriever(k=5),
    }
    for q in questions[:warmup]:
        for r in retrievers.values():
            r.invoke(q["question"])
    out: dict[str, list[dict[str, Any]]] = {name: [] for name in retrievers}
    for round_ in range(rounds):
        for i, q in enumerate(questions):
            shift = (i + round_) % len(retrievers)
            order = list(retrievers)[shift:] + list(retrievers)[:shift]
            for name in order:
                lo = time.perf_counter()
                docs = retrievers[name].invoke(q["question"])
                split = split_time(spy, embedding, lo, time.perf_counter())
                ids = {d.metadata.get("_passage_id") for d in docs}
                gold = set(q["gold_passage_ids"])
                split["recall"] = len(ids & gold) / len(gold)
                out[name].append(split)
    store.close()
    remote.close()
    return {"store": f"{Path(uri).name}:{prefix}", "questions": len(questions), **out}


def summary(splits: list[dict[str, Any]]) -> dict[str, float]:
    out = {f"{part}_{q}": percentile([s[part] * 1000 for s in splits], q) for part in
           ("total", "milvus", "embed", "library") for q in (50, 99)}  # fmt: skip
    out["calls"] = percentile([s["calls"] for s in splits], 50)
    out["waves_p50"] = percentile([s["waves"] for s in splits], 50)
    out["waves_max"] = max(s["waves"] for s in splits)
    out["waves_mean"] = sum(s["waves"] for s in splits) / len(splits)
    out["recall"] = 100 * sum(s["recall"] for s in splits) / len(splits)
    return out


def report(results: list[dict[str, Any]]) -> None:
    rows: list[list[str]] = []
    for res in results:
        n = summary(res["naive"])
        for name in [k for k in res if k not in ("store", "questions")]:
            s = g = summary(res[name])
            rows.append([
                res["store"], name, f"{s['total_50']:.1f} / {s['total_99']:.1f}", f"{s['embed_50']:.1f}",
                f"{s['milvus_50']:.1f}", f"{s['library_50']:.1f}", f"{s['calls']:.0f}",
                f"{s['waves_p50']:.0f} / {s['waves_mean']:.2f} / {s['waves_max']:.0f}", f"{s['recall']:.1f}",
                f"{g['total_50'] / n['total_50']:.2f}x" if name != "naive" else "",
                f"{(g['total_50'] - g['embed_50']) / max(n['total_50'] - n['embed_50'], 1e-9):.2f}x"
                if name != "naive" else "",
            ])  # fmt: skip
    headers = ["store", "retriever", "wall p50 / p99 ms", "embed p50", "Milvus p50", "library p50", "calls",
               "waves p50 / mean / max", "R@5", "graph ÷ naive p50", "÷ without embedding"]  # fmt: skip
    print_table(rows, [(h, lambda r, i=i: r[i]) for i, h in enumerate(headers)])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store", action="append", required=True, help="URI:PREFIX:QUESTIONS.jsonl")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--limit", type=int, help="only the first N questions")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    results = [run_store(spec, args.rounds, args.warmup, args.limit) for spec in args.store]
    if args.json:
        args.json.write_text(json.dumps(results))
    report(results)


if __name__ == "__main__":
    main()
