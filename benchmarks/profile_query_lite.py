"""Where a warm graph query's time goes on Milvus Lite, stage by stage (issue 25).

    PYTHONPATH=. nice -n 10 .venv/bin/python benchmarks/profile_query_lite.py \\
        --store STORE.db:PREFIX:../shared/data/musique100/questions_dev.jsonl [--store ...] \\
        [--rounds 1] [--dump ids.json] [--compare other.json]

Each ``--store`` is a Lite database (a *copy*: the run may refresh its saved graph), its prefix and
the questions to ask. After a warm-up, every question goes through the default
``MilvusGraphRetriever`` (k=5, no LLM); ``perf_counter`` wrappers around the package's own stage
functions record, per query:

* the pipeline's **effects** answered by the executor, top level only (a ``Gather`` named by what it
  holds): the entity linker and the query embedding (one ``Gather`` since they overlap; before,
  two effects), wave 1 (the ``Gather`` of entity, relation and passage searches and the freshness
  check), the second wave (the passages the walk ranked that dense search did not return); and,
  wherever they run, the linker's ``find`` and the embedding call;
* inside wave 1 (on the search threads, so they overlap): the client-side scoring of the entity and
  relation tables (``LocalSearch._score``), the hits' held fields (``_held``), Milvus' searches and
  fetches (``MilvusReads``), the generation counter read (``stamp``);
* the pipeline's own work between effects (``library``), and inside it the walks
  (``ranked_walks``; the PageRank solves in it), the hop counts, the documents.

``PYTHONPATH`` picks the package: the worktree (``.``) or another checkout, so two versions can be
run back to back. ``--dump`` writes every question's returned passage ids (in order) with their
``_raw_score`` and a digest of each Document (its text and all its metadata); ``--compare`` checks
a dump of another version against this run's: the ids and their order must be identical; it counts
the questions whose Documents are equal in full and prints the largest ``_raw_score`` difference.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import json
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from scale_corpus import percentile  # noqa: E402

_STATE = threading.local()


class Stages:
    """Wall and CPU seconds per stage label for the current query (every thread adds to the same record).

    CPU seconds are the calling thread's (``time.thread_time``): on a loaded machine they say what a
    stage costs, where its wall time also says how long it waited for a core.
    """

    def __init__(self) -> None:
        self.current: dict[str, float] = defaultdict(float)
        self.lock = threading.Lock()

    def add(self, label: str, seconds: float, cpu: float) -> None:
        with self.lock:
            self.current[label] += seconds
            self.current[f"{label} [cpu]"] += cpu

    def take(self) -> dict[str, float]:
        with self.lock:
            out, self.current = dict(self.current), defaultdict(float)
        return out


STAGES = Stages()


def wrap(owner: Any, name: str, label: Any) -> None:
    """Time ``owner.name`` under ``label`` (a string, or a function of the call's arguments)."""
    fn = getattr(owner, name)

    @functools.wraps(fn)
    def timed(*args: Any, **kwargs: Any) -> Any:
        start, cpu = time.perf_counter(), time.thread_time()
        try:
            return fn(*args, **kwargs)
        finally:
            tag = label(*args, **kwargs) if callable(label) else label
            if tag:
                STAGES.add(tag, time.perf_counter() - start, time.thread_time() - cpu)

    setattr(owner, name, timed)


def effect_label(effect: Any) -> str:
    """``effect Search``, or ``effect Gather(LinkEntities, Embed)``: a Gather named by what it holds."""
    inner = getattr(effect, "effects", None)
    if inner is None:
        return f"effect {type(effect).__name__}"
    return f"effect Gather({', '.join(type(e).__name__ for e in inner)})"


def install() -> None:
    """Put the timers on the package's stage functions (where the callers look them up)."""
    from langchain_graphrag_milvus import embeddings
    from langchain_graphrag_milvus.milvus import connection, local_search, reads
    from langchain_graphrag_milvus.retrieval import executors, graph_pipeline, query_entities, stages, walk_ranking

    answer = executors.answer_sync

    @functools.wraps(answer)
    def top_level(effect: Any, *args: Any, **kwargs: Any) -> Any:
        if threading.current_thread() is not threading.main_thread() or getattr(_STATE, "depth", 0):
            return answer(effect, *args, **kwargs)
        _STATE.depth = 1
        start, cpu = time.perf_counter(), time.thread_time()
        try:
            return answer(effect, *args, **kwargs)
        finally:
            _STATE.depth = 0
            STAGES.add(effect_label(effect), time.perf_counter() - start, time.thread_time() - cpu)

    executors.answer_sync = top_level  # type: ignore[assignment]
    wrap(query_entities.EntityLinker, "find", "  linker (find)")
    wrap(embeddings.LocalMiniLMEmbeddings, "embed_documents", "  embedding (embed_documents)")
    wrap(local_search.LocalSearch, "_score", lambda self, kind, *a, **k: f"  local score {kind}")
    wrap(local_search.LocalSearch, "_held", lambda self, kind, *a, **k: f"  local held fields {kind}")
    wrap(local_search.LocalSearch, "_plan", "  local plan (table check)")
    wrap(reads.MilvusReads, "search", lambda self, kind, *a, **k: f"  Milvus search {kind}")
    wrap(reads.MilvusReads, "fetch", lambda self, kind, *a, **k: f"  Milvus fetch {kind}")
    wrap(connection.MilvusConnection, "stamp", "  Milvus generation counter")
    wrap(walk_ranking, "ranked_walks", "  walks (ranked_walks)")
    wrap(walk_ranking, "personalized_pagerank", "    PageRank solves")
    wrap(walk_ranking, "seed_weights", "    seed weights")
    wrap(walk_ranking, "_novel", "    novel seeds")
    wrap(walk_ranking, "_continuation", "    continuation")
    wrap(stages, "ranked_walks", "  walks (ranked_walks)")
    wrap(stages, "_passage_hops", "  hop counts")
    wrap(stages, "entity_seeds", "  entity seeds")
    wrap(stages, "_candidates", "  relation candidates")
    wrap(graph_pipeline, "exact_entities", "  exact entities")
    wrap(graph_pipeline, "ranked_documents", "  documents")
    wrap(graph_pipeline, "check_query_vectors", "  check query vectors")


def run_store(spec: str, rounds: int, warmup: int, limit: int | None) -> dict[str, Any]:
    from langchain_graphrag_milvus import MilvusGraphRetriever, MilvusGraphStore
    from langchain_graphrag_milvus.embeddings import LocalMiniLMEmbeddings

    uri, prefix, questions_path = spec.split(":", 2)
    questions = [json.loads(line) for line in Path(questions_path).read_text().splitlines() if line.strip()]
    questions = questions[:limit] if limit else questions
    store = MilvusGraphStore(LocalMiniLMEmbeddings(), uri=uri, collection_prefix=prefix)
    retriever = MilvusGraphRetriever(store=store, k=5)
    for q in questions[:warmup]:
        retriever.invoke(q["question"])
    STAGES.take()
    records: list[dict[str, float]] = []
    answers: dict[str, list[list[Any]]] = {}
    for _ in range(rounds):
        for q in questions:
            start, cpu = time.perf_counter(), time.thread_time()
            docs = retriever.invoke(q["question"])
            total, total_cpu = time.perf_counter() - start, time.thread_time() - cpu
            rec = STAGES.take()
            effects = [k for k in rec if k.startswith("effect ") and not k.endswith("[cpu]")]
            rec["total"], rec["total [cpu]"] = total, total_cpu
            rec["library (total - effects)"] = total - sum(rec[k] for k in effects)
            rec["library (total - effects) [cpu]"] = total_cpu - sum(rec[f"{k} [cpu]"] for k in effects)
            records.append(rec)
            answers[q["question"]] = [[d.metadata["_passage_id"], d.metadata.get("_raw_score"), digest(d)]
                                      for d in docs]  # fmt: skip
    store.close()
    return {"store": f"{Path(uri).name}:{prefix}", "records": records, "answers": answers}


def digest(doc: Any) -> str:
    """A digest of a Document's id, text and every metadata value (floats by their repr: bit for bit)."""
    body = json.dumps([doc.id, doc.page_content, doc.metadata], sort_keys=True, default=repr)
    return hashlib.sha256(body.encode()).hexdigest()[:16]


def report(res: dict[str, Any]) -> None:
    records = res["records"]
    labels = sorted({k for r in records for k in r if not k.endswith("[cpu]")},
                    key=lambda k: (k != "total", not k.startswith("effect"), k))  # fmt: skip
    print(f"\n{res['store']}: {len(records)} queries (ms per query; a stage absent from a query counts 0)")
    print(f"{'stage':44s} {'wall mean':>9s} {'p50':>7s} {'p90':>7s} {'cpu mean':>9s} {'p50':>7s}")
    for label in labels:
        wall = [1000 * r.get(label, 0.0) for r in records]
        cpu = [1000 * r.get(f"{label} [cpu]", 0.0) for r in records]
        print(f"{label:44s} {sum(wall) / len(wall):9.2f} {percentile(wall, 50):7.2f} {percentile(wall, 90):7.2f}"
              f" {sum(cpu) / len(cpu):9.2f} {percentile(cpu, 50):7.2f}")  # fmt: skip


def compare(ours: list[dict[str, Any]], path: Path) -> int:
    theirs = {r["store"]: r["answers"] for r in json.loads(path.read_text())}
    bad = 0
    for res in ours:
        other = theirs.get(res["store"])
        if other is None:
            print(f"{res['store']}: not in {path}")
            continue
        same_ids = same_docs = 0
        worst = 0.0
        for question, docs in res["answers"].items():
            before = other.get(question)
            if before is None:
                continue
            if [d[0] for d in docs] == [d[0] for d in before]:
                same_ids += 1
                worst = max([worst, *(abs(a[1] - b[1]) for a, b in zip(docs, before) if None not in (a[1], b[1]))])
            else:
                bad += 1
                print(f"  DIFFERENT: {question!r}\n    {before}\n    {docs}")
            same_docs += [d[:3] for d in docs] == [d[:3] for d in before]
        print(f"{res['store']}: {same_ids}/{len(res['answers'])} same ids and order, {same_docs} same Documents"
              f" (text, metadata and scores bit for bit), largest _raw_score difference {worst:.3g}")  # fmt: skip
    return bad


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store", action="append", required=True, help="URI:PREFIX:QUESTIONS.jsonl")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--limit", type=int, help="only the first N questions")
    parser.add_argument("--dump", type=Path, help="write the returned ids (and raw scores) here")
    parser.add_argument("--compare", type=Path, help="a --dump of another version: ids and order must match")
    args = parser.parse_args(argv)
    import langchain_graphrag_milvus

    print(f"package: {Path(langchain_graphrag_milvus.__file__).parent}")
    install()
    results = [run_store(spec, args.rounds, args.warmup, args.limit) for spec in args.store]
    for res in results:
        report(res)
    if args.dump:
        args.dump.write_text(json.dumps([{"store": r["store"], "answers": r["answers"]} for r in results]))
    if args.compare and compare(results, args.compare):
        sys.exit(1)


if __name__ == "__main__":
    main()
