"""Benchmark: a first load into empty collections, today's checked path vs the bulk path, same run.

    python benchmarks/bench_bulk_load.py --uri http://127.0.0.1:19530 --passages 12000
    python benchmarks/bench_bulk_load.py --fold-passages 200000 --passages 0   # graph folding only

Four measurements, each against a baseline measured in the same run:

1. **Ingest rate** (passages/s) of ``add_documents`` on the scale benchmark's corpus
   (``scale_corpus.make_corpus``: ~9 given triplets per passage, 5% of relations stated by a
   second passage) with its hash embedding (384 dims, nearly free): the checked path
   (``bulk_load=False``: every chunk asks Milvus which passages, entities and relations
   exist) vs the bulk path (the load started on empty collections: what exists is what it
   wrote, known in memory). Time is split into embedding, Milvus calls (timed at the
   client; reads = ``query``, writes = ``insert``/``upsert``) and the library (the rest).
   ``--reps`` loads per path, alternated; medians shown.
2. **First query's graph** after the load: the checked path's cache rebuilt the graph from
   Milvus on first use (it was not loaded); the bulk path kept the graph it built. The bulk
   graph is checked equal (same relations, endpoints and passage sets) to a rebuild.
3. **Rebuild** of the graph from Milvus: one sequential iterator per collection vs
   ``REBUILD_PARALLEL`` key ranges read at once (``milvus/graph_read.py``), alternated.
4. **Folding** a load's chunks into the graph (pure, no Milvus; ``--fold-passages``):
   ``add_relations`` per chunk (O(graph) per chunk) vs gathering the chunks and folding
   once at the end (``milvus/graph_fold.py``); both results checked equal.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_updates import signature  # noqa: E402
from scale_corpus import HashEmbedding, make_corpus  # noqa: E402
from synthetic import generate, print_table  # noqa: E402

from langchain_graphrag_milvus import MilvusGraphStore  # noqa: E402
from langchain_graphrag_milvus.graph import GraphIndex  # noqa: E402
from langchain_graphrag_milvus.milvus.graph_cache import REBUILD_PARALLEL  # noqa: E402
from langchain_graphrag_milvus.milvus.graph_fold import GraphDelta, PendingFold  # noqa: E402

MILVUS_CALLS = (
    "insert",
    "upsert",
    "delete",
    "query",
    "search",
    "has_collection",
    "describe_collection",
    "alter_collection_properties",
    "create_collection",
    "create_index",
    "load_collection",
)


def corpus(n_passages: int, seed: int = 0) -> list[Document]:
    """The scale benchmark's corpus (``scale_corpus.make_corpus``): ~9 given triplets per passage."""
    return [
        Document(id=r["id"], page_content=r["text"], metadata={"title": r["title"], "triplets": r["triplets"]})
        for r in make_corpus(n_passages, seed=seed).records
    ]


