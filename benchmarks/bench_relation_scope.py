"""Benchmark: the relation search of ``relation_scope="entities"``, by primary key or by entity, on a loaded store.

    .venv/bin/python benchmarks/bench_relation_scope.py --uri http://127.0.0.1:19530 --prefix PREFIX \\
        --questions questions.json [--graph-path DIR] [--queries 60]

For each question (``{"question": ...}`` rows, e.g. ``bench_scale.py``'s ``questions_<n>.json``
on the collections it loaded, kept with ``scale_worker.py ingest``), in the same run and on the
same collections: the relation search with no filter (every relation ranked), with the entity
filter (``subject_id in [...] or object_id in [...]``), with the primary-key filter naming the
graph's relations of the linked entities, and the naive passage search for scale. Both filters
must return the same hits (checked). Prints p50 / p90 per search, then the two filters' p50 by
how many relations the linked entities have: what ``graph_pipeline.PK_SCOPE_MAX`` is set from.
Needs the hash embedding the collections were loaded with (``scale_corpus.HashEmbedding``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale_corpus import HashEmbedding  # noqa: E402

from langchain_graphrag_milvus import MilvusGraphStore  # noqa: E402
from langchain_graphrag_milvus.graph.csr import gather_rows  # noqa: E402
from langchain_graphrag_milvus.graph.ids import key_to_id  # noqa: E402
from langchain_graphrag_milvus.milvus import expr  # noqa: E402
from langchain_graphrag_milvus.retrieval.stages import exact_entities  # noqa: E402

BUCKETS = ((0, 100), (100, 500), (500, 2000), (2000, 5000), (5000, None))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--uri", required=True)
    parser.add_argument("--prefix", required=True)
    parser.add_argument("--questions", required=True, type=Path)
    parser.add_argument("--graph-path", help="a saved index of these collections (else the graph is rebuilt)")
    parser.add_argument("--queries", type=int, default=60)
    args = parser.parse_args(argv)
    embedding = HashEmbedding()
    extra = {"graph_path": args.graph_path} if args.graph_path else {}
    store = MilvusGraphStore(embedding, uri=args.uri, collection_prefix=args.prefix, **extra)
    graph, client = store.graph, store._connection.client
    relations, passages = (store._connection.collection_name(k) for k in ("relations", "passages"))
    times: dict[str, list[float]] = {"every relation": [], "entity filter": [], "primary keys": [], "passages": []}
    counts: list[int] = []
    for q in json.loads(args.questions.read_text())[: args.queries]:
        text = q["question"]
        linked = np.unique([e for e in exact_entities(graph, store.entity_linker().find(text), None) if e >= 0])
        if not linked.size:
            continue
        _, rels = gather_rows(graph.ent_rel, linked.astype(np.int32))
        rel_ids = [key_to_id(k) for k in graph.relations.keys[np.unique(rels)].tolist()]
        ent_ids = [key_to_id(k) for k in graph.entities.keys[linked].tolist()]
        if not rel_ids:
            continue
        counts.append(len(rel_ids))
        by_entity = expr.any_of(expr.in_list("subject_id", ent_ids), expr.in_list("object_id", ent_ids))
        vector = embedding.embed_query(text)
        answers = {}
        for name, collection, filter_expr, limit in (
            ("every relation", relations, "", 50),
            ("entity filter", relations, by_entity, 50),
            ("primary keys", relations, expr.in_list("pk", rel_ids), 50),
            ("passages", passages, "", 5),
        ):
            started = time.perf_counter()
            hits = client.search(collection, data=[vector], filter=filter_expr, limit=limit, anns_field="vector")
            times[name].append(time.perf_counter() - started)
            answers[name] = sorted(h["id"] for h in hits[0])
        if answers["entity filter"] != answers["primary keys"]:
            raise SystemExit(f"the two filters disagree on {text!r}")
    n = np.array(counts)
    print(f"{len(counts)} questions with linked entities; relations of the linked entities p50 {np.median(n):.0f}")
    print("| search | p50 ms | p90 ms |\n|---|---|---|")
    for name, values in times.items():
        ms = np.array(values) * 1e3
        print(f"| {name} | {np.percentile(ms, 50):.1f} | {np.percentile(ms, 90):.1f} |")
    by_entity_ms, by_key_ms = np.array(times["entity filter"]) * 1e3, np.array(times["primary keys"]) * 1e3
    print("\n| linked entities' relations | questions | entity filter p50 ms | primary keys p50 ms |")
    print("|---|---|---|---|")
    for lo, hi in BUCKETS:
        mask = (n >= lo) & (n < hi if hi is not None else True)
        if mask.any():
            label = f"{lo:,}–{hi:,}" if hi is not None else f"≥ {lo:,}"
            medians = f"{np.median(by_entity_ms[mask]):.1f} | {np.median(by_key_ms[mask]):.1f}"
            print(f"| {label} | {int(mask.sum())} | {medians} |")
    store.close()


if __name__ == "__main__":
    main()
