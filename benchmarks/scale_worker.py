"""One measured step of ``bench_scale.py`` in a process of its own (the package it imports is chosen).

``python benchmarks/scale_worker.py --code DIR MODE ...``: ``DIR`` goes first on ``sys.path``, so
``langchain_graphrag_milvus`` is imported from there (the working tree, or the baseline release
extracted by ``git archive``). Modes:

* ``ingest``: load the first ``--limit`` records of a JSONL corpus into a prefix (one
  ``add_records`` call: a bulk load when the collections are new), then optionally the first
  query right after it (is the graph still in memory, or rebuilt?) and the query loop.
* ``query``: open an existing prefix, build (or load) the graph, then the query loop.
* ``cold``: open a prefix with a ``graph_path``: time to the graph and to the first answer.

Timers are spies on the real calls: every public ``MilvusClient`` method (and the query
iterator's pages) and the embedding record ``(start, end)``; library time is a call's wall time
minus the union of those intervals. The result goes to ``--out`` as JSON.
"""

from __future__ import annotations

import time

PROCESS_START = time.perf_counter()
#: Settings of the graph retriever (``--graph-kwargs``); the default retriever when empty.
GRAPH_KWARGS: dict[str, Any] = {}
#: Every graph query's Documents ``[question, [[id, text, metadata], ...]]`` when ``--dump-docs`` is given.
DOCS: list[Any] | None = None

import argparse  # noqa: E402
import functools  # noqa: E402
import json  # noqa: E402
import resource  # noqa: E402
import sys  # noqa: E402
import threading  # noqa: E402
import traceback  # noqa: E402
from collections.abc import Callable, Iterator  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

LOCAL_METHODS = {"create_schema", "prepare_index_params", "create_field_schema", "create_struct_field_schema"}
LOCAL_METHODS |= {"close", "session", "using_database"}