class Timer:
    """Seconds spent in wrapped calls."""

    def __init__(self) -> None:
        self.seconds = 0.0

    def wrap(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - started

        return timed


class TimedEmbedding(Embeddings):
    def __init__(self, inner: Embeddings, timer: Timer) -> None:
        self.inner, self.timer = inner, timer

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.timer.wrap(self.inner.embed_documents)(texts)  # type: ignore[no-any-return]

    def embed_query(self, text: str) -> list[float]:
        return self.timer.wrap(self.inner.embed_query)(text)  # type: ignore[no-any-return]


def load(uri: str, docs: list[Document], mode: str, dim: int) -> dict[str, Any]:
    """One first load in ``mode`` ("checked" or "bulk") under its own prefix; the graph's first use after it."""
    embed_t = Timer()
    calls = {name: Timer() for name in MILVUS_CALLS}
    store = MilvusGraphStore(
        TimedEmbedding(HashEmbedding(dim), embed_t), uri=uri, collection_prefix=f"bench_bulk_{mode}"
    )
    store.drop()
    if mode == "checked":
        context = store._ingest_context
        store._writes._context = lambda: dataclasses.replace(context(), bulk_load=False)  # type: ignore[attr-defined]
    client = store._connection.client
    for name in MILVUS_CALLS:
        setattr(client, name, calls[name].wrap(getattr(client, name)))
    deltas: list[GraphDelta] = []
    apply = store._graph_cache.apply
    store._graph_cache.apply = lambda d: (deltas.append(d), apply(d))[1]  # type: ignore[method-assign]
    started = time.perf_counter()
    report = store.add_documents(docs)
    seconds = time.perf_counter() - started
    assert report.bulk_load == (mode == "bulk"), report
    loaded = store._graph_cache.loaded is not None
    started = time.perf_counter()
    graph = store.graph
    store._graph_cache.entity_names()
    first_s = time.perf_counter() - started
    milvus = sum(t.seconds for t in calls.values())
    library = seconds - embed_t.seconds - milvus
    return {
        "mode": mode,
        "store": store,
        "graph": graph,
        "deltas": deltas,
        "passages": report.passages_added,
        "relations": graph.n_relations,
        "seconds": seconds,
        "rate": report.passages_added / seconds,
        "embed": embed_t.seconds,
        "milvus": milvus,
        "reads": calls["query"].seconds,
        "writes": calls["insert"].seconds + calls["upsert"].seconds,
        "library": library,
        "graph_loaded": loaded,
        "first_graph_s": first_s,
    }


def median_run(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The last run's objects with the median of each measured number."""
    out = dict(runs[-1])
    for key in ("seconds", "embed", "milvus", "reads", "writes", "library", "first_graph_s"):
        out[key] = statistics.median(r[key] for r in runs)
    out["rate"] = out["passages"] / out["seconds"]
    return out


def rebuild(store: MilvusGraphStore, reps: int) -> list[dict[str, Any]]:
    cache = store._graph_cache
    times: dict[int, list[float]] = {1: [], REBUILD_PARALLEL: []}
    sigs = {}
    for _ in range(reps):
        for parallel in times:
            cache.rebuild_parallel = parallel
            started = time.perf_counter()
            graph = cache.rebuild()
            times[parallel].append(time.perf_counter() - started)
            sigs[parallel] = signature(graph)
    assert sigs[1] == sigs[REBUILD_PARALLEL], "parallel rebuild differs from the sequential one"
    base = statistics.median(times[1])
    return [
        {"how": f"{p} range(s)", "seconds": statistics.median(t), "ratio": statistics.median(t) / base}
        for p, t in times.items()
    ]


def synthetic_deltas(n_passages: int, chunk: int = 256) -> list[GraphDelta]:
    """The deltas a load of ``n_passages`` would fold (one per chunk of passages), without Milvus."""
    syn = generate(n_passages * 9, seed=11)
    by_chunk: dict[int, dict[int, tuple[int, int, list[str]]]] = {}
    for r, s, o, pids in zip(
        syn.relation_keys.tolist(), syn.subject_keys.tolist(), syn.object_keys.tolist(), syn.passage_ids
    ):
        for pid in pids:
            c = int(pid[1:]) // chunk if pid[1:].isdigit() else hash(pid) % max(1, n_passages // chunk)
            rows = by_chunk.setdefault(c, {})
            rows.setdefault(r, (s, o, []))[2].append(pid)
    return [
        GraphDelta(
            relation_keys=list(rows),
            subject_keys=[v[0] for v in rows.values()],
            object_keys=[v[1] for v in rows.values()],
            passage_ids=[v[2] for v in rows.values()],
        )
        for _, rows in sorted(by_chunk.items())
    ]


def fold(deltas: list[GraphDelta]) -> list[dict[str, Any]]:
    started = time.perf_counter()
    graph = GraphIndex.empty()
    per_chunk = []
    for d in deltas:
        t0 = time.perf_counter()
        graph = graph.add_relations(
            relation_keys=np.array(d.relation_keys, np.uint64),
            subject_keys=np.array(d.subject_keys, np.uint64),
            object_keys=np.array(d.object_keys, np.uint64),
            passage_ids=d.passage_ids,
        )
        per_chunk.append(time.perf_counter() - t0)
    sequential = time.perf_counter() - started
    started = time.perf_counter()
    pending = PendingFold()
    for d in deltas:
        pending.add(d)
    batched, _ = pending.fold_into(GraphIndex.empty())
    gathered = time.perf_counter() - started
    assert signature(batched) == signature(graph), "gathered folds differ from per-chunk folds"
    tenth = max(1, len(per_chunk) // 10)
    return [
        {
            "how": f"add_relations per chunk ({len(deltas)} chunks; first/last tenth "
            f"{1000 * statistics.mean(per_chunk[:tenth]):.0f}/{1000 * statistics.mean(per_chunk[-tenth:]):.0f} "
            "ms per chunk)",
            "relations": graph.n_relations,
            "seconds": sequential,
            "ratio": 1.0,
        },
        {
            "how": "gathered, one fold at the end of the load",
            "relations": batched.n_relations,
            "seconds": gathered,
            "ratio": gathered / sequential,
        },
    ]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--uri", default="http://127.0.0.1:19530")
    parser.add_argument("--passages", type=int, default=12_000, help="corpus size (0: skip the Milvus part)")
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--reps", type=int, default=2, help="loads per path, alternated (medians shown)")
    parser.add_argument("--rebuild-reps", type=int, default=2)
    parser.add_argument("--fold-passages", type=int, default=0, help="also time folding a load of this size")
    parser.add_argument("--keep", action="store_true", help="keep the collections (default: drop them)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    out: dict[str, Any] = {}
    if args.passages:
        docs = corpus(args.passages)
        every: list[dict[str, Any]] = []
        for rep in range(args.reps):  # alternated: checked, bulk, bulk, checked...
            for mode in ("checked", "bulk") if rep % 2 == 0 else ("bulk", "checked"):
                every.append(load(args.uri, docs, mode, args.dim))
                if rep < args.reps - 1:
                    every[-1]["store"].drop()
        runs = [median_run([r for r in every if r["mode"] == mode]) for mode in ("checked", "bulk")]
        base = runs[0]
        print(
            f"\nfirst load of {base['passages']} passages ({base['relations']} relations), {args.dim}-d hash embedding"
        )
        print_table(
            runs,
            [
                ("path", lambda r: r["mode"]),
                ("seconds", lambda r: f"{r['seconds']:.1f}"),
                ("passages/s", lambda r: f"{r['rate']:.0f}"),
                ("× checked", lambda r: f"{r['rate'] / base['rate']:.2f}"),
                ("embedding s", lambda r: f"{r['embed']:.1f}"),
                ("Milvus s (reads/writes)", lambda r: f"{r['milvus']:.1f} ({r['reads']:.1f}/{r['writes']:.1f})"),
                ("library s", lambda r: f"{r['library']:.1f}"),
                ("library share", lambda r: f"{100 * r['library'] / r['seconds']:.0f}%"),
                ("graph kept", lambda r: str(r["graph_loaded"])),
                ("first graph use s", lambda r: f"{r['first_graph_s']:.2f}"),
            ],
        )
        bulk = runs[1]
        rebuilt = bulk["store"].rebuild_graph()
        assert signature(bulk["graph"]) == signature(rebuilt) == signature(base["graph"]), "bulk graph != rebuild"
        print("\nbulk graph == rebuild from Milvus == checked path's graph: True")
        rows = rebuild(bulk["store"], args.rebuild_reps)
        print(f"\nrebuild of {rebuilt.n_relations} relations from Milvus (median of {args.rebuild_reps})")
        print_table(
            rows,
            [
                ("read", lambda r: r["how"]),
                ("seconds", lambda r: f"{r['seconds']:.2f}"),
                ("× sequential", lambda r: f"{r['ratio']:.2f}"),
            ],
        )
        print("\nfolding the bulk load's own chunks")
        fold_rows = fold(bulk["deltas"])
        print_table(fold_rows, [("fold", lambda r: r["how"]), ("seconds", lambda r: f"{r['seconds']:.2f}")])
        out["load"] = [{k: v for k, v in r.items() if k not in ("store", "graph", "deltas")} for r in every]
        out["rebuild"] = rows
        if not args.keep:
            for r in runs:
                r["store"].drop()
    if args.fold_passages:
        print(f"\nfolding a load of {args.fold_passages} synthetic passages (no Milvus)")
        rows = fold(synthetic_deltas(args.fold_passages))
        print_table(
            rows,
            [
                ("fold", lambda r: r["how"]),
                ("relations", lambda r: str(r["relations"])),
                ("seconds", lambda r: f"{r['seconds']:.2f}"),
                ("× per chunk", lambda r: f"{r['ratio']:.3f}"),
            ],
        )
        out["fold"] = rows
    if args.json:
        args.json.write_text(json.dumps(out, indent=2, default=str))


if __name__ == "__main__":
    main()
