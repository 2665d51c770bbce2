"""Benchmark (issue 25): which thread of a sync ``Gather(LinkEntities, Embed)`` embeds the query.

    PYTHONPATH=. nice -n 10 .venv/bin/python benchmarks/bench_gather_order.py \\
        --store STORE.db:PREFIX:../shared/data/musique100/questions_dev.jsonl [--rounds 3]

A warm graph query on Milvus Lite starts with the offline linker (Python, holding the GIL) and the
query's embedding (ONNX Runtime, which releases it), answered together by the sync executor's
``gather_sync``: one effect in the calling thread, the others in its pool. Per question, in turn,
in one process:

* ``gather_sync``: the package's executor (this checkout's choice of the calling thread's effect);
* ``linker in caller``: the embedding submitted to the same pool and the linker run in the calling
  thread (the executor's scheduling before the embedding was made the calling thread's);
* ``embedding in caller``: the reverse, written out the same way;
* ``embedding only``: the floor (what a naive query pays for its embedding).

Wall time per call, p50 and mean (ms). The same linker and embedding calls are made either way,
so the answers are equal (checked).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store", action="append", required=True, help="URI:PREFIX:QUESTIONS.jsonl")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    from langchain_graphrag_milvus import MilvusGraphRetriever, MilvusGraphStore
    from langchain_graphrag_milvus.embeddings import LocalMiniLMEmbeddings
    from langchain_graphrag_milvus.retrieval.effects import Embed, LinkEntities
    from langchain_graphrag_milvus.retrieval.executors import _pool, answer_sync, gather_sync

    def caller_runs(first: Any, second: Any, store: Any) -> list[Any]:
        future = _pool().submit(answer_sync, second, store)
        return [answer_sync(first, store), future.result()]

    for spec in args.store:
        uri, prefix, questions_path = spec.split(":", 2)
        lines = Path(questions_path).read_text().splitlines()
        questions = [json.loads(line)["question"] for line in lines if line.strip()]
        store = MilvusGraphStore(LocalMiniLMEmbeddings(), uri=uri, collection_prefix=prefix)
        retriever = MilvusGraphRetriever(store=store, k=5)
        for q in questions[:5]:  # warm: the graph, the linker's index, the embedding sessions
            retriever.invoke(q)
        ways = {
            "gather_sync": lambda link, emb, s=store: gather_sync((link, emb), s),
            "linker in caller": lambda link, emb, s=store: caller_runs(link, emb, s),
            "embedding in caller": lambda link, emb, s=store: caller_runs(emb, link, s)[::-1],
            "embedding only": lambda link, emb, s=store: [None, answer_sync(emb, s)],
        }
        times: dict[str, list[float]] = {name: [] for name in ways}
        for r in range(args.rounds):
            for i, q in enumerate(questions):
                link, emb = LinkEntities(q, None), Embed((q,))
                answers = []
                names = list(ways)
                names = names[(i + r) % len(names) :] + names[: (i + r) % len(names)]  # rotate who goes first
                for name in names:
                    start = time.perf_counter()
                    answers.append((name, ways[name](link, emb)))
                    times[name].append(time.perf_counter() - start)
                full = [a for name, a in answers if name != "embedding only"]
                if any(a != full[0] for a in full):
                    sys.exit(f"answers differ for {q!r}")
        print(f"\n{Path(uri).name}:{prefix}: {len(questions)} questions x {args.rounds} rounds (wall ms per call)")
        for name, values in times.items():
            ms = [1000 * v for v in values]
            print(f"  {name:20s} p50 {statistics.median(ms):6.2f}  mean {statistics.mean(ms):6.2f}")
        store.close()


if __name__ == "__main__":
    main()