class MilvusSpy:
    """Records ``(start, end, name)`` of every Milvus client call in this process."""

    def __init__(self) -> None:
        self.calls: list[tuple[float, float, str]] = []
        self._lock = threading.Lock()

    def _wrap(self, owner: Any, name: str) -> None:
        method = getattr(owner, name)

        @functools.wraps(method)
        def timed(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return method(*args, **kwargs)
            finally:
                with self._lock:
                    self.calls.append((start, time.perf_counter(), name))

        setattr(owner, name, timed)

    def install(self) -> None:
        from pymilvus import MilvusClient
        from pymilvus.client.iterator import QueryIterator

        for name in dir(MilvusClient):
            if not name.startswith("_") and name not in LOCAL_METHODS and callable(getattr(MilvusClient, name)):
                self._wrap(MilvusClient, name)
        self._wrap(QueryIterator, "next")

    def window(self, lo: float, hi: float) -> list[tuple[float, float, str]]:
        with self._lock:
            return [c for c in self.calls if c[0] >= lo and c[1] <= hi]


def split_time(spy: MilvusSpy, embedding: Any, lo: float, hi: float) -> dict[str, Any]:
    """Wall, Milvus, embedding and library seconds of the window ``[lo, hi]``."""
    from scale_corpus import union_length, waves

    calls = spy.window(lo, hi)
    milvus = [(a, b) for a, b, _ in calls]
    emb = [(a, b) for a, b in (embedding.intervals or []) if a >= lo and b <= hi]
    return {
        "total": hi - lo,
        "milvus": union_length(milvus, lo, hi),
        "embed": union_length(emb, lo, hi),
        "library": (hi - lo) - union_length(milvus + emb, lo, hi),
        "calls": len(calls),
        "waves": waves(milvus),
        "iterator_pages": sum(1 for c in calls if c[2] in ("next", "query_iterator")),
        "by_name": by_name(calls),
    }


def by_name(calls: list[tuple[float, float, str]]) -> dict[str, list[float]]:
    """Client method name → [calls, seconds] (summed; overlapping calls counted each)."""
    out: dict[str, list[float]] = {}
    for start, end, name in calls:
        entry = out.setdefault(name, [0, 0.0])
        entry[0] += 1
        entry[1] += end - start
    return out


def timed_call(spy: MilvusSpy, embedding: Any, fn: Callable[[], Any]) -> tuple[Any, dict[str, Any]]:
    lo = time.perf_counter()
    out = fn()
    return out, split_time(spy, embedding, lo, time.perf_counter())


def query_loop(store: Any, spy: MilvusSpy, embedding: Any, questions: list[dict[str, Any]], k: int) -> dict[str, Any]:
    """Each question through the graph and the naive retriever (alternating); per-query splits and recall."""
    from langchain_graphrag_milvus import MilvusGraphRetriever

    graph = MilvusGraphRetriever(store=store, k=k, **GRAPH_KWARGS)
    naive = store.as_naive_retriever(k=k)
    out: dict[str, Any] = {"graph": [], "naive": []}
    for i, q in enumerate(questions):
        for name, retriever in (
            (("graph", graph), ("naive", naive)) if i % 2 == 0 else (("naive", naive), ("graph", graph))
        ):
            text = q["question"]
            docs, split = timed_call(spy, embedding, lambda r=retriever, t=text: r.invoke(t))
            if DOCS is not None and name == "graph":
                DOCS.append([text, [[d.id, d.page_content, d.metadata] for d in docs]])
            ids = {d.metadata.get("_passage_id") for d in docs}
            split["recall"] = len(ids & set(q["gold"])) / len(q["gold"])
            out[name].append(split)
    return out


def read_records(path: str, limit: int | None) -> list[dict[str, Any]]:
    records = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            if limit is not None and len(records) >= limit:
                break
            records.append(json.loads(line))
    return records


def progress(records: list[dict[str, Any]], every: int, label: str) -> Iterator[dict[str, Any]]:
    start = time.perf_counter()
    for i, record in enumerate(records, 1):
        yield record
        if i % every == 0:
            rate = i / (time.perf_counter() - start)
            print(f"  [{label}] {i:,}/{len(records):,} passages read by the ingest ({rate:.0f}/s)", flush=True)


def graph_in_memory(store: Any) -> bool | None:
    """Whether the store holds a built graph now (None: this version has no way to tell)."""
    cache = getattr(store, "_graph_cache", None)
    if cache is None or not hasattr(type(cache), "loaded"):
        return None
    return cache.loaded is not None


def run_ingest(args: argparse.Namespace, store: Any, spy: MilvusSpy, embedding: Any) -> dict[str, Any]:
    records = read_records(args.corpus, args.limit)
    print(f"  [{args.prefix}] ingesting {len(records):,} passages", flush=True)
    every = max(1000, len(records) // 10)
    report, split = timed_call(spy, embedding, lambda: store.add_records(progress(records, every, args.prefix)))
    result: dict[str, Any] = {"passages": len(records), "ingest": split, "report": str(report)}
    result["counts"] = store.counts()
    result["in_memory_after_load"] = graph_in_memory(store)
    if args.questions:
        questions = json.loads(Path(args.questions).read_text())
        first, split = timed_call(spy, embedding, lambda: _first_query(store, questions[0], args.k))
        result["first_query"] = split
        result["in_memory_after_first_query"] = graph_in_memory(store)
        result.update(run_queries(args, store, spy, embedding, questions[1:]))
    return result


def run_queries(
    args: argparse.Namespace, store: Any, spy: MilvusSpy, embedding: Any, questions: list[dict[str, Any]]
) -> dict[str, Any]:
    warm, measured = questions[: args.warmup], questions[args.warmup :]
    query_loop(store, spy, embedding, warm, args.k)
    rss = {"after_warmup": rss_kib()}
    out = query_loop(store, spy, embedding, measured, args.k)
    rss["after_queries"] = rss_kib()
    return {"queries": out, "rss_kib": rss}


def rss_kib() -> dict[str, int]:
    """This process's resident memory now, KiB: all, anonymous (heap) and file-backed (mapped); {} without ``/proc``."""
    try:
        status = Path("/proc/self/status").read_text()
    except OSError:
        return {}
    fields = {"VmRSS:": "rss", "RssAnon:": "anon", "RssFile:": "file"}
    return {fields[p[0]]: int(p[1]) for line in status.splitlines() if (p := line.split()) and p[0] in fields}


def run_query(args: argparse.Namespace, store: Any, spy: MilvusSpy, embedding: Any) -> dict[str, Any]:
    questions = json.loads(Path(args.questions).read_text())
    graph, split = timed_call(spy, embedding, lambda: store.graph)
    result: dict[str, Any] = {"graph_build": split, "relations": int(getattr(graph, "n_relations", -1))}
    result["rss_after_graph_kib"] = rss_kib()
    if args.first_query:  # questions[0], before the warm-up (under local_search: the held tables are read here)
        docs, result["first_query"] = timed_call(spy, embedding, lambda: _first_query(store, questions[0], args.k))
        if DOCS is not None:
            DOCS.append([questions[0]["question"], [[d.id, d.page_content, d.metadata] for d in docs]])
        result["rss_after_first_query_kib"] = rss_kib()
    result.update(run_queries(args, store, spy, embedding, questions[1:]))
    report = getattr(store, "memory_report", None)
    if report is not None:
        result["memory_report"] = report().as_dict()
    return result


def run_cold(args: argparse.Namespace, store: Any, spy: MilvusSpy, embedding: Any, imported: float) -> dict[str, Any]:
    from langchain_graphrag_milvus import MilvusGraphRetriever

    questions = json.loads(Path(args.questions).read_text())
    saved_before = any(Path(args.graph_path).iterdir()) if args.graph_path else False
    _, graph = timed_call(spy, embedding, lambda: store.graph)
    retriever = MilvusGraphRetriever(store=store, k=args.k, **GRAPH_KWARGS)
    _, first = timed_call(spy, embedding, lambda: retriever.invoke(questions[0]["question"]))
    return {
        "import": imported,
        "saved_index_present": saved_before,
        "graph_ready": graph,
        "first_answer": first,
        "process_to_first_answer": time.perf_counter() - PROCESS_START,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["ingest", "query", "cold"])
    parser.add_argument("--code", required=True, help="directory holding the langchain_graphrag_milvus to import")
    parser.add_argument("--uri", required=True)
    parser.add_argument("--prefix", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--corpus")
    parser.add_argument("--limit", type=int)
    parser.add_argument("--questions")
    parser.add_argument("--graph-path")
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--graph-kwargs", help="JSON settings of the graph retriever (working tree only)")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument(
        "--local-search", choices=["auto", "on", "off"], help="the store's local_search (default: its own)"
    )
    parser.add_argument("--first-query", action="store_true", help="query mode: time the first graph query apart")
    parser.add_argument("--dump-docs", help="query mode: write every graph query's Documents here (JSON)")
    args = parser.parse_args(argv)
    GRAPH_KWARGS.update(json.loads(args.graph_kwargs or "{}"))
    global DOCS
    DOCS = [] if args.dump_docs else None
    sys.path.insert(0, str(Path(args.code).resolve()))
    started = time.perf_counter()
    import langchain_graphrag_milvus
    from langchain_graphrag_milvus import MilvusGraphStore

    imported = time.perf_counter() - started
    from scale_corpus import HashEmbedding

    spy = MilvusSpy()
    spy.install()
    embedding = HashEmbedding()
    embedding.intervals = []
    extra: dict[str, Any] = {"graph_path": args.graph_path} if args.graph_path else {}
    if args.local_search:
        extra["local_search"] = args.local_search
    store = MilvusGraphStore(embedding, uri=args.uri, collection_prefix=args.prefix, **extra)
    result: dict[str, Any] = {"package": str(Path(langchain_graphrag_milvus.__file__).parent)}
    try:
        if args.mode == "ingest":
            result.update(run_ingest(args, store, spy, embedding))
        elif args.mode == "query":
            result.update(run_query(args, store, spy, embedding))
        else:
            result.update(run_cold(args, store, spy, embedding, imported))
    except Exception as exc:  # reported to the orchestrator, which decides (e.g. an incompatible schema)
        result["error"] = f"{type(exc).__name__}: {exc}"
        result["traceback"] = traceback.format_exc()
    finally:
        result["client_max_rss_kib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        Path(args.out).write_text(json.dumps(result))
        if DOCS is not None:
            Path(args.dump_docs).write_text(json.dumps({"package": result["package"], "docs": DOCS}, default=str))
        store.close()


def _first_query(store: Any, question: dict[str, Any], k: int) -> Any:
    from langchain_graphrag_milvus import MilvusGraphRetriever

    return MilvusGraphRetriever(store=store, k=k).invoke(question["question"])


if __name__ == "__main__":
    main()
