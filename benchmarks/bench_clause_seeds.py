"""Per-query cost of clause seeds: naive, graph without and with ``ppr_clause_seeds``, interleaved.

    nice -n 10 .venv/bin/python benchmarks/bench_clause_seeds.py --db STORE --prefix techdocs

STORE: a techdocs store made by ``bench_techdocs.py`` (or ``ingest CORPUS --extractor offline``).
Questions: ``../shared/data/techdocs/questions_dev.jsonl``; compound (split by
``split_clauses``) and one-part questions are reported apart; best of ``--rounds`` per
question, p50 over questions, ratios to naive measured in the same run.
"""

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from langchain_graphrag_milvus import MilvusGraphRetriever, MilvusGraphStore  # noqa: E402
from langchain_graphrag_milvus.embeddings import LocalMiniLMEmbeddings  # noqa: E402
from langchain_graphrag_milvus.text.clauses import split_clauses  # noqa: E402

DATA = ROOT.parent / "shared" / "data" / "techdocs"


def p50(times: dict[str, list[float]], group: list[str]) -> float:
    """Median over the questions of ``group`` of each one's best time."""
    return statistics.median(min(times[q]) for q in group)


def main() -> int:
    """Time the three retrievers on every question, interleaved; print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", required=True)
    parser.add_argument("--prefix", default="techdocs")
    parser.add_argument("--questions", type=Path, default=DATA / "questions_dev.jsonl")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    qs = [json.loads(line)["question"] for line in args.questions.open()]
    store = MilvusGraphStore(LocalMiniLMEmbeddings(), uri=args.db, collection_prefix=args.prefix)
    methods = {
        "naive": store.as_naive_retriever(k=5),
        "graph, `ppr_clause_seeds=False`": MilvusGraphRetriever(store=store, k=5, ppr_clause_seeds=False),
        "graph, clause seeds (default)": MilvusGraphRetriever(store=store, k=5),
    }
    for retriever in methods.values():  # warm: the graph, the model, the held tables
        for q in qs[:5]:
            retriever.invoke(q)
    times: dict[str, dict[str, list[float]]] = {name: {q: [] for q in qs} for name in methods}
    for _round in range(args.rounds):
        for q in qs:
            for name, retriever in methods.items():
                started = time.perf_counter()
                retriever.invoke(q)
                times[name][q].append(1000 * (time.perf_counter() - started))
    store.close()
    comp = [q for q in qs if split_clauses(q)]
    single = [q for q in qs if not split_clauses(q)]
    print(f"| method | p50 ms, compound (n = {len(comp)}) | p50 ms, one-part (n = {len(single)}) | ÷ naive p50 |")  # noqa: T201
    print("|---|---|---|---|")  # noqa: T201
    for name, by_q in times.items():
        a, b = p50(by_q, comp), p50(by_q, single)
        ratio = f"{a / p50(times['naive'], comp):.2f}x / {b / p50(times['naive'], single):.2f}x"
        print(f"| {name} | {a:.1f} | {b:.1f} | {ratio} |")  # noqa: T201
    return 0


if __name__ == "__main__":
    sys.exit(main())
